// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cells.h"
#include "knobs.h"
#include "stacks.h"
#include "iostackbreak.skel.h"

typedef struct iostackbreak_bpf__rodata rodata_t;

/*
 * The options that are a global as they are: (config field, global). The
 * rest of knobs_set() sets the globals that need more than the option.
 */
#define SAME_AS_OPTION(X)                                                                          \
	X(tid, targ_tid)                                                                           \
	X(per_process, per_process)                                                                \
	X(per_disk, per_disk)                                                                      \
	X(per_flags, per_flags)                                                                    \
	X(per_cgroup, per_cgroup)                                                                  \
	X(queued, blk_queued)                                                                      \
	X(all_fds, all_fds)

#define SAME_SIZE(field, global)                                                                   \
	_Static_assert(sizeof(((struct config *)0)->field) == sizeof(((rodata_t *)0)->global),     \
		       #field " and its global " #global " differ in size");
SAME_AS_OPTION(SAME_SIZE)

static const struct {
	size_t field, global, size;
} same_as_option[] = {
#define ROW(field, global)                                                                         \
	{ offsetof(struct config, field), offsetof(rodata_t, global),                              \
	  sizeof(((struct config *)0)->field) },
	SAME_AS_OPTION(ROW)
};

_Static_assert(MAX_FILES <= MAX_FILE_FILTER, "--file takes more files than the kernel holds");

bool knobs_follow_children(const struct config *cfg)
{
	return cfg->command ? !cfg->no_children : cfg->children;
}

/* Which cell each traced syscall number belongs to, for the raw pair. */
static void set_syscall_numbers(rodata_t *ro, const struct plan *plan)
{
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		const struct cell_plan *cp = &plan->cells[LAYER_SYSCALL][op];

		if (cp->src != METHOD_TP_BTF && cp->src != METHOD_RAW_TP)
			continue;
		for (unsigned int i = 0; i < cp->nr_targets; i++) {
			int nr = cell_targets[cp->target_ids[i]].nr;

			if (nr >= 0 && nr < SYSNR_SLOTS) {
				ro->sysnr_op[nr] = (__u8)(op + 1);
				ro->sysnr_args[nr] = (__u8)cell_targets[cp->target_ids[i]].args;
			}
		}
	}
}

/* Events (--slower, --trace), sent for calls of the root layer, and the
 * file filter (--file). */
static void set_events(struct iostackbreak_bpf *skel, const struct config *cfg,
		       const struct targets *tg, const struct plan *plan)
{
	rodata_t *ro = skel->rodata;
	/* --record is --trace at threshold 0 written to a file: every call,
	 * slice and request goes up, and every block request besides. */
	bool every = cfg->trace || cfg->record;
	bool events = (cfg->slower || every) &&
		      (plan->root_layer >= 0 || plan->cells[LAYER_IO_URING][0].src != METHOD_NONE ||
		       plan->cells[LAYER_AIO][0].src != METHOD_NONE ||
		       plan->cells[LAYER_FAULT][0].src != METHOD_NONE);

	ro->events_on = events;
	ro->trace_on = events && every;
	ro->record_on = cfg->record;
	ro->full_path = events && cfg->full_path;
	/* With --trace every call goes up: only its end says what to keep. */
	ro->slower_ns = every ? 0 : cfg->slower_ns;
	ro->want_args = events || cfg->nr_files;
	ro->nr_files = cfg->nr_files;
	for (unsigned int i = 0; i < cfg->nr_files; i++)
		ro->targ_files[i] = tg->files[i];
	if (events || cfg->record)
		bpf_map__set_max_entries(skel->maps.events, every ? 64U << 20 : 16U << 20);
	else
		bpf_map__set_max_entries(skel->maps.call_blk, 1);
	/* A call's bios by device: calls of threads, the bio layer traced. */
	ro->bio_calls =
	    events && plan->root_layer >= 0 && plan->cells[LAYER_BIO][0].src != METHOD_NONE;
	if (!ro->bio_calls) {
		bpf_map__set_max_entries(skel->maps.call_bio, 1);
		bpf_map__set_max_entries(skel->maps.bio_calls_at, 1);
	}
}

