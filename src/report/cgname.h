/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -G: a cgroup v2 id (what bpf_get_current_cgroup_id() gives) to its path,
 * and the container and pod a path belongs to by the runtimes' names.
 */
#ifndef CGNAME_H
#define CGNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The path of cgroup id relative to the cgroup v2 root ("/" for the root,
 * "/system.slice/cron.service"), or NULL when it cannot be known (gone
 * before it was first asked for, or no cgroup v2 here). Paths are kept for
 * the life of the process, so a cgroup that goes keeps its name; the
 * string is never freed.
 */
const char *cgroup_name(uint64_t id);

/*
 * How long cgroup id has been gone, in seconds by now (any clock, the same
 * every call): -1 while it exists (or when that cannot be known), 0 the
 * first time it is found gone.
 */
double cgroup_gone_for(uint64_t id, double now);

/*
 * Names cgroup id by path (as the kernel noted it: cgroup_paths) unless it
 * has a name already; returns the name it has (kept as cgroup_name's).
 */
const char *cgroup_name_fallback(uint64_t id, const char *path);

/* Forgets what is known of cgroup id (its path, since when it is gone). */
void cgroup_forget(uint64_t id);

/*
 * The container id and pod uid a cgroup path names, as the runtimes name
 * their cgroups: systemd scopes docker-<id>.scope, cri-containerd-<id>.scope,
 * crio-<id>.scope, libpod-<id>.scope; cgroupfs directories named by the
 * 64-digit id; kubepods-<class>-pod<uid>.slice (uid with '_' for '-') and
 * kubepods/<class>/pod<uid>. Each is "" when the path names none.
 */
void cgroup_runtime_ids(const char *path, char *container, size_t csz, char *pod, size_t psz);

#endif /* CGNAME_H */
