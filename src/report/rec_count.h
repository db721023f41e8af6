/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events of a recording counted again as the kernel counted them: each
 * call and block request into the cells, the parts of calls and the
 * breakdowns of a snapshot, the very one the maps would have given, so that
 * report_build() and the sinks make the live run's report from it.
 */
#ifndef REC_COUNT_H
#define REC_COUNT_H

#include "opts.h"
#include "recording.h"
#include "snapshot.h"

struct rec_count {
	const struct config *cfg; /* the view: -P, -D, -p, the unit */
	uint64_t unit_ns;	  /* whole units of text histograms; 0: none */
	struct snapshot snap;
	size_t cap; /* of snap.breakdowns.v */
	uint64_t calls, requests;
	int err; /* -ENOMEM once out of memory */
};

void rec_count_init(struct rec_count *rc, const struct config *cfg);

/* One event of a recording (its size checked by rec_next()). */
void rec_count_event(struct rec_count *rc, const void *data, size_t size);

/* The trailer's totals in, the breakdowns in key order: snap is ready. */
void rec_count_finish(struct rec_count *rc, const struct rec_trailer *tr);

void rec_count_free(struct rec_count *rc);

#endif /* REC_COUNT_H */