/*
 * -K, -U: the stack maps sized from --max-stacks. A key holds up to two
 * stacks, and the stack map refuses a stack whose bucket another holds
 * (counted as lost): four buckets a key keep such losses rare.
 */
static void set_stacks(struct iostackbreak_bpf *skel, const struct config *cfg,
		       const struct plan *plan, bool blk)
{
	rodata_t *ro = skel->rodata;
	__u32 keys = cfg->max_stacks ? cfg->max_stacks : DEFAULT_MAX_STACKS;
	long page = sysconf(_SC_PAGESIZE);

	ro->stacks_kernel = blk && !cfg->call_stacks && cfg->kstack;
	ro->stacks_user = blk && !cfg->call_stacks && cfg->ustack;
	ro->stacks_calls = cfg->call_stacks && plan->root_layer >= 0;
	ro->stacks_ops = cfg->stack_ops ? cfg->stack_ops : ~0U;
	ro->ustack_mode = cfg->ustack ? cfg->ustack_mode : USTACK_FP;
	ro->ustack_size = cfg->ustack_size ? cfg->ustack_size : DEFAULT_USTACK_SIZE;
	/* A ring buffer is a whole number of pages (64 KiB on some arm64). */
	if (page > 4096) {
		bpf_map__set_max_entries(skel->maps.stack_proc_news, (__u32)page);
		bpf_map__set_max_entries(skel->maps.ustack_snaps, (__u32)page);
	}
	if (!ro->stacks_kernel && !ro->stacks_user && !ro->stacks_calls)
		return;
	/*
	 * Copies of user stacks: 8 MiB hold about a thousand of 8 KiB, a
	 * burst that user space, unwinding each in tens of microseconds,
	 * drains before it fills; what does not fit is counted.
	 */
	if (cfg->ustack && cfg->ustack_mode != USTACK_FP)
		bpf_map__set_max_entries(skel->maps.ustack_snaps, 8U << 20);
	if (cfg->ustack && cfg->ustack_mode == USTACK_AUTO)
		bpf_map__set_max_entries(skel->maps.ustack_modes, 4096);
	/* A message of 16 bytes per new key: room for a burst of 4096. */
	if (page < 65536)
		bpf_map__set_max_entries(skel->maps.stack_proc_news, 65536);
	bpf_map__set_max_entries(skel->maps.stack_counts, keys);
	bpf_map__set_max_entries(skel->maps.stack_traces, keys * 4);
}

/*
 * --pattern: the call level where the syscall layer times reads or writes
 * as the root (its slot holds their file and position: want_args), the
 * block level where blk is traced.
 */
static void set_pattern(rodata_t *ro, const struct config *cfg, const struct plan *plan)
{
	ro->pattern_calls = cfg->pattern && plan->root_layer == LAYER_SYSCALL &&
			    (plan->cells[LAYER_SYSCALL][FSOP_READ].src != METHOD_NONE ||
			     plan->cells[LAYER_SYSCALL][FSOP_WRITE].src != METHOD_NONE);
	ro->pattern_blk = cfg->pattern && plan->cells[LAYER_BLK][0].src != METHOD_NONE;
	ro->pattern_bio = cfg->pattern && plan->cells[LAYER_BIO][0].src != METHOD_NONE;
	if (ro->pattern_calls)
		ro->want_args = true;
}

