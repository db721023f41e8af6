/* SPDX-License-Identifier: GPL-2.0 */
/* iostackbreak report FILE: the reports of a recording (docs/record.md). */
#ifndef REPLAY_H
#define REPLAY_H

#include "opts.h"

/* Prints what cfg asks of the recording cfg->replay; the exit status. */
int replay_run(struct config *cfg);

#endif /* REPLAY_H */
