// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgname.h"
#include "collect.h"
#include "layers.h"
#include "pattern_maps.h"
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

/* Calls split into parts: totals per op, a histogram per op and part. */
static int read_calls(struct tracer *t, struct snapshot *snap, int ncpu)
{
	int ops_fd = bpf_map__fd(t->skel->maps.call_ops);
	int parts_fd = bpf_map__fd(t->skel->maps.call_parts);
	struct call_totals *ct = calloc((size_t)ncpu, sizeof(*ct));
	struct cell_hist *ch = calloc((size_t)ncpu, sizeof(*ch));
	int ret = 0;

	if (!ct || !ch) {
		ret = -ENOMEM;
		goto out;
	}
	for (__u32 op = 0; op < NR_FS_OPS && !ret; op++) {
		struct call_totals *sum = &snap->calls[op];

		if (bpf_map_lookup_elem(ops_fd, &op, ct)) {
			ret = -errno;
			break;
		}
		/* Every field a count or a sum: added as they come. */
		_Static_assert(sizeof(struct call_totals) % sizeof(__u64) == 0,
			       "call_totals: __u64 fields only");
		for (int cpu = 0; cpu < ncpu; cpu++)
			for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
				((__u64 *)sum)[i] += ((const __u64 *)&ct[cpu])[i];
		/* Each part's histogram, then the pages' (part NR_PARTS). */
		for (__u32 part = 0; part <= NR_PARTS; part++) {
			__u32 idx = part < NR_PARTS ? CALL_PARTS_INDEX(op, part) : CALL_PAGES_INDEX(op);
			struct cell_hist *h = part < NR_PARTS ? &snap->parts[op][part] : &snap->pages[op];

			if (bpf_map_lookup_elem(parts_fd, &idx, ch)) {
				ret = -errno;
				break;
			}
			for (int cpu = 0; cpu < ncpu; cpu++)
				cell_add(h, &ch[cpu]);
		}
	}
out:
	free(ct);
	free(ch);
	return ret;
}

/* io_uring requests split into parts: totals per op, a histogram per op
 * and part. */
static int read_uring_parts(struct tracer *t, struct uring_split *u, int ncpu)
{
	int ops_fd = bpf_map__fd(t->skel->maps.uring_ops);
	int parts_fd = bpf_map__fd(t->skel->maps.uring_parts);
	struct call_totals *ct = calloc((size_t)ncpu, sizeof(*ct));
	struct cell_hist *ch = calloc((size_t)ncpu, sizeof(*ch));
	int ret = 0;

	for (__u32 op = 0; ct && ch && op < NR_URING_OPS && !ret; op++) {
		if (bpf_map_lookup_elem(ops_fd, &op, ct)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++) {
			u->ops[op].count += ct[cpu].count;
			u->ops[op].total_ns += ct[cpu].total_ns;
			u->ops[op].blk_requests += ct[cpu].blk_requests;
			u->ops[op].blk_bytes += ct[cpu].blk_bytes;
		}
		for (__u32 p = 0; p < NR_URING_PARTS && !ret; p++) {
			__u32 idx = op * NR_URING_PARTS + p;

			if (bpf_map_lookup_elem(parts_fd, &idx, ch))
				ret = -errno;
			for (int cpu = 0; cpu < ncpu && !ret; cpu++)
				cell_add(&u->parts[op][p], &ch[cpu]);
		}
	}
	if (!ct || !ch)
		ret = -ENOMEM;
	free(ct);
	free(ch);
	return ret;
}

/* Major faults: totals per op. */
static int read_faults(struct tracer *t, struct fault_totals *f, int ncpu)
{
	int fd = bpf_map__fd(t->skel->maps.fault_ops);
	struct fault_totals *ft = calloc((size_t)ncpu, sizeof(*ft));
	int ret = ft ? 0 : -ENOMEM;

	for (__u32 op = 0; !ret && op < NR_FAULT_OPS; op++) {
		if (bpf_map_lookup_elem(fd, &op, ft)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++) {
			f[op].count += ft[cpu].count;
			f[op].total_ns += ft[cpu].total_ns;
			f[op].blk_requests += ft[cpu].blk_requests;
			f[op].blk_bytes += ft[cpu].blk_bytes;
		}
	}
	free(ft);
	return ret;
}

