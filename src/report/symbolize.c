// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include "symbolize.h"

#define PROC_BUCKETS 1024

/* One process: its maps as read while it lived, and libdwfl's view of them. */
struct sym_proc {
	struct sym_proc *next;
	int tgid;
	char *maps; /* NULL: could not be read */
	size_t len;
	Dwfl *dwfl; /* made at the first lookup */
	bool dwfl_tried;
};

struct symbolizer {
	char proc_root[128];
	pthread_mutex_t lock;
	struct sym_proc *buckets[PROC_BUCKETS];
	unsigned int unread;
};

/*
 * Files are found by the paths in the maps (libdwfl's proc find_elf), their
 * debug information by build id or .gnu_debuglink under /usr/lib/debug.
 */
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct symbolizer *sym_new(const char *proc_root)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->proc_root, sizeof(s->proc_root), "%s", proc_root ? proc_root : "/proc");
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (unsigned int b = 0; b < PROC_BUCKETS; b++) {
		struct sym_proc *p = s->buckets[b], *next;

		for (; p; p = next) {
			next = p->next;
			if (p->dwfl)
				dwfl_end(p->dwfl);
			free(p->maps);
			free(p);
		}
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static struct sym_proc *find(struct symbolizer *s, int tgid)
{
	struct sym_proc *p = s->buckets[(unsigned int)tgid % PROC_BUCKETS];

	while (p && p->tgid != tgid)
		p = p->next;
	return p;
}

/* The whole of a /proc file (its size is not known before reading). */
static char *read_all(const char *path, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap), *grown;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap) {
			grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
	}
	close(fd);
	/* An exited process's maps read empty: nothing was read. */
	if (got < 0 || n == 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int sym_proc_note(struct symbolizer *s, int tgid)
{
	char path[192];
	struct sym_proc *p;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (find(s, tgid))
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -1;
		goto out;
	}
	p->tgid = tgid;
	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, tgid);
	p->maps = read_all(path, &p->len);
	if (!p->maps) {
		s->unread++;
		ret = -1;
	}
	p->next = s->buckets[(unsigned int)tgid % PROC_BUCKETS];
	s->buckets[(unsigned int)tgid % PROC_BUCKETS] = p;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Is addr inside a mapping of the maps text? */
static bool maps_cover(const char *maps, size_t len, uint64_t addr)
{
	const char *line = maps, *end = maps + len;

	while (line < end) {
		unsigned long long lo, hi;
		const char *nl = memchr(line, '\n', (size_t)(end - line));

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			return true;
		line = nl ? nl + 1 : end;
	}
	return false;
}

void sym_proc_cover(struct symbolizer *s, int tgid, const uint64_t *addrs, unsigned int n)
{
	struct sym_proc *p;
	char path[192], *maps;
	size_t len;

	if (sym_proc_note(s, tgid) || !n)
		return;
	pthread_mutex_lock(&s->lock);
	p = find(s, tgid);
	for (unsigned int i = 0; p && i < n; i++) {
		if (maps_cover(p->maps, p->len, addrs[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, tgid);
		maps = read_all(path, &len);
		if (maps) {
			free(p->maps);
			p->maps = maps;
			p->len = len;
			if (p->dwfl)
				dwfl_end(p->dwfl);
			p->dwfl = NULL;
			p->dwfl_tried = false;
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
}

unsigned int sym_procs_unread(const struct symbolizer *s)
{
	return s->unread;
}

/* libdwfl's modules of p, from the maps read while it lived. */
static Dwfl *proc_dwfl(struct sym_proc *p)
{
	FILE *f;

	if (p->dwfl_tried)
		return p->dwfl;
	p->dwfl_tried = true;
	if (!p->maps)
		return NULL;
	p->dwfl = dwfl_begin(&callbacks);
	if (!p->dwfl)
		return NULL;
	f = fmemopen(p->maps, p->len, "r");
	dwfl_report_begin(p->dwfl);
	if (!f || dwfl_linux_proc_maps_report(p->dwfl, f) != 0) {
		dwfl_report_end(p->dwfl, NULL, NULL);
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	} else {
		dwfl_report_end(p->dwfl, NULL, NULL);
	}
	if (f)
		fclose(f);
	return p->dwfl;
}

/* The file's name without its directory, as frames show it. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int sym_user(struct symbolizer *s, int tgid, uint64_t addr, bool return_addr,
	     struct sym_frame *f)
{
	uint64_t at = return_addr && addr ? addr - 1 : addr;
	const char *name = NULL, *mod_name;
	struct sym_proc *p;
	Dwfl_Module *mod;
	GElf_Addr bias = 0;
	GElf_Off off;
	GElf_Sym sym;
	Dwfl *dwfl;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "[unknown]");
	f->elf_addr = at;
	pthread_mutex_lock(&s->lock);
	p = find(s, tgid);
	dwfl = p ? proc_dwfl(p) : NULL;
	mod = dwfl ? dwfl_addrmodule(dwfl, at) : NULL;
	if (mod) {
		mod_name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		if (mod_name)
			snprintf(f->module, sizeof(f->module), "%s", mod_name);
		/* The address in the file's terms (as addr2line takes it). */
		if (dwfl_module_getelf(mod, &bias))
			f->elf_addr = at - bias;
		name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	if (name && *name) {
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->resolved = true;
		return 0;
	}
	if (f->module[0])
		snprintf(f->name, sizeof(f->name), "[unknown] (%.200s)", base_name(f->module));
	return -1;
}
