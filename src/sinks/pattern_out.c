// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>
#include "cgname.h"
#include "layers.h"
#include "pattern_out.h"

#define BAR_WIDTH 40

/* "512", "4K", "1M": a power of two of bytes. */
static void fmt_pow2(char *buf, size_t sz, unsigned int k)
{
	static const char units[] = "KMGTPE";

	if (k < 10) {
		snprintf(buf, sz, "%" PRIu64, pattern_slot_lo(k));
		return;
	}
	snprintf(buf, sz, "%" PRIu64 "%c", pattern_slot_lo(k % 10), units[k / 10 - 1]);
}

/* The breakdown's part of a row's name: file, process, disk, cgroup. */
static void key_text(char *buf, size_t sz, const struct report *r, const struct pattern_entry *e)
{
	size_t n = 0;

	buf[0] = '\0';
	if (e->key.file && e->key.file <= r->cfg->nr_files)
		n += (size_t)snprintf(buf + n, sz - n, "%s ", r->cfg->files[e->key.file - 1]);
	if (e->key.tgid && n < sz)
		n += (size_t)snprintf(buf + n, sz - n, "%u %s ", e->key.tgid, e->comm);
	if (e->key.dev && n < sz) {
		char disk[32], dev[32];

		report_disk_name(r, e->key.dev, disk, sizeof(disk), dev, sizeof(dev));
		n += (size_t)snprintf(buf + n, sz - n, "%s ", disk);
	}
	if (e->key.cgid && n < sz) {
		const char *cg = cgroup_name(e->key.cgid);

		if (cg)
			n += (size_t)snprintf(buf + n, sz - n, "%s ", cg);
		else
			n += (size_t)snprintf(buf + n, sz - n, "#%" PRIu64 " ",
					      (uint64_t)e->key.cgid);
	}
	if (n && n < sz)
		buf[n - 1] = '\0';
}

static void text_row(FILE *out, unsigned int level, unsigned int op, const char *key,
		     const struct pattern_hist *h)
{
	uint64_t n = h->seq + h->rand, fwd = 0, back = 0;
	char size[16];

	for (unsigned int k = 0; k < PAT_DIST_SLOTS; k++) {
		fwd += h->fwd[k];
		back += h->back[k];
	}
	snprintf(size, sizeof(size), "%" PRIu64, n ? (uint64_t)h->bytes / n : 0);
	fprintf(out,
		"%-8s %-7s %10" PRIu64 " %6.1f%% %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		" %10" PRIu64 " %10s  %s\n",
		pattern_level_name(level), op_name(pattern_level_layer(level), op), n,
		pattern_seq_pct(h), (uint64_t)h->seq, (uint64_t)h->rand, fwd, back, size, key);
}

/* A histogram of count by slot, "lo -> hi : count |***|"; sign: "-" for
 * the backward gaps, printed largest first. */
static void text_slots(FILE *out, const __u64 *v, unsigned int slots, const char *sign,
		       bool reverse, uint64_t most)
{
	for (unsigned int i = 0; i < slots; i++) {
		unsigned int k = reverse ? slots - 1 - i : i;
		char lo[24], hi[24], a[24], b[24];
		int stars;

		if (!v[k])
			continue;
		fmt_pow2(a, sizeof(a), k);
		fmt_pow2(b, sizeof(b), k + 1);
		snprintf(lo, sizeof(lo), "%s%s", sign, a);
		snprintf(hi, sizeof(hi), "%s%s", sign, b);
		if (k == slots - 1)
			snprintf(hi, sizeof(hi), "...");
		stars = most ? (int)(v[k] * BAR_WIDTH / most) : 0;
		fprintf(out, "%12s -> %-10s : %-9" PRIu64 " |%-*.*s|\n", lo, hi, (uint64_t)v[k],
			BAR_WIDTH, stars, "****************************************");
	}
}

static uint64_t most_of(const __u64 *v, unsigned int slots)
{
	uint64_t most = 0;

	for (unsigned int k = 0; k < slots; k++)
		if (v[k] > most)
			most = v[k];
	return most;
}

static void text_hists(FILE *out, unsigned int level, unsigned int op, const struct pattern_hist *h)
{
	const char *layer = pattern_level_name(level);
	const char *name = op_name(pattern_level_layer(level), op);
	uint64_t most = most_of(h->fwd, PAT_DIST_SLOTS);

	if (most_of(h->back, PAT_DIST_SLOTS) > most)
		most = most_of(h->back, PAT_DIST_SLOTS);
	if (h->rand) {
		fprintf(out, "\n%s %s: gaps of the random accesses (bytes from the last end)\n",
			layer, name);
		fprintf(out, "%26s : %-9s %s\n", "gap", "count", "distribution");
		text_slots(out, h->back, PAT_DIST_SLOTS, "-", true, most);
		text_slots(out, h->fwd, PAT_DIST_SLOTS, "", false, most);
	}
	fprintf(out, "\n%s %s: sizes (bytes)\n", layer, name);
	fprintf(out, "%26s : %-9s %s\n", "size", "count", "distribution");
	text_slots(out, h->size, PAT_SIZE_SLOTS, "", false, most_of(h->size, PAT_SIZE_SLOTS));
}

