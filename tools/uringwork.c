// SPDX-License-Identifier: GPL-2.0
/*
 * uringwork: a deterministic io_uring workload for the tests, with no
 * liburing: io_uring_setup and io_uring_enter as raw system calls, the
 * rings mapped by hand. It opens a file with OPENAT requests, writes it,
 * fsyncs it, reads it back, then makes requests the io_uring layer leaves
 * out by default (reads of a pipe, NOPs), each a known number of times,
 * and prints what it did:
 *
 *   uringwork opens=N writes=N fsyncs=N reads=N pipe_reads=N nops=N
 *
 * Every request's result is checked; any failure exits 1 with the reason.
 *
 * usage: uringwork [-o OPENS] [-w WRITES] [-s FSYNCS] [-r READS] [-q DEPTH]
 *                  [-p PIPE_READS] [-n NOPS] [-S] [-D] [-W] FILE
 *   -S  a SQPOLL ring (the kernel's iou-sqp thread submits)
 *   -W  each pipe read is submitted on an empty pipe, and its byte written
 *       1 ms after the submission returned: the request arms a poll and
 *       waits at least that long in it
 *   -D  O_DIRECT reads and writes
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BLOCK 4096

struct ring {
	int fd;
	unsigned int sq_entries, *sq_head, *sq_tail, *sq_mask, *sq_array, *sq_flags;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	bool sqpoll;
	unsigned int inflight;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "uringwork: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *map(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, off);

	if (p == MAP_FAILED)
		die("mmap of the ring", errno);
	return p;
}

static void ring_init(struct ring *r, unsigned int entries, bool sqpoll)
{
	struct io_uring_params p = { 0 };
	char *sq, *cq;

	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1000;
	}
	r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0)
		die("io_uring_setup", errno);
	sq = map(r->fd, p.sq_off.array + p.sq_entries * sizeof(unsigned int), IORING_OFF_SQ_RING);
	cq = map(r->fd, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		 IORING_OFF_CQ_RING);
	r->sqes = map(r->fd, p.sq_entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
	r->sq_entries = p.sq_entries;
	r->sq_head = (unsigned int *)(sq + p.sq_off.head);
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->sq_flags = (unsigned int *)(sq + p.sq_off.flags);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	r->sqpoll = sqpoll;
}

/* A zeroed SQE at the tail; queued by ring_push(). */
static struct io_uring_sqe *ring_sqe(struct ring *r)
{
	unsigned int tail = *r->sq_tail;
	struct io_uring_sqe *sqe = &r->sqes[tail & *r->sq_mask];

	memset(sqe, 0, sizeof(*sqe));
	r->sq_array[tail & *r->sq_mask] = tail & *r->sq_mask;
	return sqe;
}

static void ring_push(struct ring *r)
{
	atomic_store_explicit((_Atomic unsigned int *)r->sq_tail, *r->sq_tail + 1,
			      memory_order_release);
	r->inflight++;
}

/* Submits what was pushed and waits for at least `wait` completions. */
static void ring_enter(struct ring *r, unsigned int to_submit, unsigned int wait)
{
	unsigned int flags = wait ? IORING_ENTER_GETEVENTS : 0;

	if (r->sqpoll) {
		to_submit = 0; /* the kernel thread takes them from the ring */
		if (atomic_load_explicit((_Atomic unsigned int *)r->sq_flags,
					 memory_order_acquire) &
		    IORING_SQ_NEED_WAKEUP)
			flags |= IORING_ENTER_SQ_WAKEUP;
		if (!wait && !(flags & IORING_ENTER_SQ_WAKEUP))
			return;
	}
	while (syscall(__NR_io_uring_enter, r->fd, to_submit, wait, flags, NULL, 0) < 0)
		if (errno != EINTR)
			die("io_uring_enter", errno);
}

/* Reaps one completion, waiting for it if need be; returns its result. */
static int ring_reap(struct ring *r, uint64_t *user_data)
{
	unsigned int head = *r->cq_head;
	struct io_uring_cqe *cqe;
	int res;

	while (head ==
	       atomic_load_explicit((_Atomic unsigned int *)r->cq_tail, memory_order_acquire))
		ring_enter(r, 0, 1);
	cqe = &r->cqes[head & *r->cq_mask];
	res = cqe->res;
	if (user_data)
		*user_data = cqe->user_data;
	atomic_store_explicit((_Atomic unsigned int *)r->cq_head, head + 1, memory_order_release);
	r->inflight--;
	return res;
}

static void expect(int res, int want, const char *what)
{
	if (res < 0)
		die(what, -res);
	if (want >= 0 && res != want) {
		fprintf(stderr, "uringwork: %s returned %d, not %d\n", what, res, want);
		exit(1);
	}
}

/* One request at a time: submit it, wait for it, check it. */
static int one(struct ring *r, int want, const char *what)
{
	int res;

	ring_push(r);
	ring_enter(r, 1, 1);
	res = ring_reap(r, NULL);
	expect(res, want, what);
	return res;
}

