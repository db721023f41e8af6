// SPDX-License-Identifier: GPL-2.0
/*
 * hist_add_to(): one value into a per-CPU histogram (record.bpf.h says why
 * it is a global function). Included last by iostackbreak.bpf.c, after
 * every map it fills.
 */

__noinline int hist_add_to(__u32 map, __u32 idx, __u64 delta, __u32 b, __u32 in_ns)
{
	struct cell_hist *c;

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
	default:
		return 0;
	}
	if (!c)
		return 0;
	cell_hist_add(c, delta, b, in_ns);
	return 0;
}
