// SPDX-License-Identifier: GPL-2.0
/*
 * At the end of a run: block requests whose start we recorded and whose
 * completion no program saw, and which are no longer in flight. A
 * completion the kernel ran no program for (a kernel skips a tracing
 * program that would nest in another run of it on the same CPU, and
 * counts a recursion miss) is counted at the struct's next use; a struct
 * not used again before the run ends would leave it uncounted.
 *
 * In-flight counts are read before the programs detach (blk_leftovers_mark):
 * a disk with none in flight then had every request that started before
 * completed, while we were attached; an entry of such a request that is
 * still there had its completion hidden. Entries of disks with requests in
 * flight, or that started after the mark, are left alone: they may still
 * be running.
 */
#include <stdbool.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <bpf/bpf.h>

#include "attach.h"
#include "blk_leftovers.h"
#include "iostackbreak.skel.h"

/* Each disk's requests in flight now (/proc/diskstats field 9), in m. */
static void read_inflight(struct blk_leftovers *m)
{
	FILE *f = fopen("/proc/diskstats", "r");
	unsigned long long n[9];
	unsigned int maj, min;
	char name[64], line[512];

	m->nr_disks = 0;
	m->all_idle = f != NULL;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu", &maj, &min,
			   name, &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7],
			   &n[8]) != 12)
			continue;
		if (n[8])
			m->all_idle = false;
		if (m->nr_disks < BLK_LEFTOVERS_DISKS) {
			m->disks[m->nr_disks].dev = KDEV_MAKE(maj, min);
			m->disks[m->nr_disks++].inflight = n[8];
		}
	}
	fclose(f);
}

/* Was the disk idle at the mark? Unknown disks count as busy. */
static bool idle_at_mark(const struct blk_leftovers *m, __u32 dev)
{
	for (unsigned int i = 0; i < m->nr_disks; i++)
		if (m->disks[i].dev == dev)
			return m->disks[i].inflight == 0;
	return false;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void blk_leftovers_mark(struct blk_leftovers *m)
{
	m->at_ns = now_ns();
	read_inflight(m);
	m->valid = true;
}

uint64_t blk_leftovers_count(struct tracer *t, const struct blk_leftovers *m)
{
	int fd = bpf_map__fd(t->skel->maps.rq_starts);
	__u64 key, next, *prev = NULL;
	struct rq_start v;
	uint64_t n = 0;

	if (!m->valid || bpf_map__max_entries(t->skel->maps.rq_starts) <= 1)
		return 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v) || v.excluded)
			continue;
		/* Started before the mark (origin, else issue). */
		if (!(v.origin_ns ?: v.issue_ns) || (v.origin_ns ?: v.issue_ns) >= m->at_ns)
			continue;
		if (!(v.dev ? idle_at_mark(m, v.dev) : m->all_idle))
			continue;
		n++;
	}
	return n;
}

uint64_t aio_leftovers_count(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.aio_starts);
	struct aio_key key, next, *prev = NULL;
	struct aio_start v;
	uint64_t n = 0;

	if (bpf_map__max_entries(t->skel->maps.aio_starts) <= 1)
		return 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (kill((pid_t)v.tgid, 0) && errno == ESRCH)
			n++;
	}
	return n;
}
