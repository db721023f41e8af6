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
 */
#ifndef VERDICT_H
#define VERDICT_H

#include <stddef.h>
#include "report.h"

/* Writes the verdict of r into buf (without a trailing newline). */
void report_verdict(const struct report *r, char *buf, size_t sz);

/* 12402 -> "12,402": counts a person reads at a glance. */
void format_count(uint64_t n, char *buf, size_t sz);

/* A time in the unit that keeps it short: "4.1 ms", "850 us", "12 ns". */
void format_duration(uint64_t ns, char *buf, size_t sz);

#endif /* VERDICT_H */
