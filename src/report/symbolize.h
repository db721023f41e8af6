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

/*
 * The ends of an unwound stack (sym_unwind): its last address marked with
 * SYM_MARK. A stack cut by the copy's size ends in SYM_MARK alone
 * ("[truncated]"); one whose last frame has no call frame information in
 * its file in SYM_MARK | SYM_MARK_NO_CFI | that frame's address ("[no unwind
 * info: libfoo.so]"); one whose unwinding failed otherwise (a return
 * address no file maps) in SYM_MARK | SYM_MARK_FAILED | the address.
 */
#define SYM_MARK (1ULL << 63)
#define SYM_MARK_NO_CFI (1ULL << 62)
#define SYM_MARK_FAILED (1ULL << 61)
#define SYM_MARK_ADDR(a) ((a) & ((1ULL << 61) - 1))

/* The name of an unwound stack's end mark ("[truncated]"); returns 0. */
int sym_mark_name(struct symbolizer *s, int tgid, uint64_t addr, struct sym_frame *f);

/* A thread's user registers at the event, as the kernel copied them. */
struct sym_regs {
	uint64_t ip, sp, fp, lr; /* lr: arm64's link register */
};

/*
 * Unwinds a copy of a thread of tgid's user stack: size bytes from
 * regs->sp up; full: the copy is as big as asked (the stack may go on
 * above it). Frames are read by libdwfl from the files' .eh_frame or
 * .debug_frame; saved registers from the copy, other memory from the
 * process. Writes up to max addresses innermost first (the first exact,
 * the others where calls return to), the last a SYM_MARK when the stack
 * ends short; returns how many. Thread-safe, as sym_proc_note.
 */
unsigned int sym_unwind(struct symbolizer *s, int tgid, const struct sym_regs *regs,
			const void *stack, size_t size, bool full, uint64_t *ips, unsigned int max);

/*
 * The frame-pointer walk of a copy, as the kernel's walk of the live
 * stack (--user-stack=auto, for a process with frame pointers whose first
 * stacks were copied before it was known): the same arguments and result
 * as sym_unwind.
 */
unsigned int sym_walk_fp(const struct sym_regs *regs, const void *stack, size_t size, bool full,
			 uint64_t *ips, unsigned int max);

/*
 * --user-stack=auto: does tgid's executable keep frame pointers? Most of
 * its functions (those its symbol table names) begin by setting the frame
 * pointer up: x86-64's push %rbp; mov %rsp,%rbp, arm64's mov x29, sp. A
 * binary built without them has it in few functions (those with variable
 * frames). Returns 1 yes, 0 no or unknown (DWARF then: it is whole either
 * way). *fresh: this is the first answer for tgid.
 */
int sym_proc_has_fp(struct symbolizer *s, int tgid, bool *fresh);

/* Processes whose maps could not be read (gone before they were noted). */
unsigned int sym_procs_unread(const struct symbolizer *s);

#endif /* SYMBOLIZE_H */
