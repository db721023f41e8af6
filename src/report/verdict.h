/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict: one line that says where the time went, made from the same
 * report as the tables below it. The rules (also in the man page):
 *
 *   1. The layer judged is the root layer of the split calls; without the
 *      parts of calls, the outermost layer that timed anything.
 *   2. It names the op of that layer with the most total time, and every
 *      other op whose p99 is at least 10 times its p50 (10 calls or more).
 *   3. Each op reads "OP p99 TIME (N calls)", then, when its calls were
 *      split, its parts by share of the time, largest first: those of 1%
 *      or more, at most four. io_wait reads "waiting for DISK (R
 *      requests/call)", a layer's self time "LAYER on CPU".
 *   4. An op named for rule 2 says by how much: "p99 14x p50".
 *
 * The text report prints it as a headline, the op with the most time and
 * its largest part, then a line per op named, each cut at a whole part to
 * fit VERDICT_COLS; JSON and the live view keep the one line.
 */
#ifndef VERDICT_H
#define VERDICT_H

#include <stddef.h>
#include "report.h"

/* Writes the verdict of r into buf (without a trailing newline). */
void report_verdict(const struct report *r, char *buf, size_t sz);

#define VERDICT_COLS 100
/* The headline and a line per op of a layer at most. */
#define VERDICT_MAX_LINES 8

/*
 * The verdict as the text report prints it, into lines[0..max): "verdict:
 * OP took the most time (T), S% of it PART", then "  " and rule 3's phrase
 * for each op named. Returns the number of lines written.
 */
unsigned int report_verdict_lines(const struct report *r, char lines[][VERDICT_COLS + 1],
				  unsigned int max);

/* Rule 2's test: p99 at least 10x p50, over 10 calls or more. */
bool cell_long_tail(const struct cell_hist *c);

/* 12402 -> "12,402": counts a person reads at a glance. */
void format_count(uint64_t n, char *buf, size_t sz);

/* A time in the unit that keeps it short: "4.1 ms", "850 us", "12 ns". */
void format_duration(uint64_t ns, char *buf, size_t sz);

#endif /* VERDICT_H */
