// SPDX-License-Identifier: GPL-2.0
/*
 * The live view (live.h). Each interval report is copied into a small model
 * (rows per layer and op, the busiest processes and disks, the verdict), so
 * that a key can redraw it at once, grouped or sorted another way, without
 * waiting for the next report.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "hist.h"
#include "layers.h"
#include "live.h"
#include "quote.h"
#include "verdict.h"

#define MAX_KEYS 256	/* processes, disks or cgroups kept per report */
#define MAX_TOTALS 4096 /* keys whose calls are summed since the start */
#define BAR_W 24
#define LINE_LEN 512

enum group { GROUP_PROCESSES, GROUP_DISKS, GROUP_CGROUPS, NR_GROUPS };
enum sort { SORT_TIME, SORT_CALLS, SORT_P99, NR_SORTS };

static const char *const sort_names[NR_SORTS] = { "time", "calls", "p99" };

struct row {
	unsigned int layer, op;
	uint64_t count, p50, p99;
	bool split; /* its calls are split into parts */
	uint64_t part_ns[NR_PARTS], total_ns;
};

struct key {
	uint64_t id; /* tgid, kernel dev_t or cgroup id */
	/* comm (made printable), disk name or cgroup path from the root */
	char name[256];
	struct cell_hist cell;	     /* its ops of the layer together */
};

struct model {
	bool valid;
	double secs;
	char verdict[LINE_LEN];
	struct row rows[NR_LAYERS * NR_OPS];
	unsigned int nr_rows;
	struct key keys[NR_GROUPS][MAX_KEYS];
	unsigned int nr_keys[NR_GROUPS];
	bool have[NR_GROUPS]; /* the report had that breakdown */
	int left_out_layer;   /* whose calls on pipes, sockets... were left out; -1: none */
	uint64_t left_out[NR_FD_KINDS]; /* by kind, that layer's */
	unsigned int key_layer[NR_GROUPS];
};

/* A process's (or disk's) calls since the start of the run. */
struct total {
	uint64_t id;
	uint64_t calls;
};

struct live {
	int in_fd;
	FILE *out;
	enum unit unit;
	struct termios saved;
	enum group group;
	enum sort sort;
	bool paused;
	struct model m;
	struct total totals[NR_GROUPS][MAX_TOTALS];
	unsigned int nr_totals[NR_GROUPS];
};

struct live *live_open(int in_fd, FILE *out, enum unit unit, char *err, size_t errsz)
{
	struct termios raw;
	struct live *lv;

	if (!isatty(in_fd) || !isatty(fileno(out))) {
		snprintf(err, errsz,
			 "--live draws on a terminal: run it in one (stdin and stdout), or use "
			 "interval reports instead (iostackbreak 1)");
		return NULL;
	}
	lv = calloc(1, sizeof(*lv));
	if (!lv) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	lv->in_fd = in_fd;
	lv->out = out;
	lv->unit = unit;
	if (tcgetattr(in_fd, &lv->saved)) {
		snprintf(err, errsz, "--live: cannot read the terminal's settings: %s",
			 strerror(errno));
		free(lv);
		return NULL;
	}
	/* Keys as they are typed, not echoed; reads never wait. */
	raw = lv->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(in_fd, TCSANOW, &raw);
	/* The alternate screen, cursor hidden: the user's screen comes back. */
	fputs("\033[?1049h\033[?25l\033[H\033[2J", out);
	fprintf(out, "iostackbreak --live: the first report comes after the first interval...\n");
	fflush(out);
	return lv;
}

void live_close(struct live *lv)
{
	if (!lv)
		return;
	fputs("\033[?25h\033[?1049l", lv->out);
	fflush(lv->out);
	tcsetattr(lv->in_fd, TCSANOW, &lv->saved);
	free(lv);
}

int live_fd(const struct live *lv)
{
	return lv->in_fd;
}

/* ---- the model ---- */

static struct key *key_of(struct model *m, enum group g, uint64_t id)
{
	for (unsigned int i = 0; i < m->nr_keys[g]; i++)
		if (m->keys[g][i].id == id)
			return &m->keys[g][i];
	if (m->nr_keys[g] == MAX_KEYS)
		return NULL;
	m->keys[g][m->nr_keys[g]] = (struct key){ .id = id };
	return &m->keys[g][m->nr_keys[g]++];
}

/* The layer whose calls stand for a process's time in I/O: the root of
 * the split calls, else the outermost traced layer of threads. */
