// SPDX-License-Identifier: GPL-2.0
/*
 * liburingwork: an io_uring client built on liburing, as real services are
 * (uringwork makes the same requests with raw system calls). It opens a file
 * OPENS times, writes it WRITES times (4 KiB each, DEPTH in flight), fsyncs
 * it FSYNCS times, reads back what it wrote READS times (DEPTH in flight),
 * offsets cycling through the first min(WRITES, 256) blocks, each with
 * liburing's prep helpers and io_uring_submit_and_wait, checks every
 * completion, and prints what it did:
 *
 *   liburingwork opens=N writes=N fsyncs=N reads=N
 *
 * usage: liburingwork [-o OPENS] [-w WRITES] [-s FSYNCS] [-r READS]
 *                     [-q DEPTH] [-D] [-P] FILE
 *   -D  O_DIRECT reads and writes
 *   -P  a polled ring (IORING_SETUP_IOPOLL, as fio --hipri): needs -D and
 *       a device with poll queues; only reads and writes go through it
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096
#define MAX_DEPTH 64

static void die(const char *what, int err)
{
	fprintf(stderr, "liburingwork: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Waits for one completion; its result must be want (or >= 0 if want < 0). */
static int reap(struct io_uring *ring, int want, const char *what)
{
	struct io_uring_cqe *cqe;
	int err = io_uring_wait_cqe(ring, &cqe), res;

	if (err)
		die("io_uring_wait_cqe", -err);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (res < 0)
		die(what, -res);
	if (want >= 0 && res != want) {
		fprintf(stderr, "liburingwork: %s: %d bytes, not %d\n", what, res, want);
		exit(1);
	}
	return res;
}

static struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe", EBUSY);
	return sqe;
}

/* n reads or writes of BLOCK bytes, offsets cycling through span blocks,
 * depth in flight. */
static void rw(struct io_uring *ring, int fd, bool write, unsigned int n, unsigned int depth,
	       unsigned int span, char *bufs)
{
	unsigned int issued = 0, done = 0;

	while (done < n) {
		unsigned int batch = 0;

		while (issued < n && issued - done < depth) {
			struct io_uring_sqe *sqe = sqe_of(ring);
			char *buf = bufs + (size_t)(issued % depth) * BLOCK;
			__u64 off = (__u64)(issued % span) * BLOCK;

			if (write)
				io_uring_prep_write(sqe, fd, buf, BLOCK, off);
			else
				io_uring_prep_read(sqe, fd, buf, BLOCK, off);
			issued++;
			batch++;
		}
		if (batch) {
			int err = io_uring_submit(ring);

			if (err < 0)
				die("io_uring_submit", -err);
		}
		reap(ring, BLOCK, write ? "write" : "read");
		done++;
	}
}

int main(int argc, char **argv)
{
	unsigned int opens = 2, writes = 16, fsyncs = 4, reads = 64, depth = 8;
	bool direct = false, polled = false;
	unsigned int span;
	struct io_uring ring, sync_ring;
	char *bufs;
	int opt, fd, err;

	while ((opt = getopt(argc, argv, "o:w:s:r:q:DP")) != -1) {
		switch (opt) {
		case 'o':
			opens = (unsigned int)atoi(optarg);
			break;
		case 'w':
			writes = (unsigned int)atoi(optarg);
			break;
		case 's':
			fsyncs = (unsigned int)atoi(optarg);
			break;
		case 'r':
			reads = (unsigned int)atoi(optarg);
			break;
		case 'q':
			depth = (unsigned int)atoi(optarg);
			break;
		case 'D':
			direct = true;
			break;
		case 'P':
			polled = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || !opens || !depth || depth > MAX_DEPTH || (polled && !direct) ||
	    (reads && !writes))
		goto usage;
	span = writes < 256 ? writes : 256;
	if (posix_memalign((void **)&bufs, BLOCK, (size_t)depth * BLOCK))
		die("posix_memalign", ENOMEM);
	memset(bufs, 'u', (size_t)depth * BLOCK);
	/* Opens and fsyncs cannot be polled: a plain ring of their own. */
	err = io_uring_queue_init(MAX_DEPTH, &sync_ring, 0);
	if (err)
		die("io_uring_queue_init", -err);
	err = io_uring_queue_init(MAX_DEPTH, &ring, polled ? IORING_SETUP_IOPOLL : 0);
	if (err)
		die(polled ? "io_uring_queue_init (IOPOLL)" : "io_uring_queue_init", -err);
	for (unsigned int i = 0; i < opens; i++) {
		io_uring_prep_openat(sqe_of(&sync_ring), AT_FDCWD, argv[optind],
				     O_RDWR | O_CREAT | (direct ? O_DIRECT : 0), 0644);
		err = io_uring_submit(&sync_ring);
		if (err < 0)
			die("io_uring_submit", -err);
		fd = reap(&sync_ring, -1, "openat");
		if (i + 1 < opens)
			close(fd);
	}
	rw(&ring, fd, true, writes, depth, span, bufs);
	for (unsigned int i = 0; i < fsyncs; i++) {
		io_uring_prep_fsync(sqe_of(&sync_ring), fd, 0);
		err = io_uring_submit(&sync_ring);
		if (err < 0)
			die("io_uring_submit", -err);
		reap(&sync_ring, 0, "fsync");
	}
	rw(&ring, fd, false, reads, depth, span, bufs);
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&sync_ring);
	close(fd);
	printf("liburingwork opens=%u writes=%u fsyncs=%u reads=%u\n", opens, writes, fsyncs,
	       reads);
	return 0;
usage:
	fprintf(stderr, "usage: liburingwork [-o OPENS] [-w WRITES] [-s FSYNCS] [-r READS] "
			"[-q DEPTH (1-%d)] [-D] [-P (with -D)] FILE (READS need WRITES)\n",
		MAX_DEPTH);
	return 2;
}
