// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "layers.h"
#include "opt_stacks.h"
#include "opt_values.h"
#include "stacks.h"

int opt_kstack(struct config *cfg, const char *arg)
{
	(void)arg;
	cfg->kstack = true;
	return 0;
}

/* -U, --user-stack[=fp|dwarf|auto]: arg NULL for the first. */
int opt_ustack(struct config *cfg, const char *arg)
{
	enum ustack_mode mode;

	cfg->ustack = true;
	/* -U again, or -U beside --user-stack=dwarf: the walk named stays. */
	if (!arg)
		return 0;
	if (!strcmp(arg, "auto"))
		mode = USTACK_AUTO;
	else if (!strcmp(arg, "fp"))
		mode = USTACK_FP;
	else if (!strcmp(arg, "dwarf"))
		mode = USTACK_DWARF;
	else
		return opt_fail(cfg, "invalid --user-stack '%s': give fp (frame pointers), dwarf "
				     "(unwind a copy of the stack) or auto", arg);
	if (cfg->ustack_mode_given && mode != cfg->ustack_mode)
		return opt_fail(cfg, "--user-stack given twice, '%s' and '%s': give one walk",
				arg, cfg->ustack_mode == USTACK_FP ? "fp" :
				cfg->ustack_mode == USTACK_DWARF ? "dwarf" : "auto");
	cfg->ustack_mode = mode;
	cfg->ustack_mode_given = true;
	return 0;
}

/* --user-stack-size: at least a few frames' worth, at most the copy's room. */
int opt_ustack_size(struct config *cfg, const char *arg)
{
	long v = opt_positive(arg);

	if (v < 256 || v > USTACK_SIZE_OPT_MAX)
		return opt_fail(cfg, "invalid --user-stack-size '%s': give a number of bytes "
				     "from 256 to %d", arg, USTACK_SIZE_OPT_MAX);
	cfg->ustack_size = (unsigned int)v;
	return 0;
}

/* --io=r|w|rw, as the seed tool's -io: which requests count. */
int opt_io(struct config *cfg, const char *arg)
{
	if (!strcmp(arg, "r"))
		cfg->stack_ops = 1U << BLKOP_READ;
	else if (!strcmp(arg, "w"))
		cfg->stack_ops = 1U << BLKOP_WRITE;
	else if (!strcmp(arg, "rw"))
		cfg->stack_ops = (1U << BLKOP_READ) | (1U << BLKOP_WRITE);
	else
		return opt_fail(cfg, "invalid --io '%s': give r (reads), w (writes) or rw (both)",
				arg);
	return 0;
}

static const char *const weight_names[] = {
	[WEIGHT_DEFAULT] = "default",
	[WEIGHT_BYTES] = "bytes",
	[WEIGHT_REQUESTS] = "requests",
	[WEIGHT_TIME] = "time",
};

const char *stack_weight_name(enum stack_weight w)
{
	return (unsigned int)w < sizeof(weight_names) / sizeof(weight_names[0]) ? weight_names[w]
										 : "?";
}

int opt_weight(struct config *cfg, const char *arg)
{
	for (unsigned int i = WEIGHT_BYTES; i < sizeof(weight_names) / sizeof(weight_names[0]); i++) {
		if (!strcmp(arg, weight_names[i])) {
			cfg->weight = (enum stack_weight)i;
			return 0;
		}
	}
	return opt_fail(cfg, "invalid --weight '%s': give requests, bytes or time", arg);
}

/* --folded, or --folded=FILE: arg NULL for the first. */
int opt_folded(struct config *cfg, const char *arg)
{
	if (arg && !*arg)
		return opt_fail(cfg, "empty --folded=: give the file to write, or no '=' for "
				     "stdout");
	cfg->folded = true;
	cfg->folded_file = arg;
	return 0;
}

int opt_flamegraph(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --flamegraph: give the SVG file to write, e.g. "
				     "--flamegraph=io.svg");
	cfg->flamegraph = arg;
	return 0;
}

/*
 * Stacks are of the block layer's requests when blk is traced; else -U
 * takes the user stacks of the calls of the outermost call layer (syscall
 * first). They are reported once, at the end (a folded file is one profile
 * of the run), so they go with no interval, exporter or live view.
 */
int opt_check_stacks(struct config *cfg)
{
	bool asked = cfg->stack_ops || cfg->weight != WEIGHT_DEFAULT || cfg->max_stacks ||
		     cfg->folded || cfg->flamegraph;

	if (cfg->ustack_size && (!cfg->ustack || cfg->ustack_mode == USTACK_FP))
		return opt_fail(cfg, "--user-stack-size sizes the stack copied for unwinding: "
				     "give -U (auto) or --user-stack=dwarf, not fp");

	if (!config_stacks(cfg)) {
		if (asked)
			return opt_fail(cfg, "--io, --weight, --max-stacks, --folded and "
					     "--flamegraph shape the stacks of -K and -U: add -K, -U "
					     "or both");
		return 0;
	}
	cfg->call_stacks = !(cfg->layers & (1U << LAYER_BLK));
	if (cfg->call_stacks && (cfg->kstack || !(cfg->layers & THREAD_LAYERS)))
		return opt_fail(cfg, "-K takes the stacks of block requests: add blk to -T (-U "
				     "alone takes the user stacks of calls, with a call layer "
				     "such as syscall and no blk)");
	if (cfg->call_stacks && cfg->weight == WEIGHT_BYTES)
		return opt_fail(cfg, "--weight=bytes weighs block requests: stacks of calls "
				     "weigh time or calls (--weight=requests)");
	if (cfg->weight == WEIGHT_DEFAULT)
		cfg->weight = cfg->call_stacks ? WEIGHT_TIME : WEIGHT_BYTES;
	if (cfg->interval || cfg->live || cfg->prometheus || cfg->textfile)
		return opt_fail(cfg, "-K and -U report stacks once, at the end of the run: drop "
				     "the interval, --live, --prometheus or --textfile");
	if (cfg->folded && !cfg->folded_file && cfg->json)
		return opt_fail(cfg, "--folded without a file writes stdout instead of the "
				     "report: drop --json, or give --folded=FILE");
	return 0;
}
