// SPDX-License-Identifier: GPL-2.0
/*
 * Counting a recording again (rec_count.h). Each step is the kernel's own,
 * in user space: cell_hist_add() and record_breakdown_or() of
 * bpf/record.bpf.h, record_call() and record_call_by_pid() of
 * bpf/layer.bpf.h, the blk cells of blk_complete() (bpf/blk.bpf.c), with
 * the same bucket function (bpf/hist_bucket.h). A change there is a change
 * here, or the reports of a recording stop being the live run's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rec_count.h"

void rec_count_init(struct rec_count *rc, const struct config *cfg)
{
	memset(rc, 0, sizeof(*rc));
	rc->cfg = cfg;
	/* The kernel's unit_ns (knobs.c), by the same rule. */
	rc->unit_ns = config_count_unit_ns(cfg);
}

/* cell_hist_add(): in_ns, the value is a time (also in whole units). */
static void hist_put(const struct rec_count *rc, struct cell_hist *c, uint64_t v, bool in_ns)
{
	c->buckets[hist_bucket(v)]++;
	if (in_ns && rc->unit_ns)
		c->unit_slots[unit_slot(v / rc->unit_ns)]++;
	if (!c->count || v < c->min_ns)
		c->min_ns = v;
	if (v > c->max_ns)
		c->max_ns = v;
	c->count++;
	c->sum_ns += v;
}

/* The entry of a key, made (zeroed) if new; the set stays sorted by the
 * key's bytes, found by bisection. */
static struct breakdown_entry *entry_of(struct rec_count *rc, const struct breakdown_key *key)
{
	struct breakdown_set *set = &rc->snap.breakdowns;
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(&set->v[mid].key, key, sizeof(*key));

		if (!c)
			return &set->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (set->n == rc->cap) {
		size_t cap = rc->cap ? rc->cap * 2 : 64;
		struct breakdown_entry *v = realloc(set->v, cap * sizeof(*v));

		if (!v) {
			rc->err = -ENOMEM;
			return NULL;
		}
		set->v = v;
		rc->cap = cap;
	}
	memmove(&set->v[lo + 1], &set->v[lo], (set->n - lo) * sizeof(*set->v));
	memset(&set->v[lo], 0, sizeof(*set->v));
	set->v[lo].key = *key;
	set->n++;
	return &set->v[lo];
}

/* record_breakdown_or(): comm, the latest name (NULL: none kept). */
static struct breakdown_entry *breakdown_put(struct rec_count *rc, const struct breakdown_key *key,
					     const char *comm, uint64_t v)
{
	struct breakdown_entry *e = entry_of(rc, key);

	if (!e)
		return NULL;
	if (comm) {
		memcpy(e->comm, comm, COMM_LEN);
		e->comm[COMM_LEN - 1] = '\0';
	}
	e->cell.buckets[hist_bucket(v)]++;
	e->cell.count++;
	e->cell.sum_ns += v;
	if (!e->cell.min_ns || (v ? v : 1) < e->cell.min_ns)
		e->cell.min_ns = v ? v : 1;
	if (v > e->cell.max_ns)
		e->cell.max_ns = v;
	return e;
}

static bool pid_wanted(const struct config *cfg, uint32_t pid)
{
	if (!cfg->nr_pids)
		return true;
	for (unsigned int i = 0; i < cfg->nr_pids; i++)
		if ((uint32_t)cfg->pids[i] == pid)
			return true;
	return false;
}

/* record_call(): a split call's totals, parts and pages per op. */
static void count_split_call(struct rec_count *rc, const struct call_event *e, uint64_t delta)
{
	struct call_totals *t = &rc->snap.calls[e->op];

	t->count++;
	t->total_ns += delta;
	/* A call that counted nothing sends zeros (call_counts()). */
	t->blk_requests += e->blk_requests;
	t->blk_bytes += e->blk_bytes;
	t->journal_requests += e->journal_requests;
	t->journal_flushes += e->journal_flushes;
	t->journal_bytes += e->journal_bytes;
	t->cache_miss_pages += e->cache_miss_pages;
	t->readahead_pages += e->readahead_pages;
	t->writeback_pages += e->writeback_pages;
	t->throttle_pauses += e->throttle_pauses;
	if (e->cache_miss_pages)
		hist_put(rc, &rc->snap.pages[e->op], e->cache_miss_pages, false);
	/* lock_ns is 0 unless the lock part was charged: added either way. */
	for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
		t->lock_ns[k] += e->lock_ns[k];
	for (unsigned int p = 0; p < NR_PARTS; p++)
		if (e->parts_mask & (1U << p))
			hist_put(rc, &rc->snap.parts[e->op][p], e->part_ns[p], true);
}

