// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "fileid.h"
#include "quote.h"

/* The major:minor of mount mnt_id in a mountinfo file; -1 if not there. */
static int mount_dev(const char *mountinfo, unsigned long long mnt_id, unsigned int *major,
		     unsigned int *minor)
{
	FILE *f = fopen(mountinfo, "r");
	char line[4096];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id;
		unsigned int maj, min;

		if (sscanf(line, "%llu %*u %u:%u", &id, &maj, &min) == 3 && id == mnt_id) {
			*major = maj;
			*minor = min;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int file_id_resolve(const char *path, const char *mountinfo, struct file_id *id, char *err,
		    size_t errsz)
{
	unsigned int major, minor;
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx)) {
		snprintf(err, errsz, "cannot trace --file '%s': %s: give an existing file", path,
			 strerror(errno));
		printable_line(err, errsz);
		return -1;
	}
	if (S_ISDIR(stx.stx_mode)) {
		snprintf(err, errsz,
			 "--file '%s' is a directory: give files (I/O on a directory's files "
			 "is not I/O on the directory)",
			 path);
		printable_line(err, errsz);
		return -1;
	}
	major = stx.stx_dev_major;
	minor = stx.stx_dev_minor;
	if (stx.stx_mask & STATX_MNT_ID)
		mount_dev(mountinfo, stx.stx_mnt_id, &major, &minor);
	memset(id, 0, sizeof(*id));
	id->ino = stx.stx_ino;
	id->dev = KDEV_MAKE(major, minor);
	return 0;
}
