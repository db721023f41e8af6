// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pattern_maps.h"
#include "iostackbreak.skel.h"

bool pattern_on(const struct tracer *t)
{
	return t->skel->rodata->pattern_calls || t->skel->rodata->pattern_blk ||
	       t->skel->rodata->pattern_bio;
}

/* The kernel only adds keys (none is deleted while it runs): the walk is safe. */
int pattern_read(struct tracer *t, struct pattern_set *set)
{
	int fd = bpf_map__fd(t->skel->maps.patterns);
	size_t cap = bpf_map__max_entries(t->skel->maps.patterns);
	struct pattern_key key, next, *prev = NULL;
	struct pattern_value value;

	set->n = 0;
	set->v = calloc(cap, sizeof(*set->v));
	if (!set->v)
		return -ENOMEM;
	while (set->n < cap && !bpf_map_get_next_key(fd, prev, &next)) {
		struct pattern_entry *e;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &value))
			continue;
		e = &set->v[set->n++];
		e->key = key;
		memcpy(e->comm, value.comm, sizeof(e->comm));
		e->comm[COMM_LEN - 1] = '\0';
		e->h = value.h;
	}
	pattern_sort(set);
	return 0;
}
