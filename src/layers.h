/* SPDX-License-Identifier: GPL-2.0 */
/* Names of layers and operations, and parsing of -T lists. */
#ifndef LAYERS_H
#define LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "iostackbreak.h"

#define ALL_LAYERS ((1U << NR_LAYERS) - 1)
/* The layers that time calls of threads (all but blk). */
#define THREAD_LAYERS (ALL_LAYERS & ~(1U << LAYER_BLK))

const char *layer_name(unsigned int layer);
/* Number of operations of a layer (4 for fs-like layers, 5 for blk). */
unsigned int layer_nr_ops(unsigned int layer);
const char *op_name(unsigned int layer, unsigned int op);
/* Layer index by name ("ext4", "blk", ...), or -1. */
int layer_by_name(const char *name);
/*
 * Parses "syscall,vfs" into a bit mask of layers. Returns 0, or -1 with the
 * offending word copied to bad (size badsz).
 */
int parse_layer_list(const char *list, unsigned int *mask, char *bad, size_t badsz);

/* Is the layer a file system (ext4, xfs, btrfs)? */
bool layer_is_fs(unsigned int layer);

#endif /* LAYERS_H */
