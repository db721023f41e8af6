/* SPDX-License-Identifier: GPL-2.0 */
/* The stacks of block I/O (-K, -U) in each output: text (the heaviest
 * stacks per disk), JSON (every stack with its frames), folded. */
#ifndef STACKS_OUT_H
#define STACKS_OUT_H

#include <stdio.h>
#include <json-c/json.h>
#include "stack_report.h"

void stacks_text(FILE *out, const struct stack_report *r);
json_object *stacks_json(const struct stack_report *r);

/*
 * Brendan Gregg's folded form, one line per stack: the process (its name;
 * "name [pid]" with -P), the user frames from the outermost, the kernel
 * frames from the outermost (with user frames, each ends in "_[k]"), with
 * -D the disk as "[vda]", then the weight.
 * Stacks of weight 0 are left out. Returns 0, or -1 with errno.
 */
int stacks_folded(FILE *out, const struct stack_report *r);

#endif /* STACKS_OUT_H */
