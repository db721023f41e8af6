/* SPDX-License-Identifier: GPL-2.0 */
/* --pattern: reads the kernel's patterns map (bpf/pattern.bpf.h). */
#ifndef PATTERN_MAPS_H
#define PATTERN_MAPS_H

#include "attach.h"
#include "pattern_report.h"

/* Every key of the patterns map into set, sorted by key. 0 or -ENOMEM. */
int pattern_read(struct tracer *t, struct pattern_set *set);

/* Is --pattern's map in use (either level)? */
bool pattern_on(const struct tracer *t);

#endif /* PATTERN_MAPS_H */
