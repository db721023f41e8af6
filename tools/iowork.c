/*
 * iowork - deterministic I/O workload used as ground truth by the
 * iostackbreak integration tests.
 *
 * The program has two parts.  Setup does everything that is not part of
 * the experiment: it creates, sizes and fills the file, flushes it, warms
 * or drops the page cache, opens one descriptor per worker thread,
 * allocates and faults in the buffers, and starts the workers.  The
 * measured part then issues exactly N system calls of the requested kind
 * and nothing else that touches a file (bar the close() after each call
 * of the open op): no printing, no opening, no seeking.  Whatever a
 * tracer attributes to this pid between the start signal and the result
 * line must therefore add up to the numbers printed at the end.
 *
 * Several OP N PATH triples make a multi-phase run: every phase is set up
 * before the start signal, the phases then run one after the other, and
 * all result lines are written together, in one write(2), once the last
 * phase is over.  One tracer following the pid sees every phase and
 * nothing in between.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)

#define DEFAULT_SIZE 4096ULL
/* Positional ops cycle through at most this much of the file. */
#define CYCLE_CAP (64 * MIB)
/* Sequential read needs N*SIZE bytes of file; keep setup bounded. */
#define READ_CAP (1 * GIB)
#define MAX_SIZE (1 * GIB)
#define MAX_THREADS 1024
/* Phases per run, and worker threads over all phases together. */
#define MAX_PHASES 64
#define MAX_TOTAL_THREADS 4096
#define DIRECT_ALIGN 512ULL
#define BUF_ALIGN 4096
#define CHUNK (1 * MIB)
/* One result line: "iowork op=... pid=... ns=...\n" fits easily. */
#define LINE_MAX_LEN 256

/* Pseudo errno used to remember "read hit EOF" in the per-thread state. */
#define ERR_EOF (-1)

/* OP/D: that phase uses O_DIRECT whatever -D says. */
#define DIRECT_SUFFIX "/D"

enum op {
	OP_PREAD,
	OP_READ,
	OP_PREADV,
	OP_PWRITE,
	OP_WRITE,
	OP_PWRITEV,
	OP_OPEN,
	OP_FSYNC,
	OP_FDATASYNC,
};

static const char *const op_names[] = {
	[OP_PREAD] = "pread",	[OP_READ] = "read",   [OP_PREADV] = "preadv",
	[OP_PWRITE] = "pwrite", [OP_WRITE] = "write", [OP_PWRITEV] = "pwritev",
	[OP_OPEN] = "open",	[OP_FSYNC] = "fsync", [OP_FDATASYNC] = "fdatasync",
};

struct worker;

/* One OP N PATH triple of the command line, and its run. */
struct phase {
	enum op op;
	unsigned long long n;
	const char *path;
	bool direct;	    /* -D, or the OP/D suffix */
	bool direct_suffix; /* OP/D given: echoed in the result line */

	/* Derived during setup. */
	bool is_bdev;
	unsigned long long slots; /* offsets cycled through: k % slots */
	int hold_fd;		  /* setup descriptor, held open until exit */
	dev_t dev;
	ino_t ino;

	struct worker *workers; /* cfg.threads of them */
	pthread_barrier_t start_barrier;
	pthread_barrier_t end_barrier;
	unsigned long long t0, t1;
};

struct config {
	unsigned long long size;
	unsigned int threads;
	bool direct; /* -D: the default of every phase */
	bool wait_start;
	bool hold_exit;		     /* -x: after the result, wait for SIGUSR1 again */
	unsigned long long pause_us; /* -P: sleep between calls (not I/O) */
	bool create;
	bool write_first; /* -W: pwrite before each fsync/fdatasync */
	bool append;	  /* -A: with -W, the write appends (O_APPEND) */
	int sync_flag;	  /* -S: O_SYNC or O_DSYNC on write descriptors; 0 */
	const char *out_path;

	struct phase *phases;
	unsigned int nphases;
};

