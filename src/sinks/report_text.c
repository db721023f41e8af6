// SPDX-License-Identifier: GPL-2.0
/* The text report: the verdict, a summary table, then histograms in the
 * familiar "low -> high : count |***|" form where they show what the table
 * cannot, every time in the chosen unit. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "bio_stack.h"
#include "layers.h"
#include "pattern_out.h"
#include "quote.h"
#include "report.h"
#include "sink.h"
#include "stacks_out.h"
#include "verdict.h"
#include "writeback.h"

#define BAR_WIDTH 40
/* Lines of notes are broken to fit a terminal of this width; tables fit it. */
#define TEXT_COLS 100
/*
 * A cell's histogram is printed when its p99 is at least 10 times its p50
 * (the verdict's long tail) over this many events or more: there the shape
 * between the percentiles, two modes (page cache and disk) or a tail, is
 * what the table cannot show. Over fewer events, or a narrow spread, the
 * table's p50, p90, p99 and max already say what the rows would. JSON keeps
 * every cell's buckets; -B adds the parts' histograms.
 */
#define HIST_MIN_EVENTS 100

/* A string being built: appends past the end are cut, never overflow. */
struct text {
	char buf[2048];
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (t->n + 1 >= sizeof(t->buf))
		return;
	va_start(ap, fmt);
	w = vsnprintf(t->buf + t->n, sizeof(t->buf) - t->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		t->n = t->n + (size_t)w < sizeof(t->buf) ? t->n + (size_t)w : sizeof(t->buf) - 1;
}

/*
 * A note in lines of at most TEXT_COLS columns, broken at spaces, those
 * after the first indented by one: one word longer than a line stays whole.
 */
static void print_wrapped(FILE *out, const char *text)
{
	const char *p = text;
	size_t room = TEXT_COLS;

	while (strlen(p) > room) {
		const char *cut = p + room;

		while (cut > p && *cut != ' ')
			cut--;
		if (cut == p && !(cut = strchr(p + room, ' ')))
			break;
		fprintf(out, "%.*s\n ", (int)(cut - p), p);
		p = cut + 1;
		room = TEXT_COLS - 1;
	}
	fprintf(out, "%s\n", p);
}

/* A bound in the unit: exact integers in ns, else up to the unit's digits. */
static void fmt_bound(char *buf, size_t sz, uint64_t ns, enum unit unit)
{
	if (unit == UNIT_NS) {
		snprintf(buf, sz, "%" PRIu64, ns);
		return;
	}
	snprintf(buf, sz, "%.*f", unit == UNIT_US ? 3 : 6, ns_to_unit(ns, unit));
	/* "2.048000" -> "2.048", "4.000" -> "4" */
	char *dot = strchr(buf, '.');
	if (dot) {
		char *end = buf + strlen(buf) - 1;

		while (end > dot && *end == '0')
			*end-- = '\0';
		if (end == dot)
			*end = '\0';
	}
}

/*
 * A log2 histogram of c, headed by what its values are: rows in whole units
 * where they can be (hist.h), decimals only below one unit. Its bounds and
 * counts are not grouped: the rows are biolatency's, so that the two can
 * be read side by side (and by the scripts that read biolatency's).
 */
static void print_hist_as(FILE *out, const struct cell_hist *c, enum unit unit, const char *what)
{
	struct hist_row rows[HIST_ROWS];
	unsigned int n = cell_rows(c, unit_ns(unit), rows);
	uint64_t most = 0;
	int first = -1, last = -1;

	for (int i = 0; i < (int)n; i++) {
		if (!rows[i].count)
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (rows[i].count > most)
			most = rows[i].count;
	}
	if (first < 0)
		return;
	fprintf(out, "%26s : %-9s %s\n", what, "count", "distribution");
	for (int i = first; i <= last; i++) {
		const struct hist_row *row = &rows[i];
		int stars = (int)(row->count * BAR_WIDTH / most);
		char los[32], his[32];

		if (row->whole) {
			snprintf(los, sizeof(los), "%" PRIu64, row->lo);
			snprintf(his, sizeof(his), "%" PRIu64, row->hi);
		} else {
			fmt_bound(los, sizeof(los), row->lo, unit);
			fmt_bound(his, sizeof(his), row->hi, unit);
		}
		if (row->open)
			snprintf(his, sizeof(his), "...");
		fprintf(out, "%12s -> %-10s : %-9" PRIu64 " |%-*.*s|\n", los, his, row->count,
			BAR_WIDTH, stars, "****************************************");
	}
}

static void print_hist(FILE *out, const struct cell_hist *c, enum unit unit)
{
	print_hist_as(out, c, unit, unit_name(unit));
}

/*
 * A time in the unit for a table: thousands grouped as perf stat groups
 * them ("27,459"), two decimals below 1,000 units, where they still are
 * significant digits, none from there on (4 digits or more say enough).
 * "0.00" is nothing at all: a time too short for it reads "<0.01".
 */
static void fmt_value(char *buf, size_t sz, uint64_t ns, enum unit unit)
{
	double v = ns_to_unit(ns, unit);

	if (unit != UNIT_NS && ns && v < 0.005)
		snprintf(buf, sz, "<0.01");
	else if (unit != UNIT_NS && v < 999.995)
		snprintf(buf, sz, "%.2f", v);
	else
		format_count(unit == UNIT_NS ? ns : (uint64_t)llround(v), buf, sz);
}

/* "AVG(us)": a column of times says its unit. */
static const char *in_unit(char *buf, size_t sz, const char *what, enum unit unit)
{
	snprintf(buf, sz, "%s(%s)", what, unit_name(unit));
	return buf;
}

/*
 * A per-call figure with decimals: 0.0023, not 0.00, when a few calls of
 * many did it; from 1,000 on a whole number, grouped as the tables' (per:
 * 1024 for KiB from bytes, else 1).
 */
static void fmt_per_call(char *buf, size_t sz, uint64_t n, uint64_t calls, double per,
			 int decimals)
{
	double v = (double)n / per / (double)calls;

	if (v && v < pow(10, -decimals))
		snprintf(buf, sz, "%.2g", v);
	else if (v >= 999.5)
		format_count((uint64_t)llround(v), buf, sz);
	else
		snprintf(buf, sz, "%.*f", decimals, v);
}

/* A share of a time: "<0.1%" where "0.0%" would say there was none. */
static void fmt_share(char *buf, size_t sz, uint64_t part, uint64_t total)
{
	double v = 100.0 * (double)part / (double)total;

	if (v < 0.05)
		snprintf(buf, sz, "<0.1%%");
	else
		snprintf(buf, sz, "%.1f%%", v);
}

static void fmt_stats(char out[6][32], const struct cell_hist *c, enum unit unit)
{
	if (!c->count) { /* only failed requests */
		for (unsigned int i = 0; i < 6; i++)
			snprintf(out[i], 32, "-");
		return;
	}
	fmt_value(out[0], 32, c->sum_ns / c->count, unit);
	fmt_value(out[1], 32, cell_percentile(c, 50), unit);
	fmt_value(out[2], 32, cell_percentile(c, 90), unit);
	fmt_value(out[3], 32, cell_percentile(c, 99), unit);
	fmt_value(out[4], 32, c->max_ns, unit);
	fmt_value(out[5], 32, c->sum_ns, unit);
}

/*
 * The columns of a cell's figures: COUNT, then its times in the unit, wide
 * enough for 10 s in us at P99 and MAX, in 98 columns with the ERRORS
 * column: a longer time pushes its row on, the figure is never cut.
 */
static void print_figures_header(FILE *out, enum unit unit)
{
	static const char *const what[6] = { "AVG", "P50", "P90", "P99", "MAX", "TOTAL" };
	char h[6][16];

	for (unsigned int i = 0; i < 6; i++)
		in_unit(h[i], sizeof(h[i]), what[i], unit);
	fprintf(out, " %10s %9s %9s %9s %10s %10s %11s", "COUNT", h[0], h[1], h[2], h[3], h[4],
		h[5]);
}

static void print_figures(FILE *out, const struct cell_hist *c, enum unit unit)
{
	char st[6][32], n[32];

	fmt_stats(st, c, unit);
	format_count(c->count, n, sizeof(n));
	fprintf(out, " %10s %9s %9s %9s %10s %10s %11s", n, st[0], st[1], st[2], st[3], st[4],
		st[5]);
}

/*
 * The ERRORS column (block requests that failed, not in the other figures)
 * is there when the block layer is traced; "-" on rows of other layers.
 */
static bool errors_column(const struct report *r)
{
	return r->plan->cells[LAYER_BLK][0].src != METHOD_NONE ||
	       r->plan->cells[LAYER_BIO][0].src != METHOD_NONE;
}

/* The ERRORS column, then tail (a last column of any width) if any. */
static void print_errors(FILE *out, const struct report *r, unsigned int layer,
			 const struct cell_hist *c, const char *tail)
{
	char n[32];

	format_count(c->errors, n, sizeof(n));
	if (errors_column(r) && !layer_is_device(layer))
		fprintf(out, " %6s", "-");
	else if (errors_column(r))
		fprintf(out, " %6s", n);
	fprintf(out, "%s%s\n", tail ? " " : "", tail ? tail : "");
}

static void print_errors_header(FILE *out, const struct report *r, const char *tail)
{
	if (errors_column(r))
		fprintf(out, " %6s", "ERRORS");
	fprintf(out, "%s%s\n", tail ? " " : "", tail ? tail : "");
}

/*
 * --top: is e past the N busiest keys of its cell? Entries come sorted by
 * cell, busiest first; *cell and *shown carry the count across calls.
 */
static bool beyond_top(const struct report *r, const struct breakdown_entry *e, unsigned int *cell,
		       unsigned int *shown)
{
	if (e->key.cell_idx != *cell) {
		*cell = e->key.cell_idx;
		*shown = 0;
	}
	return r->cfg->top && (*shown)++ >= r->cfg->top;
}

/* One row per key, busiest first, --top per cell. */
/*
 * A process's name as a table shows it: any process may name itself with
 * a newline or an escape sequence (prctl), which would break the row.
 */
static const char *shown_comm(const struct breakdown_entry *e, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s", e->comm[0] ? e->comm : "?");
	printable_line(buf, sz);
	return buf;
}

/*
 * -G: the container id as `docker ps` shortens it and the pod uid, in
 * columns; the cgroup's path (#ID when it went before it could be named,
 * "-" for requests nobody can be named for) into path, for the last
 * column: paths are long, and one that is not printable (a directory may
 * be named with a newline) cannot break the table.
 */
static void text_cgroup(FILE *out, const struct breakdown_entry *e, char *path, size_t sz)
{
	struct cgroup_ids ids;
	char id[32];
	const char *name = report_cgroup_name(e, id, sizeof(id), &ids);

	snprintf(path, sz, "%s", name ? name : "-");
	printable_line(path, sz);
	fprintf(out, " %-12.12s %-36s", ids.container[0] ? ids.container : "-",
		ids.pod[0] ? ids.pod : "-");
}

/*
 * -D with bio: the stack, a line per level ("dm-0 -> vda"): the bios the
 * upper device sent below, their time there, and the upper device's own
 * time per bio of its own.
 */
static void text_bio_stack(struct sink *s, const struct report *r)
{
	struct bio_level lv[MAX_BIO_LEVELS];
	size_t n = bio_stack(r, lv, MAX_BIO_LEVELS);
	char h[3][24];

	if (!n)
		return;
	fprintf(s->out,
		"\nbio stack: a device's OWN time is its bios' time less that of the bios it sent "
		"below\n%-7s %-26s %10s %12s %12s %10s %12s\n",
		"OP", "DEVICE -> BELOW", "OWN BIOS", in_unit(h[0], sizeof(h[0]), "OWN AVG", s->unit),
		in_unit(h[1], sizeof(h[1]), "OWN TOTAL", s->unit), "BELOW",
		in_unit(h[2], sizeof(h[2]), "BELOW AVG", s->unit));
	for (size_t i = 0; i < n; i++) {
		char up[32], low[32], stack[72], own_avg[32], own[32], below_avg[32], bios[32],
		    below[32];

		r->disk_name ? r->disk_name(lv[i].upper, up, sizeof(up))
			     : format_kdev(lv[i].upper, up, sizeof(up));
		r->disk_name ? r->disk_name(lv[i].lower, low, sizeof(low))
			     : format_kdev(lv[i].lower, low, sizeof(low));
		snprintf(stack, sizeof(stack), "%s -> %s", up, low);
		fmt_value(own_avg, sizeof(own_avg),
			  lv[i].upper_count ? lv[i].own_ns / lv[i].upper_count : 0, s->unit);
		fmt_value(own, sizeof(own), lv[i].own_ns, s->unit);
		fmt_value(below_avg, sizeof(below_avg), lv[i].below->sum_ns / lv[i].below->count,
			  s->unit);
		format_count(lv[i].upper_count, bios, sizeof(bios));
		format_count(lv[i].below->count, below, sizeof(below));
		fprintf(s->out, "%-7s %-26s %10s %12s %12s %10s %12s\n",
			op_name(LAYER_BIO, lv[i].op), stack, bios, own_avg, own, below, below_avg);
	}
}

static void text_breakdown_rows(struct sink *s, const struct report *r)
{
	FILE *out = s->out;
	enum unit unit = s->unit;
	unsigned int shown = 0, cell = ~0U;

	fprintf(out, "\n%-8s %-7s", "LAYER", "OP");
	if (r->cfg->per_process)
		fprintf(out, " %8s %-16s", "PID", "COMM");
	if (r->plan->wb)
		fprintf(out, " %-12s", "REQUESTS");
	if (r->cfg->per_disk)
		fprintf(out, " %-12s", "DISK");
	if (r->cfg->per_flags)
		fprintf(out, " %-20s", "FLAGS");
	if (r->cfg->per_cgroup)
		fprintf(out, " %-12s %-36s", "CONTAINER", "POD");
	print_figures_header(out, unit);
	print_errors_header(out, r, r->cfg->per_cgroup ? "CGROUP" : NULL);
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];
		unsigned int layer = CELL_LAYER(e->key.cell_idx), op = CELL_OP(e->key.cell_idx);
		char path[4 * 4096 + 1];