/* Maps a plan does not use shrink to one entry: memory is the kernel's. */
static void size_maps(struct iostackbreak_bpf *skel, const struct config *cfg,
		      const struct plan *plan, bool task_storage, long hash_slots, long fast_slots)
{
	const rodata_t *ro = skel->rodata;
	bool blk = plan->cells[LAYER_BLK][0].src != METHOD_NONE;

	if (plan->split_layer < 0) {
		bpf_map__set_max_entries(skel->maps.call_parts, 1);
		bpf_map__set_max_entries(skel->maps.call_ops, 1);
	}
	if (!ro->follow_children)
		bpf_map__set_max_entries(skel->maps.followed, 1);
	if (cfg->max_keys) {
		bpf_map__set_max_entries(skel->maps.breakdown_cells, cfg->max_keys);
		bpf_map__set_max_entries(skel->maps.cgroup_paths, cfg->max_keys);
	}
	if (!config_breaks_down(cfg))
		bpf_map__set_max_entries(skel->maps.breakdown_cells, 1);
	if (cfg->max_keys)
		bpf_map__set_max_entries(skel->maps.patterns, cfg->max_keys);
	if (!ro->pattern_calls && !ro->pattern_blk && !ro->pattern_bio)
		bpf_map__set_max_entries(skel->maps.patterns, 1);
	if (!ro->pattern_calls)
		bpf_map__set_max_entries(skel->maps.pattern_files, 1);
	if (!ro->pattern_blk && !ro->pattern_bio)
		bpf_map__set_max_entries(skel->maps.pattern_disks, 1);
	if (!ro->pattern_blk || !ro->trace_on)
		bpf_map__set_max_entries(skel->maps.pattern_rqs, 1);
	if (!cfg->per_cgroup)
		bpf_map__set_max_entries(skel->maps.cgroup_paths, 1);
	/* One program per request keys nothing by request. */
	if (!blk || plan->blk_stamped)
		bpf_map__set_max_entries(skel->maps.rq_starts, 1);
	if (plan->cells[LAYER_IO_URING][0].src == METHOD_NONE)
		bpf_map__set_max_entries(skel->maps.uring_starts, 1);
	if (!plan->wb)
		bpf_map__set_max_entries(skel->maps.dirtied, 1);
	if (!ro->uring_blk)
		bpf_map__set_max_entries(skel->maps.uring_issuing_map, 1);
	if (!plan->uring_parts) {
		bpf_map__set_max_entries(skel->maps.uring_parts, 1);
		bpf_map__set_max_entries(skel->maps.uring_ops, 1);
	}
	if (plan->cells[LAYER_AIO][0].src == METHOD_NONE) {
		bpf_map__set_max_entries(skel->maps.aio_starts, 1);
		bpf_map__set_max_entries(skel->maps.aio_threads, 1);
	}
	if (!plan->aio_parts) {
		bpf_map__set_max_entries(skel->maps.aio_parts, 1);
		bpf_map__set_max_entries(skel->maps.aio_ops, 1);
	}
	if (plan->cells[LAYER_FAULT][0].src == METHOD_NONE) {
		bpf_map__set_max_entries(skel->maps.faults, 1);
		bpf_map__set_max_entries(skel->maps.fault_ops, 1);
	}
	if (plan->cells[LAYER_BIO][0].src == METHOD_NONE)
		bpf_map__set_max_entries(skel->maps.bio_starts, 1);
	if (plan->cells[LAYER_BIO][0].src == METHOD_NONE || (!cfg->per_disk && !ro->bio_calls))
		bpf_map__set_max_entries(skel->maps.bio_remapped, 1);
	if (task_storage || !plan_traces_threads(plan)) {
		bpf_map__set_max_entries(skel->maps.thread_starts, 1);
		bpf_map__set_max_entries(skel->maps.threads_seen, 1);
	} else if (hash_slots) {
		bpf_map__set_max_entries(skel->maps.thread_starts, (__u32)hash_slots);
	}
	bpf_map__set_max_entries(skel->maps.fast_slots, fast_slots > 0 ? (__u32)fast_slots : 1);
	if (!task_storage) {
		/* A placeholder the dead task-storage branch can name on any kernel. */
		bpf_map__set_type(skel->maps.task_starts, BPF_MAP_TYPE_ARRAY);
		bpf_map__set_map_flags(skel->maps.task_starts, 0);
		bpf_map__set_max_entries(skel->maps.task_starts, 1);
	}}

