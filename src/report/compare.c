// SPDX-License-Identifier: GPL-2.0
/*
 * Two runs side by side (compare.h). When is a change larger than the
 * noise? A percentile of n samples is an order statistic: the p-th
 * percentile's rank is n*q (q = p/100), and the rank of the sample that
 * falls there varies from run to run of the same distribution like a
 * binomial count, with a standard deviation of sqrt(n*q*(1-q)). Its
 * distribution-free confidence interval is the values between ranks
 * n*q - 3 sd and n*q + 3 sd (99.7%), widened to the bounds of the buckets
 * that hold them (a histogram knows a value to its bucket). A percentile
 * changed when the two runs' intervals do not overlap. The interval stands
 * on the normal approximation of the binomial, which needs n*q*(1-q) >= 5
 * (p50: 20 samples, p90: 56, p99: 506): with fewer on either side the
 * percentile is not judged. A count changed
 * when the two are more than 3 sqrt(a + b) apart (Poisson noise of the
 * difference). This is the noise of sampling only: a machine whose speed
 * drifts between the runs (another tenant, a cold cache) shows as a change,
 * which it is for the runs compared. The parts' shares of the calls' time
 * are shown, not judged: a share is a ratio of sums of times, whose noise
 * no count of samples alone bounds.
 */
#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include "compare.h"
#include "layers.h"
#include "rec_count.h"
#include "report.h"
#include "recording.h"
#include "verdict.h"

#define CMP_SIGMAS 3.0
#define CMP_MIN_NPQ 5.0

/* The value at rank r (1-based) of c: its bucket's low bound (upper:
 * its high bound), kept within [min, max]. */
static uint64_t value_at_rank(const struct cell_hist *c, uint64_t r, bool upper)
{
	uint64_t seen = 0, v = c->max_ns;

	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		seen += c->buckets[i];
		if (seen >= r) {
			v = upper ? hist_bucket_hi(i) - 1 : hist_bucket_lo(i);
			break;
		}
	}
	if (v < c->min_ns)
		v = c->min_ns;
	if (v > c->max_ns)
		v = c->max_ns;
	return v;
}

static void percentile_interval(const struct cell_hist *c, double p, uint64_t *lo, uint64_t *hi)
{
	double q = p / 100, n = (double)c->count, sd = sqrt(n * q * (1 - q));
	double rlo = floor(n * q - CMP_SIGMAS * sd), rhi = ceil(n * q + CMP_SIGMAS * sd);

	if (rlo < 1)
		rlo = 1;
	if (rhi > n)
		rhi = n;
	*lo = value_at_rank(c, (uint64_t)rlo, false);
	*hi = value_at_rank(c, (uint64_t)rhi, true);
}

/* Enough samples for the interval (see the top of the file)? */
static bool judged(const struct cell_hist *c, double p)
{
	double q = p / 100;

	return (double)c->count * q * (1 - q) >= CMP_MIN_NPQ;
}

bool cmp_percentile_changed(const struct cell_hist *a, const struct cell_hist *b, double p)
{
	uint64_t alo, ahi, blo, bhi;

	if (!judged(a, p) || !judged(b, p))
		return false;
	percentile_interval(a, p, &alo, &ahi);
	percentile_interval(b, p, &blo, &bhi);
	return ahi < blo || bhi < alo;
}

bool cmp_count_changed(uint64_t a, uint64_t b)
{
	double d = a > b ? (double)(a - b) : (double)(b - a);

	return d > CMP_SIGMAS * sqrt((double)a + (double)b);
}

static int op_by_name(unsigned int layer, const char *name)
{
	for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
		if (!strcmp(op_name(layer, op), name))
			return (int)op;
	return -1;
}

static uint64_t get_u64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