struct worker {
	pthread_t tid;
	struct phase *ph;
	int fd;
	char *buf;
	unsigned long long first; /* global index of the first op */
	unsigned long long count;
	unsigned long long done;
	unsigned long long errors;
	unsigned long long bytes;
	int first_err; /* first failure's errno, or ERR_EOF */
};

static struct config cfg = {
	.size = DEFAULT_SIZE,
	.threads = 1,
};

/* Every worker of every phase, and the main thread. */
static pthread_barrier_t ready_barrier;

static const char *prog = "iowork";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] OP N PATH [OP N PATH ...]\n"
		"\n"
		"Perform exactly N system calls of kind OP on PATH and report the result.\n"
		"Everything else (creating, sizing, filling, flushing and caching the file,\n"
		"opening descriptors, starting threads) happens in a setup phase before.\n"
		"\n"
		"OP (each one issues N calls of the named kind in the measured phase):\n"
		"  pread      N pread64 of SIZE bytes, offsets cycling through the file\n"
		"  read       N read of SIZE bytes, sequential (needs N*SIZE <= 1 GiB)\n"
		"  preadv     N preadv with 2 iovecs of SIZE/2, offsets cycling\n"
		"  pwrite     N pwrite64 of SIZE bytes, offsets cycling\n"
		"  pwritev    N pwritev with 2 iovecs of SIZE/2, offsets cycling\n"
		"  write      N write of SIZE bytes, sequential (regular file truncated)\n"
		"  open       N openat(O_RDONLY) of PATH, each followed by close\n"
		"  fsync      N fsync on PATH opened O_WRONLY\n"
		"  fdatasync  N fdatasync on PATH opened O_WRONLY\n"
		"  OP/D       (e.g. pread/D) this phase with O_DIRECT, as -D does for all\n"
		"\n"
		"Options (they apply to every phase):\n"
		"  -s SIZE    bytes per call (default 4096; suffixes k, m, g)\n"
		"  -D         use O_DIRECT (SIZE must be a multiple of 512, of 1024 for\n"
		"             preadv/pwritev); the file is not pre-read into the cache\n"
		"  -t THREADS split N over THREADS threads, each with its own fd (default 1)\n"
		"  -w         after setup print \"READY <pid>\" and wait for SIGUSR1\n"
		"  -x         with -w: after the result line, wait for SIGUSR1 again\n"
		"             before exiting, so /proc/PID/io can be read\n"
		"  -P USEC    sleep USEC microseconds between calls (nanosleep is not\n"
		"             I/O), to spread a workload over time\n"
		"  -c         create PATH if missing and grow it to the size needed\n"
		"             (write ops always create a missing regular file)\n"
		"  -W         fsync/fdatasync only: pwrite SIZE bytes before each sync\n"
		"  -A         with -W: the write appends SIZE bytes to the file (O_APPEND),\n"
		"             so each sync also has a new size and new blocks to record\n"
		"  -S MODE    write descriptors opened O_SYNC (MODE sync) or O_DSYNC\n"
		"             (MODE dsync): every write waits for its data to be stable\n"
		"  -o FILE    write the result line(s) to FILE instead of stdout\n"
		"  -h         show this help\n"
		"\n"
		"Positional ops cycle through the first max(SIZE, min(N*SIZE, 64 MiB))\n"
		"bytes of the file (or of the block device, if it is smaller).\n"
		"\n"
		"Several phases (at most %d): OP N PATH [OP N PATH ...] sets every phase\n"
		"up, in order, before the start (-w), then runs the phases one after the\n"
		"other in this process.  Phases may share a PATH (their setups run in\n"
		"order, so a later one decides whether the file is cached: O_DIRECT drops\n"
		"it from the cache), except a write phase on a regular file, which\n"
		"truncates it.  Nothing is printed between phases: all result lines,\n"
		"one per phase in command-line order, go out in a single write(2) after\n"
		"the last phase.\n"
		"\n"
		"Result line (one per phase):\n"
		"  iowork op=OP n=N done=D errors=E bytes=B pid=PID ns=ELAPSED\n"
		"OP as given (pread/D with the suffix); done+errors == N; with -W one op\n"
		"is the pwrite+sync pair.\n"
		"Exit status: 0 if errors == 0, 1 if some calls failed, 2 on setup or\n"
		"usage errors.\n",
		prog, MAX_PHASES);
}
/*
 * Setup failures: one line on stderr, exit 2, as the tests expect.  err is
 * the errno of the failed call; 0 when fmt already says what is wrong.
 */
