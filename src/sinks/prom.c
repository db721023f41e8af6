// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text exposition of a report. Every number is an integer
 * the kernel counted, or integer nanoseconds written as exact decimal
 * seconds: nothing goes through a float before Prometheus parses it.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include "layers.h"
#include "pattern_out.h"
#include "prom.h"
#include "writeback.h"

#define LATENCY "iostackbreak_latency_seconds"

void prom_seconds(char *buf, size_t sz, uint64_t ns)
{
	const uint64_t giga = 1000000000;
	uint64_t frac = ns % giga;
	int digits = 9;

	if (!frac) {
		snprintf(buf, sz, "%" PRIu64, ns / giga);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, sz, "%" PRIu64 ".%0*" PRIu64, ns / giga, digits, frac);
}

/* Length of the well-formed UTF-8 character at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if there is none. */
static unsigned int utf8_char_len(const unsigned char *s)
{
	unsigned int n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	/* A NUL is not a continuation byte: a cut sequence stops here. */
	for (unsigned int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t prom_label_value(char *buf, size_t sz, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	size_t len = 0;

	if (!sz)
		return 0;
	while (*s) {
		unsigned int used = 1, n = utf8_char_len(s);
		const char *piece = (const char *)s;

		if (*s == '\\')
			piece = "\\\\";
		else if (*s == '"')
			piece = "\\\"";
		else if (*s == '\n')
			piece = "\\n";
		else if (!n)
			piece = "\xef\xbf\xbd"; /* U+FFFD REPLACEMENT CHARACTER */
		else
			used = n;
		if (piece != (const char *)s)
			n = (unsigned int)strlen(piece);
		if (len + n >= sz)
			break;
		memcpy(buf + len, piece, n);
		len += n;
		s += used;
	}
	buf[len] = '\0';
	return len;
}

/* The label set of one series, escaped once for all its lines. Large
 * enough for the longest: a skipped cell's reason (400 bytes, each of
 * which may grow to 3), or -G's cgroup path (up to PATH_MAX, the same)
 * beside the other labels of a key. */
struct labels {
	char buf[2048 + 3 * 4096];
	size_t len;
};

static void label(struct labels *l, const char *name, const char *value)
{
	size_t room = sizeof(l->buf) - l->len;
	int n = snprintf(l->buf + l->len, room, "%s%s=\"", l->len ? "," : "", name);

	if (n < 0 || (size_t)n + 2 > room)
		return; /* cannot happen with our names and values: see above */
	l->len += (size_t)n;
	l->len += prom_label_value(l->buf + l->len, room - (size_t)n - 1, value);
	l->buf[l->len++] = '"';
	l->buf[l->len] = '\0';
}

static void cell_labels(struct labels *l, unsigned int layer, unsigned int op)
{
	l->len = 0;
	l->buf[0] = '\0';
	label(l, "layer", layer_name(layer));
	label(l, "op", op_name(layer, op));
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * One histogram series. The le counts fold the log-linear buckets into
 * powers of two exactly (cell_log2(): no bucket straddles one). _count is
 * the sum of the buckets, not the cell's own count: the kernel updates
 * count, sum and bucket of a per-CPU cell one after the other, and a
 * snapshot may read a CPU's cell between two of those stores, so the
 * cell's count can be one ahead of its buckets. Taking it from the buckets
 * makes _count equal the +Inf bucket in every scrape, and since each
 * bucket only grows, every le count and _count still never go down. _sum
 * may then hold one call more or less than _count for that scrape; the
 * next scrape has it.
 */
static void put_hist(FILE *out, const struct labels *l, const struct cell_hist *c)
{
	uint64_t slots[LOG2_SLOTS], cum = 0;
	char num[32];
	unsigned int k;

	cell_log2(c, slots);
	for (k = 0; k < PROM_LE_MIN_EXP; k++)
		cum += slots[k];
	for (; k <= PROM_LE_MAX_EXP; k++) {
		/* Slots below k hold values < 2^k ns, i.e. <= 2^k - 1 ns. */
		prom_seconds(num, sizeof(num), 1ULL << k);
		fprintf(out, LATENCY "_bucket{%s,le=\"%s\"} %" PRIu64 "\n", l->buf, num, cum);
		cum += slots[k];
	}
	for (; k < LOG2_SLOTS; k++)
		cum += slots[k];
	fprintf(out, LATENCY "_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n", l->buf, cum);
	prom_seconds(num, sizeof(num), c->sum_ns);
	fprintf(out, LATENCY "_sum{%s} %s\n", l->buf, num);
	fprintf(out, LATENCY "_count{%s} %" PRIu64 "\n", l->buf, cum);
}

/* The labels of a key of a broken-down layer: its cell's and its key's. */
static void breakdown_labels(struct labels *l, const struct report *r,
			     const struct breakdown_entry *e)
{
	unsigned int layer = CELL_LAYER(e->key.cell_idx), op = CELL_OP(e->key.cell_idx);
	char buf[64];

	cell_labels(l, layer, op);
	if (r->cfg->per_process) {
		snprintf(buf, sizeof(buf), "%u", e->key.tgid);
		label(l, "pid", buf);
		label(l, "comm", e->comm);
	}
	if (r->cfg->per_disk && layer_is_device(layer)) {
		if (r->disk_name)
			r->disk_name(e->key.dev, buf, sizeof(buf));
		else
			format_kdev(e->key.dev, buf, sizeof(buf));
		label(l, layer == LAYER_BIO ? "device" : "disk", buf);
	}
	if (r->cfg->per_cgroup) {
		struct cgroup_ids ids;
		char id[32];
		const char *name = report_cgroup_name(e, id, sizeof(id), &ids);

		label(l, "cgroup", name ? name : "");
		label(l, "container_id", ids.container);
		label(l, "pod_uid", ids.pod);
	}
	/* A process's requests written back for it, apart from its own. */
	if (r->plan->wb && layer == LAYER_BLK)
		label(l, "writeback", wb_entry_written_back(e) ? "true" : "false");
	if (r->cfg->per_flags && layer == LAYER_BLK) {
		if (e->key.flags & ~RQ_FLAG_WRITEBACK)
			rq_flags_string(e->key.flags, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "none");
		label(l, "flags", buf);
	}
}

static bool traced(const struct report *r, unsigned int layer, unsigned int op)
{
	const struct cell_plan *cp = &r->plan->cells[layer][op];

	return cp->wanted && cp->src != METHOD_NONE;
}

/* Every traced cell, empty ones too: a series that exists from the first
 * scrape on lets increase() count the first calls. Broken-down layers
 * give one series per key instead, the --top busiest of each cell. */
static void put_latency(FILE *out, const struct report *r)
{
	struct labels l;

	family(out, LATENCY, "histogram",
	       "Latency of I/O by layer of the storage stack and operation, since start. "
	       "Buckets are powers of two of nanoseconds; a call of exactly 2^k ns counts "
	       "above le=2^k ns.");
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			unsigned int shown = 0;

			if (!traced(r, layer, op))
				continue;
			if (!report_layer_broken_down(r, layer)) {
				cell_labels(&l, layer, op);
				put_hist(out, &l, &r->cells[layer][op]);
				continue;
			}
			for (size_t i = 0; i < r->breakdowns->n; i++) {
				const struct breakdown_entry *e = &r->breakdowns->v[i];

				if (e->key.cell_idx != CELL_INDEX(layer, op))
					continue;
				if (r->cfg->top && shown++ >= r->cfg->top)
					break;
				breakdown_labels(&l, r, e);
				put_hist(out, &l, &e->cell);
			}
		}
	}
}

/*
 * iostackbreak_blk_errors_total: block requests that completed with an
 * error, by op (and key, with -D, -P, -F). They are not in the latency
 * histogram, whose _count holds only the requests that succeeded.
 */
static void put_blk_errors(FILE *out, const struct report *r)
{
	struct labels l;

	if (!traced(r, LAYER_BLK, 0))
		return;
	family(out, "iostackbreak_blk_errors_total", "counter",
	       "Block requests that completed with an error, since start; not in "
	       "iostackbreak_latency_seconds.");
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		unsigned int shown = 0;

		if (!report_layer_broken_down(r, LAYER_BLK)) {
			cell_labels(&l, LAYER_BLK, op);
			fprintf(out, "iostackbreak_blk_errors_total{%s} %" PRIu64 "\n", l.buf,
				(uint64_t)r->cells[LAYER_BLK][op].errors);
			continue;
		}
		for (size_t i = 0; i < r->breakdowns->n; i++) {
			const struct breakdown_entry *e = &r->breakdowns->v[i];

			if (e->key.cell_idx != CELL_INDEX(LAYER_BLK, op))
				continue;
			if (r->cfg->top && shown++ >= r->cfg->top)
				break;
			breakdown_labels(&l, r, e);
			fprintf(out, "iostackbreak_blk_errors_total{%s} %" PRIu64 "\n", l.buf,
				(uint64_t)e->cell.errors);
		}
	}
}

