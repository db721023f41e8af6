/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exporter mode (--prometheus, --textfile): the tracer's maps as Prometheus
 * metrics, counting since start, served over HTTP and/or written for
 * node_exporter until the run is stopped. The glue between the kernel side
 * (snapshot_take), the exposition (prom.c) and delivery (exporter.c).
 */
#ifndef METRICS_H
#define METRICS_H

#include <signal.h>
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
 * Runs exporter mode on the attached tracer until *stop is set (SIGINT,
 * SIGTERM) or --duration passes: writes the first textfile, starts
 * answering scrapes, lists the skipped cells on stderr, prints the ready
 * line, then serves. Returns the exit code: 0, or 1 after one line on
 * stderr. plan must outlive m.
 *
 * Scrapes are answered on the HTTP library's thread, each with a fresh
 * snapshot of the maps (metrics_render()). A session with its own event
 * loop can drive the pieces instead: exporter_listen() and
 * exporter_serve() with metrics_render() as the callback, textfile_write()
 * on its timer.
 */
int metrics_serve(struct metrics *m, struct tracer *t, const struct plan *plan,
		  volatile sig_atomic_t *stop);

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