/* One cell object of a report into s (added: keys of a breakdown sum). */
static void load_cell(struct cmp_side *s, json_object *o)
{
	json_object *v, *buckets;
	struct cell_hist *c;
	int layer, op;
	uint64_t min;

	if (!json_object_object_get_ex(o, "layer", &v) ||
	    (layer = layer_by_name(json_object_get_string(v))) < 0 ||
	    !json_object_object_get_ex(o, "op", &v) ||
	    (op = op_by_name((unsigned int)layer, json_object_get_string(v))) < 0)
		return;
	c = &s->cells[layer][op];
	s->have[layer][op] = true;
	min = get_u64(o, "min_ns");
	if (get_u64(o, "count") && (!c->count || min < c->min_ns))
		c->min_ns = min;
	if (get_u64(o, "max_ns") > c->max_ns)
		c->max_ns = get_u64(o, "max_ns");
	c->count += get_u64(o, "count");
	c->sum_ns += get_u64(o, "sum_ns");
	if (!json_object_object_get_ex(o, "buckets", &buckets) ||
	    !json_object_is_type(buckets, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(buckets); i++) {
		json_object *b = json_object_array_get_idx(buckets, i);

		c->buckets[hist_bucket(get_u64(b, "lo_ns"))] += get_u64(b, "count");
	}
}

static int part_by_name(const char *name)
{
	for (unsigned int p = 0; p < NR_PARTS; p++)
		if (!strcmp(part_name(p), name))
			return (int)p;
	return -1;
}

/* The "breakdown" of a report: per op the calls' time and each part's. */
static void load_parts(struct cmp_side *s, json_object *all)
{
	for (size_t i = 0; json_object_is_type(all, json_type_array) &&
			   i < json_object_array_length(all);
	     i++) {
		json_object *o = json_object_array_get_idx(all, i), *v, *parts;
		int op, part;

		if (!json_object_object_get_ex(o, "op", &v) ||
		    (op = op_by_name(LAYER_SYSCALL, json_object_get_string(v))) < 0 ||
		    op >= NR_FS_OPS)
			continue;
		s->calls_ns[op] += get_u64(o, "total_ns");
		if (!json_object_object_get_ex(o, "parts", &parts) ||
		    !json_object_is_type(parts, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(parts); k++) {
			json_object *p = json_object_array_get_idx(parts, k);

			if (json_object_object_get_ex(p, "part", &v) &&
			    (part = part_by_name(json_object_get_string(v))) >= 0)
				s->part_ns[op][part] += get_u64(p, "sum_ns");
		}
	}
}

int cmp_load_json(struct cmp_side *s, const char *text, char *err, size_t errsz)
{
	json_object *last = NULL, *cells;
	const char *p = text;

	memset(s, 0, sizeof(*s));
	/* NDJSON: one report a line (and --slower's events); the last report. */
	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		json_object *o = json_tokener_parse(strndupa(p, len));

		if (o && json_object_object_get_ex(o, "cells", &cells)) {
			json_object_put(last);
			last = o;
		} else {
			json_object_put(o);
		}
		p += len + (end ? 1 : 0);
	}
	if (!last) {
		snprintf(err, errsz, "neither a recording nor a JSON report of iostackbreak "
				     "(--json): no object with \"cells\"");
		return -1;
	}
	if (!json_object_object_get_ex(last, "totals", &cells))
		json_object_object_get_ex(last, "cells", &cells);
	for (size_t i = 0; json_object_is_type(cells, json_type_array) &&
			   i < json_object_array_length(cells);
	     i++)
		load_cell(s, json_object_array_get_idx(cells, i));
	if (json_object_object_get_ex(last, "breakdown", &cells))
		load_parts(s, cells);
	json_object_put(last);
	return 0;
}

int cmp_load_recording(struct cmp_side *s, FILE *f, char *err, size_t errsz)
{
	static struct rec_reader rd;
	struct config cfg = { .json = true, .unit = UNIT_NS };
	struct rec_count rc;
	const void *data;
	size_t size;
	int n;

	memset(s, 0, sizeof(*s));
	if (rec_open(&rd, f, err, errsz))
		return -1;
	rec_count_init(&rc, &cfg);
	while ((n = rec_next(&rd, &data, &size, err, errsz)) > 0)
		rec_count_event(&rc, data, size);
	if (n == 0 && rc.err)
		snprintf(err, errsz, "out of memory");
	if (n == 0 && !rc.err) {
		memcpy(s->cells, rc.snap.cells, sizeof(s->cells));
		for (unsigned int op = 0; op < NR_FS_OPS; op++) {
			s->calls_ns[op] = rc.snap.calls[op].total_ns;
			for (unsigned int p = 0; p < NR_PARTS; p++)
				s->part_ns[op][p] = rc.snap.parts[op][p].sum_ns;
		}
		for (unsigned int l = 0; l < NR_LAYERS; l++)
			for (unsigned int op = 0; op < NR_OPS; op++)
				s->have[l][op] = rd.h.plan.cells[l][op].src != METHOD_NONE;
	}
	rec_count_free(&rc);
	rec_reader_free(&rd);
	return n == 0 && !rc.err ? 0 : -1;
}

/* "+12%", "-3%", "" (nothing to compare), with "*" when it is significant. */
static void change(char *buf, size_t sz, double a, double b, bool sig)
{
	if (a <= 0 || b <= 0)
		snprintf(buf, sz, "%s", a == b ? "" : "new");
	else
		snprintf(buf, sz, "%+.0f%%%s", (b - a) * 100 / a, sig ? "*" : "");
}

/* Each op's parts as shares of its calls' time, A then B (not judged). */
static void print_shares(FILE *out, const struct cmp_side *a, const struct cmp_side *b)
{
	bool header = false;

	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		if (!a->calls_ns[op] || !b->calls_ns[op])
			continue;
		for (unsigned int p = 0; p < NR_PARTS; p++) {
			double sa = 100.0 * (double)a->part_ns[op][p] / (double)a->calls_ns[op];
			double sb = 100.0 * (double)b->part_ns[op][p] / (double)b->calls_ns[op];

			if (!a->part_ns[op][p] && !b->part_ns[op][p])
				continue;
			if (!header)
				fprintf(out, "\n%-6s %-10s %8s %8s %8s\n", "OP", "PART", "SHARE A",
					"SHARE B", "CHANGE");
			header = true;
			fprintf(out, "%-6s %-10s %7.1f%% %7.1f%% %+7.1f\n", op_name(LAYER_SYSCALL, op),
				part_name(p), sa, sb, sb - sa);
		}
	}
	if (header)
		fprintf(out, "(shares of the calls' time, in points; shown, not judged: a ratio of "
			     "sums of times has no noise that its count bounds)\n");
}

