// SPDX-License-Identifier: GPL-2.0
/*
 * --cgroup path handling: any bytes as the path (the directories it names
 * are only opened for reading and statfs'ed). An error must be one line;
 * an accepted path must give a descriptor.
 */
#include <unistd.h>
#include "cgroup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1), err[512];
	int fd;

	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = '\0';
	memset(err, 0, sizeof(err));
	fd = open_cgroup(path, err, sizeof(err));
	if (fd < 0)
		FUZZ_CHECK(err[0] && !strchr(err, '\n'), "error '%s'", err);
	else
		close(fd);
	free(path);
	return 0;
}
