/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Switches for the project's tests and benches, read from the environment
 * here and nowhere else (tests/README.md, bench/README.md). They let one
 * kernel exercise a path the tool would not choose on it; a user has no
 * need of them, and the man page does not list them.
 */
#ifndef DEV_SWITCHES_H
#define DEV_SWITCHES_H

#include <stdbool.h>
#include <stddef.h>

struct dev_switches {
	/* IOSB_BLK_STAMPS=0: the block layer's programs keyed by request
	 * even where the kernel stamps requests (bpf/blk_stamped.bpf.h). */
	bool blk_keyed;
	/* IOSB_THREAD_SLOTS=N: thread state in an LRU hash of N entries even
	 * where task storage works (0: unset). */
	long hash_slots;
	/* IOSB_FAST_SLOTS=N: N fast slots in front of task storage, a power
	 * of 2 up to FAST_SLOTS (FAST_SLOTS when unset). */
	long fast_slots;
};

/*
 * Reads the switches from the environment. Returns 0, or -1 with one line
 * in err naming the switch whose value is not understood.
 */
int dev_switches_read(char *err, size_t errsz);

/* The switches read by dev_switches_read(); the defaults before it. */
const struct dev_switches *dev_switches(void);

#endif /* DEV_SWITCHES_H */