static unsigned int process_layer(const struct report *r)
{
	if (r->split_layer >= 0)
		return (unsigned int)r->split_layer;
	for (unsigned int l = 0; l < NR_CALL_LAYERS; l++)
		if (r->plan->cells[l][0].src != METHOD_NONE)
			return l;
	return LAYER_SYSCALL;
}

/* A breakdown entry's key, and its name, in group g. */
static void key_name(const struct report *r, const struct breakdown_entry *e, enum group g,
		     struct key *k)
{
	struct cgroup_ids ids;
	char id[32];

	switch (g) {
	case GROUP_PROCESSES:
		snprintf(k->name, sizeof(k->name), "%s", e->comm[0] ? e->comm : "?");
		break;
	case GROUP_DISKS:
		if (r->disk_name)
			r->disk_name(e->key.dev, k->name, sizeof(k->name));
		else
			format_kdev(e->key.dev, k->name, sizeof(k->name));
		break;
	default:
		snprintf(k->name, sizeof(k->name), "%s",
			 report_cgroup_name(e, id, sizeof(id), &ids) ?: "/");
		break;
	}
	printable_line(k->name, sizeof(k->name));
}

/*
 * The keys of each group, their ops of the layer together: processes and
 * cgroups by their calls at the process layer, disks by their requests.
 * One entry may count in several groups (-P and -G key it by both).
 */
static void model_keys(struct model *m, const struct report *r)
{
	m->key_layer[GROUP_PROCESSES] = process_layer(r);
	m->key_layer[GROUP_CGROUPS] = process_layer(r);
	m->key_layer[GROUP_DISKS] = LAYER_BLK;
	m->have[GROUP_PROCESSES] = r->breakdowns && r->cfg->per_process;
	m->have[GROUP_DISKS] = r->breakdowns && r->cfg->per_disk;
	m->have[GROUP_CGROUPS] = r->breakdowns && r->cfg->per_cgroup;
	for (size_t i = 0; r->breakdowns && i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];
		unsigned int layer = CELL_LAYER(e->key.cell_idx);

		if (report_is_process_calls(e) || layer >= NR_LAYERS || !e->cell.count)
			continue;
		for (unsigned int g = 0; g < NR_GROUPS; g++) {
			uint64_t id = g == GROUP_PROCESSES ? e->key.tgid
				      : g == GROUP_DISKS   ? e->key.dev
							   : e->key.cgid;
			struct key *k;

			if (!m->have[g] || layer != m->key_layer[g])
				continue;
			k = key_of(m, g, id);
			if (!k)
				continue;
			if (!k->name[0])
				key_name(r, e, g, k);
			cell_add(&k->cell, &e->cell);
		}
	}
}

/* Adds the interval's calls of each key to its total since the start
 * (keys past MAX_TOTALS show no total). */
static void add_totals(struct live *lv, const struct model *m)
{
	for (unsigned int g = 0; g < NR_GROUPS; g++)
		for (unsigned int i = 0; i < m->nr_keys[g]; i++) {
			const struct key *k = &m->keys[g][i];
			unsigned int j;

			for (j = 0; j < lv->nr_totals[g] && lv->totals[g][j].id != k->id; j++)
				;
			if (j == lv->nr_totals[g]) {
				if (j == MAX_TOTALS)
					continue;
				lv->totals[g][lv->nr_totals[g]++] = (struct total){ .id = k->id };
			}
			lv->totals[g][j].calls += k->cell.count;
		}
}

static uint64_t total_of(const struct live *lv, enum group g, uint64_t id)
{
	for (unsigned int j = 0; j < lv->nr_totals[g]; j++)
		if (lv->totals[g][j].id == id)
			return lv->totals[g][j].calls;
	return 0;
}

