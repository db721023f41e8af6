// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak: latency of I/O per layer of the storage stack. Parses the
 * command line and hands it to a session (session.c).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "opts.h"
#include "replay.h"
#include "session.h"

int main(int argc, char **argv)
{
	sigset_t stop_signals, child_mask;
	struct config cfg;

	/* First: a Ctrl-C from now on waits in the session's signalfd. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGCHLD);
	/* --live redraws on a resize: it arrives there too (harmless when not
	 * live: its default action is to be ignored). */
	sigaddset(&stop_signals, SIGWINCH);
	sigprocmask(SIG_BLOCK, &stop_signals, &child_mask);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_run(argc, argv);
	/* iostackbreak report FILE: a recording's reports, no tracing. */
	if (argc > 1 && !strcmp(argv[1], "report")) {
		if (parse_report_options(argc, argv, &cfg)) {
			fprintf(stderr, "iostackbreak: %s\n", cfg.errmsg);
			return 2;
		}
		return cfg.help_shown ? 0 : replay_run(&cfg);
	}
	if (parse_options(argc, argv, &cfg)) {
		fprintf(stderr, "iostackbreak: %s\n", cfg.errmsg);
		return 2;
	}
	if (cfg.help_shown)
		return 0;
	/* --ring: SIGUSR1 writes the window, through the session's signalfd. */
	if (cfg.ring) {
		sigaddset(&stop_signals, SIGUSR1);
		sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	}
	return session_run(&cfg, &stop_signals, &child_mask);
}
