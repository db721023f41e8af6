// SPDX-License-Identifier: GPL-2.0
/*
 * Disk resolution against generated sysfs trees: up to six block devices
 * (whole disks as directories or links, partitions with their class
 * links) whose dev and size files hold whatever the input says, then a
 * name and a number to look up. Errors must be one line; a resolved name
 * must be one the tree has, with the numbers its dev file says.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "disk.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "/tmp/iosb-fuzz-sysfs-XXXXXX");
	if (!mkdtemp(root))
		abort();
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0; /* keep the root */
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void mkdir_at(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

static void link_at(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path) && errno != EEXIST)
		return;
}

/* A file name of [a-z0-9] from the input: sysfs names are tame. */
static void take_name(struct fuzz_in *in, char *buf, size_t max)
{
	take_str(in, buf, max);
	for (char *p = buf; *p; p++)
		*p = "abcdefghijklmnopqrstuvwxyz0123456789"[(unsigned char)*p % 36];
	if (!buf[0])
		snprintf(buf, max, "d");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	char names[6][16], rel[PATH_MAX], text[32], query[64], err[512], found[64];
	unsigned int n = take_u8(&in) % 7;
	struct disk_id id, want;

	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	mkdir_at("block");
	mkdir_at("class");
	mkdir_at("class/block");
	mkdir_at("devices");
	for (unsigned int i = 0; i < n && i < 6; i++) {
		uint8_t kind = take_u8(&in) % 3;

		take_name(&in, names[i], sizeof(names[i]));
		if (kind == 2 && i > 0) { /* a partition of the disk before it */
			snprintf(rel, sizeof(rel), "devices/%s/%s", names[i - 1], names[i]);
			mkdir_at(rel);
			snprintf(rel, sizeof(rel), "devices/%s/%s/partition", names[i - 1], names[i]);
			put(rel, "1\n");
			snprintf(text, sizeof(text), "../../devices/%s/%s", names[i - 1], names[i]);
			snprintf(rel, sizeof(rel), "class/block/%s", names[i]);
			link_at(text, rel);
			snprintf(rel, sizeof(rel), "devices/%s/%s/dev", names[i - 1], names[i]);
		} else if (kind == 1) { /* a whole disk, /sys/block/NAME a link */
			snprintf(rel, sizeof(rel), "devices/%s", names[i]);
			mkdir_at(rel);
			snprintf(text, sizeof(text), "../devices/%s", names[i]);
			snprintf(rel, sizeof(rel), "block/%s", names[i]);
			link_at(text, rel);
			snprintf(rel, sizeof(rel), "devices/%s/dev", names[i]);
		} else { /* a whole disk as a plain directory */
			snprintf(rel, sizeof(rel), "block/%s", names[i]);
			mkdir_at(rel);
			snprintf(rel, sizeof(rel), "block/%s/dev", names[i]);
		}
		take_str(&in, text, sizeof(text)); /* "8:0\n", or anything */
		put(rel, text);
		*strrchr(rel, '/') = '\0';
		strncat(rel, "/size", sizeof(rel) - strlen(rel) - 1);
		take_str(&in, text, sizeof(text));
		put(rel, text);
	}
	take_str(&in, query, sizeof(query));
	memset(err, 0, sizeof(err));
	if (disk_resolve(root, query, &id, err, sizeof(err))) {
		FUZZ_CHECK(err[0] && !strchr(err, '\n'), "error '%s'", err);
	} else {
		/* The numbers are the query's own dev file's. */
		snprintf(rel, sizeof(rel), "%s/block/%s/dev", root, query);
		FILE *f = fopen(rel, "r");

		FUZZ_CHECK(f, "resolved '%s' has no dev file", query);
		FUZZ_CHECK(fscanf(f, "%u:%u", &want.major, &want.minor) == 2, "dev of '%s'", query);
		fclose(f);
		FUZZ_CHECK(want.major == id.major && want.minor == id.minor, "'%s': %u:%u", query,
			   id.major, id.minor);
	}
	id.major = take_u8(&in);
	id.minor = take_u8(&in);
	if (!disk_name(root, id, found, sizeof(found)))
		FUZZ_CHECK(found[0], "an empty name for %u:%u", id.major, id.minor);
	(void)disk_present(root, id);
	return 0;
}