/*
 * Why the disk's share differs from the calls', where the counts tell:
 * fewer, larger requests than calls were merged or read ahead; as many
 * requests as calls but fewer sequential ones reached the disk apart (a
 * file's extents, or, without --file, other streams in between).
 */
static const char *side_reason(const struct report *r, const struct pattern_hist *call,
			       const struct pattern_hist *blk)
{
	uint64_t nc = call->seq + call->rand, nb = blk->seq + blk->rand;

	if (nb < nc && blk->bytes / nb > call->bytes / nc)
		return "fewer, larger requests than calls: merged or read ahead";
	if (nb * 20 >= nc * 19 && nb * 19 <= nc * 20 &&
	    pattern_seq_pct(blk) + 5.0 < pattern_seq_pct(call))
		return r->cfg->nr_files ? "as many requests as calls, scattered: the file's blocks "
					  "are not contiguous on the disk (filefrag -v)"
					: "as many requests as calls, scattered: fragmented files, "
					  "or other streams' requests in between (-P, --file)";
	return NULL;
}

/* "read: file 98.0% sequential; disk 61.0% sequential": both levels of an op. */
static void text_side_by_side(FILE *out, const struct report *r, unsigned int op)
{
	struct pattern_hist call, blk;
	const char *why;

	if (!pattern_total(r->patterns, PAT_CALL, op, &call) ||
	    !pattern_total(r->patterns, PAT_BLK, op, &blk))
		return;
	why = side_reason(r, &call, &blk);
	fprintf(out,
		"%s: %s %.1f%% sequential (%" PRIu64 " calls); disk %.1f%% sequential (%" PRIu64
		" requests)%s%s\n",
		op_name(LAYER_SYSCALL, op), r->cfg->nr_files ? "file" : "calls",
		pattern_seq_pct(&call), (uint64_t)(call.seq + call.rand), pattern_seq_pct(&blk),
		(uint64_t)(blk.seq + blk.rand), why ? "; " : "", why ? why : "");
}

void pattern_text(FILE *out, const struct report *r)
{
	bool rows = pattern_broken_down(r->patterns);
	struct pattern_hist h;

	if (!r->patterns)
		return;
	fprintf(out, "\naccess patterns: sequential when an access starts where the last of its "
		     "open file (syscall), disk (blk) or device (bio) ended\n");
	fprintf(out, "%-8s %-7s %10s %7s %10s %10s %10s %10s %10s  %s\n", "LAYER", "OP", "ACCESSES",
		"SEQ", "SEQUENTIAL", "RANDOM", "FORWARD", "BACKWARD", "AVG_BYTES",
		rows ? "KEY" : "");
	for (unsigned int level = 0; level < NR_PAT_LEVELS; level++) {
		for (unsigned int op = FSOP_READ; op <= FSOP_WRITE; op++) {
			const struct pattern_entry *one = NULL;
			unsigned int keys = 0;
			char key[256] = "";

			if (!pattern_total(r->patterns, level, op, &h))
				continue;
			for (size_t i = 0; i < r->patterns->n; i++)
				if (r->patterns->v[i].key.level == level &&
				    r->patterns->v[i].key.op == op) {
					one = &r->patterns->v[i];
					keys++;
				}
			/* One key (a level not broken down, or one file): its row alone. */
			if (keys == 1) {
				key_text(key, sizeof(key), r, one);
				text_row(out, level, op, key, &h);
				continue;
			}
			text_row(out, level, op, "(all)", &h);
			for (size_t i = 0; i < r->patterns->n; i++) {
				const struct pattern_entry *e = &r->patterns->v[i];

				if (e->key.level != level || e->key.op != op)
					continue;
				key_text(key, sizeof(key), r, e);
				text_row(out, level, op, key, &e->h);
			}
		}
	}
	for (unsigned int op = FSOP_READ; op <= FSOP_WRITE; op++)
		text_side_by_side(out, r, op);
	for (unsigned int level = 0; level < NR_PAT_LEVELS; level++)
		for (unsigned int op = FSOP_READ; op <= FSOP_WRITE; op++)
			if (pattern_total(r->patterns, level, op, &h))
				text_hists(out, level, op, &h);
}

static json_object *slots_json(const __u64 *v, unsigned int slots, const char *dir)
{
	json_object *a = json_object_new_array();

	for (unsigned int k = 0; k < slots; k++) {
		json_object *b;

		if (!v[k])
			continue;
		b = json_object_new_object();
		if (dir)
			json_object_object_add(b, "direction", json_object_new_string(dir));
		json_object_object_add(b, "lo_bytes", json_object_new_uint64(pattern_slot_lo(k)));
		/* The last slot is open-ended: no upper bound. */
		json_object_object_add(
		    b, "hi_bytes",
		    k == slots - 1 ? NULL : json_object_new_uint64(pattern_slot_lo(k + 1) - 1));
		json_object_object_add(b, "count", json_object_new_uint64(v[k]));
		json_object_array_add(a, b);
	}
	return a;
}

