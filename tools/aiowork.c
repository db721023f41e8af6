// SPDX-License-Identifier: GPL-2.0
/*
 * aiowork: Linux native AIO requests of known counts, made with the raw
 * system calls (io_setup, io_submit, io_getevents: no libaio), one at a
 * time, each waited for before the next:
 *
 *   aiowork [-D] [-s fsync|fdsync] [-n ROUNDS] [-p POLLS] FILE
 *
 * ROUNDS times (default 100) a 4 KiB IOCB_CMD_PWRITE at the round's offset
 * of FILE (O_DIRECT with -D) and, with -s, an IOCB_CMD_FSYNC or
 * IOCB_CMD_FDSYNC of it; then POLLS IOCB_CMD_POLLs of FILE for reading (a
 * regular file is always ready). fio's libaio engine makes its fsyncs with
 * fsync(2), not through AIO: this makes them through AIO. Prints
 * "aiowork writes=N syncs=N polls=N" when done; exits 1 at the first
 * request that fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/aio_abi.h>
#include <sys/syscall.h>

#define BLOCK 4096

static aio_context_t ctx;

/* Submits one iocb and waits for its event; its result, or -errno. */
static long one(struct iocb *cb)
{
	struct iocb *list[1] = { cb };
	struct io_event ev;

	if (syscall(SYS_io_submit, ctx, 1, list) != 1)
		return -errno;
	while (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		if (errno != EINTR)
			return -errno;
	return (long)ev.res;
}

static int fail(const char *what, long err)
{
	fprintf(stderr, "aiowork: %s: %s\n", what, strerror((int)-err));
	return 1;
}

int main(int argc, char **argv)
{
	long rounds = 100, polls = 0, syncs = 0, ret;
	int opt, fd, flags = O_RDWR | O_CREAT, sync_cmd = -1;
	struct iocb cb;
	void *buf;

	while ((opt = getopt(argc, argv, "Ds:n:p:")) != -1) {
		switch (opt) {
		case 'D':
			flags |= O_DIRECT;
			break;
		case 's':
			if (!strcmp(optarg, "fsync"))
				sync_cmd = IOCB_CMD_FSYNC;
			else if (!strcmp(optarg, "fdsync"))
				sync_cmd = IOCB_CMD_FDSYNC;
			else
				return fprintf(stderr, "aiowork: -s fsync or fdsync\n"), 2;
			break;
		case 'n':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 'p':
			polls = strtol(optarg, NULL, 10);
			break;
		default:
			return fprintf(stderr, "usage: aiowork [-D] [-s fsync|fdsync] [-n ROUNDS] "
					       "[-p POLLS] FILE\n"),
			       2;
		}
	}
	if (optind != argc - 1)
		return fprintf(stderr, "aiowork: one FILE\n"), 2;
	fd = open(argv[optind], flags, 0644);
	if (fd < 0)
		return fail(argv[optind], -errno);
	if (posix_memalign(&buf, BLOCK, BLOCK))
		return fail("memory", -ENOMEM);
	memset(buf, 'a', BLOCK);
	if (syscall(SYS_io_setup, 8, &ctx))
		return fail("io_setup", -errno);
	for (long i = 0; i < rounds; i++) {
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = (__u32)fd;
		cb.aio_lio_opcode = IOCB_CMD_PWRITE;
		cb.aio_buf = (__u64)(unsigned long)buf;
		cb.aio_nbytes = BLOCK;
		cb.aio_offset = i * BLOCK;
		ret = one(&cb);
		if (ret != BLOCK)
			return fail("write", ret < 0 ? ret : -EIO);
		if (sync_cmd < 0)
			continue;
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = (__u32)fd;
		cb.aio_lio_opcode = (__u16)sync_cmd;
		ret = one(&cb);
		if (ret < 0)
			return fail("sync", ret);
		syncs++;
	}
	for (long i = 0; i < polls; i++) {
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = (__u32)fd;
		cb.aio_lio_opcode = IOCB_CMD_POLL;
		cb.aio_buf = POLLIN;
		ret = one(&cb);
		if (ret < 0)
			return fail("poll", ret);
	}
	printf("aiowork writes=%ld syncs=%ld polls=%ld\n", rounds, syncs, polls);
	syscall(SYS_io_destroy, ctx);
	close(fd);
	return 0;
}
