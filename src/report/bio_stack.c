// SPDX-License-Identifier: GPL-2.0
#include "bio_stack.h"

/* A device's bios of one op (summed over -P's processes). */
static void device_total(const struct report *r, unsigned int op, uint32_t dev, uint64_t *count,
			 uint64_t *sum_ns)
{
	*count = *sum_ns = 0;
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];

		if (e->key.cell_idx == CELL_INDEX(LAYER_BIO, op) && e->key.dev == dev) {
			*count += e->cell.count;
			*sum_ns += e->cell.sum_ns;
		}
	}
}

/* Time of every bio upper sent below in one op. */
static uint64_t sent_below(const struct report *r, unsigned int op, uint32_t upper)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];

		if (e->key.cell_idx == BIO_EDGE_INDEX(op) && e->key.flags == upper)
			sum += e->cell.sum_ns;
	}
	return sum;
}

size_t bio_stack(const struct report *r, struct bio_level *out, size_t max)
{
	size_t n = 0;

	if (!r->breakdowns || !r->cfg->per_disk || r->plan->cells[LAYER_BIO][0].src == METHOD_NONE)
		return 0;
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		for (size_t i = 0; i < r->breakdowns->n; i++) {
			const struct breakdown_entry *e = &r->breakdowns->v[i];
			struct bio_level *l;
			uint64_t below;

			if (e->key.cell_idx != BIO_EDGE_INDEX(op) || !e->cell.count)
				continue;
			if (n == max)
				return n;
			l = &out[n++];
			l->op = op;
			l->upper = e->key.flags;
			l->lower = e->key.dev;
			l->below = &e->cell;
			device_total(r, op, l->upper, &l->upper_count, &l->upper_sum_ns);
			below = sent_below(r, op, l->upper);
			l->own_ns = l->upper_sum_ns > below ? l->upper_sum_ns - below : 0;
		}
	}
	return n;
}
