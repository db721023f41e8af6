// SPDX-License-Identifier: GPL-2.0
/*
 * compat32 - a 32-bit program (AArch32 or i386) for a 64-bit kernel's
 * compat system call table, used by the VM suite: it makes N calls each of
 * three system calls whose 32-bit numbers are, in the 64-bit table, calls
 * iostackbreak traces. A tracer that took them by number would count them
 * as reads, writes and preadv2s (arm64) or readvs, writevs and creats
 * (x86-64); they are none of these.
 *
 *   AArch32 (arm64 kernel): dup2 63 (arm64: read), getppid 64 (write),
 *                           getsockname 286 (preadv2)
 *   i386 (x86-64 kernel):   lseek 19 (x86-64: readv), getpid 20 (writev),
 *                           readlink 85 (creat)
 *
 * No C library (no loader, no other system calls): built with
 * `clang --target=armv7a-linux-gnueabihf` or `--target=i386-linux-gnu`,
 * -nostdlib -static (make vm-arm64, tests/vm/run.sh). Exit status 0 when
 * every call returned what it should, 1 otherwise.
 */
#define N 100

#if defined(__arm__)
#define NR_EXIT 1
#define NR_A 63 /* dup2(1, 10) = 10 */
#define NR_B 64 /* getppid() > 0 */
#define NR_C 286 /* getsockname(1, 0, 0) < 0: not a socket */
static long sys3(long nr, long a, long b, long c)
{
	register long r7 __asm__("r7") = nr;
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;

	__asm__ volatile("svc #0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2) : "memory");
	return r0;
}
#elif defined(__i386__)
#define NR_EXIT 1
#define NR_A 19 /* lseek(1, 0, SEEK_CUR): not 10, see below */
#define NR_B 20 /* getpid() > 0 */
#define NR_C 85 /* readlink("", 0, 0) < 0 */
static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}
#else
#error "compat32 is built for 32-bit arm or i386 only"
#endif

static int calls_ok(void)
{
	int i, ok = 1;

	for (i = 0; i < N; i++) {
#if defined(__arm__)
		ok &= sys3(NR_A, 1, 10, 0) == 10;
		ok &= sys3(NR_C, 1, 0, 0) < 0;
#else
		/* stdout is a file or a pipe: an offset, or -ESPIPE. */
		ok &= sys3(NR_A, 1, 0, 1) != -9; /* not -EBADF */
		ok &= sys3(NR_C, (long)"", 0, 0) < 0;
#endif
		ok &= sys3(NR_B, 0, 0, 0) > 0;
	}
	return ok;
}

void _start(void)
{
	sys3(NR_EXIT, calls_ok() ? 0 : 1, 0, 0);
	for (;;)
		;
}