		if (layer >= NR_LAYERS || !report_layer_broken_down(r, layer) ||
		    (!e->cell.count && !e->cell.errors))
			continue;
		if (beyond_top(r, e, &cell, &shown))
			continue;
		fprintf(out, "%-8s %-7s", layer_name(layer), op_name(layer, op));
		if (r->cfg->per_process) {
			char comm[4 * COMM_LEN + 1];

			if (e->key.tgid == WB_UNKNOWN_TGID && wb_entry_written_back(e))
				fprintf(out, " %8s %-16s", "-", "(unknown)");
			else
				fprintf(out, " %8u %-16s", e->key.tgid,
					shown_comm(e, comm, sizeof(comm)));
		}
		if (r->plan->wb)
			fprintf(out, " %-12s", wb_entry_how(e));
		if (r->cfg->per_disk) {
			char disk[32];

			if (!layer_is_device(layer))
				snprintf(disk, sizeof(disk), "-");
			else if (r->disk_name)
				r->disk_name(e->key.dev, disk, sizeof(disk));
			else
				format_kdev(e->key.dev, disk, sizeof(disk));
			fprintf(out, " %-12s", disk);
		}
		if (r->cfg->per_flags) {
			char flags[64];

			rq_flags_string(layer == LAYER_BLK ? e->key.flags : 0, flags,
					sizeof(flags));
			fprintf(out, " %-20s", flags);
		}
		if (r->cfg->per_cgroup)
			text_cgroup(out, e, path, sizeof(path));
		print_figures(out, &e->cell, unit);
		print_errors(out, r, layer, &e->cell, r->cfg->per_cgroup ? path : NULL);
	}
	text_bio_stack(s, r);
}

