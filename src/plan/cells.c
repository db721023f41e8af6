// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <asm/unistd.h>
#include "cells.h"

/* The syscall numbers of the build architecture (bpf/cells.def). */
#define CELLS_SYSCALL_NUMBERS

const struct cell_target cell_targets[NR_CELL_TARGETS] = {
#define SYSCALL(o, n, a)                                                                           \
	{ .layer = LAYER_SYSCALL,                                                                  \
	  .op = o,                                                                                 \
	  .kind = TARGET_SYSCALL,                                                                  \
	  .name = #n,                                                                              \
	  .nr = __NR_##n,                                                                          \
	  .args = a },
#define KFUNC(l, o, f, a) { .layer = l, .op = o, .kind = TARGET_KFUNC, .name = #f, .args = a },
#define CELL_TP(l, o, cat, enter, exit)                                                            \
	{ .layer = l,                                                                              \
	  .op = o,                                                                                 \
	  .kind = TARGET_TP,                                                                       \
	  .name = #enter,                                                                          \
	  .exit_tp = #exit,                                                                        \
	  .category = #cat,                                                                        \
	  .args = ARGS_TP_DEV_INO },
#include "cells.def"
};

unsigned int cell_targets_of(unsigned int layer, unsigned int op, enum target_kind kind,
			     unsigned int *ids, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NR_CELL_TARGETS && n < max; i++) {
		const struct cell_target *t = &cell_targets[i];

		if (t->layer == layer && t->op == op && t->kind == kind)
			ids[n++] = i;
	}
	return n;
}

const char *const blk_tp_names[NR_BLK_TPS] = {
#define BLK_TP(id, name) [id] = #name,
#include "cells.def"
};

const char *const uring_tp_names[NR_URING_TPS] = {
#define URING_TP(id, name) [id] = #name,
#include "cells.def"
};

const char *const aio_func_names[NR_AIO_FUNCS] = {
#define AIO_FUNC(id, name) [id] = #name,
#include "cells.def"
};

const char *const fault_func_names[NR_FAULT_FUNCS] = {
#define FAULT_FUNC(id, name) [id] = #name,
#include "cells.def"
};

unsigned int blk_tp_layer(enum blk_tp tp)
{
	return tp == BLK_TP_BIO_QUEUE || tp == BLK_TP_BIO_COMPLETE ||
		       tp == BLK_TP_BIO_RQ_COMPLETE || tp == BLK_TP_BIO_REMAP ||
		       tp == BLK_TP_BIO_SPLIT
		   ? LAYER_BIO
		   : LAYER_BLK;
}

int blk_tp_of_layer(unsigned int layer, const char *name)
{
	for (unsigned int tp = 0; tp < NR_BLK_TPS; tp++)
		if (blk_tp_layer((enum blk_tp)tp) == layer && !strcmp(name, blk_tp_names[tp]))
			return (int)tp;
	return -1;
}

int blk_tp_by_name(const char *name)
{
	for (unsigned int tp = 0; tp < NR_BLK_TPS; tp++)
		if (!strcmp(name, blk_tp_names[tp]))
			return (int)tp;
	return -1;
}