/* aio requests split into parts: totals per op, a histogram per op and
 * part. */
static int read_aio_parts(struct tracer *t, struct aio_split *a, int ncpu)
{
	int ops_fd = bpf_map__fd(t->skel->maps.aio_ops);
	int parts_fd = bpf_map__fd(t->skel->maps.aio_parts);
	struct aio_totals *at = calloc((size_t)ncpu, sizeof(*at));
	struct cell_hist *ch = calloc((size_t)ncpu, sizeof(*ch));
	int ret = at && ch ? 0 : -ENOMEM;

	for (__u32 op = 0; !ret && op < NR_AIO_OPS; op++) {
		struct aio_totals *o = &a->ops[op];

		if (bpf_map_lookup_elem(ops_fd, &op, at)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++) {
			o->count += at[cpu].count;
			o->total_ns += at[cpu].total_ns;
			o->inline_count += at[cpu].inline_count;
			o->blk_requests += at[cpu].blk_requests;
			o->blk_flushes += at[cpu].blk_flushes;
			o->blk_bytes += at[cpu].blk_bytes;
			o->blk_ns += at[cpu].blk_ns;
		}
		for (__u32 p = 0; p < NR_AIO_PARTS && !ret; p++) {
			__u32 idx = op * NR_AIO_PARTS + p;

			if (bpf_map_lookup_elem(parts_fd, &idx, ch))
				ret = -errno;
			for (int cpu = 0; cpu < ncpu && !ret; cpu++)
				cell_add(&a->parts[op][p], &ch[cpu]);
		}
	}
	free(at);
	free(ch);
	return ret;
}

/* Adds the drops map's counts, by reason, to drops. */
static int read_drops(struct tracer *t, uint64_t drops[NR_DROP_REASONS], int ncpu)
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
			drops[reason] += percpu[cpu];
	}
	free(percpu);
	return ret;
}

/* Calls left out of the syscall, vfs and io_uring layers, by (layer, op, kind). */
static int read_left_out(struct tracer *t, struct snapshot *snap, int ncpu)
{
	int fd = bpf_map__fd(t->skel->maps.left_out);
	uint64_t *percpu = calloc((size_t)ncpu, sizeof(*percpu));
	int ret = 0;

	if (!percpu)
		return -ENOMEM;
	for (__u32 l = 0; l < NR_LAYERS && !ret; l++) {
		for (__u32 op = 0; LAYER_LEAVES_OUT(l) && op < layer_nr_ops(l) && !ret; op++) {
			for (__u32 kind = 0; kind < NR_FD_KINDS; kind++) {
				__u32 idx = LEFT_OUT_INDEX(l, op, kind);

				if (bpf_map_lookup_elem(fd, &idx, percpu)) {
					ret = -errno;
					break;
				}
				for (int cpu = 0; cpu < ncpu; cpu++)
					snap->left_out[l][op][kind] += percpu[cpu];
			}
		}
	}
	free(percpu);
	return ret;
}

uint64_t tracer_drops(struct tracer *t, unsigned int reason)
{
	uint64_t drops[NR_DROP_REASONS] = {};
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0 || read_drops(t, drops, ncpu))
		return 0;
	return reason < NR_DROP_REASONS ? drops[reason] : 0;
}

/*
 * -G: the name of a cgroup: its directory's path now, else (gone) the one
 * the kernel noted when it first saw it, "/a/b" from names[] leaf first.
 */
static const char *cgroup_of(struct tracer *t, uint64_t id)
{
	const char *name = cgroup_name(id);
	struct cgroup_path p;
	char path[CG_PATH_DEPTH * CG_NAME_LEN + 8];
	size_t used = 0;

	if (name ||
	    bpf_map__lookup_elem(t->skel->maps.cgroup_paths, &id, sizeof(id), &p, sizeof(p), 0))
		return name;
	if (p.truncated)
		used = (size_t)snprintf(path, sizeof(path), "/...");
	for (unsigned int i = p.depth < CG_PATH_DEPTH ? p.depth : CG_PATH_DEPTH; i-- > 0;) {
		p.names[i][CG_NAME_LEN - 1] = '\0';
		used += (size_t)snprintf(path + used, sizeof(path) - used, "/%s", p.names[i]);
	}
	if (!used)
		snprintf(path, sizeof(path), "/");
	return cgroup_name_fallback(id, path);
}

