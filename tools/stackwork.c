/*
 * stackwork - a workload with known call paths, for the stacks of block
 * I/O (-K, -U): read_hundred() makes 100 O_DIRECT reads of 4 KiB and
 * read_three_hundred() 300, of the file or device named, then it prints
 * "stackwork hundred=100 three_hundred=300 bytes=N" (its own count of the
 * bytes read) and exits.
 *
 * Built with frame pointers (-fno-omit-frame-pointer) and without sibling
 * calls, so that a frame-pointer walk sees each function. The reads go
 * through read_block(), whose frame the walk does not show: pread64 in a
 * libc built without frame pointers leaves the frame pointer as its caller
 * set it, so the walk goes from pread64 to read_block's caller. Each path
 * is then main;read_*;pread64, as users of such a libc see theirs.
 *
 * Built a second time at -O2 without frame pointers (stackwork-nofp), as
 * distributions build programs: its paths, main;read_*;read_block;pread64,
 * are what --user-stack=dwarf unwinds and the frame-pointer walk does not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096

static long long bytes_read;

static __attribute__((noinline)) int read_block(int fd, void *buf, off_t at)
{
	ssize_t n = pread(fd, buf, BLOCK, at);

	if (n != BLOCK) {
		perror("pread");
		return -1;
	}
	bytes_read += n;
	return 0;
}

static __attribute__((noinline)) int read_hundred(int fd, void *buf)
{
	for (int i = 0; i < 100; i++)
		if (read_block(fd, buf, (off_t)i * BLOCK))
			return -1;
	return 0;
}

static __attribute__((noinline)) int read_three_hundred(int fd, void *buf)
{
	/* Blocks after the first 100: no read of the other path again. */
	for (int i = 0; i < 300; i++)
		if (read_block(fd, buf, (off_t)(100 + i) * BLOCK))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	void *buf;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: stackwork FILE (400 blocks of 4 KiB or more)\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, BLOCK, BLOCK)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0, BLOCK);
	if (read_hundred(fd, buf) || read_three_hundred(fd, buf))
		return 1;
	printf("stackwork hundred=100 three_hundred=300 bytes=%lld\n", bytes_read);
	return close(fd) ? 1 : 0;
}