static void __attribute__((noreturn, format(printf, 2, 3))) die(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
	exit(2);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see -h)\n");
	exit(2);
}

static bool parse_u64(const char *s, unsigned long long *val, bool suffix)
{
	unsigned long long v, mult = 1;
	char *end;

	/* strtoull silently accepts "-1"; a count or size never is negative. */
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (suffix && *end) {
		switch (*end) {
		case 'k':
		case 'K':
			mult = KIB;
			break;
		case 'm':
		case 'M':
			mult = MIB;
			break;
		case 'g':
		case 'G':
			mult = GIB;
			break;
		default:
			return false;
		}
		end++;
	}
	if (*end)
		return false;
	if (v > ULLONG_MAX / mult)
		return false;
	*val = v * mult;
	return true;
}

static bool op_is_read(enum op op)
{
	return op == OP_PREAD || op == OP_READ || op == OP_PREADV;
}

static bool op_is_write(enum op op)
{
	return op == OP_PWRITE || op == OP_WRITE || op == OP_PWRITEV;
}

static bool op_is_sync(enum op op)
{
	return op == OP_FSYNC || op == OP_FDATASYNC;
}

/* Does the measured phase move data, i.e. does SIZE matter? */
static bool op_uses_size(enum op op)
{
	return op_is_read(op) || op_is_write(op) || (op_is_sync(op) && cfg.write_first);
}

static bool op_is_vectored(enum op op)
{
	return op == OP_PREADV || op == OP_PWRITEV;
}

static bool op_is_sequential(enum op op)
{
	return op == OP_READ || op == OP_WRITE;
}

/* OP or OP/D; returns false if it names no op. */
static bool parse_op(const char *arg, struct phase *ph)
{
	size_t len = strlen(arg), slen = strlen(DIRECT_SUFFIX);
	unsigned int i;

	ph->direct_suffix = len > slen && !strcmp(arg + len - slen, DIRECT_SUFFIX);
	if (ph->direct_suffix)
		len -= slen;
	for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (strlen(op_names[i]) == len && !strncmp(arg, op_names[i], len)) {
			ph->op = i;
			ph->direct = cfg.direct || ph->direct_suffix;
			return true;
		}
	}
	return false;
}

/* The checks of one phase, once the options are known. */
static void check_phase(const struct phase *ph)
{
	const char *name = op_names[ph->op];

	if (op_is_vectored(ph->op) && cfg.size % 2)
		die_usage("%s splits SIZE into 2 iovecs, SIZE must be even", name);

	/*
	 * O_DIRECT wants offset, length and every iovec segment aligned to
	 * the logical block size; 512 is the smallest one there is.  A device
	 * with 4 KiB sectors will still refuse 512, which shows up as errors.
	 */
	if (ph->direct && op_uses_size(ph->op)) {
		unsigned long long unit = DIRECT_ALIGN;

		if (op_is_vectored(ph->op))
			unit *= 2;
		if (cfg.size % unit)
			die_usage("-D needs SIZE to be a multiple of %llu for %s", unit, name);
	}

	if (op_is_sequential(ph->op) && (ph->n && cfg.size > ULLONG_MAX / ph->n))
		die_usage("N*SIZE overflows");
	if (ph->op == OP_READ && ph->n * cfg.size > READ_CAP)
		die_usage("read needs N*SIZE bytes of file, at most 1 GiB");
}