/* Every key of the breakdown map; keys only appear while it is walked (-G's
 * expiry deletes them after, in the same thread), so the walk is safe. */
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
		/* Named now, while the cgroup is likely still there. */
		if (key.cgid)
			e->cgroup = cgroup_of(t, key.cgid);
		cell_add(&e->cell, &value.cell);
	}
	breakdown_sort_by_key(&snap->breakdowns);
	return 0;
}

/* The parts of one process's calls of an op (-P) sum to their total. */
static bool process_calls_whole(const struct breakdown_set *set, const struct breakdown_entry *e)
{
	unsigned int op = e->key.cell_idx - CALL_TOTAL_INDEX(0);
	uint64_t sum = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct breakdown_entry *p = &set->v[i];

		if (p->key.tgid == e->key.tgid && p->key.cell_idx >= CALL_PART_INDEX(op, 0) &&
		    p->key.cell_idx < CALL_PART_INDEX(op, NR_PARTS))
			sum += p->cell.sum_ns;
	}
	return sum == e->cell.sum_ns;
}

/*
 * The maps are read one after another while the kernel goes on writing
 * them: a call that ends between two reads is in one and not the other.
 * The parts of calls have invariants that show it: per op, the root
 * cell's count is the calls' count and the parts sum to their time (per
 * process too, unless that map ran full).
 */
static bool calls_consistent(const struct tracer *t, const struct snapshot *snap)
{
	const struct breakdown_set *set = &snap->breakdowns;

	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		uint64_t sum = 0;

		if (snap->cells[t->plan->split_layer][op].count != snap->calls[op].count)
			return false;
		for (unsigned int part = 0; part < NR_PARTS; part++)
			sum += snap->parts[op][part].sum_ns;
		if (sum != snap->calls[op].total_ns ||
		    snap->pages[op].sum_ns != snap->calls[op].cache_miss_pages)
			return false;
	}
	if (snap->drops[DROP_PARTS_MAP_FULL])
		return true;
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].key.cell_idx >= CALL_TOTAL_INDEX(0) &&
		    set->v[i].key.cell_idx < CALL_TOTAL_INDEX(NR_FS_OPS) &&
		    !process_calls_whole(set, &set->v[i]))
			return false;
	return true;
}

