// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cgname.h"
#include "layers.h"
#include "report.h"

void report_disk_name(const struct report *r, uint32_t dev, char *name, size_t namesz, char *kdev,
		      size_t kdevsz)
{
	format_kdev(dev, kdev, kdevsz);
	if (r->disk_name)
		r->disk_name(dev, name, namesz);
	else
		snprintf(name, namesz, "%s", kdev);
}

double ns_to_unit(uint64_t ns, enum unit unit)
{
	return (double)ns / (double)unit_ns(unit);
}

void format_iso8601(const struct timespec *ts, char *buf, size_t sz)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sz, "%s.%03ldZ", base, ts->tv_nsec / 1000000);
}

/* A run of skipped cells sharing a reason: "vfs" or "ext4 read/write/open". */
struct skip_unit {
	char label[64];
	const char *why;
	unsigned int layer, nops;
};

void report_skipped_text(FILE *out, const struct plan *plan)
{
	struct skip_unit units[NR_LAYERS * NR_OPS];
	unsigned int n = 0;
	bool printed[NR_LAYERS * NR_OPS] = {};

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		unsigned int first = n, nops = layer_nr_ops(layer);

		for (unsigned int op = 0; op < nops; op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];
			unsigned int u;

			if (!cp->wanted || cp->src != METHOD_NONE ||
			    plan->quiet_layers & (1U << layer))
				continue;
			for (u = first; u < n && strcmp(units[u].why, cp->why); u++)
				;
			if (u == n) {
				snprintf(units[n].label, sizeof(units[n].label), "%s %s",
					 layer_name(layer), op_name(layer, op));
				units[n].why = cp->why;
				units[n].layer = layer;
				units[n++].nops = 1;
				continue;
			}
			size_t used = strlen(units[u].label);

			snprintf(units[u].label + used, sizeof(units[u].label) - used, "/%s",
				 op_name(layer, op));
			units[u].nops++;
		}
		/* Every op of the layer, for one reason: just the layer's name. */
		if (n == first + 1 && units[first].nops == nops)
			snprintf(units[first].label, sizeof(units[first].label), "%s",
				 layer_name(layer));
	}
	/* One line per reason, naming everything it keeps out. */
	for (unsigned int i = 0; i < n; i++) {
		if (printed[i])
			continue;
		fprintf(out, "iostackbreak: skipping %s", units[i].label);
		for (unsigned int j = i + 1; j < n; j++) {
			if (!printed[j] && !strcmp(units[j].why, units[i].why)) {
				fprintf(out, ", %s", units[j].label);
				printed[j] = true;
			}
		}
		fprintf(out, ": %s\n", units[i].why);
	}
}

bool report_layer_broken_down(const struct report *r, unsigned int layer)
{
	if (!r->breakdowns)
		return false;
	if (r->cfg->per_process || r->cfg->per_cgroup)
		return true;
	if (layer == LAYER_BIO)
		return r->cfg->per_disk;
	return layer == LAYER_BLK && (r->cfg->per_disk || r->cfg->per_flags);
}

const char *report_cgroup_name(const struct breakdown_entry *e, char *buf, size_t sz,
			       struct cgroup_ids *ids)
{
	const char *name = e->cgroup;

	if (!name && e->key.cgid) {
		snprintf(buf, sz, "#%llu", (unsigned long long)e->key.cgid);
		name = buf;
	}
	cgroup_runtime_ids(e->cgroup ? e->cgroup : "", ids->container, sizeof(ids->container),
			   ids->pod, sizeof(ids->pod));
	return name;
}

const char *drop_reason_name(unsigned int reason)
{
	static const char *const names[NR_DROP_REASONS] = {
		[DROP_THREAD_MAP_FULL] = "thread_map_full",
		[DROP_RQ_MAP_FULL] = "request_map_full",
		[DROP_BREAKDOWN_MAP_FULL] = "breakdown_map_full",
		[DROP_PROCESS_SET_FULL] = "process_set_full",
		[DROP_PARTS_MAP_FULL] = "breakdown_parts_map_full",
		[DROP_RQ_COMPLETION_MISSED] = "request_completion_missed",
		[DROP_EVENT_LOST] = "event_lost",
		[DROP_THREAD_SLOT_EVICTED] = "thread_slot_evicted",
		[DROP_CALL_EXIT_MISSED] = "call_exit_missed",
		[DROP_URING_MAP_FULL] = "uring_map_full",
		[DROP_URING_COMPLETION_MISSED] = "uring_completion_missed",
		[DROP_AIO_MAP_FULL] = "aio_map_full",
		[DROP_AIO_COMPLETION_MISSED] = "aio_completion_missed",
		[DROP_FAULT_MAP_FULL] = "fault_map_full",
		[DROP_FAULT_ABANDONED] = "fault_abandoned",
		[DROP_RQ_UNSTAMPED] = "request_unstamped",
		[DROP_BIO_MAP_FULL] = "bio_map_full",
		[DROP_BIO_COMPLETION_MISSED] = "bio_completion_missed",
	};

	return reason < NR_DROP_REASONS ? names[reason] : "?";
}