/* record_process_count(): one of a call's counts, where it is not 0. */
static void process_count(struct rec_count *rc, struct breakdown_key *key, const char *comm,
			  unsigned int op, unsigned int what, uint64_t v)
{
	if (!v)
		return;
	key->cell_idx = PROCESS_COUNT_INDEX(op, what);
	breakdown_put(rc, key, comm, v);
}

/* record_call_by_pid(): -P, a split call per process. */
static void count_call_by_pid(struct rec_count *rc, const struct call_event *e, uint64_t delta,
			      struct breakdown_key *key)
{
	unsigned int op = e->op;

	key->cell_idx = CALL_TOTAL_INDEX(op);
	breakdown_put(rc, key, e->comm, delta);
	for (unsigned int p = 0; p < NR_PARTS; p++) {
		if (!e->part_ns[p])
			continue;
		key->cell_idx = CALL_PART_INDEX(op, p);
		breakdown_put(rc, key, e->comm, e->part_ns[p]);
	}
	process_count(rc, key, e->comm, op, PC_CACHE_MISS, e->cache_miss_pages);
	process_count(rc, key, e->comm, op, PC_READAHEAD, e->readahead_pages);
	process_count(rc, key, e->comm, op, PC_JOURNAL_REQUESTS, e->journal_requests);
	process_count(rc, key, e->comm, op, PC_JOURNAL_FLUSHES, e->journal_flushes);
	process_count(rc, key, e->comm, op, PC_JOURNAL_BYTES, e->journal_bytes);
	process_count(rc, key, e->comm, op, PC_WRITEBACK, e->writeback_pages);
	for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
		process_count(rc, key, e->comm, op, PC_LOCK + k, e->lock_ns[k]);
}

static void count_call(struct rec_count *rc, const struct call_event *e)
{
	uint64_t delta = e->end_ns - e->call_ns;
	bool split = e->flags & EVF_SPLIT;

	if (e->layer >= NR_LAYERS || e->op >= NR_OPS || (split && e->op >= NR_FS_OPS))
		return;
	rc->calls++;
	hist_put(rc, &rc->snap.cells[e->layer][e->op], delta, true);
	if (split)
		count_split_call(rc, e, delta);
	if (rc->cfg->per_process) {
		struct breakdown_key key = { .cell_idx = CELL_INDEX(e->layer, e->op),
					     .tgid = e->pid };

		breakdown_put(rc, &key, e->comm, delta);
		if (split)
			count_call_by_pid(rc, e, delta, &key);
	}
}

/* blk_complete(): a request into its cell, and -P, -D its breakdown. */
static void count_request(struct rec_count *rc, const struct request_event *e)
{
	uint64_t delta = e->end_ns - e->start_ns;
	struct cell_hist *c;

	if (e->op >= NR_OPS)
		return;
	rc->requests++;
	c = &rc->snap.cells[LAYER_BLK][e->op];
	if (e->error) {
		c->errors++;
		c->error_sum_ns += delta;
	} else {
		hist_put(rc, c, delta, true);
	}
	c->bytes += e->data_len;
	if (rc->cfg->per_process || rc->cfg->per_disk) {
		struct breakdown_key key = {
			.cell_idx = CELL_INDEX(LAYER_BLK, e->op),
			.tgid = rc->cfg->per_process ? e->pid : 0,
			.dev = rc->cfg->per_disk ? e->key_dev : 0,
		};
		const char *comm = rc->cfg->per_process ? e->comm : NULL;
		struct breakdown_entry *b;

		if (e->error) {
			b = entry_of(rc, &key);
			if (b && comm) {
				memcpy(b->comm, comm, COMM_LEN);
				b->comm[COMM_LEN - 1] = '\0';
			}
			if (b) {
				b->cell.errors++;
				b->cell.error_sum_ns += delta;
			}
		} else {
			b = breakdown_put(rc, &key, comm, delta);
		}
		if (b)
			b->cell.bytes += e->data_len;
	}
}

void rec_count_event(struct rec_count *rc, const void *data, size_t size)
{
	const uint8_t *kind = data;

	if (!size)
		return;
	if (kind[0] == EV_CALL && size >= sizeof(struct call_event)) {
		const struct call_event *e = data;

		if (pid_wanted(rc->cfg, e->pid))
			count_call(rc, e);
	} else if (kind[0] == EV_REQUEST && size >= sizeof(struct request_event)) {
		const struct request_event *e = data;

		if (pid_wanted(rc->cfg, e->pid))
			count_request(rc, e);
	}
}

void rec_count_finish(struct rec_count *rc, const struct rec_trailer *tr)
{
	memcpy(rc->snap.drops, tr->drops, sizeof(rc->snap.drops));
	memcpy(rc->snap.left_out, tr->left_out, sizeof(rc->snap.left_out));
	rc->snap.wb = tr->wb;
	breakdown_sort_by_key(&rc->snap.breakdowns);
}

void rec_count_free(struct rec_count *rc)
{
	breakdown_free(&rc->snap.breakdowns);
	rc->cap = 0;
}
