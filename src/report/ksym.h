/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of kernel addresses from kallsyms: a global lock by its symbol (a
 * contended lock of an event, bpf/why.bpf.c), a stack's frames by their
 * functions (-K).
 */
#ifndef KSYM_H
#define KSYM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The data symbol at addr ("inode_hash_lock"), or addr's offset in the
 * data symbol below it ("some_table+0x40", within 4 KiB), from path (a
 * kallsyms file, read once; NULL: /proc/kallsyms). Returns 0, or -1 when
 * no symbol names it (a lock inside a kernel object: buf says "0x...").
 */
int ksym_data_name(const char *path, uint64_t addr, char *buf, size_t sz);

/*
 * The function at code address addr ("blk_mq_submit_bio", or
 * "ext4_readahead [ext4]" in a module), from path as above. Returns 0, or
 * -1 when no symbol names it (buf says "[unknown]").
 */
int ksym_text_name(const char *path, uint64_t addr, char *buf, size_t sz);

#endif /* KSYM_H */