static void prep_rw(struct io_uring_sqe *sqe, int op, int fd, void *buf, unsigned int len,
		    uint64_t off)
{
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = len;
	sqe->off = off;
}

static unsigned long arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end) {
		fprintf(stderr, "uringwork: '%s' is not a count\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long opens = 1, writes = 16, fsyncs = 4, reads = 64, depth = 1, pipe_reads = 0,
		      nops = 0;
	bool sqpoll = false, direct = false, pipe_wait = false;
	unsigned long done = 0, queued = 0;
	struct ring r = { 0 };
	int fd = -1, c, pfd[2];
	char *buf;

	while ((c = getopt(argc, argv, "o:w:s:r:q:p:n:SDW")) != -1) {
		switch (c) {
		case 'o':
			opens = arg(optarg);
			break;
		case 'w':
			writes = arg(optarg);
			break;
		case 's':
			fsyncs = arg(optarg);
			break;
		case 'r':
			reads = arg(optarg);
			break;
		case 'q':
			depth = arg(optarg);
			break;
		case 'p':
			pipe_reads = arg(optarg);
			break;
		case 'n':
			nops = arg(optarg);
			break;
		case 'S':
			sqpoll = true;
			break;
		case 'D':
			direct = true;
			break;
		case 'W':
			pipe_wait = true;
			break;
		default:
			fprintf(stderr, "usage: uringwork [-o N] [-w N] [-s N] [-r N] [-q DEPTH] "
					"[-p N] [-n N] [-S] [-D] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1 || !opens || !writes || !depth || depth > 64) {
		fprintf(stderr, "uringwork: give one FILE, at least one open and one write, "
				"and a depth of 1 to 64\n");
		return 2;
	}
	if (posix_memalign((void **)&buf, BLOCK, BLOCK * 64))
		die("posix_memalign", ENOMEM);
	memset(buf, 'u', BLOCK * 64);
	ring_init(&r, 64, sqpoll);

	/* Opens: the file through OPENAT requests, each closed (close(2)). */
	for (unsigned long i = 0; i < opens; i++) {
		struct io_uring_sqe *sqe = ring_sqe(&r);

		sqe->opcode = IORING_OP_OPENAT;
		sqe->fd = AT_FDCWD;
		sqe->addr = (uint64_t)(uintptr_t)argv[optind];
		sqe->open_flags = O_RDWR | O_CREAT | (direct ? O_DIRECT : 0);
		sqe->len = 0600;
		if (fd >= 0)
			close(fd);
		fd = one(&r, -1, "OPENAT");
	}
	/* Writes of 4 KiB each, then fsyncs, one at a time. */
	for (unsigned long i = 0; i < writes; i++) {
		prep_rw(ring_sqe(&r), IORING_OP_WRITE, fd, buf, BLOCK, i * BLOCK);
		one(&r, BLOCK, "WRITE");
	}
	for (unsigned long i = 0; i < fsyncs; i++) {
		struct io_uring_sqe *sqe = ring_sqe(&r);

		sqe->opcode = IORING_OP_FSYNC;
		sqe->fd = fd;
		one(&r, 0, "FSYNC");
	}
	/* Reads of 4 KiB over the file written, `depth` in flight. */
	while (done < reads) {
		unsigned int fresh = 0;

		while (queued < reads && r.inflight < depth) {
			unsigned long slot = queued % 64;

			prep_rw(ring_sqe(&r), IORING_OP_READ, fd, buf + slot * BLOCK, BLOCK,
				(queued % writes) * BLOCK);
			ring_push(&r);
			queued++;
			fresh++;
		}
		if (fresh)
			ring_enter(&r, fresh, 0);
		expect(ring_reap(&r, NULL), BLOCK, "READ");
		done++;
	}
	/* Requests on no storage file: pipe reads, NOPs. */
	if (pipe(pfd))
		die("pipe", errno);
	for (unsigned long i = 0; i < pipe_reads; i++) {
		if (!pipe_wait && write(pfd[1], "x", 1) != 1)
			die("write to the pipe", errno);
		prep_rw(ring_sqe(&r), IORING_OP_READ, pfd[0], buf, 1, (uint64_t)-1);
		if (pipe_wait) {
			ring_push(&r);
			ring_enter(&r, 1, 0);
			usleep(1000);
			if (write(pfd[1], "x", 1) != 1)
				die("write to the pipe", errno);
			expect(ring_reap(&r, NULL), 1, "READ of the pipe");
			continue;
		}
		one(&r, 1, "READ of the pipe");
	}
	for (unsigned long i = 0; i < nops; i++) {
		ring_sqe(&r)->opcode = IORING_OP_NOP;
		one(&r, 0, "NOP");
	}
	printf("uringwork opens=%lu writes=%lu fsyncs=%lu reads=%lu pipe_reads=%lu nops=%lu\n",
	       opens, writes, fsyncs, reads, pipe_reads, nops);
	return 0;
}