/*
 * iostackbreak_time_seconds_total{op, part}: where the time of the root
 * layer's calls went (each traced layer's self time, io_wait, blocked,
 * runqueue, lock, journal, throttled), one counter per (op, part); per op they sum to the root
 * cell's _sum. rate(...{part="io_wait"}) / rate(..._sum) is the share.
 */
static void put_time_parts(FILE *out, const struct report *r)
{
	char secs[48];
	struct labels l;

	if (r->split_layer < 0)
		return;
	family(out, "iostackbreak_time_seconds_total", "counter",
	       "Time of the calls of the outermost traced layer by part: a layer's self "
	       "time on CPU, io_wait, blocked, runqueue, lock, journal, throttled, since start.");
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		for (unsigned int part = 0; part < NR_PARTS; part++) {
			if (!report_has_part(r, -1, part))
				continue;
			l.len = 0;
			label(&l, "op", op_name(LAYER_SYSCALL, op));
			label(&l, "part", part_name(part));
			prom_seconds(secs, sizeof(secs), r->parts[op][part].sum_ns);
			fprintf(out, "iostackbreak_time_seconds_total{%s} %s\n", l.buf, secs);
		}
	}
}

/*
 * iostackbreak_cache_miss_pages_total{op} and _readahead_pages_total{op}:
 * pages the root layer's calls added to the page cache, and those of them
 * read ahead; iostackbreak_writeback_pages_total{op}: pages they put under
 * writeback (ext4); iostackbreak_journal_requests_total{op}: block
 * requests of the journal commits the calls waited for. Each where it is
 * traced.
 */