const char *fd_kind_name(unsigned int kind)
{
	static const char *const names[NR_FD_KINDS] = {
		[FD_PIPE] = "pipe",
		[FD_SOCKET] = "socket",
		[FD_OTHER] = "other",
	};

	return kind < NR_FD_KINDS ? names[kind] : "?";
}

bool report_leaves_out(const struct report *r, unsigned int layer)
{
	if (r->cfg->all_fds || layer >= NR_LAYERS || !LAYER_LEAVES_OUT(layer))
		return false;
	for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
		if (r->plan->cells[layer][op].src != METHOD_NONE)
			return true;
	return false;
}

int report_left_out_layer(const struct report *r)
{
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		if (report_leaves_out(r, layer))
			return (int)layer;
	return -1;
}

uint64_t report_left_out_total(const struct report *r, unsigned int layer, unsigned int kind)
{
	uint64_t n = 0;

	if (layer >= NR_LAYERS || !LAYER_LEAVES_OUT(layer) || kind >= NR_FD_KINDS)
		return 0;
	for (unsigned int op = 0; op < NR_OPS; op++)
		n += r->left_out[layer][op][kind];
	return n;
}

uint64_t report_layer_events(const struct report *r, unsigned int layer)
{
	uint64_t n = 0;

	for (unsigned int op = 0; op < NR_OPS; op++)
		n += r->cells[layer][op].count;
	return n;
}

/* cur - prev for runs and time; programs and memory from cur. */
static void stats_diff(struct self_stats *out, const struct self_stats *cur,
		       const struct self_stats *prev)
{
	*out = *cur;
	for (unsigned int l = 0; l < NR_LAYERS; l++) {
		out->layers[l].runs -= prev->layers[l].runs;
		out->layers[l].run_time_ns -= prev->layers[l].run_time_ns;
		out->layers[l].recursion_misses -= prev->layers[l].recursion_misses;
	}
	out->other.runs -= prev->other.runs;
	out->other.run_time_ns -= prev->other.run_time_ns;
	out->other.recursion_misses -= prev->other.recursion_misses;
}

bool report_is_process_calls(const struct breakdown_entry *e)
{
	return e->key.cell_idx >= CALL_TOTAL_INDEX(0) &&
	       e->key.cell_idx < CALL_TOTAL_INDEX(NR_FS_OPS);
}

unsigned int report_process_parts(const struct report *r, const struct breakdown_entry *e,
				  struct cell_hist parts[NR_PARTS])
{
	unsigned int op = e->key.cell_idx - CALL_TOTAL_INDEX(0);

	memset(parts, 0, NR_PARTS * sizeof(*parts));
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *p = &r->breakdowns->v[i];

		if (p->key.tgid != e->key.tgid || p->key.cell_idx < CALL_PART_INDEX(op, 0) ||
		    p->key.cell_idx >= CALL_PART_INDEX(op, NR_PARTS))
			continue;
		parts[p->key.cell_idx - CALL_PART_INDEX(op, 0)] = p->cell;
	}
	for (unsigned int part = 0; part < NR_PARTS; part++)
		cell_pad_zeros(&parts[part], e->cell.count);
	return op;
}

void report_process_counts(const struct report *r, const struct breakdown_entry *e,
			   struct call_totals *t, struct cell_hist *pages)
{
	unsigned int op = e->key.cell_idx - CALL_TOTAL_INDEX(0);
	__u64 *sums[NR_PROCESS_COUNTS] = {
		[PC_CACHE_MISS] = &t->cache_miss_pages,
		[PC_READAHEAD] = &t->readahead_pages,
		[PC_WRITEBACK] = &t->writeback_pages,
		[PC_JOURNAL_REQUESTS] = &t->journal_requests,
		[PC_JOURNAL_FLUSHES] = &t->journal_flushes,
		[PC_JOURNAL_BYTES] = &t->journal_bytes,
	};

