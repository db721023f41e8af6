// SPDX-License-Identifier: GPL-2.0
/*
 * sysloop N: makes N getppid() calls, a system call no layer traces, and
 * prints the nanoseconds they took: what a tracer costs the calls it does
 * not trace (bench/sources.py).
 *
 * sysloop N pipe: N pairs of a 1-byte write and read on a pipe (2N calls):
 * calls the syscall layer sees and leaves out, not being on a storage file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int pipe_mode = argc > 2 && !strcmp(argv[2], "pipe");
	struct timespec t0, t1;
	int p[2];
	char c = 'x';

	if (pipe_mode && pipe(p)) {
		perror("sysloop: pipe");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		if (!pipe_mode) {
			syscall(SYS_getppid); /* not glibc's getppid(): never cached */
			continue;
		}
		if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1) {
			perror("sysloop: pipe I/O");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
