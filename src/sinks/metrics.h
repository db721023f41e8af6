/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exporter mode (--prometheus, --textfile): the tracer's maps as Prometheus
 * metrics, counting since start, served over HTTP and/or written for
 * node_exporter until the run is stopped. The glue between the kernel side
 * (snapshot_take), the exposition (prom.c) and delivery (exporter.c).
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdio.h>
#include "attach.h"
#include "opts.h"
#include "planner.h"

#define TEXTFILE_NAME "iostackbreak.prom"
#define TEXTFILE_INTERVAL_S 15 /* without an interval: a common scrape period */

struct metrics;

/*
 * Before anything is loaded: binds the --prometheus port and checks that
 * the --textfile directory is one we may write to, so that a port in use
 * fails at once, with no BPF program loaded. NULL with one line in err.
 */
struct metrics *metrics_open(const struct config *cfg, char *err, size_t errsz);

/*
 * Exporter mode in a session's event loop.
 *
 * metrics_start(): writes the first textfile, starts answering scrapes on
 * the HTTP library's own thread (create it with the stop signals already
 * blocked, so that they stay with the session), lists the skipped cells
 * and prints the ready line on stderr. 0, or -1 with one line in err.
 *
 * metrics_tick(): --textfile, every metrics_interval() seconds (0: no
 * textfile, no timer): writes the file again; a failure is said on stderr
 * once, until a write succeeds, and does not stop the run.
 *
 * metrics_finish(): stops answering scrapes, writes the last textfile.
 * 0, or -1 with one line in err.
 */
int metrics_start(struct metrics *m, struct tracer *t, const struct plan *plan, char *err,
		  size_t errsz);
unsigned int metrics_interval(const struct metrics *m);
void metrics_tick(struct metrics *m);
int metrics_finish(struct metrics *m, char *err, size_t errsz);

/*
 * An exposition_fn (exporter.h) for a struct metrics being served: takes a
 * fresh snapshot of the maps and writes all metrics to out. Safe from any
 * thread: snapshots are taken one at a time, under a mutex. Returns 0 or a
 * negative errno.
 */
int metrics_render(void *m, FILE *out);

/* Stops serving and frees m (NULL: nothing). */
void metrics_close(struct metrics *m);

#endif /* METRICS_H */
