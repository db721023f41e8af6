// SPDX-License-Identifier: GPL-2.0
/*
 * --flamegraph: the stacks as an interactive SVG flame graph, one file with
 * its script and styles inside. The root at the bottom, then the process,
 * the user frames from the outermost, the kernel frames, the part of a
 * call, the disk; a frame's width is its weight. Click a frame to zoom to
 * it (the root to zoom out), "Search" to mark the frames a regular
 * expression matches and their share. The file's URL may say
 * #zoom=NAME or #search=REGEX to open zoomed or searched.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "flamegraph.h"
#include "opt_stacks.h"
#include "verdict.h"

#define IOSB_FG_STR2(x) #x
#define IOSB_FG_STR(x) IOSB_FG_STR2(x)

#define FG_WIDTH 1200
#define FG_PAD 10
#define FG_ROW 17
#define FG_TOP 40 /* the title and the search line */

enum fkind { FK_ROOT, FK_PROC, FK_USER, FK_KERNEL, FK_PART, FK_DISK };

struct fnode {
	char *name;
	enum fkind kind;
	uint64_t weight;
	struct fnode *child, *next;
};

static struct fnode *fnode_new(const char *name, enum fkind kind)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (n && !(n->name = strdup(name))) {
		free(n);
		n = NULL;
	}
	if (n)
		n->kind = kind;
	return n;
}

