// SPDX-License-Identifier: GPL-2.0
/* A contended lock named from kallsyms: data symbols only, an address
 * inside one as symbol+offset, anything else as its address. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>
#include "ksym.h"

/* A kallsyms file of these lines, in path (a mkstemp template). */
static void kallsyms_file(char *path, const char *lines)
{
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	cr_assert_not_null(f);
	fputs(lines, f);
	fclose(f);
}

Test(ksym, data_symbols_name_locks)
{
	char path[] = "/tmp/iosb-kallsyms-XXXXXX", buf[64];

	kallsyms_file(path, "ffffffff81000000 T _text\n"
			    "ffffffff82a00040 D inode_hash_lock\n"
			    "ffffffff82b00000 b some_table\n"
			    "ffffffff82000000 t a_function\n"
			    "0000000000000000 D zero_skipped\n");
	cr_assert_eq(ksym_data_name(path, 0xffffffff82a00040ULL, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "inode_hash_lock");
	cr_assert_eq(ksym_data_name(path, 0xffffffff82b00040ULL, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "some_table+0x40");
	/* Far past every symbol (a lock in a kernel object), or below all. */
	cr_assert_eq(ksym_data_name(path, 0xffff888012345678ULL, buf, sizeof(buf)), -1);
	cr_assert_str_eq(buf, "0xffff888012345678");
	/* A text symbol does not name data at its address. */
	cr_assert_eq(ksym_data_name(path, 0xffffffff82000000ULL, buf, sizeof(buf)), -1);
	unlink(path);
}

/* Stacks (-K): a code address names the function below it, with its module. */
Test(ksym, text_symbols_name_frames)
{
	char path[] = "/tmp/iosb-kallsyms-XXXXXX", buf[64];

	kallsyms_file(path, "ffffffff81000000 T _text\n"
			    "ffffffff81400000 T submit_bio\n"
			    "ffffffff81400100 t blk_mq_submit_bio\n"
			    "ffffffff82a00040 D inode_hash_lock\n"
			    "ffffffffc0001000 t ext4_readahead\t[ext4]\n");
	cr_assert_eq(ksym_text_name(path, 0xffffffff81400123ULL, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "blk_mq_submit_bio");
	cr_assert_eq(ksym_text_name(path, 0xffffffffc0001010ULL, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "ext4_readahead [ext4]");
	/* Below every function. */
	cr_assert_eq(ksym_text_name(path, 0xffffffff80000000ULL, buf, sizeof(buf)), -1);
	cr_assert_str_eq(buf, "[unknown]");
	unlink(path);
}
