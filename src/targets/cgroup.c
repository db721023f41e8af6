// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "cgroup.h"
#include "quote.h"

#define CGROUP2_SUPER_MAGIC 0x63677270

int open_cgroup(const char *path, char *err, size_t errsz)
{
	struct statfs sf;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errsz,
			 "cannot open cgroup %s: %s; give a directory under "
			 "/sys/fs/cgroup",
			 path, strerror(errno));
		printable_line(err, errsz);
		return -1;
	}
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errsz,
			 "%s is not a cgroup v2 directory: --cgroup needs the "
			 "unified hierarchy (mount -t cgroup2 none /sys/fs/cgroup)",
			 path);
		printable_line(err, errsz);
		close(fd);
		return -1;
	}
	return fd;
}
