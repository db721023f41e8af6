// SPDX-License-Identifier: GPL-2.0
/* The verdict line (rules in verdict.h and the man page). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "layers.h"
#include "verdict.h"

#define MAX_PARTS_SHOWN 4
#define SPREAD_FACTOR 10 /* p99 at least this many times p50 */
#define SPREAD_MIN_CALLS 10

void format_duration(uint64_t ns, char *buf, size_t sz)
{
	static const struct {
		uint64_t ns;
		const char *name;
	} units[] = { { 1000000000ULL, "s" }, { 1000000ULL, "ms" }, { 1000ULL, "us" } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = (double)ns / (double)units[i].ns;

		if (ns < units[i].ns)
			continue;
		/* Two significant digits below 10, whole numbers above. */
		snprintf(buf, sz, v < 10 ? "%.1f %s" : "%.0f %s", v, units[i].name);
		return;
	}
	snprintf(buf, sz, "%" PRIu64 " ns", ns);
}

/*
 * A line being written: appends past the end are cut, never overflow.
 * whole: a part of a call goes in whole or not at all (the text report's
 * lines end at VERDICT_COLS, and half a part would say something false).
 */
struct line {
	char *buf;
	size_t sz, n;
	bool whole;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *ln, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (ln->n + 1 >= ln->sz)
		return;
	va_start(ap, fmt);
	w = vsnprintf(ln->buf + ln->n, ln->sz - ln->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		ln->n = ln->n + (size_t)w < ln->sz ? ln->n + (size_t)w : ln->sz - 1;
}

void format_count(uint64_t n, char *buf, size_t sz)
{
	char digits[32];
	size_t len, out = 0;

	snprintf(digits, sizeof(digits), "%" PRIu64, n);
	len = strlen(digits);
	for (size_t i = 0; i < len && out + 2 < sz; i++) {
		if (i && (len - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
}

static bool timed_any(const struct report *r, unsigned int layer)
{
	for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
		if (r->cells[layer][op].count)
			return true;
	return false;
}

/* Rule 1: the root layer when calls are split, else the outermost layer
 * with events (also when the root timed nothing: block requests with no
 * traced call, such as writeback); -1 when nothing was timed. */
static int judged_layer(const struct report *r)
{
	if (r->split_layer >= 0 && timed_any(r, (unsigned int)r->split_layer))
		return r->split_layer;
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		if (timed_any(r, l))
			return (int)l;
	return -1;
}

static bool split(const struct report *r, unsigned int layer, unsigned int op)
{
	return r->split_layer >= 0 && (int)layer == r->split_layer && op < NR_FS_OPS &&
	       r->calls[op].count;
}

/* The disk the io_wait was for: -d's, else the busiest of -D, else none. */
static void waited_disk(const struct report *r, char *buf, size_t sz)
{
	uint64_t best = 0;
	uint32_t best_dev = 0;
	bool several = false;

	if (r->cfg->disk) {
		snprintf(buf, sz, "%s", r->cfg->disk);
		return;
	}
	buf[0] = '\0';
	if (!r->breakdowns || !r->cfg->per_disk)
		return;
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];

		if (CELL_LAYER(e->key.cell_idx) != LAYER_BLK || !e->cell.count)
			continue;
		if (best && e->key.dev != best_dev)
			several = true;
		if (e->cell.sum_ns > best) {
			best = e->cell.sum_ns;
			best_dev = e->key.dev;
		}
	}
	if (!best)
		return;
	if (r->disk_name)
		r->disk_name(best_dev, buf, sz);
	else
		format_kdev(best_dev, buf, sz);
	if (several && strlen(buf) + 12 < sz)
		strcat(buf, " and others");
}

/* What part p of op's calls was: "waiting for vda (1.3 requests/call)". */
static void part_phrase(const struct report *r, unsigned int op, unsigned int p, bool requests,
			struct line *ln)
{
	const struct call_totals *c = &r->calls[op];

	if (p == PART_IO_WAIT) {
		char disk[64];

		waited_disk(r, disk, sizeof(disk));
		put(ln, "waiting for %s", disk[0] ? disk : "I/O");
		if (requests && c->blk_requests) {
			double per_call = (double)c->blk_requests / (double)c->count;

			/* 0.024, not 0.0: a few calls of many went to the disk. */
			put(ln, per_call < 1 ? " (%.2g requests/call)" : " (%.1f requests/call)",
			    per_call);
		}
	} else if (p < NR_CALL_LAYERS) {
		put(ln, "%s on CPU", layer_name(p));
	} else {
		put(ln, "%s", part_name(p));
	}
}

/* The parts of op's calls by share, largest first: at most n, of 1% or more. */
static unsigned int largest_parts(const struct report *r, unsigned int op,
				  unsigned int *best, unsigned int n)
{
	bool used[NR_PARTS] = { false };
	unsigned int shown;

	for (shown = 0; shown < n; shown++) {
		uint64_t best_ns = 0;
		unsigned int b = NR_PARTS;

		for (unsigned int p = 0; p < NR_PARTS; p++)
			if (!used[p] && r->parts[op][p].sum_ns > best_ns) {
				best_ns = r->parts[op][p].sum_ns;
				b = p;
			}
		if (b == NR_PARTS || 100.0 * (double)best_ns / (double)r->calls[op].total_ns < 1.0)
			break;
		used[b] = true;
		best[shown] = b;
	}
	return shown;
}

static double part_share(const struct report *r, unsigned int op, unsigned int p)
{
	return 100.0 * (double)r->parts[op][p].sum_ns / (double)r->calls[op].total_ns;
}

/* "82% waiting for vda (1.3 requests/call), 12% runqueue, 6% ext4 on CPU" */
static void parts_phrase(const struct report *r, unsigned int op, struct line *ln)
{
	unsigned int best[MAX_PARTS_SHOWN];
	unsigned int n = largest_parts(r, op, best, MAX_PARTS_SHOWN);

	for (unsigned int i = 0; i < n; i++) {
		char buf[160];
		struct line one = { .buf = buf, .sz = sizeof(buf) };

		put(&one, "%s%.0f%% ", i ? ", " : ": ", part_share(r, op, best[i]));
		part_phrase(r, op, best[i], true, &one);
		/* The largest part says the most: without its requests if need be. */
		if (ln->whole && !i && ln->n + one.n >= ln->sz) {
			one.n = 0;
			put(&one, ": %.0f%% ", part_share(r, op, best[i]));
			part_phrase(r, op, best[i], false, &one);
		}
		if (ln->whole && ln->n + one.n >= ln->sz)
			break;
		put(ln, "%s", buf);
	}
}

/* One op's phrase; spread: named for rule 2. */
static void op_phrase(const struct report *r, unsigned int layer, unsigned int op, bool spread,
		      struct line *ln)
{
	const struct cell_hist *c = &r->cells[layer][op];
	uint64_t p50 = cell_percentile(c, 50), p99 = cell_percentile(c, 99);
	char p99s[32], count[32];

	format_duration(p99, p99s, sizeof(p99s));
	format_count(c->count, count, sizeof(count));
	/* The syscall layer is the one people mean by "read": it goes unnamed. */
	if (layer != LAYER_SYSCALL)
		put(ln, "%s ", layer_name(layer));
	put(ln, "%s p99 %s (%s %s", op_name(layer, op), p99s, count,
	    layer_count_noun(layer, c->count));
	if (spread && p50)
		put(ln, ", p99 %.0fx p50", (double)p99 / (double)p50);
	put(ln, ")");
	if (split(r, layer, op))
		parts_phrase(r, op, ln);
}

bool cell_long_tail(const struct cell_hist *c)
{
	uint64_t p50 = cell_percentile(c, 50);

	return c->count >= SPREAD_MIN_CALLS && p50 && cell_percentile(c, 99) >= SPREAD_FACTOR * p50;
}

/* The op of layer l with the most time: that of its calls when split. */
static unsigned int busiest_op(const struct report *r, unsigned int l, uint64_t *ns_out)
{
	unsigned int top = 0;
	uint64_t top_ns = 0;

	for (unsigned int op = 0; op < layer_nr_ops(l); op++) {
		uint64_t ns = split(r, l, op) ? r->calls[op].total_ns : r->cells[l][op].sum_ns;

		if (ns > top_ns) {
			top_ns = ns;
			top = op;
		}
	}
	if (ns_out)
		*ns_out = top_ns;
	return top;
}

void report_verdict(const struct report *r, char *buf, size_t sz)
{
	struct line ln = { .buf = buf, .sz = sz, .n = 0 };
	int layer = judged_layer(r);
	unsigned int top, l;

	if (!sz)
		return;
	buf[0] = '\0';
	if (layer < 0) {
		put(&ln, "no I/O was timed");
		return;
	}
	l = (unsigned int)layer;
	top = busiest_op(r, l, NULL);
	op_phrase(r, l, top, cell_long_tail(&r->cells[l][top]), &ln);
	for (unsigned int op = 0; op < layer_nr_ops(l); op++) {
		if (op == top || !cell_long_tail(&r->cells[l][op]))
			continue;
		put(&ln, "; ");
		op_phrase(r, l, op, true, &ln);
	}
}

/* "verdict: fsync took the most time (152 ms), 82% of it waiting for vda" */
static void headline(const struct report *r, unsigned int l, unsigned int top, uint64_t ns,
		     struct line *ln)
{
	unsigned int best[1];
	char total[32];

	format_duration(ns, total, sizeof(total));
	put(ln, "verdict: ");
	if (l != LAYER_SYSCALL)
		put(ln, "%s ", layer_name(l));
	put(ln, "%s took the most time (%s)", op_name(l, top), total);
	if (!split(r, l, top) || !largest_parts(r, top, best, 1))
		return;
	put(ln, ", %.0f%% of it ", part_share(r, top, best[0]));
	part_phrase(r, top, best[0], false, ln);
}

unsigned int report_verdict_lines(const struct report *r, char lines[][VERDICT_COLS + 1],
				  unsigned int max)
{
	int layer = judged_layer(r);
	unsigned int top, l, n = 0;
	uint64_t top_ns;

	if (!max)
		return 0;
	if (layer < 0) {
		snprintf(lines[n++], VERDICT_COLS + 1, "verdict: no I/O was timed");
		return n;
	}
	l = (unsigned int)layer;
	top = busiest_op(r, l, &top_ns);
	{
		struct line ln = { .buf = lines[n++], .sz = VERDICT_COLS + 1, .whole = true };

		headline(r, l, top, top_ns, &ln);
	}
	/* The busiest op first, then those with a long tail, each on a line. */
	for (unsigned int i = 0; i <= layer_nr_ops(l) && n < max; i++) {
		unsigned int op = i ? i - 1 : top;
		struct line ln = { .buf = lines[n], .sz = VERDICT_COLS + 1, .whole = true };

		if (i && (op == top || !cell_long_tail(&r->cells[l][op])))
			continue;
		lines[n++][0] = '\0';
		put(&ln, "  ");
		op_phrase(r, l, op, op != top || cell_long_tail(&r->cells[l][op]), &ln);
	}
	return n;
}
