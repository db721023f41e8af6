/* SPDX-License-Identifier: GPL-2.0 */
/* Fills struct kcaps from the running kernel: BTF, trial fentry, kprobe
 * support, tracepoints, functions, file systems. Probes, never guesses from
 * the version number. */
#ifndef PROBE_H
#define PROBE_H

#include "planner.h"

/*
 * Returns 0, or -1 with the reason in err when the kernel cannot run us.
 * btf_path: --btf's file, read for the kernel's types instead of its own
 * BTF (NULL: the kernel's own). trial: load a trial fentry program and
 * mount tracefs if needed, as a run does; false (--plan): read only, and
 * fentry is predicted from BTF and the kernel's symbols.
 */
int kcaps_probe(struct kcaps *caps, const char *btf_path, bool trial, char *err, size_t errsz);
void kcaps_free(struct kcaps *caps);

/* The BPF JIT is off (net.core.bpf_jit_enable = 0): programs run interpreted. */
bool bpf_jit_off(void);

/* Mounts tracefs if it is not mounted; returns its path or NULL. */
const char *tracefs_path(void);

#endif /* PROBE_H */