static void text_stats(struct sink *s, const struct report *r)
{
	const struct self_stats *st = r->stats;
	FILE *out = s->out;

	fprintf(out, "\n%-8s %6s %12s %14s %8s %12s %9s\n", "LAYER", "PROGS", "RUNS", "RUN_TIME_NS",
		"NS/RUN", "EVENTS", "NS/EVENT");
	for (unsigned int l = 0; l < NR_LAYERS; l++) {
		const struct layer_cost *c = &st->layers[l];
		uint64_t events = report_layer_events(r, l);

		if (!c->programs)
			continue;
		fprintf(out,
			"%-8s %6u %12" PRIu64 " %14" PRIu64 " %8" PRIu64 " %12" PRIu64 " %9" PRIu64
			"\n",
			layer_name(l), c->programs, c->runs, c->run_time_ns,
			c->runs ? c->run_time_ns / c->runs : 0, events,
			events ? c->run_time_ns / events : 0);
	}
	/* sched_switch and the fork/exit pair serve no layer: no events. */
	if (st->other.programs)
		fprintf(out, "%-8s %6u %12" PRIu64 " %14" PRIu64 " %8" PRIu64 " %12s %9s\n",
			"other", st->other.programs, st->other.runs, st->other.run_time_ns,
			st->other.runs ? st->other.run_time_ns / st->other.runs : 0, "-", "-");
	fprintf(out,
		"(tracer cost, measured by the kernel; maps: %" PRIu64 " bytes; "
		"dropped: %" PRIu64 ")\n",
		st->map_bytes, r->dropped);
}

