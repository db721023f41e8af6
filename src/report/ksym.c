// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksym.h"

struct ksym {
	uint64_t addr;
	char *name; /* "name", or "name [module]" for a module's */
};

/* A table of one kind of symbol, read once. */
struct ksym_table {
	struct ksym *syms;
	size_t nr_syms;
	int loaded; /* 0: not yet; 1: read (maybe empty) */
};

static struct ksym_table data_syms, text_syms;

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Reads the symbols whose kallsyms type is in types into t. Data symbols
 * (d, b, r: data, bss, read-only; either case) for locks: a text symbol at
 * a lock's address would be a lie. Text symbols (t) for stacks.
 */
static void load(struct ksym_table *t, const char *path, const char *types)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "r");
	char line[512], type, name[256], mod[128];
	size_t cap = 0;
	uint64_t addr;
	int n;

	t->loaded = 1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct ksym *grown;

		n = sscanf(line, "%" SCNx64 " %c %255s %127s", &addr, &type, name, mod);
		if (n < 3 || !addr)
			continue;
		if (!strchr(types, type))
			continue;
		if (t->nr_syms == cap) {
			cap = cap ? cap * 2 : 4096;
			grown = realloc(t->syms, cap * sizeof(*t->syms));
			if (!grown)
				break;
			t->syms = grown;
		}
		t->syms[t->nr_syms].addr = addr;
		if (n == 4 && mod[0] == '[') {
			size_t len = strlen(name) + strlen(mod) + 2;
			char *both = malloc(len);

			if (both)
				snprintf(both, len, "%s %s", name, mod);
			t->syms[t->nr_syms].name = both;
		} else {
			t->syms[t->nr_syms].name = strdup(name);
		}
		if (t->syms[t->nr_syms].name)
			t->nr_syms++;
	}
	fclose(f);
	qsort(t->syms, t->nr_syms, sizeof(*t->syms), by_addr);
}

/* The last symbol of t at or below addr, or NULL. */
static const struct ksym *below(const struct ksym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->syms[lo - 1] : NULL;
}

int ksym_data_name(const char *path, uint64_t addr, char *buf, size_t sz)
{
	const struct ksym *k;

	if (!data_syms.loaded)
		load(&data_syms, path, "dDbBrR");
	k = below(&data_syms, addr);
	if (k && addr - k->addr < 4096) {
		if (addr == k->addr)
			snprintf(buf, sz, "%s", k->name);
		else
			snprintf(buf, sz, "%s+0x%" PRIx64, k->name, addr - k->addr);
		return 0;
	}
	snprintf(buf, sz, "0x%" PRIx64, addr);
	return -1;
}

/*
 * A code address belongs to the function below it; the text symbols of
 * kallsyms have no sizes, so an address past the last function of the
 * kernel or of a module would take that function's name: 1 MiB bounds it.
 */
int ksym_text_name(const char *path, uint64_t addr, char *buf, size_t sz)
{
	const struct ksym *k;

	if (!text_syms.loaded)
		load(&text_syms, path, "tT");
	k = below(&text_syms, addr);
	if (k && addr - k->addr < (1U << 20)) {
		snprintf(buf, sz, "%s", k->name);
		return 0;
	}
	snprintf(buf, sz, "[unknown]");
	return -1;
}
