// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "layers.h"
#include "report.h"

double ns_to_unit(uint64_t ns, enum unit unit)
{
	switch (unit) {
	case UNIT_US:
		return (double)ns / 1e3;
	case UNIT_MS:
		return (double)ns / 1e6;
	default:
		return (double)ns;
	}
}

void format_iso8601(const struct timespec *ts, char *buf, size_t sz)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sz, "%s.%03ldZ", base, ts->tv_nsec / 1000000);
}

void report_skipped_text(FILE *out, const struct plan *plan)
{
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		unsigned int nops = layer_nr_ops(layer), skipped = 0;
		const char *why = NULL;
		bool same = true;

		for (unsigned int op = 0; op < nops; op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];

			if (!cp->wanted || cp->src != SRC_NONE)
				continue;
			if (why && strcmp(why, cp->why))
				same = false;
			why = cp->why;
			skipped++;
		}
		if (!skipped)
			continue;
		/* One line per layer when all its ops share the reason. */
		if (skipped == nops && same) {
			fprintf(out, "iostackbreak: skipping %s: %s\n", layer_name(layer), why);
			continue;
		}
		for (unsigned int op = 0; op < nops; op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];

			if (cp->wanted && cp->src == SRC_NONE)
				fprintf(out, "iostackbreak: skipping %s %s: %s\n", layer_name(layer),
					op_name(layer, op), cp->why);
		}
	}
}

bool report_layer_split(const struct report *r, unsigned int layer)
{
	if (!r->splits)
		return false;
	if (r->split_pid)
		return true;
	return layer == LAYER_BLK && (r->split_disk || r->split_flags);
}

const char *drop_reason_name(unsigned int reason)
{
	static const char *const names[NR_DROP_REASONS] = {
		[DROP_THREAD_MAP_FULL] = "thread_map_full",
		[DROP_RQ_MAP_FULL] = "request_map_full",
		[DROP_SPLIT_MAP_FULL] = "breakdown_map_full",
	};

	return reason < NR_DROP_REASONS ? names[reason] : "?";
}

uint64_t report_layer_events(const struct report *r, unsigned int layer)
{
	uint64_t n = 0;

	for (unsigned int op = 0; op < NR_OPS; op++)
		n += r->cells[layer][op].count;
	return n;
}
