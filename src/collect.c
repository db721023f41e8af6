// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect.h"
#include "iostackbreak.skel.h"

int snapshot_take(struct tracer *t, struct snapshot *snap)
{
	int ncpu = libbpf_num_possible_cpus();
	int cells_fd = bpf_map__fd(t->skel->maps.cells);
	int drops_fd = bpf_map__fd(t->skel->maps.drops);
	struct cell *percpu;
	uint64_t *drops;
	int ret = 0;

	if (ncpu <= 0)
		return -EINVAL;
	percpu = calloc((size_t)ncpu, sizeof(*percpu));
	drops = calloc((size_t)ncpu, sizeof(*drops));
	if (!percpu || !drops) {
		ret = -ENOMEM;
		goto out;
	}
	memset(snap, 0, sizeof(*snap));
	for (__u32 idx = 0; idx < NR_CELLS; idx++) {
		if (bpf_map_lookup_elem(cells_fd, &idx, percpu)) {
			ret = -errno;
			goto out;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			cell_add(&snap->cells[idx / NR_OPS][idx % NR_OPS], &percpu[cpu]);
	}
	for (__u32 reason = 0; reason < NR_DROP_REASONS; reason++) {
		if (bpf_map_lookup_elem(drops_fd, &reason, drops)) {
			ret = -errno;
			goto out;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			snap->dropped += drops[cpu];
	}
out:
	free(percpu);
	free(drops);
	return ret;
}