static void model_build(struct model *m, const struct report *r)
{
	memset(m, 0, sizeof(*m));
	m->valid = true;
	m->secs = r->interval_s;
	report_verdict(r, m->verdict, sizeof(m->verdict));
	m->left_out_layer = report_left_out_layer(r);
	for (unsigned int k = 0; m->left_out_layer >= 0 && k < NR_FD_KINDS; k++)
		m->left_out[k] = report_left_out_total(r, (unsigned int)m->left_out_layer, k);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < layer_nr_ops(l); o++) {
			const struct cell_hist *c = &r->cells[l][o];
			struct row *row;

			if (r->plan->cells[l][o].src == METHOD_NONE)
				continue;
			row = &m->rows[m->nr_rows++];
			*row = (struct row){ .layer = l, .op = o, .count = c->count };
			row->p50 = cell_percentile(c, 50);
			row->p99 = cell_percentile(c, 99);
			if (r->split_layer >= 0 && (int)l == r->split_layer && o < NR_FS_OPS &&
			    r->calls[o].count) {
				row->split = true;
				row->total_ns = r->calls[o].total_ns;
				for (unsigned int p = 0; p < NR_PARTS; p++)
					row->part_ns[p] = r->parts[o][p].sum_ns;
			}
		}
	model_keys(m, r);
}

/* ---- drawing ---- */

/* A line of the screen: cut to the width, never past the buffer. */
struct screen {
	char *buf;
	size_t sz, n;
	unsigned int rows, cols, lines;
};

__attribute__((format(printf, 2, 3))) static void line(struct screen *s, const char *fmt, ...)
{
	char text[LINE_LEN];
	va_list ap;
	size_t len;

	if (s->lines >= s->rows)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	len = strlen(text);
	if (len > s->cols)
		len = s->cols;
	if (s->n + len + 2 > s->sz)
		return;
	memcpy(s->buf + s->n, text, len);
	s->n += len;
	s->buf[s->n++] = '\n';
	s->buf[s->n] = '\0';
	s->lines++;
}

/*
 * A layer's letter in the bar: the first letter of its name, in capitals,
 * that no layer before it in cells.def took (f2fs F, and a fuse layer would
 * be U): the legend follows the table, and no two layers share a letter.
 */
static char layer_letter(unsigned int layer)
{
	static char letters[NR_CALL_LAYERS];

	if (!letters[0]) {
		for (unsigned int l = 0; l < NR_CALL_LAYERS; l++) {
			for (const char *c = layer_name(l); *c && !letters[l]; c++) {
				char up = (char)toupper((unsigned char)*c);

				if (isalpha((unsigned char)*c) && !memchr(letters, up, l))
					letters[l] = up;
			}
			if (!letters[l])
				letters[l] = '?';
		}
	}
	return letters[layer];
}

/* The letter of a part in the bar: the layer's for its time on CPU. */
static char part_letter(unsigned int part)
{
	switch (part) {
	case PART_IO_WAIT:
		return 'w';
	case PART_BLOCKED:
		return 'b';
	case PART_RUNQUEUE:
		return 'r';
	case PART_LOCK:
		return 'l';
	case PART_JOURNAL:
		return 'j';
	case PART_THROTTLED:
		return 't';
	default:
		return part < NR_CALL_LAYERS ? layer_letter(part) : '?';
	}
}

/*
 * The bar's letters, in two lines that fit 80 columns: each layer of threads
 * of bpf/cells.def on CPU ("(bar: S syscall, V vfs, ..."), then the waits.
 */
static void bar_legend(char *layers, size_t lsz, char *waits, size_t wsz)
{
	size_t n = (size_t)snprintf(layers, lsz, "(bar:");

	for (unsigned int l = 0; l < NR_CALL_LAYERS && n < lsz; l++)
		n += (size_t)snprintf(layers + n, lsz - n, "%s %c %s", l ? "," : "", part_letter(l),
				      layer_name(l));
	if (n < lsz)
		snprintf(layers + n, lsz - n, ": the layer on CPU;");
	n = 0;
	for (unsigned int p = NR_CALL_LAYERS; p < NR_PARTS && n < wsz; p++)
		n += (size_t)snprintf(waits + n, wsz - n, "%s %c %s", p == NR_CALL_LAYERS ? "" : ",",
				      part_letter(p), part_name(p));
	if (n < wsz)
		snprintf(waits + n, wsz - n, ")");
}

/* BAR_W letters, each part's share of them (largest remainders round). */
static void parts_bar(const struct row *row, char bar[BAR_W + 1])
{
	unsigned int cells[NR_PARTS], used = 0, at = 0;
	double rest[NR_PARTS];

	for (unsigned int p = 0; p < NR_PARTS; p++) {
		double exact =
		    row->total_ns ? (double)row->part_ns[p] * BAR_W / (double)row->total_ns : 0;

		cells[p] = (unsigned int)exact;
		rest[p] = exact - cells[p];
		used += cells[p];
	}
	while (used < BAR_W && row->total_ns) {
		unsigned int best = 0;

		for (unsigned int p = 1; p < NR_PARTS; p++)
			if (rest[p] > rest[best])
				best = p;
		cells[best]++;
		rest[best] = -1;
		used++;
	}
	for (unsigned int p = 0; p < NR_PARTS; p++)
		for (unsigned int i = 0; i < cells[p] && at < BAR_W; i++)
			bar[at++] = part_letter(p);
	while (at < BAR_W)
		bar[at++] = ' ';
	bar[BAR_W] = '\0';
}

