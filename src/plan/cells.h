/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The targets of every cell, from the table of cells (bpf/cells.def), as
 * data the planner and the kernel probe can search without the BPF object.
 */
#ifndef CELLS_H
#define CELLS_H

#include <linux/types.h>
#include "iostackbreak.h"

enum target_kind {
	TARGET_SYSCALL, /* a system call: tracepoint pair or the arch's wrapper */
	TARGET_KFUNC,	/* a kernel function: fentry/fexit or kprobe/kretprobe */
	TARGET_TP,	/* a tracepoint pair of the cell's own */
};

struct cell_target {
	unsigned char layer, op;
	enum target_kind kind;
	const char *name;     /* syscall, function, or the tracepoint's entry event */
	int nr;		      /* TARGET_SYSCALL: its number on this arch, or -1 */
	unsigned char args;   /* where its file is in its arguments (enum call_args) */
	const char *exit_tp;  /* TARGET_TP: the exit event */
	const char *category; /* TARGET_TP: the tracepoint's category */
};

enum {
	NR_CELL_TARGETS = 0
#define SYSCALL(op, name, args) +1
#define KFUNC(layer, op, func, args) +1
#define CELL_TP(layer, op, category, enter, exit) +1
#include "cells.def"
};

/* The system calls of the syscall cells. */
enum {
	NR_SYSCALL_TARGETS = 0
#define SYSCALL(op, name, args) +1
#include "cells.def"
};

/* The block layer's tracepoints. */
enum blk_tp {
#define BLK_TP(id, name) id,
#include "cells.def"
	NR_BLK_TPS,
};

extern const char *const blk_tp_names[NR_BLK_TPS];

/* The io_uring layer's tracepoints (io_uring:<name>). */
enum uring_tp {
#define URING_TP(id, name) id,
#include "cells.def"
	NR_URING_TPS,
};

extern const char *const uring_tp_names[NR_URING_TPS];

/* The aio layer's kernel functions (fentry/fexit or kprobes). */
enum aio_func {
#define AIO_FUNC(id, name) id,
#include "cells.def"
	NR_AIO_FUNCS,
};

extern const char *const aio_func_names[NR_AIO_FUNCS];

/* The fault layer's kernel functions (fentry/fexit or kprobes). */
enum fault_func {
#define FAULT_FUNC(id, name) id,
#include "cells.def"
	NR_FAULT_FUNCS,
};

extern const char *const fault_func_names[NR_FAULT_FUNCS];

/* A block tracepoint by name, or -1. */
int blk_tp_by_name(const char *name);

/* The device layer a block tracepoint's program times (bio or blk). */
unsigned int blk_tp_layer(enum blk_tp tp);

/* A device layer's program on a block tracepoint, by the tracepoint's name
 * (bio and blk both have one on block_rq_complete), or -1. */
int blk_tp_of_layer(unsigned int layer, const char *name);

/* Every target, in the table's order (best first within a cell). */
extern const struct cell_target cell_targets[NR_CELL_TARGETS];

/*
 * The targets of a cell of one kind, best first, as indexes into
 * cell_targets; returns how many (at most max).
 */
unsigned int cell_targets_of(unsigned int layer, unsigned int op, enum target_kind kind,
			     unsigned int *ids, unsigned int max);

#endif /* CELLS_H */