static void parse_args(int argc, char **argv)
{
	unsigned long long v;
	bool any_sync = false;
	unsigned int i;
	int c, nargs;

	while ((c = getopt(argc, argv, "s:Dt:wxcWAS:o:P:h")) != -1) {
		switch (c) {
		case 's':
			if (!parse_u64(optarg, &cfg.size, true) || cfg.size == 0 ||
			    cfg.size > MAX_SIZE)
				die_usage("bad SIZE '%s' (1 byte .. 1 GiB)", optarg);
			break;
		case 'D':
			cfg.direct = true;
			break;
		case 't':
			if (!parse_u64(optarg, &v, false) || v == 0 || v > MAX_THREADS)
				die_usage("bad THREADS '%s' (1 .. %d)", optarg, MAX_THREADS);
			cfg.threads = v;
			break;
		case 'w':
			cfg.wait_start = true;
			break;
		case 'x':
			cfg.hold_exit = true;
			break;
		case 'P':
			if (!parse_u64(optarg, &cfg.pause_us, false))
				die_usage("bad -P microseconds '%s'", optarg);
			break;
		case 'c':
			cfg.create = true;
			break;
		case 'W':
			cfg.write_first = true;
			break;
		case 'A':
			cfg.append = true;
			break;
		case 'S':
			if (!strcmp(optarg, "sync"))
				cfg.sync_flag = O_SYNC;
			else if (!strcmp(optarg, "dsync"))
				cfg.sync_flag = O_DSYNC;
			else
				die_usage("bad -S MODE '%s' (sync or dsync)", optarg);
			break;
		case 'o':
			cfg.out_path = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			/* getopt() has already said what was wrong. */
			fprintf(stderr, "usage: %s [options] OP N PATH [OP N PATH ...] (see -h)\n",
				prog);
			exit(2);
		}
	}

	nargs = argc - optind;
	if (nargs < 3)
		die_usage("expected OP N PATH");
	if (nargs % 3)
		die_usage("expected OP N PATH [OP N PATH ...], got %d arguments", nargs);
	if (nargs / 3 > MAX_PHASES)
		die_usage("at most %d phases (OP N PATH triples)", MAX_PHASES);
	cfg.nphases = nargs / 3;
	if (cfg.threads * cfg.nphases > MAX_TOTAL_THREADS)
		die_usage("THREADS x phases is at most %d", MAX_TOTAL_THREADS);

	cfg.phases = calloc(cfg.nphases, sizeof(*cfg.phases));
	if (!cfg.phases)
		die(ENOMEM, "allocating %u phases", cfg.nphases);
	for (i = 0; i < cfg.nphases; i++) {
		struct phase *ph = &cfg.phases[i];
		char **a = argv + optind + 3 * i;

		if (!parse_op(a[0], ph))
			die_usage("unknown OP '%s'", a[0]);
		if (!parse_u64(a[1], &ph->n, false))
			die_usage("bad N '%s'", a[1]);
		ph->path = a[2];
		if (!*ph->path)
			die_usage("empty PATH");
		ph->hold_fd = -1;
		any_sync |= op_is_sync(ph->op);
	}

	if (cfg.write_first && !any_sync)
		die_usage("-W only applies to fsync and fdatasync");
	if (cfg.append && !cfg.write_first)
		die_usage("-A only applies with -W");

	for (i = 0; i < cfg.nphases; i++)
		check_phase(&cfg.phases[i]);
}
/* Bytes the positional ops cycle through: max(SIZE, min(N*SIZE, 64 MiB)). */
static unsigned long long cycle_span(const struct phase *ph)
{
	unsigned long long span;

	if (ph->n && cfg.size > CYCLE_CAP / ph->n)
		span = CYCLE_CAP;
	else
		span = ph->n * cfg.size;
	if (span < cfg.size)
		span = cfg.size;
	return span;
}

static void fill_pattern(char *buf, size_t len, unsigned long long off)
{
	size_t i;

	/*
	 * Non-zero, offset-dependent data: zero pages could be deduplicated
	 * or left as holes by clever storage, and then reads would not touch
	 * the lower layers at all.
	 */
	for (i = 0; i < len; i++)
		buf[i] = (char)(((off + i) * 131 + 17) % 251 + 1);
}

