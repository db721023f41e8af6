/* SPDX-License-Identifier: GPL-2.0 */
/* --flamegraph: the stacks of -K and -U as an interactive SVG flame graph. */
#ifndef FLAMEGRAPH_H
#define FLAMEGRAPH_H

#include <stdio.h>
#include "stack_report.h"

/* Writes the SVG of r's stacks (weights of r->weight). Returns 0, or -1
 * with errno. */
int stacks_flamegraph(FILE *out, const struct stack_report *r);

#endif /* FLAMEGRAPH_H */
