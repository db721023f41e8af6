/* SPDX-License-Identifier: GPL-2.0 */
/* --cgroup: the directory whose tasks (and its descendants') are traced. */
#ifndef CGROUP_H
#define CGROUP_H

#include <stddef.h>

/* An open cgroup v2 directory for the kernel's ancestry check, or -1 with a
 * one-line reason and remedy in err. */
int open_cgroup(const char *path, char *err, size_t errsz);

#endif /* CGROUP_H */