/* Write the pattern over [from, to) so every block is really allocated. */
static void fill_range(int fd, const char *path, unsigned long long from, unsigned long long to)
{
	char *buf = malloc(CHUNK);
	unsigned long long off = from;

	if (!buf)
		die(ENOMEM, "allocating fill buffer");
	while (off < to) {
		size_t len = to - off < CHUNK ? to - off : CHUNK;
		ssize_t ret;

		fill_pattern(buf, len, off);
		ret = pwrite(fd, buf, len, off);
		if (ret < 0)
			die(errno, "filling %s at offset %llu", path, off);
		if (ret == 0)
			die(ENOSPC, "filling %s at offset %llu", path, off);
		off += ret;
	}
	free(buf);
}

/* Pull [0, to) into the page cache so buffered I/O never waits on disk. */
static void preread_range(int fd, const char *path, unsigned long long to)
{
	char *buf = malloc(CHUNK);
	unsigned long long off = 0;

	if (!buf)
		die(ENOMEM, "allocating pre-read buffer");
	while (off < to) {
		size_t len = to - off < CHUNK ? to - off : CHUNK;
		ssize_t ret = pread(fd, buf, len, off);

		if (ret < 0)
			die(errno, "pre-reading %s at offset %llu", path, off);
		if (ret == 0)
			break;
		off += ret;
	}
	free(buf);
}

/*
 * Prepare PATH so that the measured phase finds it in a known state:
 * present, large enough, backed by allocated blocks, clean (so that no
 * writeback of setup data leaks into the measured phase) and either
 * cached (buffered I/O) or not (O_DIRECT).
 *
 * Returns the setup descriptor, which the caller keeps open until exit:
 * the last close of a block device writes it back and throws its page
 * cache away, which would undo the pre-read before the workers' own
 * descriptors are even open, and would make every close() of the open
 * op flush the device during the measured phase.
 */
