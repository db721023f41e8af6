/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of block I/O (-K, -U) in a run: a thread that reads the maps of
 * each process as its first request is counted (while it lives), and the
 * kernel's stack maps read into a report at the end.
 */
#ifndef STACKS_READ_H
#define STACKS_READ_H

#include "attach.h"
#include "opts.h"
#include "stack_report.h"

struct stack_reader;

/* Once tracing: NULL with err when it cannot start (out of memory). */
struct stack_reader *stack_reader_start(struct tracer *t, const struct config *cfg, char *err,
					size_t errsz);

/* The report of the run so far; stack_report_free() frees it. Returns 0 or
 * a negative errno. */
int stack_reader_report(struct stack_reader *s, disk_namer disk_name, struct stack_report *out);

void stack_reader_stop(struct stack_reader *s);

#endif /* STACKS_READ_H */
