// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect.h"
#include "iostackbreak.skel.h"

static int read_cells(struct tracer *t, struct snapshot *snap, int ncpu)
{
	int fd = bpf_map__fd(t->skel->maps.cells);
	struct cell_hist *percpu = calloc((size_t)ncpu, sizeof(*percpu));
	int ret = 0;

	if (!percpu)
		return -ENOMEM;
	for (__u32 idx = 0; idx < NR_CELLS; idx++) {
		if (bpf_map_lookup_elem(fd, &idx, percpu)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			cell_add(&snap->cells[CELL_LAYER(idx)][CELL_OP(idx)], &percpu[cpu]);
	}
	free(percpu);
	return ret;
}

static int read_drops(struct tracer *t, struct snapshot *snap, int ncpu)
{
	int fd = bpf_map__fd(t->skel->maps.drops);
	uint64_t *percpu = calloc((size_t)ncpu, sizeof(*percpu));
	int ret = 0;

	if (!percpu)
		return -ENOMEM;
	for (__u32 reason = 0; reason < NR_DROP_REASONS; reason++) {
		if (bpf_map_lookup_elem(fd, &reason, percpu)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			snap->drops[reason] += percpu[cpu];
	}
	free(percpu);
	return ret;
}

/* Every key of the breakdown map; keys only appear, so the walk is safe. */
static int read_breakdowns(struct tracer *t, struct snapshot *snap)
{
	int fd = bpf_map__fd(t->skel->maps.breakdown_cells);
	size_t cap = bpf_map__max_entries(t->skel->maps.breakdown_cells);
	struct breakdown_key key, next, *prev = NULL;
	struct breakdown_cell value;

	snap->breakdowns.v = calloc(cap, sizeof(*snap->breakdowns.v));
	if (!snap->breakdowns.v)
		return -ENOMEM;
	while (snap->breakdowns.n < cap && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &value))
			continue;
		struct breakdown_entry *e = &snap->breakdowns.v[snap->breakdowns.n++];

		e->key = key;
		memcpy(e->comm, value.comm, sizeof(e->comm));
		e->comm[COMM_LEN - 1] = '\0';
		cell_add(&e->cell, &value.cell);
	}
	breakdown_sort_by_key(&snap->breakdowns);
	return 0;
}

int snapshot_take(struct tracer *t, struct snapshot *snap)
{
	int ncpu = libbpf_num_possible_cpus();
	int ret;

	if (ncpu <= 0)
		return -EINVAL;
	memset(snap, 0, sizeof(*snap));
	ret = read_cells(t, snap, ncpu);
	if (!ret)
		ret = read_drops(t, snap, ncpu);
	if (!ret && t->breaking_down)
		ret = read_breakdowns(t, snap);
	if (!ret && t->with_stats)
		ret = stats_read(t, &snap->stats);
	return ret;
}

void snapshot_free(struct snapshot *snap)
{
	breakdown_free(&snap->breakdowns);
}