	for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
		sums[PC_LOCK + k] = &t->lock_ns[k];
	memset(t, 0, sizeof(*t));
	memset(pages, 0, sizeof(*pages));
	t->count = e->cell.count;
	t->total_ns = e->cell.sum_ns;
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *p = &r->breakdowns->v[i];
		unsigned int what;

		if (p->key.tgid != e->key.tgid || p->key.cgid != e->key.cgid ||
		    p->key.cell_idx < PROCESS_COUNT_INDEX(op, 0) ||
		    p->key.cell_idx >= PROCESS_COUNT_INDEX(op, NR_PROCESS_COUNTS))
			continue;
		what = p->key.cell_idx - PROCESS_COUNT_INDEX(op, 0);
		*sums[what] = p->cell.sum_ns;
		if (what == PC_CACHE_MISS)
			*pages = p->cell;
	}
	cell_pad_zeros(pages, t->count);
}

/* The calls of the interval, each part's histogram counting every call. */
static void calls_diff(struct report *r, const struct snapshot *cur, const struct snapshot *prev)
{
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		const struct call_totals *c = &cur->calls[op], *p = &prev->calls[op];
		struct call_totals *t = &r->calls[op];

		t->count = c->count - p->count;
		t->total_ns = c->total_ns - p->total_ns;
		t->blk_requests = c->blk_requests - p->blk_requests;
		t->blk_bytes = c->blk_bytes - p->blk_bytes;
		t->journal_requests = c->journal_requests - p->journal_requests;
		t->journal_flushes = c->journal_flushes - p->journal_flushes;
		t->journal_bytes = c->journal_bytes - p->journal_bytes;
		t->cache_miss_pages = c->cache_miss_pages - p->cache_miss_pages;
		t->readahead_pages = c->readahead_pages - p->readahead_pages;
		t->writeback_pages = c->writeback_pages - p->writeback_pages;
		t->throttle_pauses = c->throttle_pauses - p->throttle_pauses;
		for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
			t->lock_ns[k] = c->lock_ns[k] - p->lock_ns[k];
		cell_diff_parts(r->parts[op], cur->parts[op], prev->parts[op], NR_PARTS, t->count);
		cell_diff(&r->pages[op], &cur->pages[op], &prev->pages[op]);
		cell_pad_zeros(&r->pages[op], t->count);
	}
}

const char *part_name(unsigned int part)
{
	switch (part) {
	case PART_IO_WAIT:
		return "io_wait";
	case PART_BLOCKED:
		return "blocked";
	case PART_RUNQUEUE:
		return "runqueue";
	case PART_LOCK:
		return "lock";
	case PART_JOURNAL:
		return "journal";
	case PART_THROTTLED:
		return "throttled";
	default:
		return layer_name(part);
	}
}

const char *lock_kind_name(unsigned int kind)
{
	switch (kind) {
	case LOCK_MUTEX:
		return "mutex";
	case LOCK_RWSEM_READ:
		return "rwsem_read";
	case LOCK_RWSEM_WRITE:
		return "rwsem_write";
	default:
		return "other";
	}
}

bool part_traced(const struct plan *plan, bool offcpu, int op, unsigned int part)
{
	if (part >= NR_PARTS)
		return false;
	if (part == PART_LOCK)
		return plan->why[WHY_LOCK];
	if (part == PART_JOURNAL)
		return plan->why[WHY_JOURNAL];
	if (part == PART_THROTTLED)
		return plan->why[WHY_THROTTLE];
	if (part >= NR_CALL_LAYERS)
		return offcpu;
	if (op >= 0 && op < NR_FS_OPS)
		return plan->cells[part][op].src != METHOD_NONE;
	for (op = 0; op < NR_FS_OPS; op++)
		if (plan->cells[part][op].src != METHOD_NONE)
			return true;
	return false;
}

bool report_has_part(const struct report *r, int op, unsigned int part)
{
	if (part_traced(r->plan, r->cfg->offcpu, op, part))
		return true;
	return part < NR_CALL_LAYERS && op >= 0 && op < NR_FS_OPS && r->parts[op][part].sum_ns;
}

