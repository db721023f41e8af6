// SPDX-License-Identifier: GPL-2.0
/*
 * --cgroup path handling: any bytes as the path (the directories it names
 * are only opened for reading and statfs'ed). An error must be one line;
 * an accepted path must give a descriptor. The same bytes as a cgroup path
 * of -G (the names in it are anyone's who can make a cgroup): a container
 * id found is lowercase hex and in the path, a pod uid is in the 8-4-4-4-12
 * form, and neither overflows its buffer.
 */
#include <ctype.h>
#include <unistd.h>
#include "cgname.h"
#include "cgroup.h"
#include "fuzz.h"

static void check_runtime_ids(const char *path)
{
	char container[80], pod[40];
	size_t n;

	memset(container, 'x', sizeof(container));
	memset(pod, 'x', sizeof(pod));
	cgroup_runtime_ids(path, container, sizeof(container), pod, sizeof(pod));
	n = strnlen(container, sizeof(container));
	FUZZ_CHECK(n < sizeof(container), "container id not terminated");
	FUZZ_CHECK(!n || (n >= 12 && strstr(path, container)), "container id '%s'", container);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(isxdigit((unsigned char)container[i]) &&
			       !isupper((unsigned char)container[i]),
			   "container id '%s'", container);
	n = strnlen(pod, sizeof(pod));
	FUZZ_CHECK(n == 0 || n == 36, "pod uid '%.*s'", (int)n, pod);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((i == 8 || i == 13 || i == 18 || i == 23)
			       ? pod[i] == '-'
			       : isxdigit((unsigned char)pod[i]),
			   "pod uid '%s'", pod);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1), err[512];
	int fd;

	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = '\0';
	check_runtime_ids(path);
	memset(err, 0, sizeof(err));
	fd = open_cgroup(path, err, sizeof(err));
	if (fd < 0)
		FUZZ_CHECK(err[0] && !strchr(err, '\n'), "error '%s'", err);
	else
		close(fd);
	free(path);
	return 0;
}
