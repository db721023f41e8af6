// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "breakdown.h"

static int key_cmp(const struct breakdown_key *a, const struct breakdown_key *b)
{
	if (a->cell_idx != b->cell_idx)
		return a->cell_idx < b->cell_idx ? -1 : 1;
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	if (a->cgid != b->cgid)
		return a->cgid < b->cgid ? -1 : 1;
	return 0;
}

static int entry_key_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct breakdown_entry *)a)->key,
		       &((const struct breakdown_entry *)b)->key);
}

static int entry_report_cmp(const void *pa, const void *pb)
{
	const struct breakdown_entry *a = pa, *b = pb;

	if (a->key.cell_idx != b->key.cell_idx)
		return a->key.cell_idx < b->key.cell_idx ? -1 : 1;
	if (a->cell.count != b->cell.count)
		return a->cell.count > b->cell.count ? -1 : 1;
	return key_cmp(&a->key, &b->key);
}

void breakdown_sort_by_key(struct breakdown_set *set)
{
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), entry_key_cmp);
}

void breakdown_sort_for_report(struct breakdown_set *set)
{
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), entry_report_cmp);
}

int breakdown_diff(struct breakdown_set *out, const struct breakdown_set *cur,
		   const struct breakdown_set *prev)
{
	size_t j = 0;

	out->n = 0;
	out->v = calloc(cur->n ? cur->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n; i++) {
		static const struct cell_hist empty;
		const struct breakdown_entry *c = &cur->v[i];
		const struct cell_hist *before = &empty;
		struct breakdown_entry *o = &out->v[out->n];

		while (j < prev->n && key_cmp(&prev->v[j].key, &c->key) < 0)
			j++;
		if (j < prev->n && !key_cmp(&prev->v[j].key, &c->key))
			before = &prev->v[j].cell;
		cell_diff(&o->cell, &c->cell, before);
		if (!o->cell.count && !o->cell.errors)
			continue;
		o->key = c->key;
		memcpy(o->comm, c->comm, sizeof(o->comm));
		o->cgroup = c->cgroup;
		out->n++;
	}
	return 0;
}

int breakdown_copy(struct breakdown_set *out, const struct breakdown_set *in)
{
	out->n = in->n;
	out->v = calloc(in->n ? in->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	memcpy(out->v, in->v, in->n * sizeof(*in->v));
	return 0;
}

void breakdown_free(struct breakdown_set *set)
{
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

const char *rq_flag_name(unsigned int i)
{
	static const char *const names[NR_RQ_FLAGS] = { "sync", "meta", "fua", "preflush" };

	return i < NR_RQ_FLAGS ? names[i] : "?";
}

void format_kdev(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, "%u:%u", dev >> KDEV_MINORBITS, dev & ((1U << KDEV_MINORBITS) - 1));
}

void rq_flags_string(unsigned int flags, char *buf, size_t sz)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < NR_RQ_FLAGS; i++) {
		if (!(flags & (1U << i)))
			continue;
		if (used < sz)
			used += (size_t)snprintf(buf + used, sz - used, "%s%s", used ? "," : "",
						 rq_flag_name(i));
	}
	if (!used)
		snprintf(buf, sz, "-");
}