int report_build(struct report *r, const struct config *cfg, const struct plan *plan,
		 const struct snapshot *cur, const struct snapshot *prev, double secs,
		 disk_namer disk_name)
{
	static const struct snapshot empty;

	if (!prev)
		prev = &empty;
	memset(r, 0, sizeof(*r));
	clock_gettime(CLOCK_REALTIME, &r->wall);
	r->interval_s = secs;
	r->plan = plan;
	r->cfg = cfg;
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++) {
		r->drops[i] = cur->drops[i] - prev->drops[i];
		r->dropped += r->drops[i];
	}
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < NR_OPS; o++)
			cell_diff(&r->cells[l][o], &cur->cells[l][o], &prev->cells[l][o]);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < NR_OPS; o++)
			for (unsigned int k = 0; k < NR_FD_KINDS; k++)
				r->left_out[l][o][k] = cur->left_out[l][o][k] - prev->left_out[l][o][k];
	if (config_breaks_down(cfg)) {
		if (breakdown_diff(&r->own_breakdowns, &cur->breakdowns, &prev->breakdowns))
			return -ENOMEM;
		breakdown_sort_for_report(&r->own_breakdowns);
		r->breakdowns = &r->own_breakdowns;
		r->disk_name = disk_name;
	}
	if (cfg->pattern) {
		if (pattern_diff(&r->own_patterns, &cur->patterns, &prev->patterns))
			return -ENOMEM;
		r->patterns = &r->own_patterns;
	}
	if (cfg->stats) {
		stats_diff(&r->own_stats, &cur->stats, &prev->stats);
		r->stats = &r->own_stats;
	}
	r->split_layer = plan->split_layer;
	if (r->split_layer >= 0)
		calls_diff(r, cur, prev);
	if (plan->uring_parts)
		uring_split_diff(&r->uring, &cur->uring, &prev->uring);
	if (plan->wb)
		wb_diff(&r->wb, &cur->wb, &prev->wb);
	if (plan->aio_parts)
		aio_split_diff(&r->aio, &cur->aio, &prev->aio);
	for (unsigned int op = 0; op < NR_FAULT_OPS; op++) {
		r->faults[op].count = cur->faults[op].count - prev->faults[op].count;
		r->faults[op].total_ns = cur->faults[op].total_ns - prev->faults[op].total_ns;
		r->faults[op].blk_requests =
		    cur->faults[op].blk_requests - prev->faults[op].blk_requests;
		r->faults[op].blk_bytes = cur->faults[op].blk_bytes - prev->faults[op].blk_bytes;
	}
	return 0;
}

void report_release(struct report *r)
{
	breakdown_free(&r->own_breakdowns);
	r->breakdowns = NULL;
	pattern_free(&r->own_patterns);
	r->patterns = NULL;
}

static void note_gone(struct report *r, uint32_t dev, const char *name,
		      bool (*present)(uint32_t dev))
{
	struct gone_disk *g;

	for (unsigned int i = 0; i < r->nr_gone; i++)
		if (r->gone[i].dev == dev)
			return;
	if (r->nr_gone == MAX_GONE_DISKS || present(dev))
		return;
	g = &r->gone[r->nr_gone++];
	g->dev = dev;
	if (name)
		snprintf(g->name, sizeof(g->name), "%s", name);
	else if (r->disk_name)
		r->disk_name(dev, g->name, sizeof(g->name));
	else
		format_kdev(dev, g->name, sizeof(g->name));
}

void report_find_gone_disks(struct report *r, const struct breakdown_set *seen, uint32_t filter_dev,
			    const char *filter_name, bool (*present)(uint32_t dev))
{
	uint32_t checked[64];
	unsigned int nr_checked = 0;

	if (filter_dev)
		note_gone(r, filter_dev, filter_name, present);
	if (!r->cfg->per_disk)
		return;
	/* Keys repeat a disk per op, process and flags: ask sysfs once each. */
	for (size_t i = 0; i < seen->n; i++) {
		const struct breakdown_entry *e = &seen->v[i];
		bool done = false;

		if (!layer_is_device(CELL_LAYER(e->key.cell_idx)))
			continue;
		for (unsigned int j = 0; j < nr_checked && !done; j++)
			done = checked[j] == e->key.dev;
		if (done)
			continue;
		if (nr_checked < sizeof(checked) / sizeof(checked[0]))
			checked[nr_checked++] = e->key.dev;
		note_gone(r, e->key.dev, NULL, present);
	}
}
