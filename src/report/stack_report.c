// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stack_report.h"

uint64_t stack_entry_weight(const struct stack_report *r, const struct stack_entry *e)
{
	uint64_t sum = 0;

	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		switch (r->weight) {
		case WEIGHT_REQUESTS:
			sum += e->w.requests[op];
			break;
		case WEIGHT_TIME:
			sum += e->w.time_ns[op];
			break;
		default:
			sum += e->w.bytes[op];
		}
	}
	if (r->weight == WEIGHT_TIME)
		sum = (sum + unit_ns(r->unit) / 2) / unit_ns(r->unit);
	return sum;
}

static void frames_free(struct stack_frame *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].module);
	}
	free(f);
}

void stack_report_free(struct stack_report *r)
{
	for (size_t i = 0; i < r->nr_entries; i++) {
		frames_free(r->entries[i].kframes, r->entries[i].nr_kframes);
		frames_free(r->entries[i].uframes, r->entries[i].nr_uframes);
	}
	free(r->entries);
	r->entries = NULL;
	r->nr_entries = 0;
}

/*
 * The tracepoint's dispatch: __bpf_trace_* called straight from the
 * tracepoint while one probe is attached to it, through the iterator
 * __traceiter_* over its probes while there are more (another tool's
 * program, or ftrace, on the same tracepoint).
 */
static bool is_tracer_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12);
}

/* The frames of stack id: kernel (uname NULL) or user of tgid. */
static int frames_of(const struct stack_source *src, __s32 id,
		     uint32_t tgid, bool user, struct stack_frame **out, unsigned int *nr)
{
	uint64_t ips[STACK_DEPTH];
	unsigned int n = id >= 0 ? src->ips(src->ctx, id, ips) : 0;
	struct stack_frame *f;
	char name[256];

	*out = NULL;
	*nr = 0;
	if (!n)
		return 0;
	f = calloc(n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		f[i].addr = ips[i];
		if (user) {
			/* uname fills name and module (allocated) */
			f[i].resolved = !src->uname(src->ctx, tgid, ips[i], i > 0, &f[i]);
		} else {
			f[i].resolved = !src->kname(src->ctx, ips[i], name, sizeof(name));
			f[i].name = strdup(name);
		}
		if (!f[i].name) {
			frames_free(f, i + 1);
			return -ENOMEM;
		}
	}
	/* The tracer's own frames on top of a kernel stack (its program and
	 * the tracepoint's dispatch) are not the code that made the I/O. */
	while (!user && n && is_tracer_frame(f[0].name)) {
		free(f[0].name);
		free(f[0].module);
		memmove(f, f + 1, --n * sizeof(*f));
	}
	*out = f;
	*nr = n;
	return 0;
}

static int frames_cmp(const struct stack_frame *a, unsigned int na, const struct stack_frame *b,
		      unsigned int nb)
{
	for (unsigned int i = 0; i < na && i < nb; i++) {
		int c = strcmp(a[i].name, b[i].name);

		if (c)
			return c;
	}
	return na < nb ? -1 : na > nb;
}

/* Entries that print the same: same process (or name), disk and frames. */
static int same_cmp(const void *pa, const void *pb)
{
	const struct stack_entry *a = pa, *b = pb;
	int c = strncmp(a->comm, b->comm, sizeof(a->comm));

	if (c)
		return c;
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->klost != b->klost)
		return a->klost ? 1 : -1;
	if (a->ulost != b->ulost)
		return a->ulost ? 1 : -1;
	c = frames_cmp(a->kframes, a->nr_kframes, b->kframes, b->nr_kframes);
	if (c)
		return c;
	return frames_cmp(a->uframes, a->nr_uframes, b->uframes, b->nr_uframes);
}

/* Heaviest first; ties in the order above, so that output is stable. */
static int weight_cmp(const void *pa, const void *pb)
{
	const struct stack_entry *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return same_cmp(pa, pb);
}

static void weights_add(struct stack_weights *to, const struct stack_weights *w)
{
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		to->requests[op] += w->requests[op];
		to->bytes[op] += w->bytes[op];
		to->time_ns[op] += w->time_ns[op];
		to->timed[op] += w->timed[op];
	}
}

int stack_report_build(struct stack_report *r, const struct config *cfg,
		       const struct stack_raw *raw, size_t n, const struct stack_source *src)
{
	size_t out = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->entries = calloc(n ? n : 1, sizeof(*r->entries));
	if (!r->entries)
		return -ENOMEM;
	r->nr_entries = 0;
	r->kernel = cfg->kstack;
	r->user = cfg->ustack;
	r->per_process = cfg->per_process;
	r->per_disk = cfg->per_disk;
	r->queued = cfg->queued;
	r->calls = cfg->call_stacks;
	r->weight = cfg->weight;
	r->top = cfg->top ? cfg->top : 10;
	r->unit = cfg->unit;
	r->keys = n;
	r->max_keys = cfg->max_stacks ? cfg->max_stacks : DEFAULT_MAX_STACKS;
	for (size_t i = 0; i < n && !err; i++) {
		const struct stack_key *k = &raw[i].key;
		struct stack_entry *e = &r->entries[r->nr_entries++];
		unsigned int op = k->op < NR_BLK_OPS ? k->op : BLKOP_OTHER;

		memcpy(e->comm, k->comm, sizeof(e->comm));
		e->comm[sizeof(e->comm) - 1] = '\0';
		e->tgid = cfg->per_process ? k->tgid : 0;
		e->dev = k->dev;
		e->klost = k->kstack == STACK_LOST;
		e->ulost = k->ustack == STACK_LOST;
		e->part = k->part;
		e->w.requests[op] = raw[i].counts.requests;
		e->w.bytes[op] = raw[i].counts.bytes;
		e->w.time_ns[op] = raw[i].counts.time_ns;
		e->w.timed[op] = raw[i].counts.timed;
		if (cfg->kstack && !cfg->call_stacks)
			err = frames_of(src, k->kstack, k->tgid, false, &e->kframes,
					&e->nr_kframes);
		if (!err && cfg->ustack)
			err = frames_of(src, k->ustack, k->tgid, true, &e->uframes,
					&e->nr_uframes);
	}
	if (err) {
		stack_report_free(r);
		return err;
	}
	/* Merge what prints the same. */
	qsort(r->entries, r->nr_entries, sizeof(*r->entries), same_cmp);
	for (size_t i = 0; i < r->nr_entries; i++) {
		struct stack_entry *e = &r->entries[i];

		if (out && !same_cmp(&r->entries[out - 1], e)) {
			weights_add(&r->entries[out - 1].w, &e->w);
			frames_free(e->kframes, e->nr_kframes);
			frames_free(e->uframes, e->nr_uframes);
			continue;
		}
		if (out != i)
			r->entries[out] = *e;
		out++;
	}
	r->nr_entries = out;
	for (size_t i = 0; i < r->nr_entries; i++) {
		struct stack_entry *e = &r->entries[i];

		e->weight = stack_entry_weight(r, e);
		for (unsigned int f = 0; f < e->nr_kframes; f++)
			r->unresolved += !e->kframes[f].resolved;
		for (unsigned int f = 0; f < e->nr_uframes; f++)
			r->unresolved += !e->uframes[f].resolved;
	}
	qsort(r->entries, r->nr_entries, sizeof(*r->entries), weight_cmp);
	return 0;
}