static uint64_t sort_value(const struct key *k, enum sort sort)
{
	switch (sort) {
	case SORT_CALLS:
		return k->cell.count;
	case SORT_P99:
		return cell_percentile(&k->cell, 99);
	default:
		return k->cell.sum_ns;
	}
}

/* For qsort's comparator only: the keys and the order being sorted. */
static const struct key *sort_keys;
static enum sort sort_by;

static int key_cmp(const void *a, const void *b)
{
	uint64_t va = sort_value(&sort_keys[*(const unsigned int *)a], sort_by),
		 vb = sort_value(&sort_keys[*(const unsigned int *)b], sort_by);

	return va < vb ? 1 : va > vb ? -1 : 0;
}

/* The table's words for each group. */
static const struct {
	const char *id, *name, *rate, *total, *what, *none;
} group_words[NR_GROUPS] = {
	[GROUP_PROCESSES] = { "PID", "COMM", "CALLS/S", "CALLS", "busiest processes, by their calls",
			      "(no processes in this run)" },
	[GROUP_DISKS] = { "DEV", "DISK", "REQUESTS/S", "REQUESTS", "busiest disks",
			  "(no disks: the blk layer is not traced)" },
	[GROUP_CGROUPS] = { "CGID", "CGROUP", "CALLS/S", "CALLS",
			    "busiest cgroups, by their calls", "(no cgroups in this run)" },
};

static void draw_keys(const struct live *lv, struct screen *s)
{
	const struct model *m = &lv->m;
	enum group g = lv->group;
	unsigned int order[MAX_KEYS], n = m->nr_keys[g];

	line(s, "%s", "");
	if (!m->have[g]) {
		line(s, "%s", group_words[g].none);
		return;
	}
	/* A cgroup's path is long: it comes last, cut at the screen's edge. */
	if (g == GROUP_CGROUPS)
		line(s, "%-8s %10s %12s %10s %12s  %s (%s)", group_words[g].id,
		     group_words[g].rate, group_words[g].total, "TIME/S", "P99",
		     group_words[g].name, group_words[g].what);
	else
		line(s, "%-8s %-16s %10s %12s %10s %12s  %s", group_words[g].id,
		     group_words[g].name, group_words[g].rate, group_words[g].total, "TIME/S",
		     "P99", group_words[g].what);
	for (unsigned int i = 0; i < n; i++)
		order[i] = i;
	sort_keys = m->keys[g];
	sort_by = lv->sort;
	qsort(order, n, sizeof(*order), key_cmp);
	for (unsigned int i = 0; i < n; i++) {
		const struct key *k = &m->keys[g][order[i]];
		char id[24], time_s[32], p99[32];
		double rate = m->secs > 0 ? (double)k->cell.count / m->secs : 0;

		if (g == GROUP_DISKS)
			format_kdev((uint32_t)k->id, id, sizeof(id));
		else
			snprintf(id, sizeof(id), "%" PRIu64, k->id);
		format_duration(m->secs > 0 ? (uint64_t)((double)k->cell.sum_ns / m->secs) : 0,
				time_s, sizeof(time_s));
		format_duration(cell_percentile(&k->cell, 99), p99, sizeof(p99));
		if (g == GROUP_CGROUPS)
			line(s, "%-8s %10.0f %12" PRIu64 " %10s %12s  %s", id, rate,
			     total_of(lv, g, k->id), time_s, p99, k->name);
		else
			line(s, "%-8s %-16s %10.0f %12" PRIu64 " %10s %12s", id, k->name, rate,
			     total_of(lv, g, k->id), time_s, p99);
	}
}

