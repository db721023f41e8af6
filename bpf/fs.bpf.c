// SPDX-License-Identifier: GPL-2.0
/*
 * The vfs and file-system layers (those of cells.def's FS kind: ext4, xfs,
 * btrfs, f2fs): one fentry/fexit and
 * one kprobe/kretprobe pair per kernel function of the table, bound to its
 * function by user space before load, and a cell's own tracepoint pair
 * where one exists (ext4 fsync).
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

#define KFUNC(layer, op, func, args)                                                               \
	ENTRY_EXIT("fentry", fe_##func, "fexit", fx_##func, layer, op, AM_FENTRY, args)            \
	ENTRY_EXIT("kprobe", kp_##func, "kretprobe", kr_##func, layer, op, AM_KPROBE, args)
/* The record names the file by device and inode: --file filters on them. */
#define CELL_TP(layer, op, category, enter, exit)                                                  \
	SEC("tracepoint/" #category "/" #enter)                                                    \
	int tp_##enter(struct trace_event_raw_##enter *ctx)                                        \
	{                                                                                          \
		if (nr_files && !file_id_wanted(ctx->dev, ctx->ino))                               \
			return 0;                                                                  \
		return layer_enter(layer, op, layer_nests(layer), ctx, AM_CELL_TP,                 \
				   ARGS_TP_DEV_INO, NULL);                                         \
	}                                                                                          \
	SEC("tracepoint/" #category "/" #exit)                                                     \
	int tp_##exit(struct trace_event_raw_##exit *ctx)                                          \
	{                                                                                          \
		return layer_exit(layer, op, layer_nests(layer), ctx, AM_CELL_TP,                  \
				  ARGS_TP_DEV_INO, NULL);                                          \
	}
#include "cells.def"