static int setup_file(struct phase *ph)
{
	bool may_grow = cfg.create || op_is_write(ph->op) || op_is_sync(ph->op);
	unsigned long long size, want = 0, need = 0, span;
	struct stat st;
	int fd, flags;

	/* The open op never writes, so -c must not demand write access. */
	flags = O_CLOEXEC | (may_grow ? O_CREAT : 0) |
		(may_grow && ph->op != OP_OPEN ? O_RDWR : O_RDONLY);
	fd = open(ph->path, flags, 0644);
	if (fd < 0)
		die(errno, "open %s", ph->path);
	if (fstat(fd, &st) < 0)
		die(errno, "stat %s", ph->path);
	ph->dev = st.st_dev;
	ph->ino = st.st_ino;

	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;

		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			die(errno, "BLKGETSIZE64 on %s", ph->path);
		ph->is_bdev = true;
		size = bytes;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else if (ph->op == OP_OPEN) {
		/* Opening a directory or a char device is a fine open test. */
		return fd;
	} else {
		die(0, "%s: not a regular file or block device", ph->path);
	}

	/*
	 * want: how much of the file the measured phase should use.
	 * need: the least it can work with.  Positional ops cycle through
	 * whatever there is as long as one SIZE fits; sequential ones touch
	 * all N*SIZE bytes and must not run into EOF or the device end.
	 */
	switch (ph->op) {
	case OP_PREAD:
	case OP_PREADV:
	case OP_PWRITE:
	case OP_PWRITEV:
		want = cycle_span(ph);
		need = ph->n ? cfg.size : 0;
		break;
	case OP_FSYNC:
	case OP_FDATASYNC:
		if (cfg.write_first) {
			want = cycle_span(ph);
			need = ph->n ? cfg.size : 0;
		}
		break;
	case OP_READ:
		want = need = ph->n * cfg.size;
		break;
	case OP_WRITE:
		/* A device cannot be truncated; it must hold all of it. */
		if (ph->is_bdev)
			want = need = ph->n * cfg.size;
		break;
	case OP_OPEN:
		break;
	}

	if (!ph->is_bdev && ph->op == OP_WRITE) {
		if (ftruncate(fd, 0) < 0)
			die(errno, "truncate %s", ph->path);
	} else if (!ph->is_bdev && size < want && may_grow) {
		/* Never resize a device, only regular files. */
		fill_range(fd, ph->path, size, want);
		size = want;
	}
	if (size < need)
		die(0, "%s: too small for %s: %llu bytes, need %llu%s", ph->path, op_names[ph->op],
		    size, need, ph->is_bdev || may_grow ? "" : " (use -c)");

	span = want < size ? want : size;
	span -= span % cfg.size;
	ph->slots = span / cfg.size;

	/*
	 * Flush whatever setup dirtied (and anything left over from before)
	 * so that the first measured call does not pay for it.
	 */
	if (fsync(fd) < 0)
		die(errno, "fsync %s", ph->path);

	if (ph->direct) {
		/*
		 * Nothing of the file should sit in the cache: O_DIRECT reads
		 * must reach the device and direct writes should not have to
		 * invalidate pages.  Best effort, the data is clean by now.
		 */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	} else if (span && (ph->op != OP_WRITE || ph->is_bdev)) {
		/*
		 * Buffered reads then are pure cache hits, and buffered
		 * writes of partial pages need no read-modify-write.
		 */
		preread_range(fd, ph->path, span);
	}

	return fd;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->ph;
	unsigned long long k, end = w->first + w->count;
	size_t half = cfg.size / 2;
	struct iovec iov[2] = {
		{ .iov_base = w->buf, .iov_len = half },
		{ .iov_base = w->buf + half, .iov_len = half },
	};
	int oflags = O_RDONLY | O_CLOEXEC | (ph->direct ? O_DIRECT : 0);

	/*
	 * Report for duty before READY is printed, so that the thread's own
	 * start-up syscalls are over by the time the phase begins.
	 */
	pthread_barrier_wait(&ready_barrier);
	pthread_barrier_wait(&ph->start_barrier);

	/*
	 * The measured phase: only the calls being counted, no stdio, no
	 * error messages (those would be writes too).  The first errno is
	 * kept and reported once the phase is over.
	 */
	for (k = w->first; k < end; k++) {
		off_t off = 0;
		ssize_t ret = 0;
		int err = 0;
		int fd;

		if (ph->slots)
			off = (off_t)((k % ph->slots) * cfg.size);
		if (cfg.pause_us && k > w->first) {
			struct timespec nap = {
				.tv_sec = (time_t)(cfg.pause_us / 1000000),
				.tv_nsec = (long)(cfg.pause_us % 1000000) * 1000,
			};

			nanosleep(&nap, NULL);
		}

		switch (ph->op) {
		case OP_PREAD:
			ret = pread(w->fd, w->buf, cfg.size, off);
			break;
		case OP_READ:
			ret = read(w->fd, w->buf, cfg.size);
			break;
		case OP_PREADV:
			ret = preadv(w->fd, iov, 2, off);
			break;
		case OP_PWRITE:
			ret = pwrite(w->fd, w->buf, cfg.size, off);
			break;
		case OP_WRITE:
			ret = write(w->fd, w->buf, cfg.size);
			break;
		case OP_PWRITEV:
			ret = pwritev(w->fd, iov, 2, off);
			break;
		case OP_OPEN:
			fd = openat(AT_FDCWD, ph->path, oflags);
			if (fd < 0)
				ret = -1;
			else
				close(fd);
			break;
		case OP_FSYNC:
		case OP_FDATASYNC:
			if (cfg.write_first) {
				/* O_APPEND (-A): write() lands at the end. */
				if (cfg.append)
					ret = write(w->fd, w->buf, cfg.size);
				else
					ret = pwrite(w->fd, w->buf, cfg.size, off);
				if (ret < 0)
					err = errno;
				else
					w->bytes += ret;
			}
			/*
			 * Sync even after a failed write so the number of
			 * sync calls stays exactly N.  With -W the pair
			 * counts as one op, failed if either call failed.
			 */
			if (ph->op == OP_FSYNC)
				ret = fsync(w->fd);
			else
				ret = fdatasync(w->fd);
			if (ret < 0 && !err)
				err = errno;
			break;
		}

		if (ret < 0) {
			if (!err)
				err = errno;
		} else if (ret == 0 && op_is_read(ph->op)) {
			/* Setup sized the file so that EOF cannot happen. */
			err = ERR_EOF;
		}

		if (err) {
			w->errors++;
			if (!w->first_err)
				w->first_err = err;
			continue;
		}
		w->done++;
		if (op_is_read(ph->op) || op_is_write(ph->op))
			w->bytes += ret;
	}

	pthread_barrier_wait(&ph->end_barrier);
	return NULL;
}

