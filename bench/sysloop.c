// SPDX-License-Identifier: GPL-2.0
/*
 * sysloop N: makes N getppid() calls, a system call no layer traces, and
 * prints the nanoseconds they took: what a tracer costs the calls it does
 * not trace (bench/sources.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid); /* not glibc's getppid(): never cached */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
