// SPDX-License-Identifier: GPL-2.0
/* The IOSB_* switches of tests and benches: read in one place, a value not
 * understood refused with a line that names it. */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "unit.h"
#include "dev_switches.h"
#include "iostackbreak.h"

static void unset_all(void)
{
	unsetenv("IOSB_BLK_STAMPS");
	unsetenv("IOSB_THREAD_SLOTS");
	unsetenv("IOSB_FAST_SLOTS");
}

Test(dev_switches, defaults_when_unset)
{
	char err[256] = "";

	unset_all();
	cr_assert_eq(dev_switches_read(err, sizeof(err)), 0, "%s", err);
	cr_assert(!dev_switches()->blk_keyed);
	cr_assert_eq(dev_switches()->hash_slots, 0);
	cr_assert_eq(dev_switches()->fast_slots, FAST_SLOTS);
}

Test(dev_switches, values_read)
{
	char err[256] = "";

	unset_all();
	setenv("IOSB_BLK_STAMPS", "0", 1);
	setenv("IOSB_THREAD_SLOTS", "64", 1);
	setenv("IOSB_FAST_SLOTS", "0", 1);
	cr_assert_eq(dev_switches_read(err, sizeof(err)), 0, "%s", err);
	cr_assert(dev_switches()->blk_keyed);
	cr_assert_eq(dev_switches()->hash_slots, 64);
	cr_assert_eq(dev_switches()->fast_slots, 0);
	unset_all();
}

Test(dev_switches, bad_values_named)
{
	static const char *const bad[][2] = {
		{ "IOSB_BLK_STAMPS", "1" },	  { "IOSB_THREAD_SLOTS", "0" },
		{ "IOSB_THREAD_SLOTS", "9999999" }, { "IOSB_THREAD_SLOTS", "12x" },
		{ "IOSB_FAST_SLOTS", "3" },	  { "IOSB_FAST_SLOTS", "-1" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";

		unset_all();
		setenv(bad[i][0], bad[i][1], 1);
		cr_assert_eq(dev_switches_read(err, sizeof(err)), -1, "%s=%s", bad[i][0], bad[i][1]);
		cr_assert_not_null(strstr(err, bad[i][0]), "%s", err);
		cr_assert_null(strchr(err, '\n'), "%s", err);
	}
	unset_all();
}
