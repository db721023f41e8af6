/* SPDX-License-Identifier: GPL-2.0 */
/* Names of layers and operations, and parsing of -T lists. */
#ifndef LAYERS_H
#define LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "iostackbreak.h"

/* What a layer is (cells.def), in the order of the stack. */
enum layer_kind {
	LAYER_KIND_SYSCALL, /* system calls */
	LAYER_KIND_VFS,	    /* the VFS */
	LAYER_KIND_FS,	    /* a file system's file_operations */
	LAYER_KIND_URING,   /* io_uring requests */
	LAYER_KIND_AIO,	    /* Linux native AIO requests (io_submit) */
	LAYER_KIND_FAULT,   /* major page faults */
	LAYER_KIND_BIO,	    /* bios, per device: dm, md, zram and every disk */
	LAYER_KIND_BLK,	    /* the block layer, always the last */
	NR_LAYER_KINDS,
};

#define ALL_LAYERS ((1U << NR_LAYERS) - 1)
/* Without -T: every layer. */
#define DEFAULT_LAYERS ALL_LAYERS
/* The layers that time calls of threads (all before io_uring). */
#define THREAD_LAYERS ((1U << NR_CALL_LAYERS) - 1)
/* The device layers: they time bios and requests, per disk, not calls. */
#define DEVICE_LAYERS ((1U << LAYER_BIO) | (1U << LAYER_BLK))

const char *layer_name(unsigned int layer);
/* Number of operations of a layer (4 for fs-like layers, 5 for io_uring
 * and blk, 6 for aio, 4 for fault). */
unsigned int layer_nr_ops(unsigned int layer);
const char *op_name(unsigned int layer, unsigned int op);
/* Layer index by name ("ext4", "blk", ...), or -1. */
int layer_by_name(const char *name);
/*
 * Parses "syscall,vfs" into a bit mask of layers. Returns 0, or -1 with the
 * offending word copied to bad (size badsz).
 */
int parse_layer_list(const char *list, unsigned int *mask, char *bad, size_t badsz);

/* Is the layer a device layer (bio or blk: BLK_OP operations, per disk)? */
bool layer_is_device(unsigned int layer);

/* Is the layer a file system (of kind LAYER_KIND_FS)? */
bool layer_is_fs(unsigned int layer);
/* Does the layer time requests (io_uring, aio, blk) rather than calls? */
bool layer_has_requests(unsigned int layer);
/* "request"/"requests" or "call"/"calls", for n of the layer's. */
const char *layer_count_noun(unsigned int layer, unsigned long long n);
/* The module whose BTF holds the layer's functions, or NULL. */
const char *layer_module(unsigned int layer);
/* How --help names the layer ("system call", "ext4", "block layer"). */
const char *layer_help(unsigned int layer);
/*
 * Writes the names (or the help names) of the layers whose kind is in the
 * bit mask kinds, in stack order, separated by ", "; returns the length the
 * whole list needs, as snprintf does.
 */
size_t layers_join(char *buf, size_t sz, unsigned int kinds, bool help);

/* Every kind, for layers_join. */
#define ALL_LAYER_KINDS ((1U << NR_LAYER_KINDS) - 1)

#endif /* LAYERS_H */
