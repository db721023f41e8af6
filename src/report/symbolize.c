// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
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
	bool attached; /* dwfl_attach_state done on dwfl (once a Dwfl) */
	int mem_fd;    /* /proc/PID/mem, opened at the first read; -1 before */
	int has_fp;    /* sym_proc_has_fp: -1 not looked at yet */
	/* The copy being unwound (sym_unwind, under the lock). */
	const struct sym_regs *regs;
	const uint8_t *stack;
	size_t size;
	bool full, truncated;
	uint64_t *ips;
	unsigned int n, max;
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
			if (p->mem_fd >= 0)
				close(p->mem_fd);
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
	p->mem_fd = -1;
	p->has_fp = -1;
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
			p->attached = false;
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

int sym_mark_name(struct symbolizer *s, int tgid, uint64_t addr, struct sym_frame *f)
{
	uint64_t at = SYM_MARK_ADDR(addr);
	const char *mod_name = NULL;
	struct sym_proc *p;
	Dwfl_Module *mod;
	Dwfl *dwfl;

	memset(f, 0, sizeof(*f));
	f->resolved = true;
	if (!(addr & (SYM_MARK_NO_CFI | SYM_MARK_FAILED))) {
		snprintf(f->name, sizeof(f->name), "[truncated]");
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	p = find(s, tgid);
	dwfl = p ? proc_dwfl(p) : NULL;
	mod = dwfl ? dwfl_addrmodule(dwfl, at ? at - 1 : at) : NULL;
	if (mod)
		mod_name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	snprintf(f->name, sizeof(f->name), "[%s: %.200s]",
		 addr & SYM_MARK_NO_CFI ? "no unwind info" : "unwind failed",
		 mod_name ? base_name(mod_name) : "unmapped");
	pthread_mutex_unlock(&s->lock);
	return 0;
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

/*
 * libdwfl's view of the process being unwound: one thread, whose
 * registers and stack are the copy (p->regs, p->stack).
 */
static pid_t unw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sym_proc *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->tgid;
}

static bool unw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* The stack the copy does not hold, above it: at most this far. */
#define STACK_REACH (8ULL << 20)

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sym_proc *p = arg;
	uint64_t sp = p->regs->sp;
	char path[192];

	(void)dwfl;
	if (addr >= sp && addr - sp + sizeof(*result) <= p->size) {
		memcpy(result, p->stack + (addr - sp), sizeof(*result));
		return true;
	}
	/* The stack above the copy: it was cut there, and has changed since. */
	if (addr >= sp && addr - sp < STACK_REACH) {
		p->truncated = p->full;
		return false;
	}
	/* Below the stack pointer: nothing of the event's is there any more. */
	if (addr < sp && sp - addr < STACK_REACH)
		return false;
	/* Elsewhere (the mapped files' code and data): the process's own. */
	if (p->mem_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", p->tgid);
		p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (p->mem_fd < 0)
			return false;
	}
	return pread(p->mem_fd, result, sizeof(*result), (off_t)addr) == sizeof(*result);
}

