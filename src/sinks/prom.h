/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition (format 0.0.4) of a report whose cells
 * count since the start of the run: a pure function from struct report to
 * text, no kernel and no network, so that tests can reach every byte.
 */
#ifndef PROM_H
#define PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * The le bounds of iostackbreak_latency_seconds: 2^k ns for k from
 * PROM_LE_MIN_EXP to PROM_LE_MAX_EXP (256 ns to 68.7 s), then +Inf.
 *
 * Powers of two of nanoseconds, not of seconds: every 2^k ns is a boundary
 * of our log-linear buckets (bpf/hist_bucket.h), so each le count is a sum
 * of whole buckets, exact; a power of two of seconds (2^-20 s = 953.67 ns)
 * falls inside a bucket and could only be had by splitting it. The set is
 * fixed, the same in every scrape of every host, because
 * histogram_quantile() and sums across hosts need the same bounds
 * everywhere; it spans from below the fastest call a tracer can time (a
 * cached read plus the tracepoints is about 0.3 us) to above any wait a
 * person sits through. Values beyond it still count in +Inf, _sum and
 * _count. 29 bounds + Inf: 30 series per cell.
 */
#define PROM_LE_MIN_EXP 8
#define PROM_LE_MAX_EXP 36

struct prom_meta {
	const char *version; /* iostackbreak's own, e.g. "0.1" */
	const char *kernel;  /* the running kernel's release (uname -r) */
};

/*
 * Writes every metric family of the report, each with HELP and TYPE. The
 * cells (and breakdowns, and stats) must be totals since start: counters
 * never go down. Returns 0, or -1 if the stream failed.
 */
int report_prometheus(FILE *out, const struct report *r, const struct prom_meta *meta);

/* ns as exact decimal seconds: 1536 -> "0.000001536", 0 -> "0". */
void prom_seconds(char *buf, size_t sz, uint64_t ns);

/*
 * A label value as the text format wants it: backslash, double quote and
 * newline escaped, and every byte that is not part of valid UTF-8 (a
 * process name cut inside a character by the kernel's 16-byte comm)
 * replaced by U+FFFD, since one invalid byte would make Prometheus reject
 * the whole scrape. Writes at most sz - 1 bytes and a NUL, never cutting
 * an escape or a character in two. Returns the length written.
 */
size_t prom_label_value(char *buf, size_t sz, const char *value);

#endif /* PROM_H */
