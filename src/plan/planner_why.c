// SPDX-License-Identifier: GPL-2.0
/*
 * The planner's part for why a split call waited and what it did to the
 * page cache (bpf/why.bpf.c): each needs its tracepoints, and calls split
 * into parts with their off-CPU parts. A kernel without the tracepoints
 * keeps the time where it was (blocked, or a layer's self time), and
 * --plan says so.
 */
#include <string.h>
#include <linux/types.h>
#include "planner.h"

static const struct {
	const char *name; /* as --plan prints it */
	const char *category, *enter, *exit_;
	const char *without; /* what a kernel without them shows */
} whys[NR_WHYS] = {
	[WHY_LOCK] = { "lock", "lock", "contention_begin", "contention_end",
		       "no lock:contention_begin/end (Linux 5.19+): lock waits stay in "
		       "blocked and spinning in self time" },
	[WHY_JOURNAL] = { "journal", "jbd2", "jbd2_start_commit", "jbd2_end_commit",
			  "no jbd2:jbd2_start_commit/end_commit: journal waits stay in blocked" },
	[WHY_CACHE] = { "cache", "filemap", "mm_filemap_add_to_page_cache", NULL,
			"no filemap:mm_filemap_add_to_page_cache: cache_miss_pages is 0" },
	[WHY_READAHEAD] = { "ra", "readahead", "page_cache_sync_ra", "page_cache_async_ra",
			    "no readahead:page_cache_sync_ra/async_ra (Linux 6.18+; not in "
			    "6.1 or 6.12): readahead_pages not counted (null)" },
	[WHY_WRITEBACK] = { "wb", "ext4", "ext4_writepages_result", NULL,
			    "no ext4:ext4_writepages_result (ext4 not loaded): writeback_pages is "
			    "0" },
	[WHY_THROTTLE] = { "throttle", "writeback", "balance_dirty_pages", NULL,
			   "no writeback:balance_dirty_pages: dirty throttling stays in io_wait" },
};

void plan_why(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	for (unsigned int w = 0; w < NR_WHYS; w++) {
		bool pages = w == WHY_CACHE || w == WHY_READAHEAD || w == WHY_WRITEBACK;

		plan->why[w] = false;
		if (plan->split_layer < 0) {
			plan->why_not[w] = "calls are not split into parts (--no-parts, or no "
					   "layer of threads traced)";
		} else if (!pages && !cfg->offcpu) {
			plan->why_not[w] = "--no-offcpu: waits count as self time";
		} else if (!caps->tracepoint_exists(caps->ctx, whys[w].category, whys[w].enter) ||
			   (whys[w].exit_ &&
			    !caps->tracepoint_exists(caps->ctx, whys[w].category, whys[w].exit_))) {
			plan->why_not[w] = whys[w].without;
		} else if (w == WHY_READAHEAD && !plan->why[WHY_CACHE]) {
			plan->why_not[w] = "readahead pages are counted among cache misses, "
					   "which are not traced";
		} else {
			plan->why[w] = true;
			plan->why_not[w] = NULL;
		}
	}
	/*
	 * Before block_io_start a request is first seen at block_rq_insert:
	 * a commit's log blocks have merged in the plug by then (and the bio
	 * merges count them again), and its commit block goes to the flush
	 * machinery before insert, so neither its bytes nor its flushes could
	 * be told exactly.
	 */
	plan->journal_blk = false;
	if (!plan->why[WHY_JOURNAL])
		plan->journal_blk_not = "the journal part is not traced";
	else if (!plan->blk_origin)
		plan->journal_blk_not = "the blk layer does not see requests start (add blk to -T)";
	else if (strcmp(plan->blk_origin, "block_io_start"))
		plan->journal_blk_not =
		    "no block:block_io_start (Linux 6.5+): at block_rq_insert a commit's blocks "
		    "have merged and its commit block has gone to the flush machinery";
	else
		plan->journal_blk = true;
}

void plan_why_print(const struct plan *plan, FILE *out)
{
	for (unsigned int w = 0; w < NR_WHYS; w++) {
		bool raw = w == WHY_LOCK || w == WHY_JOURNAL;
		const char *src = !plan->why[w] ? "-"
				  : !raw	? "tracepoint"
				  : plan->btf	? "tp_btf"
						: "raw_tp";

		fprintf(out, "%-8s %-8s %-10s ", "parts", whys[w].name, src);
		if (plan->why[w])
			fprintf(out, "%s:%s%s%s\n", whys[w].category, whys[w].enter,
				whys[w].exit_ ? "," : "", whys[w].exit_ ? whys[w].exit_ : "");
		else
			fprintf(out, "skipped: %s\n", plan->why_not[w]);
	}
	fprintf(out, "%-8s %-8s %-10s ", "parts", "jreqs", !plan->journal_blk ? "-" : plan->btf ? "tp_btf" : "raw_tp");
	if (plan->journal_blk)
		fprintf(out, "the commits' requests from block:%s\n", plan->blk_origin);
	else
		fprintf(out, "skipped: %s\n", plan->journal_blk_not);
}