static int worker_open_flags(const struct phase *ph)
{
	int flags = O_CLOEXEC | (ph->direct ? O_DIRECT : 0);

	if (op_is_read(ph->op))
		return flags | O_RDONLY;
	if (cfg.append && op_is_sync(ph->op))
		flags |= O_APPEND;
	return flags | cfg.sync_flag | O_WRONLY;
}

static void setup_workers(struct phase *ph)
{
	struct worker *workers = ph->workers;
	unsigned long long per = ph->n / cfg.threads;
	unsigned long long extra = ph->n % cfg.threads;
	unsigned long long first = 0;
	unsigned int i;
	int err;

	for (i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];

		w->first = first;
		w->count = per + (i < extra ? 1 : 0);
		first += w->count;
		w->fd = -1;
		w->ph = ph;

		/* Aligned for O_DIRECT, harmless otherwise. */
		err = posix_memalign((void **)&w->buf, BUF_ALIGN, cfg.size);
		if (err)
			die(err, "allocating %llu byte buffer", cfg.size);
		/* Fault it in now, not during the measured phase. */
		fill_pattern(w->buf, cfg.size, 0);

		if (ph->op == OP_OPEN)
			continue;

		w->fd = open(ph->path, worker_open_flags(ph));
		if (w->fd < 0)
			die(errno, "open %s%s", ph->path, ph->direct ? " with O_DIRECT" : "");

		/*
		 * Sequential ops give every thread its own slice of the file,
		 * so all N calls together cover [0, N*SIZE) exactly once.
		 */
		if (op_is_sequential(ph->op) &&
		    lseek(w->fd, (off_t)(w->first * cfg.size), SEEK_SET) < 0)
			die(errno, "seek %s", ph->path);
	}

	for (i = 0; i < cfg.threads; i++) {
		err = pthread_create(&workers[i].tid, NULL, worker_fn, &workers[i]);
		if (err)
			die(err, "creating thread %u", i);
	}
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t ret = write(fd, buf, len);

		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += ret;
		len -= ret;
	}
}

/*
 * A write phase truncates its regular file during setup, under the feet
 * of any other phase set up on the same file: refuse that.
 */
static void check_shared_files(void)
{
	unsigned int i, j;

	for (i = 0; i < cfg.nphases; i++) {
		const struct phase *a = &cfg.phases[i];

		if (a->op != OP_WRITE || a->is_bdev)
			continue;
		for (j = 0; j < cfg.nphases; j++) {
			const struct phase *b = &cfg.phases[j];

			if (j != i && b->dev == a->dev && b->ino == a->ino)
				die_usage(
				    "phase %u (write) truncates %s, which phase %u (%s) uses too: "
				    "give the write phase a file of its own",
				    i + 1, a->path, j + 1, op_names[b->op]);
		}
	}
}

static void wait_sigusr1(const sigset_t *set)
{
	int sig, err;

	do {
		err = sigwait(set, &sig);
		if (err)
			die(err, "waiting for SIGUSR1");
	} while (sig != SIGUSR1);
}

