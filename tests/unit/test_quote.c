// SPDX-License-Identifier: GPL-2.0
/* Messages quoting user input stay one printable line (fuzz_opts found a
 * newline in -T's argument breaking the one-line error). */
#include <criterion/criterion.h>
#include <string.h>
#include "quote.h"

Test(quote, control_characters_are_escaped)
{
	char buf[64] = "layer 'a\nb\tc\x1b[31m' \x7f";

	printable_line(buf, sizeof(buf));
	cr_assert_str_eq(buf, "layer 'a\\nb\\tc\\x1b[31m' \\x7f");
}

Test(quote, plain_text_and_utf8_are_kept)
{
	char buf[32] = "disk 'nvme0n1' caf\xc3\xa9";

	printable_line(buf, sizeof(buf));
	cr_assert_str_eq(buf, "disk 'nvme0n1' caf\xc3\xa9");
}

/* What no longer fits after escaping is cut, with "...", within sz. */
Test(quote, a_long_escape_is_cut_within_the_buffer)
{
	char buf[16];

	memset(buf, '\n', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	printable_line(buf, sizeof(buf));
	cr_assert(strlen(buf) < sizeof(buf), "%zu", strlen(buf));
	cr_assert_str_eq(buf, "\\n\\n\\n\\n\\n\\n...");
}
