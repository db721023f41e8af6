/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --live: a full-screen view of the run, redrawn at every interval report,
 * in the spirit of top and biotop: per layer and op its rate, p50, p99 and a
 * bar of where the time goes; the busiest processes or disks; the verdict.
 * Plain ANSI escapes on the alternate screen (no curses: one dependency
 * less, and the terminal is restored by the same code on every way out).
 *
 * Keys: q quits, p and d pick processes or disks, s cycles the sort (time,
 * calls, p99), space pauses the display (counting goes on).
 */
#ifndef LIVE_H
#define LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include "sink.h"

struct live;

/*
 * Takes over the terminal: in (keys, raw mode) and out (the alternate
 * screen) must be a terminal. NULL with err set otherwise.
 */
struct live *live_open(int in_fd, FILE *out, enum unit unit, char *err, size_t errsz);

/* A sink whose reports redraw the screen. */
int live_sink_open(struct sink *s, struct live *lv);

/* The descriptor to poll for keys. */
int live_fd(const struct live *lv);

/* Reads the keys waiting; returns true when the user asked to quit. */
bool live_on_keys(struct live *lv);

/* Draws the screen again (after a resize). */
void live_redraw(struct live *lv);

/* Gives the terminal back as it was; frees lv. */
void live_close(struct live *lv);

/*
 * The screen of the last report, rows x cols, into buf: what live_redraw
 * writes, without escapes (tests read it).
 */
size_t live_render(const struct live *lv, char *buf, size_t sz, unsigned int rows,
		   unsigned int cols);

#endif /* LIVE_H */