void knobs_set(struct iostackbreak_bpf *skel, const struct config *cfg, const struct targets *tg,
	       const struct plan *plan, bool task_storage, long hash_slots, long fast_slots)
{
	rodata_t *ro = skel->rodata;
	bool blk = plan->cells[LAYER_BLK][0].src != METHOD_NONE;

	for (unsigned int i = 0; i < sizeof(same_as_option) / sizeof(same_as_option[0]); i++)
		memcpy((char *)ro + same_as_option[i].global,
		       (const char *)cfg + same_as_option[i].field, same_as_option[i].size);
	/* Filters: what the options resolved to. */
	for (unsigned int i = 0; i < tg->nr_tgids && i < MAX_PID_FILTER; i++)
		ro->targ_tgids[i] = (__u32)tg->tgids[i];
	ro->nr_targ_tgids = tg->nr_tgids;
	if (cfg->comm) {
		ro->filter_comm = true;
		strncpy((char *)ro->targ_comm, cfg->comm, COMM_LEN - 1);
	}
	ro->filter_cgroup = tg->cgroup_fd >= 0;
	ro->filter_dev = cfg->disk != NULL;
	ro->targ_dev = tg->dev;
	ro->follow_children = knobs_follow_children(cfg);
	/* Calls are split, and sent as events, at the root layer (planner). */
	ro->split_calls = plan->split_layer >= 0;
	ro->root_layer = (__u32)plan->root_layer;
	ro->timed_layers = plan_timed_layers(plan);
	set_events(skel, cfg, tg, plan);
	set_pattern(ro, cfg, plan);
	ro->blk_origin_attached = blk && plan->blk_origin;
	ro->blk_origin_sees_all =
	    blk && plan->blk_origin && blk_tp_by_name(plan->blk_origin) == BLK_TP_IO_START;
	ro->blk_rq_argn = plan->blk_rq_q_arg ? 1 : 0;
	ro->blk_preflush_bios = blk && plan->blk_preflush_bios;
	ro->uring_complete_fields = plan->uring_complete_fields;
	ro->uring_split = plan->uring_parts;
	ro->uring_blk = blk && plan->uring_blk;
	ro->uring_iowq_run = plan->uring_iowq_run;
	ro->aio_split = plan->aio_parts;
	ro->aio_blk = blk && plan->aio_blk;
	ro->fault_blk = blk && plan->fault_blk;
	ro->fault_page_shift = (__u32)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	ro->blk_stamped = blk && plan->blk_stamped;
	ro->bio_queue_argn = plan->bio_q_arg ? 1 : 0;
	ro->use_task_storage = task_storage;
	ro->use_fast_slots = fast_slots > 0;
	ro->fast_slots_mask = fast_slots > 0 ? (__u32)fast_slots - 1 : 0;
	ro->rdonly_cast = plan->rdonly_cast;
	ro->journal_on = plan->why[WHY_JOURNAL];
	ro->journal_blk = plan->journal_blk;
	/* Written back for the dirtier: every dirtier is recorded when no
	 * task or file filter picks some (the rest are "unknown"). */
	ro->wb_on = plan->wb;
	ro->wb_all_dirtiers = plan->wb && !tg->nr_tgids && !cfg->tid && !cfg->comm &&
			      tg->cgroup_fd < 0 && !cfg->nr_files;
	/* Whole units for the text histograms (--live ends with one). */
	ro->unit_ns = config_count_unit_ns(cfg);
	set_syscall_numbers(ro, plan);
	set_stacks(skel, cfg, plan, blk);

	size_maps(skel, cfg, plan, task_storage, hash_slots, fast_slots);
}
