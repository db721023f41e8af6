// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "layers.h"

static const struct {
	const char *name;
	enum layer_kind kind;
	const char *module;
	const char *help;
} layers[NR_LAYERS] = {
#define LAYER(id, name, kind, nests, module, help)                                                 \
	[id] = { #name, LAYER_KIND_##kind, module, help },
#include "cells.def"
};

/*
 * The order rules of cells.def. A layer's position is its depth in the
 * stack: the planner takes the first traced layer as the root of calls, and
 * NR_CALL_LAYERS, THREAD_LAYERS and the parts of calls count on blk being
 * the last and bio just above it. So kinds never go back up the stack (4
 * bits a layer, packed), and blk is last.
 */
#define KIND_AT(packed, layer) ((unsigned int)((packed) >> (4 * (layer))) & 15)
enum {
	LAYER_KINDS_PACKED = 0
#define LAYER(id, name, kind, nests, module, help)                                                 \
	| ((unsigned long long)LAYER_KIND_##kind << (4 * id))
#include "cells.def"
};
_Static_assert(NR_LAYERS <= 16 && NR_LAYER_KINDS <= 16, "layer kinds are packed 4 bits each");
#define LAYER(id, name, kind, nests, module, help)                                                 \
	_Static_assert(id == 0 ||                                                                  \
			   KIND_AT(LAYER_KINDS_PACKED, id) >= KIND_AT(LAYER_KINDS_PACKED, id - 1), \
		       "cells.def: layer " #name " comes after a layer deeper in the stack");      \
	_Static_assert(LAYER_KIND_##kind != LAYER_KIND_BLK || id == NR_LAYERS - 1,                 \
		       "cells.def: blk must be the last layer");
#include "cells.def"

static const char *const fs_op_names[NR_FS_OPS] = {
#define FS_OP(id, name) [id] = #name,
#include "cells.def"
};

static const char *const blk_op_names[NR_BLK_OPS] = {
#define BLK_OP(id, name) [id] = #name,
#include "cells.def"
};

static const char *const uring_op_names[NR_URING_OPS] = {
#define URING_OP(id, name) [id] = #name,
#include "cells.def"
};

static const char *const aio_op_names[NR_AIO_OPS] = {
#define AIO_OP(id, name) [id] = #name,
#include "cells.def"
};

static const char *const fault_op_names[NR_FAULT_OPS] = {
#define FAULT_OP(id, name) [id] = #name,
#include "cells.def"
};

/* The layers of threads come first, io_uring right after them. */
#define LAYER(id, name, kind, nests, module, help)                                                 \
	_Static_assert((id < NR_CALL_LAYERS) ==                                                    \
			   (LAYER_KIND_##kind == LAYER_KIND_SYSCALL ||                             \
			    LAYER_KIND_##kind == LAYER_KIND_VFS || LAYER_KIND_##kind == LAYER_KIND_FS), \
		       "cells.def: layer " #name " is on the wrong side of NR_CALL_LAYERS");
#include "cells.def"

const char *layer_name(unsigned int layer)
{
	return layer < NR_LAYERS ? layers[layer].name : "?";
}

const char *layer_module(unsigned int layer)
{
	return layer < NR_LAYERS && layers[layer].module[0] ? layers[layer].module : NULL;
}

const char *layer_help(unsigned int layer)
{
	return layer < NR_LAYERS ? layers[layer].help : "?";
}

size_t layers_join(char *buf, size_t sz, unsigned int kinds, bool help)
{
	size_t used = 0;

	if (sz)
		buf[0] = '\0';
	for (unsigned int i = 0; i < NR_LAYERS; i++) {
		if (!(kinds & (1U << layers[i].kind)))
			continue;
		used += (size_t)snprintf(buf + (used < sz ? used : sz), used < sz ? sz - used : 0,
					 "%s%s", used ? ", " : "",
					 help ? layers[i].help : layers[i].name);
	}
	return used;
}

bool layer_is_device(unsigned int layer)
{
	return layer == LAYER_BIO || layer == LAYER_BLK;
}

unsigned int layer_nr_ops(unsigned int layer)
{
	if (layer_is_device(layer))
		return NR_BLK_OPS;
	if (layer == LAYER_AIO)
		return NR_AIO_OPS;
	if (layer == LAYER_FAULT)
		return NR_FAULT_OPS;
	return layer == LAYER_IO_URING ? NR_URING_OPS : NR_FS_OPS;
}

const char *op_name(unsigned int layer, unsigned int op)
{
	if (op >= layer_nr_ops(layer))
		return "?";
	if (layer == LAYER_IO_URING)
		return uring_op_names[op];
	if (layer == LAYER_AIO)
		return aio_op_names[op];
	if (layer == LAYER_FAULT)
		return fault_op_names[op];
	return layer_is_device(layer) ? blk_op_names[op] : fs_op_names[op];
}

bool layer_has_requests(unsigned int layer)
{
	return layer == LAYER_BLK || layer == LAYER_IO_URING || layer == LAYER_AIO;
}

const char *layer_count_noun(unsigned int layer, unsigned long long n)
{
	if (layer == LAYER_BIO)
		return n == 1 ? "bio" : "bios";
	if (layer == LAYER_FAULT)
		return n == 1 ? "fault" : "faults";
	if (layer_has_requests(layer))
		return n == 1 ? "request" : "requests";
	return n == 1 ? "call" : "calls";
}

int layer_by_name(const char *name)
{
	for (unsigned int i = 0; i < NR_LAYERS; i++)
		if (!strcmp(name, layers[i].name))
			return (int)i;
	/* The seed tool's users may type "block" for blk. */
	if (!strcmp(name, "block"))
		return LAYER_BLK;
	return -1;
}

bool layer_is_fs(unsigned int layer)
{
	return layer < NR_LAYERS && layers[layer].kind == LAYER_KIND_FS;
}

int parse_layer_list(const char *list, unsigned int *mask, char *bad, size_t badsz)
{
	const char *p = list;

	*mask = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char word[32];
		int layer;

		if (!len || len >= sizeof(word)) {
			snprintf(bad, badsz, "%.*s", (int)len, p);
			return -1;
		}
		memcpy(word, p, len);
		word[len] = '\0';
		if (!strcmp(word, "all")) {
			*mask |= ALL_LAYERS;
		} else {
			layer = layer_by_name(word);
			if (layer < 0) {
				snprintf(bad, badsz, "%s", word);
				return -1;
			}
			*mask |= 1U << layer;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
