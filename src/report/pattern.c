// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
#include "pattern_report.h"

static int key_cmp(const struct pattern_key *a, const struct pattern_key *b)
{
#define CMP(f)                                                                                     \
	if (a->f != b->f)                                                                          \
		return a->f < b->f ? -1 : 1;
	CMP(level)
	CMP(op)
	CMP(file)
	CMP(tgid)
	CMP(dev)
	CMP(cgid)
#undef CMP
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct pattern_entry *)a)->key,
		       &((const struct pattern_entry *)b)->key);
}

void pattern_sort(struct pattern_set *set)
{
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), entry_cmp);
}

/* Every field a count: the struct is added and taken away as an array. */
_Static_assert(sizeof(struct pattern_hist) % sizeof(__u64) == 0, "pattern_hist: __u64 only");
#define HIST_WORDS (sizeof(struct pattern_hist) / sizeof(__u64))

void pattern_hist_add(struct pattern_hist *a, const struct pattern_hist *b)
{
	for (size_t i = 0; i < HIST_WORDS; i++)
		((__u64 *)a)[i] += ((const __u64 *)b)[i];
}

static void hist_sub(struct pattern_hist *out, const struct pattern_hist *cur,
		     const struct pattern_hist *prev)
{
	for (size_t i = 0; i < HIST_WORDS; i++)
		((__u64 *)out)[i] = ((const __u64 *)cur)[i] - ((const __u64 *)prev)[i];
}

int pattern_diff(struct pattern_set *out, const struct pattern_set *cur,
		 const struct pattern_set *prev)
{
	static const struct pattern_hist empty;

	out->n = 0;
	out->v = calloc(cur->n ? cur->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n; i++) {
		const struct pattern_entry *was =
		    prev->n ? bsearch(&cur->v[i], prev->v, prev->n, sizeof(*prev->v), entry_cmp)
			    : NULL;
		struct pattern_entry *o = &out->v[out->n];

		*o = cur->v[i];
		hist_sub(&o->h, &cur->v[i].h, was ? &was->h : &empty);
		/* A key idle in the interval is left out. */
		out->n += o->h.seq || o->h.rand;
	}
	return 0;
}

void pattern_free(struct pattern_set *set)
{
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

uint64_t pattern_total(const struct pattern_set *set, unsigned int level, unsigned int op,
		       struct pattern_hist *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; set && i < set->n; i++)
		if (set->v[i].key.level == level && set->v[i].key.op == op)
			pattern_hist_add(out, &set->v[i].h);
	return out->seq + out->rand;
}

bool pattern_broken_down(const struct pattern_set *set)
{
	for (size_t i = 0; set && i < set->n; i++) {
		const struct pattern_key *k = &set->v[i].key;

		if (k->file || k->tgid || k->dev || k->cgid)
			return true;
	}
	return false;
}

double pattern_seq_pct(const struct pattern_hist *h)
{
	uint64_t n = h->seq + h->rand;

	return n ? 100.0 * (double)h->seq / (double)n : 0.0;
}

bool pattern_of_cell(unsigned int layer, unsigned int op, unsigned int *level, unsigned int *pop)
{
	if (layer == LAYER_SYSCALL && (op == FSOP_READ || op == FSOP_WRITE))
		*level = PAT_CALL;
	else if (layer == LAYER_BLK && (op == BLKOP_READ || op == BLKOP_WRITE))
		*level = PAT_BLK;
	else if (layer == LAYER_BIO && (op == BLKOP_READ || op == BLKOP_WRITE))
		*level = PAT_BIO;
	else
		return false;
	*pop = op;
	return true;
}

unsigned int pattern_level_layer(unsigned int level)
{
	switch (level) {
	case PAT_CALL:
		return LAYER_SYSCALL;
	case PAT_BIO:
		return LAYER_BIO;
	}
	return LAYER_BLK;
}

const char *pattern_level_name(unsigned int level)
{
	return layer_name(pattern_level_layer(level));
}

uint64_t pattern_slot_lo(unsigned int k)
{
	return 1ULL << k;
}