static void text_begin(struct sink *s, const struct report *r)
{
	char when[40], verdict[VERDICT_MAX_LINES][VERDICT_COLS + 1];
	struct tm tm;

	if (r->cfg->timestamp) {
		localtime_r(&r->wall.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		fprintf(s->out, "\n%s\n", when);
	}
	if (!r->cfg->no_verdict) {
		unsigned int n = report_verdict_lines(r, verdict, VERDICT_MAX_LINES);

		fputc('\n', s->out);
		for (unsigned int i = 0; i < n; i++)
			fprintf(s->out, "%s\n", verdict[i]);
	}
}

/* A traced cell: its histogram if it has the shape HIST_MIN_EVENTS says. */
static void text_cell_hist(struct sink *s, const struct report *r, unsigned int layer,
			   unsigned int op)
{
	const struct cell_hist *c = &r->cells[layer][op];
	char n[32];

	if (r->plan->cells[layer][op].src == METHOD_NONE || c->count < HIST_MIN_EVENTS ||
	    !cell_long_tail(c))
		return;
	format_count(c->count, n, sizeof(n));
	fprintf(s->out, "\n%s %s: %s %s", layer_name(layer), op_name(layer, op), n,
		layer_count_noun(layer, c->count));
	if (c->errors)
		fprintf(s->out, " (and %llu failed, not in the histogram)",
			(unsigned long long)c->errors);
	fprintf(s->out, ", latency in %s\n", unit_name(s->unit));
	print_hist(s->out, c, s->unit);
}

/*
 * The summary table, one row per traced cell that saw anything; the cells
 * traced that saw nothing are named after it, not given a row of zeros.
 * Then the histograms.
 */
static void text_cells_end(struct sink *s, const struct report *r)
{
	FILE *out = s->out;
	struct text idle = { .n = 0 };
	int idle_layer = -1;

	fprintf(out, "\n%-8s %-7s", "LAYER", "OP");
	print_figures_header(out, s->unit);
	print_errors_header(out, r, NULL);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			const struct cell_hist *c = &r->cells[layer][op];

			if (r->plan->cells[layer][op].src == METHOD_NONE)
				continue;
			if (!c->count && !c->errors) {
				if (idle_layer != (int)layer)
					add(&idle, "%s%s %s", idle.n ? "; " : "(traced, nothing seen: ",
					    layer_name(layer), op_name(layer, op));
				else
					add(&idle, ", %s", op_name(layer, op));
				idle_layer = (int)layer;
				continue;
			}
			fprintf(out, "%-8s %-7s", layer_name(layer), op_name(layer, op));
			print_figures(out, c, s->unit);
			print_errors(out, r, layer, c, NULL);
		}
	}
	if (idle.n) {
		add(&idle, ")");
		print_wrapped(out, idle.buf);
	}
	wb_text(out, r);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
			text_cell_hist(s, r, layer, op);
}

