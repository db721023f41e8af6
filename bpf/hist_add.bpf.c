// SPDX-License-Identifier: GPL-2.0
/*
 * hist_add_to(): one value into a per-CPU histogram (record.bpf.h says why
 * it is a global function). Included last by iostackbreak.bpf.c, after
 * every map it fills.
 */

__noinline int hist_add_to(__u32 map, __u32 idx, __u64 delta, __u32 b, __u32 in_ns)
{
	struct cell_hist *c;
	__u32 u;

	switch (map) {
	case HIST_CELLS:
		c = bpf_map_lookup_elem(&cells, &idx);
		break;
	case HIST_CALL_PARTS:
		c = bpf_map_lookup_elem(&call_parts, &idx);
		break;
	case HIST_URING_PARTS:
		c = bpf_map_lookup_elem(&uring_parts, &idx);
		break;
	case HIST_AIO_PARTS:
		c = bpf_map_lookup_elem(&aio_parts, &idx);
		break;
	case HIST_WB_CELLS:
		c = bpf_map_lookup_elem(&wb_cells, &idx);
		break;
	case HIST_WB_AGES:
		c = bpf_map_lookup_elem(&wb_ages, &idx);
		break;
	default:
		return 0;
	}
	if (!c)
		return 0;
	if (b == HIST_BUCKET_OF_DELTA)
		b = hist_bucket(delta);
	/*
	 * hist_bucket() caps the index, but the verifier cannot see that: hide
	 * b from clang so it keeps a check the verifier can.
	 */
	asm volatile("" : "+r"(b));
	if (b >= HIST_NR_BUCKETS)
		return 0;
	c->buckets[b]++;
	if (in_ns && unit_ns) {
		u = unit_slot(delta / unit_ns);
		asm volatile("" : "+r"(u));
		if (u < UNIT_SLOTS)
			c->unit_slots[u]++;
	}
	if (!c->count || delta < c->min_ns)
		c->min_ns = delta;
	if (delta > c->max_ns)
		c->max_ns = delta;
	c->count++;
	c->sum_ns += delta;
	return 0;
}
