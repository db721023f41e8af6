// SPDX-License-Identifier: GPL-2.0
/*
 * faultwork: major page faults of a known kind, for the fault layer's tests.
 *
 *   faultwork [-s] [-w] FILE PAGES GO
 *   faultwork -a PAGES ROUNDS
 *
 * Writes FILE (PAGES pages, each page's first byte its number), syncs it
 * and drops it from the page cache (POSIX_FADV_DONTNEED), maps it and
 * checks with mincore() that none of its pages is resident; prints
 * "ready PID" and waits until the file GO exists. Then touches every
 * other page (a load; -w: a store, a write fault on a shared mapping)
 * under MADV_RANDOM (-s: MADV_SEQUENTIAL, every page), prints "touched N
 * resident R" and waits until GO is gone, so that the caller can read the
 * process's /proc/PID/stat after the touches and before its exit.
 *
 * -a: minor faults only, for the bench: ROUNDS times maps PAGES pages of
 * anonymous memory (MADV_NOHUGEPAGE), stores to each (a minor fault each)
 * and unmaps them;
 * prints "minor N ns_per_fault T", N the faults, T the wall time per fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "faultwork: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Pages of the mapping in memory now. */
static size_t resident(void *map, size_t len, size_t page)
{
	size_t n = (len + page - 1) / page, count = 0;
	unsigned char *vec = malloc(n);

	if (!vec || mincore(map, len, vec))
		die("mincore");
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

/* Polls for GO to exist (want 1) or be gone (want 0). */
static void wait_for(const char *go, int want)
{
	const struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	while ((access(go, F_OK) == 0) != want)
		nanosleep(&ten_ms, NULL);
}

static int minor_faults(size_t pages, size_t rounds, size_t page)
{
	struct timespec a, b;
	double ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t r = 0; r < rounds; r++) {
		volatile unsigned char *m = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			die("mmap");
		/* A fault a page: no transparent huge page takes 512 at once. */
		if (madvise((void *)m, pages * page, MADV_NOHUGEPAGE))
			die("madvise");
		for (size_t i = 0; i < pages; i++)
			m[i * page] = 1;
		munmap((void *)m, pages * page);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("minor %zu ns_per_fault %.1f\n", pages * rounds, ns / (double)(pages * rounds));
	return 0;
}

int main(int argc, char **argv)
{
	int seq = 0, wr = 0, anon = 0, opt, fd;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages, len, touched = 0, step;
	volatile unsigned char *map;
	unsigned long sum = 0;
	char *buf;

	while ((opt = getopt(argc, argv, "asw")) != -1) {
		if (opt == 'a')
			anon = 1;
		else if (opt == 's')
			seq = 1;
		else if (opt == 'w')
			wr = 1;
		else
			return 2;
	}
	if (anon && argc - optind == 2)
		return minor_faults(strtoul(argv[optind], NULL, 0),
				    strtoul(argv[optind + 1], NULL, 0), page);
	if (argc - optind != 3) {
		fprintf(stderr, "usage: faultwork [-s] [-w] FILE PAGES GO | -a PAGES ROUNDS\n");
		return 2;
	}
	pages = strtoul(argv[optind + 1], NULL, 0);
	len = pages * page;
	fd = open(argv[optind], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !pages)
		die("open");
	buf = calloc(1, page);
	if (!buf)
		die("calloc");
	for (size_t i = 0; i < pages; i++) {
		buf[0] = (char)i;
		if (write(fd, buf, page) != (ssize_t)page)
			die("write");
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fsync/fadvise");
	map = mmap(NULL, len, PROT_READ | (wr ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	if (madvise((void *)map, len, seq ? MADV_SEQUENTIAL : MADV_RANDOM))
		die("madvise");
	if (resident((void *)map, len, page)) {
		fprintf(stderr, "faultwork: %zu pages still cached after DONTNEED\n",
			resident((void *)map, len, page));
		return 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	wait_for(argv[optind + 2], 1);
	/* Random: every other page, so that no fault's read-around (none
	 * under MADV_RANDOM) could bring the next one in. */
	step = seq ? 1 : 2;
	for (size_t i = 0; i < pages; i += step, touched++) {
		if (wr)
			map[i * page + 1] = 1;
		else
			sum += map[i * page];
	}
	printf("touched %zu resident %zu sum %lu\n", touched, resident((void *)map, len, page),
	       sum);
	fflush(stdout);
	wait_for(argv[optind + 2], 0);
	return 0;
}
