/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks are traced: -p (and the processes forked under them, -f or
 * -- COMMAND), -t, -c and --cgroup, checked before any map work. Owns the
 * maps cgroup_filter and followed; the process tree (proctree.bpf.c) keeps
 * followed up to date.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef FILTER_BPF_H
#define FILTER_BPF_H

/* Knobs, set by user space between open and load. */
const volatile __u32 nr_targ_tgids; /* 0: every process */
const volatile __u32 targ_tgids[MAX_PID_FILTER];
const volatile __u32 targ_tid; /* 0: every thread */
const volatile bool filter_comm;
const volatile char targ_comm[COMM_LEN];
const volatile bool filter_cgroup; /* cgroup_filter[0] and descendants */

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/*
 * Descendants of the traced processes, when following children: added at
 * fork (in the kernel, so no child's first I/O is missed), removed when
 * the last thread of the process exits.
 */
const volatile bool follow_children;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

/* Is this process traced: named with -p (or the command), or, when
 * following children, forked by one that is? */
static __always_inline bool tgid_traced(__u32 tgid)
{
	for (__u32 i = 0; i < MAX_PID_FILTER; i++) {
		if (i >= nr_targ_tgids)
			break;
		if (targ_tgids[i] == tgid)
			return true;
	}
	return follow_children && bpf_map_lookup_elem(&followed, &tgid);
}

/* The process filter alone: all that exits check, their entry did the rest. */
static __always_inline bool tgid_wanted(__u64 id)
{
	if (!nr_targ_tgids)
		return true;
	return tgid_traced(id >> 32);
}

/* Does the name match -c? */
static __always_inline bool comm_is_targ(const char *comm)
{
	for (int i = 0; i < COMM_LEN; i++) {
		if (comm[i] != targ_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* Is the current task one we trace? Cheapest checks first. */
static __always_inline bool task_wanted(__u64 id)
{
	if (!tgid_wanted(id))
		return false;
	if (targ_tid && (__u32)id != targ_tid)
		return false;
	if (filter_comm) {
		char comm[COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_is_targ(comm))
			return false;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

#endif /* FILTER_BPF_H */
