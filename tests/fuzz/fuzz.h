/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer targets share: a cursor over the input bytes, each
 * take_*() consuming what it returns (zeros once the input runs out), and a
 * check that aborts, so that libFuzzer keeps the input as a crash.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t take_u8(struct fuzz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static inline uint64_t take_u64(struct fuzz_in *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | take_u8(in);
	return v;
}

/* Up to max - 1 bytes, NUL-terminated; the length comes from the input. */
static inline void take_str(struct fuzz_in *in, char *buf, size_t max)
{
	size_t len = take_u8(in) % max;

	if (len > in->n)
		len = in->n;
	memcpy(buf, in->p, len);
	buf[len] = '\0';
	in->p += len;
	in->n -= len;
}

#define FUZZ_CHECK(cond, ...)                                                      \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "fuzz check failed: %s: ", #cond);         \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			abort();                                                   \
		}                                                                  \
	} while (0)

#endif /* FUZZ_H */
