/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log-linear histogram buckets, shared by the BPF programs (which fill them)
 * and user space (which reads bounds and percentiles from them), so that both
 * sides compute the very same index.
 *
 * Values below 2^HIST_SUB_BITS ns get a bucket each. Above, every power of two
 * [2^e, 2^(e+1)) is split into 2^HIST_SUB_BITS equal sub-buckets, so a
 * bucket's width is at most 1/8 of its lower bound: the midpoint of a bucket
 * is within 6.25% of any value in it. Values of 2^HIST_MAX_EXP ns (about 18
 * minutes) and more share one last, open-ended bucket of their own.
 */
#ifndef HIST_BUCKET_H
#define HIST_BUCKET_H

#define HIST_SUB_BITS 3
#define HIST_SUB (1U << HIST_SUB_BITS)
#define HIST_MAX_EXP 40
#define HIST_NR_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 1) * HIST_SUB + 1)

/* Index of the most significant set bit of v (v > 0), by shifts, no loop. */
static inline __u32 hist_msb(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xFFFF) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xFF) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xF) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (__u32)(v >> 1);
	return r;
}

static inline __u32 hist_bucket(__u64 ns)
{
	__u32 e;

	if (ns < HIST_SUB)
		return (__u32)ns;
	e = hist_msb(ns);
	if (e >= HIST_MAX_EXP)
		return HIST_NR_BUCKETS - 1;
	/* (e - SUB_BITS) full rows below, then the mantissa's top bits. */
	return (e - HIST_SUB_BITS) * HIST_SUB + (__u32)(ns >> (e - HIST_SUB_BITS));
}

/* Whole units by power of two (struct cell_hist's unit_slots); the last
 * slot is open-ended. */
#define UNIT_SLOTS 36

static inline __u32 unit_slot(__u64 units)
{
	__u32 k;

	if (!units)
		return 0;
	k = hist_msb(units) + 1;
	return k < UNIT_SLOTS ? k : UNIT_SLOTS - 1;
}

#endif /* HIST_BUCKET_H */
