// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "layers.h"

static const char *const layer_names[NR_LAYERS] = {
#define LAYER(id, name, nests) [id] = #name,
#include "cells.def"
};

static const char *const fs_op_names[NR_FS_OPS] = {
#define FS_OP(id, name) [id] = #name,
#include "cells.def"
};

static const char *const blk_op_names[NR_BLK_OPS] = {
#define BLK_OP(id, name) [id] = #name,
#include "cells.def"
};

const char *layer_name(unsigned int layer)
{
	return layer < NR_LAYERS ? layer_names[layer] : "?";
}

unsigned int layer_nr_ops(unsigned int layer)
{
	return layer == LAYER_BLK ? NR_BLK_OPS : NR_FS_OPS;
}

const char *op_name(unsigned int layer, unsigned int op)
{
	if (op >= layer_nr_ops(layer))
		return "?";
	return layer == LAYER_BLK ? blk_op_names[op] : fs_op_names[op];
}

int layer_by_name(const char *name)
{
	for (unsigned int i = 0; i < NR_LAYERS; i++)
		if (!strcmp(name, layer_names[i]))
			return (int)i;
	/* The seed tool's users may type "block" or "fs"-style aliases. */
	if (!strcmp(name, "block"))
		return LAYER_BLK;
	return -1;
}

bool layer_is_fs(unsigned int layer)
{
	return layer == LAYER_EXT4 || layer == LAYER_XFS || layer == LAYER_BTRFS;
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