/* Written back for the dirtiers: per-CPU counts and cells, the map's size. */
static int read_writeback(struct tracer *t, struct wb_snapshot *w, int ncpu)
{
	int counts_fd = bpf_map__fd(t->skel->maps.wb_counts);
	int cells_fd = bpf_map__fd(t->skel->maps.wb_cells);
	int ages_fd = bpf_map__fd(t->skel->maps.wb_ages);
	int dirtied_fd = bpf_map__fd(t->skel->maps.dirtied);
	struct cell_hist *ch = calloc((size_t)ncpu, sizeof(*ch));
	__u64 *v = calloc((size_t)ncpu, sizeof(*v));
	struct wb_page key, *prev = NULL;
	int ret = 0;

	if (!ch || !v) {
		ret = -ENOMEM;
		goto out;
	}
	for (__u32 i = 0; i < NR_WB_COUNTS && !ret; i++) {
		if (bpf_map_lookup_elem(counts_fd, &i, v))
			ret = -errno;
		for (int cpu = 0; cpu < ncpu && !ret; cpu++)
			w->counts[i] += v[cpu];
	}
	for (__u32 i = 0; i < NR_BLK_OPS + NR_WB_AGES && !ret; i++) {
		__u32 idx = i < NR_BLK_OPS ? i : i - NR_BLK_OPS;
		struct cell_hist *h = i < NR_BLK_OPS ? &w->cells[idx] : &w->ages[idx];

		if (bpf_map_lookup_elem(i < NR_BLK_OPS ? cells_fd : ages_fd, &idx, ch)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			cell_add(h, &ch[cpu]);
	}
	/* Entries still there: the evicted are the rest (wb_count_evicted). */
	while (!ret && !bpf_map_get_next_key(dirtied_fd, prev, &key)) {
		w->present++;
		prev = &key;
	}
	wb_count_evicted(w);
out:
	free(ch);
	free(v);
	return ret;
}

/* Reads read again when a call ended halfway through the snapshot. */
#define SNAPSHOT_TRIES 20

static int snapshot_read(struct tracer *t, struct snapshot *snap, int ncpu)
{
	int ret;

	memset(snap, 0, sizeof(*snap));
	ret = read_cells(t, snap, ncpu);
	if (!ret)
		ret = read_drops(t, snap->drops, ncpu);
	snap->drops[DROP_RQ_COMPLETION_MISSED] += t->blk_missed_at_end;
	snap->drops[DROP_AIO_COMPLETION_MISSED] += t->aio_missed_at_end;
	if (!ret && t->breaking_down)
		ret = read_breakdowns(t, snap);
	if (!ret && t->plan->split_layer >= 0)
		ret = read_calls(t, snap, ncpu);
	if (!ret && t->plan->uring_parts)
		ret = read_uring_parts(t, &snap->uring, ncpu);
	if (!ret && t->plan->aio_parts)
		ret = read_aio_parts(t, &snap->aio, ncpu);
	if (!ret && t->plan->cells[LAYER_FAULT][0].src != METHOD_NONE)
		ret = read_faults(t, snap->faults, ncpu);
	if (!ret && pattern_on(t))
		ret = pattern_read(t, &snap->patterns);
	if (!ret && t->with_stats)
		ret = stats_read(t, &snap->stats);
	if (!ret && t->plan->wb)
		ret = read_writeback(t, &snap->wb, ncpu);
	/* Last: nothing ties it to the cells, so it stays out of their window. */
	if (!ret)
		ret = read_left_out(t, snap, ncpu);
	return ret;
}

int snapshot_take(struct tracer *t, struct snapshot *snap)
{
	int ncpu = libbpf_num_possible_cpus();
	int ret;

	if (ncpu <= 0)
		return -EINVAL;
	for (int i = 0;; i++) {
		ret = snapshot_read(t, snap, ncpu);
		/* Without split calls nothing ties the maps together; after many
		 * tries under a storm of calls, the last reading stands. */
		if (ret || t->plan->split_layer < 0 || calls_consistent(t, snap) ||
		    i == SNAPSHOT_TRIES - 1)
			return ret;
		snapshot_free(snap);
	}
}

void snapshot_free(struct snapshot *snap)
{
	breakdown_free(&snap->breakdowns);
	pattern_free(&snap->patterns);
}

/* Adds id to the set *v of *n ids, once. */
static void add_once(uint64_t **v, unsigned int *n, uint64_t id)
{
	uint64_t *grown;

	for (unsigned int i = 0; i < *n; i++)
		if ((*v)[i] == id)
			return;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return; /* not forgotten: a few bytes kept */
	*v = grown;
	(*v)[(*n)++] = id;
}

unsigned int snapshot_expire_cgroups(struct tracer *t, struct snapshot *snap, unsigned int grace_s,
				     double now)
{
	int fd = bpf_map__fd(t->skel->maps.breakdown_cells);
	struct breakdown_set *set = &snap->breakdowns;
	uint64_t last = 0, *gone = NULL;
	unsigned int nr_gone = 0;
	bool expired = false;
	size_t kept = 0;

	/* Keys come by cell, then by cgroup (with -P, by process first): ask
	 * about a cgroup once per run of its keys. */
	for (size_t i = 0; i < set->n; i++) {
		struct breakdown_entry *e = &set->v[i];

		if (e->key.cgid && e->key.cgid != last) {
			last = e->key.cgid;
			expired = cgroup_gone_for(last, now) >= grace_s;
			if (expired)
				add_once(&gone, &nr_gone, last);
		}
		if (e->key.cgid && expired) {
			/* The kernel may write the key again (a late request of
			 * the cgroup): it comes back, and goes again. */
			bpf_map_delete_elem(fd, &e->key);
			continue;
		}
		set->v[kept++] = *e;
	}
	set->n = kept;
	/* Forgotten after the walk: an id may have several runs. */
	for (unsigned int i = 0; i < nr_gone; i++) {
		bpf_map__delete_elem(t->skel->maps.cgroup_paths, &gone[i], sizeof(gone[i]), 0);
		cgroup_forget(gone[i]);
	}
	free(gone);
	return nr_gone;
}
