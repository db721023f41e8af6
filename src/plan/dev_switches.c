// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "dev_switches.h"
#include "iostackbreak.h"

static struct dev_switches switches = {
	.fast_slots = FAST_SLOTS,
};

/* A whole number from lo to hi in name's value, into *n; -1 if not. */
static int read_number(const char *name, long lo, long hi, long *n)
{
	const char *s = getenv(name);
	char *end;

	if (!s)
		return 0;
	errno = 0;
	*n = strtol(s, &end, 10);
	return errno || end == s || *end || *n < lo || *n > hi ? -1 : 0;
}

int dev_switches_read(char *err, size_t errsz)
{
	const char *stamps = getenv("IOSB_BLK_STAMPS");

	if (stamps && strcmp(stamps, "0")) {
		snprintf(err, errsz,
			 "IOSB_BLK_STAMPS='%s': 0 times block requests with the programs keyed "
			 "by request; unset it for the default",
			 stamps);
		return -1;
	}
	switches.blk_keyed = stamps != NULL;
	if (read_number("IOSB_THREAD_SLOTS", 1, MAX_THREADS, &switches.hash_slots)) {
		snprintf(err, errsz,
			 "IOSB_THREAD_SLOTS='%s': give a number of thread slots from 1 to %d, "
			 "or unset it",
			 getenv("IOSB_THREAD_SLOTS"), MAX_THREADS);
		return -1;
	}
	if (read_number("IOSB_FAST_SLOTS", 0, FAST_SLOTS, &switches.fast_slots) ||
	    (switches.fast_slots & (switches.fast_slots - 1))) {
		snprintf(err, errsz,
			 "IOSB_FAST_SLOTS='%s': give 0, or a power of 2 up to %d fast thread "
			 "slots, or unset it",
			 getenv("IOSB_FAST_SLOTS"), FAST_SLOTS);
		return -1;
	}
	return 0;
}

const struct dev_switches *dev_switches(void)
{
	return &switches;
}