/*
 * What a layer left out, if anything: "(syscall left out: 3 reads on
 * pipes, 12 on sockets, 1 write on a pipe; --all-fds to count them)".
 */
static void text_left_out(FILE *out, const struct report *r, unsigned int layer)
{
	static const char *const one[NR_FD_KINDS] = { "a pipe", "a socket", "another file" };
	static const char *const many[NR_FD_KINDS] = { "pipes", "sockets", "other files" };
	struct text t = { .n = 0 };

	if (!report_leaves_out(r, layer))
		return;
	for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
		bool op_named = false;

		for (unsigned int kind = 0; kind < NR_FD_KINDS; kind++) {
			uint64_t n = r->left_out[layer][op][kind];

			if (!n)
				continue;
			if (t.n)
				add(&t, ", %" PRIu64, n);
			else
				add(&t, "(%s left out: %" PRIu64, layer_name(layer), n);
			if (!op_named)
				add(&t, " %s%s", op_name(layer, op), n == 1 ? "" : "s");
			add(&t, " on %s", n == 1 ? one[kind] : many[kind]);
			op_named = true;
		}
	}
	if (t.n) {
		add(&t, "; --all-fds to count them)");
		print_wrapped(out, t.buf);
	}
}

/* The figures that head an op's rows of parts: its count and average. */
struct op_head {
	const char *op;
	char n[32], avg[32];
	bool shown; /* a row printed: the next ones leave the head blank */
};

static void op_head_init(struct op_head *h, const char *op, const struct call_totals *t,
			 enum unit unit)
{
	h->op = op;
	h->shown = false;
	format_count(t->count, h->n, sizeof(h->n));
	fmt_value(h->avg, sizeof(h->avg), t->total_ns / t->count, unit);
}

/* A part's row starts with the op's head, the first time only. */
static void op_head_row(FILE *out, struct op_head *h)
{
	if (h->shown)
		fprintf(out, "%-7s %10s %12s  ", "", "", "");
	else
		fprintf(out, "%-7s %10s %12s  ", h->op, h->n, h->avg);
	h->shown = true;
}

/* Its head alone for an op none of whose parts took time; its blk line. */
static void op_head_end(FILE *out, const struct op_head *h, const struct call_totals *t,
			const char *per)
{
	char reqs[32], kib[32];

	if (!h->shown)
		fprintf(out, "%-7s %10s %12s\n", h->op, h->n, h->avg);
	if (!t->blk_requests)
		return;
	fmt_per_call(reqs, sizeof(reqs), t->blk_requests, t->count, 1, 2);
	fmt_per_call(kib, sizeof(kib), t->blk_bytes, t->count, 1024, 1);
	fprintf(out, "%-7s blk: %s requests, %s KiB per %s\n", "", reqs, kib, per);
}

/* The header of a table of requests' parts ("io_uring", "aio"), once. */
static void request_parts_header(struct sink *s, const char *what, bool *shown)
{
	char head[3][16];

	if (*shown)
		return;
	fprintf(s->out,
		"\n%s requests, where the time goes: parts that add up to each request\n"
		"%-7s %10s %12s  %-12s %6s %12s %12s\n",
		what, "OP", "REQUESTS", in_unit(head[0], sizeof(head[0]), "AVG", s->unit), "PART",
		"SHARE", in_unit(head[1], sizeof(head[1]), "P50", s->unit),
		in_unit(head[2], sizeof(head[2]), "P99", s->unit));
	*shown = true;
}