size_t live_render(const struct live *lv, char *buf, size_t sz, unsigned int rows,
		   unsigned int cols)
{
	const struct model *m = &lv->m;
	struct screen s = { .buf = buf, .sz = sz, .rows = rows, .cols = cols };
	char when[16], legend[160], waits[120];
	time_t now = time(NULL);
	struct tm tm;

	if (sz)
		buf[0] = '\0';
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	line(&s,
	     "iostackbreak --live  %s  every %.1f s%s  keys: q quit, p processes, d disks, "
	     "c cgroups, s sort (%s), space pause",
	     when, m->secs, lv->paused ? "  PAUSED" : "", sort_names[lv->sort]);
	if (!m->valid) {
		line(&s, "(waiting for the first report)");
		return s.n;
	}
	line(&s, "verdict: %s", m->verdict);
	line(&s, "%s", "");
	line(&s, "%-8s %-7s %10s %10s %10s  %-*s", "LAYER", "OP", "CALLS/S", "P50", "P99", BAR_W,
	     "WHERE THE TIME GOES");
	for (unsigned int i = 0; i < m->nr_rows; i++) {
		const struct row *row = &m->rows[i];
		char p50[32], p99[32], bar[BAR_W + 1] = "";

		format_duration(row->p50, p50, sizeof(p50));
		format_duration(row->p99, p99, sizeof(p99));
		if (row->split)
			parts_bar(row, bar);
		line(&s, "%-8s %-7s %10.0f %10s %10s  %s%s%s", layer_name(row->layer),
		     op_name(row->layer, row->op), m->secs > 0 ? (double)row->count / m->secs : 0,
		     row->count ? p50 : "-", row->count ? p99 : "-", row->split ? "[" : "", bar,
		     row->split ? "]" : "");
	}
	bar_legend(legend, sizeof(legend), waits, sizeof(waits));
	line(&s, "%s", legend);
	line(&s, "%s", waits);
	if (m->left_out_layer >= 0)
		line(&s,
		     "(%s left out: %" PRIu64 " calls on pipes, %" PRIu64 " on sockets, %" PRIu64
		     " on other files; --all-fds to count them)",
		     layer_name((unsigned int)m->left_out_layer), m->left_out[FD_PIPE],
		     m->left_out[FD_SOCKET], m->left_out[FD_OTHER]);
	draw_keys(lv, &s);
	return s.n;
}

void live_redraw(struct live *lv)
{
	char buf[64 * 1024];
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	size_t n;

	ioctl(fileno(lv->out), TIOCGWINSZ, &ws);
	/* One row short of the screen: a newline on the last row would scroll. */
	n = live_render(lv, buf, sizeof(buf), ws.ws_row > 1 ? ws.ws_row - 1u : 23,
			ws.ws_col ? ws.ws_col : 80);
	/* Home, then each line cleared to its end, then the rest cleared. */
	fputs("\033[H", lv->out);
	for (char *p = buf, *nl; p < buf + n && (nl = strchr(p, '\n')); p = nl + 1)
		fprintf(lv->out, "%.*s\033[K\r\n", (int)(nl - p), p);
	fputs("\033[J", lv->out);
	fflush(lv->out);
}

bool live_on_keys(struct live *lv)
{
	char keys[64];
	ssize_t n = read(lv->in_fd, keys, sizeof(keys));
	bool quit = false;

	for (ssize_t i = 0; i < n; i++) {
		switch (keys[i]) {
		case 'q':
		case 'Q':
			quit = true;
			break;
		case 'p':
			lv->group = GROUP_PROCESSES;
			break;
		case 'd':
			lv->group = GROUP_DISKS;
			break;
		case 'c':
			lv->group = GROUP_CGROUPS;
			break;
		case 's':
			lv->sort = (lv->sort + 1) % NR_SORTS;
			break;
		case ' ':
			lv->paused = !lv->paused;
			break;
		}
	}
	if (!quit)
		live_redraw(lv);
	return quit;
}

/* ---- the sink ---- */

static int live_end(struct sink *s, const struct report *r)
{
	struct live *lv = s->state;

	struct model *m = malloc(sizeof(*m));

	if (!m)
		return -1;
	model_build(m, r);
	add_totals(lv, m); /* counting goes on while the screen is paused */
	if (!lv->paused) {
		lv->m = *m;
		live_redraw(lv);
	}
	free(m);
	return ferror(lv->out) ? -1 : 0;
}

static const struct sink_ops live_ops = {
	.report_end = live_end,
};

int live_sink_open(struct sink *s, struct live *lv)
{
	*s = (struct sink){
		.ops = &live_ops, .what = "the live view", .out = lv->out, .unit = lv->unit, .state = lv
	};
	return 0;
}