/* The registers the kernel copied, in DWARF's numbering. */
static bool unw_set_regs(Dwfl_Thread *thread, void *thread_arg)
{
	struct sym_proc *p = thread_arg;
	const struct sym_regs *r = p->regs;
#if defined(__x86_64__)
	Dwarf_Word bp_sp[2] = { r->fp, r->sp }; /* rbp 6, rsp 7 */

	if (!dwfl_thread_state_registers(thread, 6, 2, bp_sp))
		return false;
#elif defined(__aarch64__)
	Dwarf_Word fp_lr_sp[3] = { r->fp, r->lr, r->sp }; /* x29, x30, sp 31 */

	if (!dwfl_thread_state_registers(thread, 29, 3, fp_lr_sp))
		return false;
#endif
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks unw_callbacks = {
	.next_thread = unw_next_thread,
	.get_thread = unw_get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_regs,
};

static int unw_frame(Dwfl_Frame *frame, void *arg)
{
	struct sym_proc *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* Room for the end's mark. */
	if (p->n + 1 >= p->max) {
		p->truncated = true;
		return DWARF_CB_ABORT;
	}
	p->ips[p->n++] = pc;
	return DWARF_CB_OK;
}

/* Has the file of pc call frame information? */
static bool has_cfi(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;

	return mod && (dwfl_module_eh_cfi(mod, &bias) || dwfl_module_dwarf_cfi(mod, &bias));
}

/* Is pc in a program's or the loader's entry point, the outermost frame? */
static bool is_entry(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	const char *name = mod ? dwfl_module_addrname(mod, pc) : NULL;

	return name && !strcmp(name, "_start");
}

unsigned int sym_unwind(struct symbolizer *s, int tgid, const struct sym_regs *regs,
			const void *stack, size_t size, bool full, uint64_t *ips, unsigned int max)
{
	struct sym_proc *p;
	unsigned int n = 0;
	uint64_t last;
	Dwfl *dwfl;
	int rc;

	if (max < 2)
		return 0;
	/* The maps, read now if new, again if ip is in none (loaded since). */
	sym_proc_cover(s, tgid, &regs->ip, 1);
	pthread_mutex_lock(&s->lock);
	p = find(s, tgid);
	dwfl = p ? proc_dwfl(p) : NULL;
	if (dwfl && !p->attached)
		p->attached = dwfl_attach_state(dwfl, NULL, tgid, &unw_callbacks, p);
	if (!dwfl || !p->attached) {
		/* Nothing to unwind with: the one frame the registers give. */
		ips[n++] = regs->ip;
		ips[n++] = SYM_MARK | SYM_MARK_NO_CFI | SYM_MARK_ADDR(regs->ip);
		goto out;
	}
	p->regs = regs;
	p->stack = stack;
	p->size = size;
	p->full = full;
	p->truncated = false;
	p->ips = ips;
	p->n = 0;
	p->max = max;
	rc = dwfl_getthread_frames(dwfl, tgid, unw_frame, p);
	n = p->n;
	if (!n)
		ips[n++] = regs->ip;
	last = ips[n - 1];
	/* The entry point: a loader's _start has no rule for a caller. */
	if (rc && is_entry(dwfl, n > 1 ? last - 1 : last))
		rc = 0;
	if (p->truncated)
		ips[n++] = SYM_MARK;
	else if (rc && !has_cfi(dwfl, n > 1 ? last - 1 : last))
		ips[n++] = SYM_MARK | SYM_MARK_NO_CFI | SYM_MARK_ADDR(last);
	else if (rc)
		ips[n++] = SYM_MARK | SYM_MARK_FAILED | SYM_MARK_ADDR(last);
	p->regs = NULL;
	p->stack = NULL;
	p->ips = NULL;
out:
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned int sym_walk_fp(const struct sym_regs *regs, const void *stack, size_t size, bool full,
			 uint64_t *ips, unsigned int max)
{
	uint64_t fp = regs->fp, frame[2];
	unsigned int n = 0;

	if (max < 2)
		return 0;
	ips[n++] = regs->ip;
	/* Each frame record: the caller's frame pointer, then the return address. */
	while (n + 1 < max && fp >= regs->sp && fp - regs->sp + sizeof(frame) <= size) {
		memcpy(frame, (const uint8_t *)stack + (fp - regs->sp), sizeof(frame));
		if (!frame[1])
			break;
		ips[n++] = frame[1];
		/* The stack grows down: a caller's record is above. */
		if (frame[0] <= fp)
			return n;
		fp = frame[0];
	}
	if (full && fp >= regs->sp && fp - regs->sp < STACK_REACH && fp - regs->sp >= size)
		ips[n++] = SYM_MARK;
	return n;
}

/* The share of a file's functions that set a frame pointer up: 1 most. */
static int elf_has_fp(Elf *elf)
{
	unsigned int funcs = 0, with_fp = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && funcs < 400) {
		Elf_Data *syms;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		syms = elf_getdata(scn, NULL);
		for (size_t i = 0; syms && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize &&
				   funcs < 400; i++) {
			GElf_Sym sym;
			GElf_Shdr th;
			Elf_Scn *text;
			Elf_Data *code;
			const uint8_t *b;
			uint64_t off;

			const char *name;

			if (!gelf_getsym(syms, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_size < 16 || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			/* The C runtime's start-up code the linker added is built
			 * its own way: the program's functions are what count. */
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || name[0] == '_' || strstr(name, "tm_clones") ||
			    !strcmp(name, "frame_dummy"))
				continue;
			text = elf_getscn(elf, sym.st_shndx);
			if (!text || !gelf_getshdr(text, &th) || th.sh_type != SHT_PROGBITS)
				continue;
			code = elf_getdata(text, NULL);
			off = sym.st_value - th.sh_addr;
			if (!code || off + 16 > code->d_size)
				continue;
			b = (const uint8_t *)code->d_buf + off;
			funcs++;
#if defined(__aarch64__)
			/* mov x29, sp among the first four instructions. */
			for (int k = 0; k < 4; k++) {
				uint32_t insn;

				memcpy(&insn, b + 4 * k, 4);
				if (insn == 0x910003fd) {
					with_fp++;
					break;
				}
			}
#else
			/* endbr64 first where built for CET. */
			if (!memcmp(b, "\xf3\x0f\x1e\xfa", 4))
				b += 4;
			if (!memcmp(b, "\x55\x48\x89\xe5", 4))
				with_fp++;
#endif
		}
		/* .symtab names every function; .dynsym the exported ones only. */
		if (sh.sh_type == SHT_SYMTAB && funcs)
			break;
	}
	return funcs && 2 * with_fp > funcs;
}

int sym_proc_has_fp(struct symbolizer *s, int tgid, bool *fresh)
{
	char path[192];
	struct sym_proc *p;
	Elf *elf;
	int fd, ret;

	*fresh = false;
	sym_proc_note(s, tgid);
	pthread_mutex_lock(&s->lock);
	p = find(s, tgid);
	ret = p ? p->has_fp : 0;
	pthread_mutex_unlock(&s->lock);
	if (!p || ret >= 0)
		return ret > 0;
	snprintf(path, sizeof(path), "%s/%d/exe", s->proc_root, tgid);
	ret = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf)
			ret = elf_has_fp(elf);
		elf_end(elf);
		close(fd);
	}
	pthread_mutex_lock(&s->lock);
	p->has_fp = ret;
	pthread_mutex_unlock(&s->lock);
	*fresh = true;
	return ret;
}