/* A part's row of a request op, total_ns: the op's time. */
static void request_part_row(struct sink *s, struct op_head *head_of, const char *part,
			     const struct cell_hist *h, uint64_t total_ns)
{
	char p50[32], p99[32], share[16];

	fmt_value(p50, sizeof(p50), cell_percentile(h, 50), s->unit);
	fmt_value(p99, sizeof(p99), cell_percentile(h, 99), s->unit);
	fmt_share(share, sizeof(share), h->sum_ns, total_ns);
	op_head_row(s->out, head_of);
	fprintf(s->out, "%-12s %6s %12s %12s\n", part, share, p50, p99);
}

/*
 * Where the time of io_uring requests goes, as calls' does: per op with
 * requests a row per part that took time (the parts of each request add
 * up to its latency), then, with plan->uring_blk, its block requests.
 */
static void text_uring(struct sink *s, const struct report *r)
{
	const struct uring_split *u = &r->uring;
	bool header = false;

	for (unsigned int op = 0; op < NR_URING_OPS; op++) {
		const struct call_totals *t = &u->ops[op];
		struct op_head head_of;

		if (!t->count)
			continue;
		request_parts_header(s, "io_uring", &header);
		op_head_init(&head_of, op_name(LAYER_IO_URING, op), t, s->unit);
		for (unsigned int p = 0; p < NR_URING_PARTS; p++) {
			const struct cell_hist *h = &u->parts[op][p];

			if (uring_part_shown(r->plan, p) && h->sum_ns)
				request_part_row(s, &head_of, uring_part_name(p), h, t->total_ns);
		}
		/* The block requests their issue started (with the blk layer). */
		op_head_end(s->out, &head_of, t, "request");
	}
}

/*
 * Where the time of aio requests goes, as io_uring's: per op its parts,
 * how many completed inline (inside io_submit), and, with plan->aio_blk,
 * its block requests, their flushes and their time.
 */
static void text_aio(struct sink *s, const struct report *r)
{
	FILE *out = s->out;
	bool header = false;

	for (unsigned int op = 0; op < NR_AIO_OPS; op++) {
		const struct aio_totals *a = &r->aio.ops[op];
		struct call_totals t = { .count = a->count,
					 .total_ns = a->total_ns,
					 .blk_requests = a->blk_requests,
					 .blk_bytes = a->blk_bytes };
		struct op_head head_of;
		char n[32], avg[32];

		if (!a->count)
			continue;
		request_parts_header(s, "aio", &header);
		op_head_init(&head_of, op_name(LAYER_AIO, op), &t, s->unit);
		for (unsigned int p = 0; p < NR_AIO_PARTS; p++) {
			const struct cell_hist *h = &r->aio.parts[op][p];

			if (aio_part_shown(r->plan, p) && h->sum_ns)
				request_part_row(s, &head_of, aio_part_name(p), h, t.total_ns);
		}
		op_head_end(out, &head_of, &t, "request");
		format_count(a->inline_count, n, sizeof(n));
		fprintf(out, "%-7s inline: %s of %s completed inside io_submit\n", "", n,
			head_of.n);
		if (a->blk_flushes) {
			format_count(a->blk_flushes, n, sizeof(n));
			fprintf(out, "%-7s flushes: %s of those requests\n", "", n);
		}
		if (a->blk_requests) {
			fmt_value(avg, sizeof(avg), a->blk_ns / a->count, s->unit);
			fprintf(out, "%-7s blk time: %s %s per request (its block requests')\n",
				"", avg, unit_name(s->unit));
		}
	}
}

static int text_end(struct sink *s, const struct report *r)
{
	FILE *out = s->out;

	if (r->plan->uring_parts)
		text_uring(s, r);
	if (r->plan->aio_parts)
		text_aio(s, r);
	pattern_text(out, r);
	/* The notes on the whole report, apart from the last table's rows. */
	fputc('\n', out);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		text_left_out(out, r, layer);

	if (r->stacks)
		stacks_text(out, r->stacks);
	for (unsigned int i = 0; i < r->nr_gone; i++) {
		struct text t = { .n = 0 };
		char dev[32];

		format_kdev(r->gone[i].dev, dev, sizeof(dev));
		add(&t,
		    "disk %s (%s) is gone: detached or removed during the run; its requests "
		    "until then are counted above",
		    r->gone[i].name, dev);
		print_wrapped(out, t.buf);
	}
	{
		struct text t = { .n = 0 };

		add(&t, "(times in %s over %.3f s", unit_name(s->unit), r->interval_s);
		if (r->dropped) {
			add(&t, "; %" PRIu64 " events DROPPED:", r->dropped);
			for (unsigned int i = 0; i < NR_DROP_REASONS; i++)
				if (r->drops[i])
					add(&t, " %" PRIu64 " %s", r->drops[i],
					    drop_reason_name(i));
		}
		add(&t, ")");
		print_wrapped(out, t.buf);
	}
	return fflush(out) || ferror(out) ? -1 : 0;
}

/*
 * "syscall 2%|vfs 3%|io_wait 70%": each part's share of the time, for -P's
 * rows, which have no SHARE column; parts with no time are left out.
 */
