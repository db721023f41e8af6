/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events from the kernel's ring buffer (--slower, --trace): call lines to
 * stdout, and the timeline file. One descriptor for the session's poll().
 */
#ifndef EVENTS_H
#define EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "event_fmt.h"
#include "trace.h"

struct ring_buffer;
struct rec_writer;

struct event_feed {
	struct ring_buffer *rb;
	const struct config *cfg;
	struct event_ctx ctx;
	FILE *out;
	struct trace_writer *trace;
	struct rec_writer *rec;	    /* --record: every event, before the views */
	unsigned long long calls;   /* call events received */
	unsigned long long printed; /* lines written (--slower) */
	int write_errno;	    /* the output failed (EPIPE: its reader left) */
};

/*
 * Opens the feed on the ring buffer map. ctx: how lines are formatted;
 * trace: the --trace file's writer (the feed closes it), or NULL. Returns
 * 0, or -1 with one line in err.
 */
int event_feed_open(struct event_feed *f, int map_fd, const struct config *cfg,
		    const struct event_ctx *ctx, FILE *out, struct trace_writer *trace,
		    struct rec_writer *rec, char *err, size_t errsz);

/* A feed with no ring buffer: the events of a recording, given one by one
 * to event_feed_take() (iostackbreak report FILE). */
void event_feed_init(struct event_feed *f, const struct config *cfg, const struct event_ctx *ctx,
		     FILE *out, struct trace_writer *trace);

/* One event, as the ring buffer gave it, to --slower's lines and the trace. */
void event_feed_take(struct event_feed *f, const void *data, size_t size);

/* The descriptor that is readable when events wait. */
int event_feed_fd(const struct event_feed *f);

/* Takes every event waiting (none without a ring buffer), and flushes the
 * lines. Returns 0, or -1 when output failed. */
int event_feed_drain(struct event_feed *f);

/*
 * Closes the feed and the trace file; kernel_lost is what the ring buffer
 * had no room for. Says on stderr what went where and what was lost.
 */
int event_feed_close(struct event_feed *f, uint64_t kernel_lost);

#endif /* EVENTS_H */
