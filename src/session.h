/* SPDX-License-Identifier: GPL-2.0 */
/* One run of the tool, from a parsed command line to its exit status. */
#ifndef SESSION_H
#define SESSION_H

#include <signal.h>
#include "opts.h"

/*
 * Traces as cfg says until stopped, and returns the exit status. The
 * caller has blocked stop_signals (SIGINT, SIGTERM, SIGCHLD) before anything
 * else, so a signal that comes during start-up waits for the session;
 * child_mask is the mask a -- COMMAND is to run with.
 */
int session_run(const struct config *cfg, const sigset_t *stop_signals, const sigset_t *child_mask);

#endif /* SESSION_H */