static void share_bar(char *buf, size_t sz, const struct report *r, unsigned int op,
		      const struct cell_hist parts[NR_PARTS], uint64_t total_ns)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int part = 0; part < NR_PARTS && used < sz; part++) {
		double share = 100.0 * (double)parts[part].sum_ns / (double)total_ns;

		if (!report_has_part(r, (int)op, part) || !parts[part].sum_ns)
			continue;
		used += (size_t)snprintf(buf + used, sz - used,
					 share < 0.5 ? "%s%s <1%%" : "%s%s %.0f%%", used ? "|" : "",
					 part_name(part), share);
	}
}

/* The lock part by kind, the journal commits waited for, the pages added. */
static void text_call_why(FILE *out, const struct report *r, const struct call_totals *c,
			  uint64_t lock)
{
	const char *sep = "";
	char added[32], ahead[32];

	if (lock) {
		fprintf(out, "%-7s lock: ", "");
		for (unsigned int k = 0; k < NR_LOCK_KINDS; k++) {
			if (!c->lock_ns[k])
				continue;
			double share = 100.0 * (double)c->lock_ns[k] / (double)lock;

			fprintf(out, share < 0.5 ? "%s%s <1%%" : "%s%s %.0f%%", sep,
				lock_kind_name(k), share);
			sep = ", ";
		}
		fputc('\n', out);
	}
	if (c->journal_requests)
		fprintf(out,
			"%-7s journal: %.2f requests (%.2f flushes), %.1f KiB per call, by the "
			"commits the calls waited for\n",
			"", (double)c->journal_requests / (double)c->count,
			(double)c->journal_flushes / (double)c->count,
			(double)c->journal_bytes / 1024.0 / (double)c->count);
	/*
	 * Without the readahead tracepoints the share read ahead is not known.
	 * Calls that added no page have no line: nothing to say.
	 */
	fmt_per_call(added, sizeof(added), c->cache_miss_pages, c->count, 1, 2);
	fmt_per_call(ahead, sizeof(ahead), c->readahead_pages, c->count, 1, 2);
	if (r->plan->why[WHY_CACHE] && r->plan->why[WHY_READAHEAD] && c->readahead_pages)
		fprintf(out,
			"%-7s page cache: %s pages added (cache misses), %s read ahead per call\n",
			"", added, ahead);
	else if (r->plan->why[WHY_CACHE] && r->plan->why[WHY_READAHEAD] && c->cache_miss_pages)
		fprintf(out,
			"%-7s page cache: %s pages added (cache misses) per call, none read ahead\n",
			"", added);
	else if (r->plan->why[WHY_CACHE] && !r->plan->why[WHY_READAHEAD] && c->cache_miss_pages)
		fprintf(out,
			"%-7s page cache: %s pages added (cache misses) per call, read ahead "
			"not traced\n",
			"", added);
	if (c->writeback_pages)
		fprintf(out, "%-7s writeback: %.2f pages per call put under writeback\n", "",
			(double)c->writeback_pages / (double)c->count);
	if (c->throttle_pauses)
		fprintf(out, "%-7s throttled: policy dirty, %llu pauses in balance_dirty_pages\n", "",
			(unsigned long long)c->throttle_pauses);
}

/* -P: per process and op, its calls' count, average and share bar, then
 * what they waited for and did to the page cache. */
static void text_process_calls(struct sink *s, const struct report *r)
{
	struct cell_hist parts[NR_PARTS], pages;
	struct call_totals counts;
	char avg[32], bar[256], comm[4 * COMM_LEN + 1], head[16], n[32];
	unsigned int shown = 0, cell = ~0U;

	fprintf(s->out, "\n%8s %-16s %-7s %10s %12s  %s\n", "PID", "COMM", "OP", "COUNT",
		in_unit(head, sizeof(head), "AVG", s->unit), "WHERE THE TIME GOES");
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];
		unsigned int op;

		if (!report_is_process_calls(e) || !e->cell.count)
			continue;
		if (beyond_top(r, e, &cell, &shown))
			continue;
		op = report_process_parts(r, e, parts);
		fmt_value(avg, sizeof(avg), e->cell.sum_ns / e->cell.count, s->unit);
		share_bar(bar, sizeof(bar), r, op, parts, e->cell.sum_ns);
		format_count(e->cell.count, n, sizeof(n));
		fprintf(s->out, "%8u %-16s %-7s %10s %12s  [%s]\n", e->key.tgid,
			shown_comm(e, comm, sizeof(comm)), op_name(LAYER_SYSCALL, op), n, avg, bar);
		report_process_counts(r, e, &counts, &pages);
		text_call_why(s->out, r, &counts, parts[PART_LOCK].sum_ns);
	}
}

/*
 * Layers under the root not traced for some op: their time is in the
 * root's. "vfs, ext4 (but for fsync), xfs".
 */
