/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space addresses of a process to function names, through elfutils'
 * libdwfl: the process's maps are read while it lives (proc_note), so that
 * its frames still resolve when it has exited by the report; the files
 * they name are read at the report (symbol tables, .gnu_debuglink and
 * build ids under /usr/lib/debug, as libdwfl finds them).
 */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

/* One frame, resolved or not. */
struct sym_frame {
	char name[256];	  /* the function, or "[unknown]" */
	char module[256]; /* the file it is in ("" when no mapping holds it) */
	uint64_t elf_addr; /* the address looked up, in the file's own terms */
	bool resolved;
};

/* proc_root: "/proc", or a fake tree for the unit tests. NULL when out of memory. */
struct symbolizer *sym_new(const char *proc_root);
void sym_free(struct symbolizer *s);

/*
 * Reads tgid's maps now, once (later calls for the same tgid do nothing).
 * Thread-safe: the reader of new processes calls it while the report may
 * look up others. Returns 0, or -1 when they cannot be read (it is gone).
 */
int sym_proc_note(struct symbolizer *s, int tgid);

/*
 * The n addresses of tgid that a stack holds: when one is outside the maps
 * read so far (a library loaded since), they are read again (kept as they
 * were if the process is gone). Thread-safe, as sym_proc_note.
 */
void sym_proc_cover(struct symbolizer *s, int tgid, const uint64_t *addrs, unsigned int n);

/*
 * Resolves addr of tgid. return_addr: addr is where a call returns to (every
 * frame of a stack but the first), so the call itself, addr - 1, is what is
 * looked up. Returns 0 when resolved; -1 leaves f->name "[unknown]" and
 * f->module the file when a mapping holds addr.
 */
int sym_user(struct symbolizer *s, int tgid, uint64_t addr, bool return_addr,
	     struct sym_frame *f);

/* Processes whose maps could not be read (gone before they were noted). */
unsigned int sym_procs_unread(const struct symbolizer *s);

#endif /* SYMBOLIZE_H */
