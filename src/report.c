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

/* A run of skipped cells sharing a reason: "vfs" or "ext4 read/write/open". */
struct skip_unit {
	char label[64];
	const char *why;
	unsigned int layer, nops;
};

void report_skipped_text(FILE *out, const struct plan *plan)
{
	struct skip_unit units[NR_LAYERS * NR_OPS];
	unsigned int n = 0;
	bool printed[NR_LAYERS * NR_OPS] = {};

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		unsigned int first = n, nops = layer_nr_ops(layer);

		for (unsigned int op = 0; op < nops; op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];
			unsigned int u;

			if (!cp->wanted || cp->src != SRC_NONE)
				continue;
			for (u = first; u < n && strcmp(units[u].why, cp->why); u++)
				;
			if (u == n) {
				snprintf(units[n].label, sizeof(units[n].label), "%s %s",
					 layer_name(layer), op_name(layer, op));
				units[n].why = cp->why;
				units[n].layer = layer;
				units[n++].nops = 1;
				continue;
			}
			size_t used = strlen(units[u].label);

			snprintf(units[u].label + used, sizeof(units[u].label) - used, "/%s",
				 op_name(layer, op));
			units[u].nops++;
		}
		/* Every op of the layer, for one reason: just the layer's name. */
		if (n == first + 1 && units[first].nops == nops)
			snprintf(units[first].label, sizeof(units[first].label), "%s",
				 layer_name(layer));
	}
	/* One line per reason, naming everything it keeps out. */
	for (unsigned int i = 0; i < n; i++) {
		if (printed[i])
			continue;
		fprintf(out, "iostackbreak: skipping %s", units[i].label);
		for (unsigned int j = i + 1; j < n; j++) {
			if (!printed[j] && !strcmp(units[j].why, units[i].why)) {
				fprintf(out, ", %s", units[j].label);
				printed[j] = true;
			}
		}
		fprintf(out, ": %s\n", units[i].why);
	}
}

bool report_layer_broken_down(const struct report *r, unsigned int layer)
{
	if (!r->breakdowns)
		return false;
	if (r->by_pid)
		return true;
	return layer == LAYER_BLK && (r->by_disk || r->by_flags);
}

const char *drop_reason_name(unsigned int reason)
{
	static const char *const names[NR_DROP_REASONS] = {
		[DROP_THREAD_MAP_FULL] = "thread_map_full",
		[DROP_RQ_MAP_FULL] = "request_map_full",
		[DROP_BREAKDOWN_MAP_FULL] = "breakdown_map_full",
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
