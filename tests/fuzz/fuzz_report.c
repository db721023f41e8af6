// SPDX-License-Identifier: GPL-2.0
/*
 * The report writers fed random reports: which cells are traced or skipped
 * (with any reason text), their samples, the keys of -P/-D/-F with any
 * bytes as process names, disks gone, drops. The JSON must parse, with one
 * object per traced cell (or key) and one skip per skipped cell; the text
 * summary table must have one row per traced cell.
 */
#include <json-c/json.h>
#include "fuzz.h"
#include "layers.h"
#include "report.h"
#include "hist_bucket.h"
#include "sink.h"

/* The cells the "(traced, nothing seen: ...)" note of a text report names. */
static unsigned int nothing_seen(const char *text)
{
	const char *p = strstr(text, "(traced, nothing seen: ");
	unsigned int n = 0;

	if (!p)
		return 0;
	p += strlen("(traced, nothing seen: ");
	/* Each "layer op, op, op" group names as many cells as it has ops:
	 * a word after a layer name, or after ", ". */
	for (n = 1; *p && *p != ')'; p++) {
		if (*p == '\n' && p[1] == ' ')
			p++; /* the wrap: a newline and one space stand for a space */
		if (*p == ',')
			n++;
		else if (*p == ';')
			n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void record(struct cell_hist *c, uint64_t ns)
{
	if (!c->count || ns < c->min_ns)
		c->min_ns = ns;
	if (ns > c->max_ns)
		c->max_ns = ns;
	c->count++;
	c->sum_ns += ns;
	c->buckets[hist_bucket(ns)]++;
}

/* A few samples, as the kernel would record them, and some failures. */
static void take_cell(struct fuzz_in *in, struct cell_hist *c, bool blk)
{
	unsigned int n = take_u8(in) % 5;

	memset(c, 0, sizeof(*c));
	for (unsigned int i = 0; i < n; i++)
		record(c, take_u64(in) >> (take_u8(in) % 64));
	if (blk && take_u8(in) % 4 == 0) {
		c->errors = take_u8(in);
		c->error_sum_ns = c->errors * (uint64_t)take_u8(in);
	}
}

static void disk_namer_fuzz(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, "d%u", dev % 7);
}

static char *render(struct sink *s, const struct report *r, int json, enum unit unit)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_CHECK(f, "open_memstream");
	if (json)
		sink_json_open(s, f);
	else
		sink_text_open(s, f, unit);
	FUZZ_CHECK(!sink_write(s, r), "write");
	sink_close(s);
	fclose(f);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct plan plan;
	static struct report r;
	static struct config cfg;
	static struct breakdown_entry entries[24];
	struct fuzz_in in = { data, size };
	unsigned int traced = 0, skipped = 0, rows = 0, objects, n_keys;
	char *json, *text, *line;
	struct sink s;
	json_object *o, *cells;

	memset(&plan, 0, sizeof(plan));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_verdict = true;
	r.plan = &plan;
	r.cfg = &cfg;
	r.split_layer = -1;
	r.interval_s = (double)take_u8(&in) / 7.0 + 0.001;
	r.wall.tv_sec = (time_t)(take_u64(&in) % 4000000000ULL);
	cfg.timestamp = take_u8(&in) & 1;
	cfg.top = take_u8(&in) % 4;
	r.disk_name = take_u8(&in) & 1 ? disk_namer_fuzz : NULL;
	for (unsigned int l = 0; l < NR_LAYERS; l++) {
		for (unsigned int op = 0; op < layer_nr_ops(l); op++) {
			struct cell_plan *cp = &plan.cells[l][op];
			uint8_t how = take_u8(&in) % 3;

			if (how == 0)
				continue; /* not asked for */
			cp->wanted = true;
			if (how == 1) {
				cp->src = METHOD_NONE;
				take_str(&in, cp->why, sizeof(cp->why));
				skipped++;
				continue;
			}
			cp->src = METHOD_TP_BTF;
			cp->nr_targets = 1;
			cp->targets[0] = "fuzz";
			traced++;
			take_cell(&in, &r.cells[l][op], l == LAYER_BLK);
		}
	}
	cfg.per_process = take_u8(&in) & 1;
	cfg.per_disk = take_u8(&in) & 1;
	cfg.per_flags = take_u8(&in) & 1;
	n_keys = (cfg.per_process || cfg.per_disk || cfg.per_flags) ? take_u8(&in) % 24 : 0;
	for (unsigned int i = 0; i < n_keys; i++) {
		struct breakdown_entry *e = &entries[i];
		unsigned int l = take_u8(&in) % NR_LAYERS;

		memset(e, 0, sizeof(*e));
		e->key.cell_idx = CELL_INDEX(l, take_u8(&in) % layer_nr_ops(l));
		e->key.tgid = (uint32_t)take_u64(&in);
		e->key.dev = (uint32_t)take_u64(&in);
		e->key.flags = take_u8(&in);
		take_str(&in, e->comm, sizeof(e->comm)); /* any bytes, as comm can be */
		take_cell(&in, &e->cell, l == LAYER_BLK);
	}
	r.breakdowns = &r.own_breakdowns;
	r.own_breakdowns.v = entries;
	r.own_breakdowns.n = n_keys;
	r.nr_gone = take_u8(&in) % 3;
	for (unsigned int i = 0; i < r.nr_gone; i++) {
		r.gone[i].dev = (uint32_t)take_u64(&in);
		take_str(&in, r.gone[i].name, sizeof(r.gone[i].name));
	}
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++) {
		r.drops[i] = take_u8(&in) % 2 ? take_u64(&in) >> 4 : 0;
		r.dropped += r.drops[i];
	}
	/* Calls left out (last: older inputs keep their meaning above). */
	cfg.all_fds = take_u8(&in) & 1;
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int op = 0; LAYER_LEAVES_OUT(l) && op < layer_nr_ops(l); op++)
			for (unsigned int k = 0; k < NR_FD_KINDS; k++)
				r.left_out[l][op][k] = take_u8(&in) % 2 ? take_u64(&in) >> 2 : 0;

	json = render(&s, &r, 1, UNIT_NS);
	FUZZ_CHECK(strlen(json) && json[strlen(json) - 1] == '\n' && !strchr(json, '\n')[1],
		   "not one line: %s", json);
	o = json_tokener_parse(json);
	FUZZ_CHECK(o, "JSON does not parse: %s", json);
	FUZZ_CHECK(json_object_object_get_ex(o, "cells", &cells), "no cells: %s", json);
	objects = (unsigned int)json_object_array_length(cells);
	if (!cfg.per_process && !cfg.per_disk && !cfg.per_flags)
		FUZZ_CHECK(objects == traced, "%u cells for %u traced: %s", objects, traced, json);
	json_object_put(o);
	free(json);

	text = render(&s, &r, 0, (enum unit)(take_u8(&in) % 3));
	line = strstr(text, "\nLAYER    OP ");
	FUZZ_CHECK(line || !traced, "no summary table for %u traced cells:\n%s", traced, text);
	for (line = line ? strchr(line + 1, '\n') : NULL; line && line[1];
	     line = strchr(line + 1, '\n')) {
		unsigned int l;
		bool is_row = false;

		for (l = 0; l < NR_LAYERS && !is_row; l++)
			is_row = !strncmp(line + 1, layer_name(l), strlen(layer_name(l))) &&
				 line[1 + strlen(layer_name(l))] == ' ';
		if (!is_row)
			break;
		rows++;
	}
	/* Cells traced that saw nothing have no row: one note names them,
	 * "(traced, nothing seen: io_uring read, write; blk other)", wrapped
	 * at 100 columns (a continuation line starts with a space). */
	FUZZ_CHECK(rows + nothing_seen(text) == traced, "%u summary rows for %u traced cells:\n%s",
		   rows, traced, text);
	free(text);
	(void)skipped;
	return 0;
}
