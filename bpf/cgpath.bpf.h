/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -G: the path of the current task's cgroup v2, noted once per cgroup id in
 * the cgroup_paths map when its first call or request is recorded. User
 * space names a cgroup by its live directory; this is for those gone before
 * it looked (short-lived jobs). Owns cgroup_paths and cgroup_path_scratch.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef CGPATH_BPF_H
#define CGPATH_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BREAKDOWN_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct cgroup_path);
} cgroup_paths SEC(".maps");

/* A cgroup_path is too big for the BPF stack: it is built here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgroup_path);
} cgroup_path_scratch SEC(".maps");

/* kernfs_node::parent became __parent in 6.15 (read under RCU since). Both
 * spelled here: the arm64 vmlinux.h (6.12) has only the old one. */
struct kernfs_node___parent {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));
struct kernfs_node___615 {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(struct kernfs_node___parent, parent))
		return BPF_CORE_READ((struct kernfs_node___parent *)kn, parent);
	return BPF_CORE_READ((struct kernfs_node___615 *)kn, __parent);
}

/*
 * Notes the path of cgid, the current task's cgroup, unless known. A
 * subprogram: every exit program calls it, once. A full map leaves the
 * cgroup unnamed if it goes before user space looks (shown by its id).
 */
static __noinline int cgroup_path_note(__u64 cgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct kernfs_node *kn, *parent;
	struct cgroup_path *p;
	__u32 zero = 0;

	if (!cgid || bpf_map_lookup_elem(&cgroup_paths, &cgid))
		return 0;
	p = bpf_map_lookup_elem(&cgroup_path_scratch, &zero);
	if (!p)
		return 0;
	kn = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn);
	p->depth = 0;
	p->truncated = 0;
	for (__u32 i = 0; i < CG_PATH_DEPTH; i++) {
		/* The root's node has no parent and no name in the path. */
		parent = kn ? kn_parent(kn) : NULL;
		if (!parent)
			break;
		bpf_probe_read_kernel_str(p->names[i], CG_NAME_LEN, BPF_CORE_READ(kn, name));
		p->depth = i + 1;
		kn = parent;
	}
	p->truncated = kn && kn_parent(kn);
	bpf_map_update_elem(&cgroup_paths, &cgid, p, BPF_NOEXIST);
	return 0;
}

#endif /* CGPATH_BPF_H */