json_object *pattern_json(const struct pattern_hist *h)
{
	json_object *o = json_object_new_object(), *gaps;

	json_object_object_add(o, "sequential", json_object_new_uint64(h->seq));
	json_object_object_add(o, "random", json_object_new_uint64(h->rand));
	json_object_object_add(o, "bytes", json_object_new_uint64(h->bytes));
	json_object_object_add(o, "sequential_pct", json_object_new_double(pattern_seq_pct(h)));
	gaps = slots_json(h->back, PAT_DIST_SLOTS, "backward");
	{
		json_object *fwd = slots_json(h->fwd, PAT_DIST_SLOTS, "forward");

		for (size_t i = 0; i < json_object_array_length(fwd); i++)
			json_object_array_add(gaps,
					      json_object_get(json_object_array_get_idx(fwd, i)));
		json_object_put(fwd);
	}
	json_object_object_add(o, "gaps", gaps);
	json_object_object_add(o, "sizes", slots_json(h->size, PAT_SIZE_SLOTS, NULL));
	return o;
}

void pattern_json_cell(json_object *o, const struct report *r, unsigned int layer, unsigned int op)
{
	unsigned int level, pop;
	struct pattern_hist h;

	if (!r->patterns || !pattern_of_cell(layer, op, &level, &pop))
		return;
	pattern_total(r->patterns, level, pop, &h);
	json_object_object_add(o, "pattern", pattern_json(&h));
}

void pattern_json_rows(json_object *root, const struct report *r)
{
	json_object *a;

	if (!r->patterns)
		return;
	a = json_object_new_array();
	for (size_t i = 0; i < r->patterns->n; i++) {
		const struct pattern_entry *e = &r->patterns->v[i];
		unsigned int layer = pattern_level_layer(e->key.level);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "layer", json_object_new_string(layer_name(layer)));
		json_object_object_add(o, "op", json_object_new_string(op_name(layer, e->key.op)));
		if (e->key.file && e->key.file <= r->cfg->nr_files)
			json_object_object_add(
			    o, "file", json_object_new_string(r->cfg->files[e->key.file - 1]));
		if (e->key.tgid) {
			json_object_object_add(o, "pid", json_object_new_int64(e->key.tgid));
			json_object_object_add(o, "comm", json_object_new_string(e->comm));
		}
		if (e->key.dev) {
			char disk[32], dev[32];

			report_disk_name(r, e->key.dev, disk, sizeof(disk), dev, sizeof(dev));
			json_object_object_add(o, "disk", json_object_new_string(disk));
			json_object_object_add(o, "dev", json_object_new_string(dev));
		}
		if (e->key.cgid) {
			const char *cg = cgroup_name(e->key.cgid);

			json_object_object_add(o, "cgroup", cg ? json_object_new_string(cg) : NULL);
			json_object_object_add(o, "cgroup_id", json_object_new_uint64(e->key.cgid));
		}
		json_object_object_add(o, "pattern", pattern_json(&e->h));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "patterns", a);
}

/* One family: per level and op, the values value() gives, labelled by
 * names (pattern="..."), or one unlabelled value when names is NULL. */
static void prom_family(FILE *out, const struct report *r, const char *name, const char *help,
			const char *const *names, unsigned int nvalues,
			void (*value)(const struct pattern_hist *h, uint64_t *v))
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (unsigned int level = 0; level < NR_PAT_LEVELS; level++) {
		for (unsigned int op = FSOP_READ; op <= FSOP_WRITE; op++) {
			unsigned int layer = pattern_level_layer(level);
			struct pattern_hist h;
			uint64_t v[2];

			pattern_total(r->patterns, level, op, &h);
			value(&h, v);
			for (unsigned int p = 0; p < nvalues; p++) {
				fprintf(out, "%s{layer=\"%s\",op=\"%s\"", name, layer_name(layer),
					op_name(layer, op));
				if (names)
					fprintf(out, ",pattern=\"%s\"", names[p]);
				fprintf(out, "} %" PRIu64 "\n", v[p]);
			}
		}
	}
}

static void accesses(const struct pattern_hist *h, uint64_t *v)
{
	v[0] = h->seq;
	v[1] = h->rand;
}

static void bytes(const struct pattern_hist *h, uint64_t *v)
{
	v[0] = h->bytes;
}

void pattern_prom(FILE *out, const struct report *r)
{
	static const char *const names[] = { "sequential", "random" };

	if (!r->patterns)
		return;
	prom_family(out, r, "iostackbreak_pattern_accesses_total",
		    "Accesses by pattern since start: system calls at a file position (layer "
		    "syscall), block requests (blk) and bios (bio) by sector.",
		    names, 2, accesses);
	prom_family(out, r, "iostackbreak_pattern_bytes_total",
		    "Bytes of the accesses of iostackbreak_pattern_accesses_total.", NULL, 1,
		    bytes);
}
