// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksym.h"

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *syms;
static size_t nr_syms;
static int loaded; /* 0: not yet; 1: read (maybe empty) */

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Data symbols only (d, b, r: data, bss, read-only; either case): locks
 * live there, and a text symbol at a lock's address would be a lie. */
static void load(const char *path)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "r");
	char line[512], type, name[256];
	size_t cap = 0;
	uint64_t addr;

	loaded = 1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct ksym *grown;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (!strchr("dDbBrR", type))
			continue;
		if (nr_syms == cap) {
			cap = cap ? cap * 2 : 4096;
			grown = realloc(syms, cap * sizeof(*syms));
			if (!grown)
				break;
			syms = grown;
		}
		syms[nr_syms].addr = addr;
		syms[nr_syms].name = strdup(name);
		if (syms[nr_syms].name)
			nr_syms++;
	}
	fclose(f);
	qsort(syms, nr_syms, sizeof(*syms), by_addr);
}

int ksym_data_name(const char *path, uint64_t addr, char *buf, size_t sz)
{
	size_t lo = 0, hi;

	if (!loaded)
		load(path);
	hi = nr_syms;
	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr - syms[lo - 1].addr < 4096) {
		if (addr == syms[lo - 1].addr)
			snprintf(buf, sz, "%s", syms[lo - 1].name);
		else
			snprintf(buf, sz, "%s+0x%" PRIx64, syms[lo - 1].name,
				 addr - syms[lo - 1].addr);
		return 0;
	}
	snprintf(buf, sz, "0x%" PRIx64, addr);
	return -1;
}