static void put_call_counts(FILE *out, const struct report *r)
{
	static const struct {
		enum why why;
		const char *name, *help;
		size_t field;
	} counts[] = {
		{ WHY_CACHE, "iostackbreak_cache_miss_pages_total",
		  "Pages the calls of the outermost traced layer added to the page cache.",
		  offsetof(struct call_totals, cache_miss_pages) },
		{ WHY_READAHEAD, "iostackbreak_readahead_pages_total",
		  "Of those, pages past what each call asked for: read ahead.",
		  offsetof(struct call_totals, readahead_pages) },
		{ WHY_WRITEBACK, "iostackbreak_writeback_pages_total",
		  "Pages the calls of the outermost traced layer put under writeback (ext4's "
		  "writepages run in the call).",
		  offsetof(struct call_totals, writeback_pages) },
		{ WHY_JOURNAL, "iostackbreak_journal_requests_total",
		  "Block requests (a flush included) of the journal commits the calls waited "
		  "for, once per call that waited.",
		  offsetof(struct call_totals, journal_requests) },
	};
	struct labels l;

	if (r->split_layer < 0)
		return;
	for (unsigned int i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		/* The commits' requests are counted on fewer kernels. */
		if (counts[i].why == WHY_JOURNAL ? !r->plan->journal_blk : !r->plan->why[counts[i].why])
			continue;
		family(out, counts[i].name, "counter", counts[i].help);
		for (unsigned int op = 0; op < NR_FS_OPS; op++) {
			l.len = 0;
			label(&l, "op", op_name(LAYER_SYSCALL, op));
			fprintf(out, "%s{%s} %" PRIu64 "\n", counts[i].name, l.buf,
				*(const uint64_t *)((const char *)&r->calls[op] + counts[i].field));
		}
	}
}