static void untraced_below_root(char *buf, size_t sz, const struct report *r)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int layer = (unsigned int)r->split_layer + 1; layer < NR_CALL_LAYERS;
	     layer++) {
		char traced[64] = "";
		size_t t = 0;
		unsigned int n = 0;

		for (unsigned int op = 0; op < NR_FS_OPS; op++) {
			if (r->plan->cells[layer][op].src == METHOD_NONE)
				continue;
			n++;
			t += (size_t)snprintf(traced + t, sizeof(traced) - t, "%s%s", t ? ", " : "",
					      op_name(layer, op));
		}
		/* Nothing mounted there: none of the self time was spent there. */
		if (n == NR_FS_OPS || used >= sz || r->plan->quiet_layers & (1U << layer))
			continue;
		used += (size_t)snprintf(buf + used, sz - used, "%s%s%s%s%s", used ? ", " : "",
					 layer_name(layer), n ? " (but for " : "", traced,
					 n ? ")" : "");
	}
}

/* Where the time of each op's calls went: one row per part with time. */
static void text_calls(struct sink *s, const struct report *r)
{
	const char *root = layer_name((unsigned int)r->split_layer);
	FILE *out = s->out;
	char untraced[128], head[4][16];
	bool any = false;

	fprintf(out, "\nWhere the time goes: calls of %s split into parts that add up to each call\n",
		root);
	untraced_below_root(untraced, sizeof(untraced), r);
	if (untraced[0]) {
		struct text t = { .n = 0 };

		add(&t, "(%s self time includes %s on CPU: not traced here)", root, untraced);
		print_wrapped(out, t.buf);
	}
	if (!r->cfg->offcpu)
		fprintf(out, "(--no-offcpu: time off CPU counts as self time)\n");
	fprintf(out, "%-7s %10s %12s  %-9s %6s %12s %12s %12s\n", "OP", "COUNT",
		in_unit(head[0], sizeof(head[0]), "AVG", s->unit), "PART", "SHARE",
		in_unit(head[1], sizeof(head[1]), "AVG", s->unit),
		in_unit(head[2], sizeof(head[2]), "P50", s->unit),
		in_unit(head[3], sizeof(head[3]), "P99", s->unit));
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		const struct call_totals *c = &r->calls[op];
		struct op_head head_of;

		if (!c->count)
			continue;
		any = true;
		op_head_init(&head_of, op_name(LAYER_SYSCALL, op), c, s->unit);
		for (unsigned int part = 0; part < NR_PARTS; part++) {
			const struct cell_hist *h = &r->parts[op][part];
			char pavg[32], p50[32], p99[32], share[16];

			/* A part with no time would be a row of zeros. */
			if (!report_has_part(r, (int)op, part) || !h->sum_ns)
				continue;
			fmt_value(pavg, sizeof(pavg), h->sum_ns / c->count, s->unit);
			fmt_value(p50, sizeof(p50), cell_percentile(h, 50), s->unit);
			fmt_value(p99, sizeof(p99), cell_percentile(h, 99), s->unit);
			fmt_share(share, sizeof(share), h->sum_ns, c->total_ns);
			op_head_row(out, &head_of);
			fprintf(out, "%-9s %6s %12s %12s %12s\n", part_name(part), share, pavg, p50,
				p99);
		}
		op_head_end(out, &head_of, c, "call");
		text_call_why(out, r, c, r->parts[op][PART_LOCK].sum_ns);
		if (!r->cfg->part_hists)
			continue;
		for (unsigned int part = 0; part < NR_PARTS; part++) {
			if (!report_has_part(r, (int)op, part) || !r->parts[op][part].sum_ns)
				continue;
			fprintf(out, "\n%s %s, part %s: per call, in %s\n", root,
				op_name(LAYER_SYSCALL, op), part_name(part), unit_name(s->unit));
			print_hist(out, &r->parts[op][part], s->unit);
		}
		if (r->plan->why[WHY_CACHE] && c->cache_miss_pages) {
			fprintf(out, "\n%s %s, pages added to the page cache per call\n", root,
				op_name(LAYER_SYSCALL, op));
			print_hist_as(out, &r->pages[op], UNIT_NS, "pages");
		}
	}
	if (!any)
		fprintf(out, "(no calls)\n");
	if (r->breakdowns && r->cfg->per_process)
		text_process_calls(s, r);
}

static const struct sink_ops text_ops = {
	.report_begin = text_begin,
	.cells_end = text_cells_end,
	.calls = text_calls,
	.breakdown_rows = text_breakdown_rows,
	.stats = text_stats,
	.report_end = text_end,
};

int sink_text_open(struct sink *s, FILE *out, enum unit unit)
{
	*s = (struct sink){ .ops = &text_ops, .what = "the report", .out = out, .unit = unit };
	return 0;
}
