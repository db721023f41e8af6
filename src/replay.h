/* SPDX-License-Identifier: GPL-2.0 */
/* iostackbreak report FILE: the reports of a recording (docs/record.md). */
#ifndef REPLAY_H
#define REPLAY_H

#include "opts.h"

/* Prints what cfg asks of the recording cfg->replay; the exit status. */
int replay_run(struct config *cfg);

/* iostackbreak diff A B (argv[1] "diff"): two runs side by side
 * (src/report/compare.h). Exit status 0, 1 when a file cannot be read,
 * 2 on a usage error. */
int diff_run(int argc, char **argv);

#endif /* REPLAY_H */