static void fnode_free(struct fnode *n)
{
	while (n) {
		struct fnode *next = n->next;

		fnode_free(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

/* The child of parent with name and kind, made (last) if new. */
static struct fnode *child_of(struct fnode *parent, const char *name, enum fkind kind)
{
	struct fnode **at = &parent->child;

	for (; *at; at = &(*at)->next)
		if ((*at)->kind == kind && !strcmp((*at)->name, name))
			return *at;
	*at = fnode_new(name, kind);
	return *at;
}

/* One entry's path from the root, its weight added on the way. */
static int add_entry(struct fnode *root, const struct stack_report *r, const struct stack_entry *e)
{
	struct fnode *n = root;
	char buf[80];

	if (r->per_process)
		snprintf(buf, sizeof(buf), "%s [%" PRIu32 "]", e->comm, e->tgid);
	else
		snprintf(buf, sizeof(buf), "%s", e->comm);
	root->weight += e->weight;
#define STEP(name, kind)                                                                           \
	do {                                                                                       \
		n = child_of(n, name, kind);                                                       \
		if (!n)                                                                            \
			return -ENOMEM;                                                            \
		n->weight += e->weight;                                                            \
	} while (0)
	STEP(buf, FK_PROC);
	if (e->ulost)
		STEP("[stack lost]", FK_USER);
	for (unsigned int f = e->nr_uframes; f > 0; f--)
		STEP(e->uframes[f - 1].name, FK_USER);
	if (e->klost)
		STEP("[stack lost]", FK_KERNEL);
	for (unsigned int f = e->nr_kframes; f > 0; f--)
		STEP(e->kframes[f - 1].name, FK_KERNEL);
	if (e->part) {
		snprintf(buf, sizeof(buf), "[%s]", part_name(e->part - 1));
		STEP(buf, FK_PART);
	}
	if (r->per_disk && !r->calls) {
		char disk[64];

		if (r->disk_name)
			r->disk_name(e->dev, disk, sizeof(disk));
		else
			format_kdev(e->dev, disk, sizeof(disk));
		snprintf(buf, sizeof(buf), "[%s]", disk);
		STEP(buf, FK_DISK);
	}
#undef STEP
	return 0;
}

static unsigned int depth_of(const struct fnode *n)
{
	unsigned int most = 0;

	for (const struct fnode *c = n->child; c; c = c->next) {
		unsigned int d = depth_of(c);

		if (d > most)
			most = d;
	}
	return most + 1;
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

/* Warm hues for user code, redder for the kernel, set colours for the
 * rest; a name keeps its shade from run to run. */
static void fill_of(const struct fnode *n, char *buf, size_t sz)
{
	unsigned int h = 5381;

	for (const char *c = n->name; *c; c++)
		h = h * 33 + (unsigned char)*c;
	switch (n->kind) {
	case FK_ROOT:
		snprintf(buf, sz, "#c8c8c8");
		break;
	case FK_PROC:
		snprintf(buf, sz, "#b4b4c8");
		break;
	case FK_USER:
		snprintf(buf, sz, "rgb(%u,%u,%u)", 225 + h % 30, 150 + (h >> 8) % 80,
			 40 + (h >> 16) % 40);
		break;
	case FK_KERNEL:
		snprintf(buf, sz, "rgb(%u,%u,%u)", 215 + h % 40, 80 + (h >> 8) % 60,
			 50 + (h >> 16) % 30);
		break;
	case FK_PART:
		snprintf(buf, sz, "%s",
			 strstr(n->name, "io_wait")    ? "#6b9bd1"
			 : strstr(n->name, "runqueue") ? "#7cbf7c"
			 : strstr(n->name, "blocked")  ? "#a98bd1"
			 : strstr(n->name, "lock")     ? "#d16b6b"
			 : strstr(n->name, "journal")  ? "#b8956a"
						       : "#9ccfe0");
		break;
	default:
		snprintf(buf, sz, "#a0a0b8");
	}
}

static const char *const kind_names[] = { "root", "process", "user", "kernel", "part", "disk" };

static void emit(FILE *out, const struct stack_report *r, const struct fnode *n, double x,
		 unsigned int depth, unsigned int rows, uint64_t total)
{
	double w = total ? (double)n->weight * (FG_WIDTH - 2 * FG_PAD) / (double)total : 0;
	double y = FG_TOP + (double)(rows - 1 - depth) * FG_ROW;
	char fill[32], count[32];

	fill_of(n, fill, sizeof(fill));
	format_count(n->weight, count, sizeof(count));
	fprintf(out, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%u\" data-v=\"%" PRIu64
		     "\" data-k=\"%s\" data-n=\"",
		x, w, depth, n->weight, kind_names[n->kind]);
	xml_text(out, n->name);
	fprintf(out, "\"><title>");
	xml_text(out, n->name);
	fprintf(out, " (%s %s%s, %.2f%%)</title><rect x=\"%.4f\" y=\"%.1f\" width=\"%.4f\" "
		     "height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.4f\" y=\"%.1f\"></text></g>\n",
		count, r->weight == WEIGHT_TIME ? unit_name(r->unit) : stack_weight_name(r->weight),
		r->weight == WEIGHT_TIME ? " of time" : "",
		total ? 100.0 * (double)n->weight / (double)total : 0.0, x, y, w, FG_ROW - 1, fill,
		x + 3, y + FG_ROW - 5);
	for (const struct fnode *c = n->child; c; c = c->next) {
		emit(out, r, c, x, depth + 1, rows, total);
		x += total ? (double)c->weight * (FG_WIDTH - 2 * FG_PAD) / (double)total : 0;
	}
}

/* The script: zoom, search, labels that fit their frames. */
static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function () {\n"
    "  var W = " IOSB_FG_STR(FG_WIDTH) ", PAD = " IOSB_FG_STR(FG_PAD) ";\n"
    "  var gs = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
    "  var info = document.getElementById('matched');\n"
    "  function num(g, a) { return parseFloat(g.getAttribute(a)); }\n"
    "  function label(g) {\n"
    "    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
    "    var n = Math.floor((parseFloat(r.getAttribute('width')) - 6) / 7);\n"
    "    var name = g.getAttribute('data-n');\n"
    "    t.textContent = n < 3 ? '' : name.length <= n ? name : name.slice(0, n - 2) + '..';\n"
    "  }\n"
    "  function zoom(z) {\n"
    "    var zx = num(z, 'data-x'), zw = num(z, 'data-w'), zd = num(z, 'data-d');\n"
    "    var full = W - 2 * PAD, eps = 1e-6;\n"
    "    gs.forEach(function (g) {\n"
    "      var x = num(g, 'data-x'), w = num(g, 'data-w'), d = num(g, 'data-d');\n"
    "      var r = g.querySelector('rect'), t = g.querySelector('text'), nx, nw;\n"
    "      var inside = d >= zd && x >= zx - eps && x + w <= zx + zw + eps;\n"
    "      var below = d < zd && x <= zx + eps && x + w >= zx + zw - eps;\n"
    "      if (!inside && !below) { g.style.display = 'none'; return; }\n"
    "      g.style.display = '';\n"
    "      if (below) { nx = PAD; nw = full; g.setAttribute('opacity', '0.6'); }\n"
    "      else { nx = PAD + (x - zx) * full / zw; nw = w * full / zw;"
    " g.removeAttribute('opacity'); }\n"
    "      r.setAttribute('x', nx); r.setAttribute('width', nw);"
    " t.setAttribute('x', nx + 3); label(g);\n"
    "    });\n"
    "    document.documentElement.setAttribute('data-zoom', z.getAttribute('data-n'));\n"
    "  }\n"
    "  function search(re) {\n"
    "    var rx, spans = [], total = num(gs[0], 'data-v'), sum = 0;\n"
    "    try { rx = new RegExp(re); } catch (e) { info.textContent = 'Bad expression'; return; }\n"
    "    gs.forEach(function (g) {\n"
    "      var r = g.querySelector('rect');\n"
    "      if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
    "      var hit = re !== '' && rx.test(g.getAttribute('data-n'));\n"
    "      r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
    "      if (hit) spans.push(g);\n"
    "    });\n"
    "    spans.forEach(function (g) {\n"
    "      var x = num(g, 'data-x'), w = num(g, 'data-w');\n"
    "      var inner = spans.some(function (o) { return o !== g && num(o, 'data-d') < num(g, 'data-d')"
    " && num(o, 'data-x') <= x + 1e-6 && num(o, 'data-x') + num(o, 'data-w') >= x + w - 1e-6; });\n"
    "      if (!inner) sum += num(g, 'data-v');\n"
    "    });\n"
    "    info.textContent = re === '' ? '' : 'Matched: ' + (total ? (100 * sum / total).toFixed(2) : 0) + '%';\n"
    "    document.documentElement.setAttribute('data-matched', String(sum));\n"
    "  }\n"
    "  gs.forEach(function (g) { label(g); g.addEventListener('click', function () { zoom(g); }); });\n"
    "  document.getElementById('search').addEventListener('click', function () {\n"
    "    var re = window.prompt('Search frames (a regular expression):', '');\n"
    "    if (re !== null) search(re);\n"
    "  });\n"
    "  var h = decodeURIComponent(window.location.hash.slice(1));\n"
    "  if (h.indexOf('zoom=') === 0) {\n"
    "    var z = gs.filter(function (g) { return g.getAttribute('data-n') === h.slice(5); })[0];\n"
    "    if (z) zoom(z);\n"
    "  } else if (h.indexOf('search=') === 0) {\n"
    "    search(h.slice(7));\n"
    "  }\n"
    "  document.documentElement.setAttribute('data-ready', '1');\n"
    "})();\n"
    "]]></script>\n";

int stacks_flamegraph(FILE *out, const struct stack_report *r)
{
	struct fnode *root = fnode_new("all", FK_ROOT);
	unsigned int rows, height;
	int err = root ? 0 : -ENOMEM;

	for (size_t i = 0; i < r->nr_entries && !err; i++)
		if (r->entries[i].weight)
			err = add_entry(root, r, &r->entries[i]);
	if (err) {
		fnode_free(root);
		errno = ENOMEM;
		return -1;
	}
	rows = depth_of(root);
	height = FG_TOP + rows * FG_ROW + FG_PAD;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; "
		"pointer-events: none; } g.f { cursor: pointer; } g.f:hover rect { stroke: #000; "
		"stroke-width: 0.5; } #search { cursor: pointer; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
		"<text x=\"%d\" y=\"20\" style=\"font-size: 16px\">%s: %s (iostackbreak)</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"20\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"34\"></text>\n",
		FG_WIDTH, height, FG_WIDTH, height, FG_PAD,
		r->calls ? "Calls by stack and part" : "Block I/O by stack",
		r->weight == WEIGHT_TIME ? "time" : stack_weight_name(r->weight), FG_WIDTH - 80,
		FG_WIDTH - 160);
	emit(out, r, root, FG_PAD, 0, rows, root->weight);
	fputs(script, out);
	fputs("</svg>\n", out);
	fnode_free(root);
	return fflush(out) || ferror(out) ? -1 : 0;
}