int main(int argc, char **argv)
{
	unsigned long long errors_all = 0;
	int out_fd = STDOUT_FILENO, err;
	pid_t pid = getpid();
	char *out;
	size_t used = 0;
	sigset_t set;
	unsigned int i, p;

	parse_args(argc, argv);

	/*
	 * Open the result file now: a bad -o path is a setup error, and
	 * opening it later would be an extra openat after the phases.
	 */
	if (cfg.out_path) {
		out_fd = open(cfg.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0)
			die(errno, "open %s", cfg.out_path);
	}

	/*
	 * Block SIGUSR1 before any thread exists so every thread inherits
	 * the mask: a signal sent as soon as READY appears stays pending
	 * until sigwait() picks it up, however early it arrives.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (cfg.wait_start) {
		err = pthread_sigmask(SIG_BLOCK, &set, NULL);
		if (err)
			die(err, "blocking SIGUSR1");
	}

	/* Setup descriptors are deliberately never closed, see setup_file(). */
	for (p = 0; p < cfg.nphases; p++)
		cfg.phases[p].hold_fd = setup_file(&cfg.phases[p]);
	check_shared_files();

	/* The result lines are built in memory: no stdio after the start. */
	out = malloc((size_t)cfg.nphases * LINE_MAX_LEN);
	if (!out)
		die(ENOMEM, "allocating the result buffer");

	err = pthread_barrier_init(&ready_barrier, NULL, cfg.threads * cfg.nphases + 1);
	if (err)
		die(err, "initialising barriers");
	for (p = 0; p < cfg.nphases; p++) {
		struct phase *ph = &cfg.phases[p];

		ph->workers = calloc(cfg.threads, sizeof(*ph->workers));
		if (!ph->workers)
			die(ENOMEM, "allocating %u workers", cfg.threads);
		err = pthread_barrier_init(&ph->start_barrier, NULL, cfg.threads + 1);
		if (!err)
			err = pthread_barrier_init(&ph->end_barrier, NULL, cfg.threads + 1);
		if (err)
			die(err, "initialising barriers");
		setup_workers(ph);
	}
	pthread_barrier_wait(&ready_barrier);

	if (cfg.wait_start) {
		printf("READY %d\n", (int)pid);
		if (fflush(stdout) == EOF)
			die(errno, "writing READY");
		wait_sigusr1(&set);
	}

	/* The measured phases, back to back: barriers and clock reads only. */
	for (p = 0; p < cfg.nphases; p++) {
		struct phase *ph = &cfg.phases[p];

		ph->t0 = now_ns();
		pthread_barrier_wait(&ph->start_barrier);
		pthread_barrier_wait(&ph->end_barrier);
		ph->t1 = now_ns();
	}

	for (p = 0; p < cfg.nphases; p++) {
		struct phase *ph = &cfg.phases[p];
		unsigned long long done = 0, errors = 0, bytes = 0;
		int len;

		for (i = 0; i < cfg.threads; i++) {
			struct worker *w = &ph->workers[i];

			pthread_join(w->tid, NULL);
			done += w->done;
			errors += w->errors;
			bytes += w->bytes;
			free(w->buf);
		}
		errors_all += errors;
		len = snprintf(
		    out + used, LINE_MAX_LEN,
		    "iowork op=%s%s n=%llu done=%llu errors=%llu bytes=%llu pid=%d ns=%llu\n",
		    op_names[ph->op], ph->direct_suffix ? DIRECT_SUFFIX : "", ph->n, done, errors,
		    bytes, (int)pid, ph->t1 - ph->t0);
		if (len > 0)
			used += (size_t)len < LINE_MAX_LEN ? (size_t)len : LINE_MAX_LEN - 1;
	}
	/* One write(2) for all the lines (more only if it comes up short). */
	write_all(out_fd, out, used);

	for (p = 0; p < cfg.nphases; p++) {
		const struct phase *ph = &cfg.phases[p];
		int first_err = 0;

		for (i = 0; i < cfg.threads && !first_err; i++)
			first_err = ph->workers[i].first_err;
		if (!first_err)
			continue;
		if (cfg.nphases == 1)
			fprintf(stderr, "%s: %s: first error: %s\n", prog, op_names[ph->op],
				first_err == ERR_EOF ? "unexpected end of file"
						     : strerror(first_err));
		else
			fprintf(stderr, "%s: phase %u (%s%s %s): first error: %s\n", prog, p + 1,
				op_names[ph->op], ph->direct_suffix ? DIRECT_SUFFIX : "", ph->path,
				first_err == ERR_EOF ? "unexpected end of file"
						     : strerror(first_err));
	}

	if (cfg.hold_exit && cfg.wait_start)
		wait_sigusr1(&set);
	return errors_all ? 1 : 0;
}
