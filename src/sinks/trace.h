/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --trace: a timeline in the Chrome/Perfetto trace-event JSON format
 * ({"traceEvents": [...]}, ts and dur in microseconds of CLOCK_MONOTONIC).
 * Each call is an X slice on its thread, with the slices of the layers it
 * went through, of its lock contentions (named by the lock) and of its
 * waits off CPU nested inside; the block requests
 * it submitted are slices on their disk's tracks, with a flow from the
 * call to each. Pure (a FILE and the kernel's events): unit-tested.
 *
 * Slices and requests reach user space before their call ends, and only
 * the call's end says whether it was slow enough to keep (--slower): they
 * wait, per thread, for their call's event.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "iostackbreak.h"
#include "report.h"

struct trace_writer;

struct trace_totals {
	unsigned long written;	/* trace events in the file (metadata included) */
	unsigned long over_max; /* left out: --trace-max reached */
	unsigned long orphaned; /* slices and requests whose call never came */
	unsigned long calls;	/* calls in the file */
};

/*
 * Starts the file at path (created or truncated). slower_ns: keep only
 * calls at least this long (0: all). Returns NULL with one line in err.
 */
struct trace_writer *trace_open(const char *path, unsigned long max_events, uint64_t slower_ns,
				disk_namer disk_name, char *err, size_t errsz);

/* The same on an open stream (tests); the writer does not close it. */
struct trace_writer *trace_open_stream(FILE *out, unsigned long max_events, uint64_t slower_ns,
				       disk_namer disk_name);

/* Where global locks' names come from (a kallsyms file; NULL, the default:
 * /proc/kallsyms). */
void trace_set_kallsyms(struct trace_writer *t, const char *path);

void trace_call(struct trace_writer *t, const struct call_event *e, const char *file);
void trace_slice(struct trace_writer *t, const struct slice_event *e);
void trace_request(struct trace_writer *t, const struct request_event *e);

/*
 * Ends the file: what was lost goes into its otherData (kernel_lost: events
 * the ring buffer had no room for). Returns 0, or -1 if writing failed.
 * totals (if not NULL) says what went in.
 */
int trace_close(struct trace_writer *t, uint64_t kernel_lost, struct trace_totals *totals);

#endif /* TRACE_H */
