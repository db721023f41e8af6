// SPDX-License-Identifier: GPL-2.0
/*
 * One value into a per-CPU histogram: a global function per map
 * (record.bpf.h says why global). One function per map, not one that
 * switches on the map: clang merges the switch's lookups into one helper
 * call whose map the verifier then cannot know, so it does not inline the
 * lookup, and a call of the tracer paid a real helper call per histogram
 * (+69 ns per cached pread under -T syscall, bench/sysprog.py). Included
 * last by iostackbreak.bpf.c, after every map it fills.
 */

#define HIST_ADD_FN(name, map)                                                            \
	__noinline int name(__u32 idx, __u64 delta, __u32 b, __u32 in_ns)                  \
	{                                                                                  \
		struct cell_hist *c = bpf_map_lookup_elem(&map, &idx);                     \
                                                                                           \
		if (c)                                                                     \
			cell_hist_add(c, delta, b, in_ns);                                 \
		return 0;                                                                  \
	}

HIST_ADD_FN(hist_add_cells, cells)
HIST_ADD_FN(hist_add_call_parts, call_parts)
HIST_ADD_FN(hist_add_uring_parts, uring_parts)
HIST_ADD_FN(hist_add_aio_parts, aio_parts)
