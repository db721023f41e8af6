/* SPDX-License-Identifier: GPL-2.0 */
/* The options of block I/O stacks (-K, -U, --io, --weight, --max-stacks,
 * --folded): their values and checks, as opt_values.h's. */
#ifndef OPT_STACKS_H
#define OPT_STACKS_H

#include "opts.h"

int opt_kstack(struct config *cfg, const char *arg);
int opt_ustack(struct config *cfg, const char *arg);
int opt_ustack_size(struct config *cfg, const char *arg);
int opt_io(struct config *cfg, const char *arg);
int opt_weight(struct config *cfg, const char *arg);
int opt_folded(struct config *cfg, const char *arg);
int opt_flamegraph(struct config *cfg, const char *arg);
int opt_check_stacks(struct config *cfg);

/* Are stacks of block I/O asked for (-K or -U)? */
static inline bool config_stacks(const struct config *cfg)
{
	return cfg->kstack || cfg->ustack;
}

/* The name of a weight ("bytes") and the word of --io ("rw", "all"). */
const char *stack_weight_name(enum stack_weight w);

#endif /* OPT_STACKS_H */