/*
 * iostackbreak_left_out_calls_total{layer, op, kind}: calls on files that
 * are not storage (pipes, sockets, other), left out of the latency of the
 * syscall and vfs layers. None under --all-fds, which counts them there.
 * Both layers see one read of a pipe: sum over kind, not over layer.
 */
static void put_left_out(FILE *out, const struct report *r)
{
	struct labels l;

	if (report_left_out_layer(r) < 0)
		return;
	family(out, "iostackbreak_left_out_calls_total", "counter",
	       "Calls on descriptors that are not storage files (pipes, sockets, other), "
	       "left out of the syscall, vfs and io_uring layers, since start; --all-fds "
	       "counts them.");
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (!report_leaves_out(r, layer))
			continue;
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			if (!traced(r, layer, op))
				continue;
			for (unsigned int kind = 0; kind < NR_FD_KINDS; kind++) {
				cell_labels(&l, layer, op);
				label(&l, "kind", fd_kind_name(kind));
				fprintf(out, "iostackbreak_left_out_calls_total{%s} %" PRIu64 "\n",
					l.buf, r->left_out[layer][op][kind]);
			}
		}
	}
}

static void put_drops(FILE *out, const struct report *r)
{
	struct labels l;

	family(out, "iostackbreak_dropped_events_total", "counter",
	       "Events that could not be recorded, by reason (a full map), since start.");
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++) {
		l.len = 0;
		label(&l, "reason", drop_reason_name(i));
		fprintf(out, "iostackbreak_dropped_events_total{%s} %" PRIu64 "\n", l.buf,
			r->drops[i]);
	}
}

static void put_skipped(FILE *out, const struct report *r)
{
	struct labels l;

	family(out, "iostackbreak_skipped_cells", "gauge",
	       "Layers and operations asked for that cannot be traced on this kernel, "
	       "with the reason; always 1.");
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			const struct cell_plan *cp = &r->plan->cells[layer][op];

			if (!cp->wanted || cp->src != METHOD_NONE)
				continue;
			cell_labels(&l, layer, op);
			label(&l, "reason", cp->why);
			fprintf(out, "iostackbreak_skipped_cells{%s} 1\n", l.buf);
		}
	}
}

/* One of the --stats counters: a series per layer that has programs. */
static void put_layer_counter(FILE *out, const char *name, const char *help,
			      const struct self_stats *st, bool run_time)
{
	struct labels l;
	char num[32];

	family(out, name, "counter", help);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		const struct layer_cost *c = &st->layers[layer];

		if (!c->programs)
			continue;
		l.len = 0;
		label(&l, "layer", layer_name(layer));
		if (run_time)
			prom_seconds(num, sizeof(num), c->run_time_ns);
		else
			snprintf(num, sizeof(num), "%" PRIu64, c->runs);
		fprintf(out, "%s{%s} %s\n", name, l.buf, num);
	}
}

static void put_stats(FILE *out, const struct self_stats *st)
{
	put_layer_counter(out, "iostackbreak_bpf_run_time_seconds_total",
			  "Time the tracer's BPF programs ran, by layer, as the kernel measures "
			  "it (BPF_STATS_RUN_TIME), since start.",
			  st, true);
	put_layer_counter(out, "iostackbreak_bpf_runs_total",
			  "Runs of the tracer's BPF programs (entries and exits), by layer, "
			  "since start.",
			  st, false);
}

int report_prometheus(FILE *out, const struct report *r, const struct prom_meta *meta)
{
	struct labels l = { .len = 0 };

	family(out, "iostackbreak_build_info", "gauge",
	       "Version of iostackbreak and release of the kernel it traces; always 1.");
	label(&l, "version", meta->version);
	label(&l, "kernel", meta->kernel);
	fprintf(out, "iostackbreak_build_info{%s} 1\n", l.buf);
	put_latency(out, r);
	put_blk_errors(out, r);
	put_time_parts(out, r);
	put_call_counts(out, r);
	put_left_out(out, r);
	put_drops(out, r);
	put_skipped(out, r);
	if (r->stats)
		put_stats(out, r->stats);
	pattern_prom(out, r);
	return fflush(out) || ferror(out) ? -1 : 0;
}