unsigned int cmp_print(FILE *out, const struct cmp_side *a, const struct cmp_side *b)
{
	static const double pct[] = { 50, 90, 99 };
	char changed[1024] = "";
	unsigned int nsig = 0;
	size_t used = 0;

	fprintf(out, "%-8s %-6s %10s %10s %7s", "LAYER", "OP", "COUNT A", "COUNT B", "CHANGE");
	for (unsigned int i = 0; i < 3; i++)
		fprintf(out, "      p%-2.0f A     p%-2.0f B  CHANGE", pct[i], pct[i]);
	fputc('\n', out);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int op = 0; op < layer_nr_ops(l); op++) {
			const struct cell_hist *ca = &a->cells[l][op], *cb = &b->cells[l][op];
			char what[64] = "", ch[32], va[32], vb[32];
			bool sig;

			if (!(a->have[l][op] || b->have[l][op]) || !(ca->count || cb->count))
				continue;
			sig = cmp_count_changed(ca->count, cb->count);
			change(ch, sizeof(ch), (double)ca->count, (double)cb->count, sig);
			if (sig)
				snprintf(what, sizeof(what), " count");
			fprintf(out, "%-8s %-6s %10llu %10llu %7s", layer_name(l), op_name(l, op),
				(unsigned long long)ca->count, (unsigned long long)cb->count, ch);
			for (unsigned int i = 0; i < 3; i++) {
				uint64_t pa = cell_percentile(ca, pct[i]), pb = cell_percentile(cb, pct[i]);
				size_t w = strlen(what);

				sig = cmp_percentile_changed(ca, cb, pct[i]);
				change(ch, sizeof(ch), (double)pa, (double)pb, sig);
				format_duration(pa, va, sizeof(va));
				format_duration(pb, vb, sizeof(vb));
				fprintf(out, " %9s %9s %7s", ca->count ? va : "-", cb->count ? vb : "-",
					ch);
				if (sig)
					snprintf(what + w, sizeof(what) - w, " p%.0f", pct[i]);
			}
			fputc('\n', out);
			if (what[0]) {
				nsig++;
				used += (size_t)snprintf(changed + used,
							 used < sizeof(changed) ? sizeof(changed) - used : 0,
							 "%s%s %s:%s", nsig > 1 ? "; " : "", layer_name(l),
							 op_name(l, op), what);
				if (used >= sizeof(changed))
					used = sizeof(changed) - 1;
			}
		}
	print_shares(out, a, b);
	fprintf(out, "\n*: beyond the noise of sampling: percentiles whose 99.7%% confidence "
		     "intervals (ranks n*q +- 3 sqrt(n*q*(1-q)), to their buckets' bounds) do not "
		     "overlap, judged with n*q*(1-q) >= 5 on both sides; counts more than "
		     "3 sqrt(A + B) apart.\n");
	if (nsig)
		fprintf(out, "Changed: %s\n", changed);
	else
		fprintf(out, "No change beyond the noise.\n");
	return nsig;
}
