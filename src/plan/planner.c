// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <string.h>
#include "cells.h"
#include "layers.h"
#include "planner.h"

const char *method_name(enum attach_method src)
{
	switch (src) {
	case METHOD_TRACEPOINT:
		return "tracepoint";
	case METHOD_TP_BTF:
		return "tp_btf";
	case METHOD_RAW_TP:
		return "raw_tp";
	case METHOD_FENTRY:
		return "fentry";
	case METHOD_KPROBE:
		return "kprobe";
	default:
		return "-";
	}
}

static void why_add(struct cell_plan *cp, const char *fmt, ...)
{
	size_t used = strlen(cp->why);
	va_list ap;

	if (used && used + 2 < sizeof(cp->why)) {
		strcpy(cp->why + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(cp->why + used, sizeof(cp->why) - used, fmt, ap);
	va_end(ap);
}

/* The name of a cell's best function or syscall, for messages. */
static const char *cell_first_target(unsigned int layer, unsigned int op)
{
	unsigned int id;

	if (!cell_targets_of(layer, op, layer == LAYER_SYSCALL ? TARGET_SYSCALL : TARGET_KFUNC, &id,
			     1))
		return "?";
	return cell_targets[id].name;
}

static bool tp_pair_exists(const struct kcaps *caps, const char *category, const char *enter,
			   const char *exit_)
{
	return caps->tracepoint_exists(caps->ctx, category, enter) &&
	       caps->tracepoint_exists(caps->ctx, category, exit_);
}

/* The kind of target a source attaches to, in a cell of this layer. */
static bool is_raw_source(enum attach_method src);

static enum target_kind source_target_kind(unsigned int layer, enum attach_method src)
{
	if (layer == LAYER_SYSCALL)
		return TARGET_SYSCALL;
	return src == METHOD_TRACEPOINT ? TARGET_TP : TARGET_KFUNC;
}

/* Is this target there for this source on this kernel? */
static bool target_exists(const struct kcaps *caps, const struct cell_target *t,
			  enum attach_method src)
{
	char name[128], enter[96], exit_[96];

	if (is_raw_source(src))
		return t->nr >= 0 && t->nr < SYSNR_SLOTS &&
		       tp_pair_exists(caps, "raw_syscalls", "sys_enter", "sys_exit");
	if (src == METHOD_TRACEPOINT && t->kind == TARGET_TP)
		return tp_pair_exists(caps, t->category, t->name, t->exit_tp);
	if (src == METHOD_TRACEPOINT) {
		snprintf(enter, sizeof(enter), "sys_enter_%s", t->name);
		snprintf(exit_, sizeof(exit_), "sys_exit_%s", t->name);
		return tp_pair_exists(caps, "syscalls", enter, exit_);
	}
	if (t->kind == TARGET_SYSCALL) {
		if (!caps->syscall_prefix)
			return false;
		snprintf(name, sizeof(name), "%s%s", caps->syscall_prefix, t->name);
	} else {
		snprintf(name, sizeof(name), "%s", t->name);
	}
	return src == METHOD_FENTRY ? caps->func_in_btf(caps->ctx, name)
				    : caps->func_in_kallsyms(caps->ctx, name);
}

/* Fills targets with the candidates the kernel has for a source. */
static unsigned int find_targets(const struct kcaps *caps, unsigned int layer, unsigned int op,
				 enum attach_method src, struct cell_plan *cp)
{
	unsigned int ids[MAX_TARGETS];
	unsigned int n =
	    cell_targets_of(layer, op, source_target_kind(layer, src), ids, MAX_TARGETS);

	cp->nr_targets = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct cell_target *t = &cell_targets[ids[i]];

		if (!target_exists(caps, t, src))
			continue;
		cp->target_ids[cp->nr_targets] = ids[i];
		cp->tgt_src[cp->nr_targets] = src;
		cp->targets[cp->nr_targets++] = t->name;
	}
	return cp->nr_targets;
}

/* Sources a cell offers, best first, for auto mode. */
static unsigned int cell_sources(unsigned int layer, unsigned int op, enum attach_method *out)
{
	unsigned int n = 0;

	/*
	 * Syscalls: the raw sys_enter/sys_exit pair first. Measured on our
	 * hosts (README, bench/sources.py) it costs less per traced call than
	 * a tracepoint pair per syscall (135 ns against 158), and has 2 links
	 * to attach and detach instead of two per syscall of cells.def (32
	 * then: Ctrl-C to exit in 7 ms against 1.3 s); but it runs on every system call of the
	 * machine: +51 ns on an untraced one, against +11 (--plan says so).
	 */
	if (layer == LAYER_SYSCALL) {
		out[n++] = METHOD_TP_BTF;
		out[n++] = METHOD_RAW_TP;
		out[n++] = METHOD_TRACEPOINT;
	}
	out[n++] = METHOD_FENTRY;
	out[n++] = METHOD_KPROBE;
	/* A cell's own tracepoints: a last resort, they see less (cells.def). */
	if (layer != LAYER_SYSCALL &&
	    cell_targets_of(layer, op, TARGET_TP, &(unsigned int){ 0 }, 1))
		out[n++] = METHOD_TRACEPOINT;
	return n;
}

static bool is_raw_source(enum attach_method src)
{
	return src == METHOD_TP_BTF || src == METHOD_RAW_TP;
}

/* Did --attach force a method other than src? (raw: tp_btf or raw_tp) */
static bool forced_otherwise(enum attach_method forced, enum attach_method src)
{
	if (forced == METHOD_NONE)
		return false;
	if (forced == METHOD_TP_BTF)
		return !is_raw_source(src);
	return src != forced;
}

/* Why a source cannot serve at all on this kernel, or NULL if it can. */
static const char *source_unavailable(const struct kcaps *caps, enum attach_method src)
{
	switch (src) {
	case METHOD_FENTRY:
		if (!caps->btf)
			return "no kernel BTF (/sys/kernel/btf/vmlinux)";
		return caps->fentry ? NULL : caps->fentry_why;
	case METHOD_KPROBE:
		return caps->kprobes ? NULL : caps->kprobe_why;
	case METHOD_TP_BTF:
		return caps->btf ? NULL : "no kernel BTF (/sys/kernel/btf/vmlinux)";
	default:
		return NULL;
	}
}

static void plan_fn_cell(const struct kcaps *caps, const struct config *cfg, unsigned int layer,
			 unsigned int op, struct cell_plan *cp)
{
	enum attach_method srcs[6];
	unsigned int n = cell_sources(layer, op, srcs);
	bool offered = false;

	if (layer_is_fs(layer) && !caps->fs_registered(caps->ctx, layer_name(layer))) {
		why_add(cp,
			"%s is not registered in this kernel (module not loaded? "
			"modprobe %s or mount one)",
			layer_name(layer),
			layer_module(layer) ? layer_module(layer) : layer_name(layer));
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		const char *why;

		if (forced_otherwise(cfg->attach, srcs[i]))
			continue; /* --attach picked another method */
		offered = true;
		why = source_unavailable(caps, srcs[i]);
		if (why) {
			why_add(cp, "%s: %s", method_name(srcs[i]), why);
			continue;
		}
		if (!find_targets(caps, layer, op, srcs[i], cp)) {
			if (srcs[i] == METHOD_TRACEPOINT)
				why_add(cp, "tracepoint: none in this kernel");
			else if (is_raw_source(srcs[i]))
				why_add(cp, "%s: no raw_syscalls:sys_enter/sys_exit in this kernel",
					method_name(srcs[i]));
			else
				why_add(cp, "%s: none of its functions (%s...) in this kernel",
					method_name(srcs[i]), cell_first_target(layer, op));
			continue;
		}
		cp->src = srcs[i];
		if (layer == LAYER_SYSCALL && is_raw_source(cp->src) && cfg->attach == METHOD_NONE)
			why_add(cp,
				"tracepoint: a pair per syscall costs more per traced call "
				"and %u links to attach and detach (seconds at exit); the raw "
				"pair costs untraced syscalls more (bench/sources.py)",
				2 * NR_SYSCALL_TARGETS);
		return;
	}
	if (!offered)
		why_add(cp, "%s has no %s source for %s", layer_name(layer),
			attach_name(cfg->attach), op_name(layer, op));
}

static bool blk_tp_exists(const struct kcaps *caps, enum blk_tp tp)
{
	return caps->tracepoint_exists(caps->ctx, "block", blk_tp_names[tp]);
}

/*
 * One program per request when the kernel stamps the requests: the time
 * the mode reads is already in them (bpf/blk_stamped.bpf.h). Says which
 * way blk times requests, and why, in plan->blk_timing.
 */
static bool blk_plan_stamped(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	const char *field = cfg->queued ? "rq->start_time_ns" : "rq->io_start_time_ns";
	char why[300] = "not known on this kernel";
	size_t sz = sizeof(plan->blk_timing);

	if (caps->blk_stamped &&
	    caps->blk_stamped(caps->ctx, cfg->disk, cfg->queued, why, sizeof(why))) {
		plan->blk_stamped = true;
		snprintf(plan->blk_timing, sz,
			 "one program per request at block_rq_complete, reading the kernel's %s "
			 "(%s)",
			 field, why);
		return true;
	}
	snprintf(plan->blk_timing, sz,
		 "programs keyed by request, not one per request (which reads %s): %s", field,
		 why);
	return false;
}

/*
 * One blk cell timed by the programs keyed by request: its origin, issue
 * and completion, and the tracepoints that keep its entries right.
 */
static void blk_keyed_cell(const struct kcaps *caps, const struct config *cfg,
			   const struct plan *plan, struct cell_plan *cp, enum attach_method src,
			   bool call_bytes, const char *why)
{
	unsigned int t = 0;

	cp->src = src;
	if (plan->blk_origin)
		cp->targets[t++] = plan->blk_origin;
	/*
	 * Issue marks when the device got the request, and takes the
	 * requests insert never sees (no scheduler). With -Q from
	 * block_io_start neither is needed: two programs a request,
	 * as biolatency -Q, instead of three.
	 */
	if (!(cfg->queued && plan->blk_origin == blk_tp_names[BLK_TP_IO_START]))
		cp->targets[t++] = blk_tp_names[BLK_TP_RQ_ISSUE];
	cp->targets[t++] = blk_tp_names[BLK_TP_RQ_COMPLETE];
	/*
	 * A request the origin saw may be merged into another in the
	 * scheduler and freed without completing: its entry goes then.
	 */
	if (plan->blk_origin && blk_tp_exists(caps, BLK_TP_RQ_MERGE))
		cp->targets[t++] = blk_tp_names[BLK_TP_RQ_MERGE];
	/*
	 * A call's block bytes: a bio that merges into a request
	 * already started adds to it after the origin counted it.
	 */
	if (call_bytes && blk_tp_exists(caps, BLK_TP_BIO_BACKMERGE))
		cp->targets[t++] = blk_tp_names[BLK_TP_BIO_BACKMERGE];
	if (call_bytes && blk_tp_exists(caps, BLK_TP_BIO_FRONTMERGE))
		cp->targets[t++] = blk_tp_names[BLK_TP_BIO_FRONTMERGE];
	if (plan->blk_preflush_bios)
		cp->targets[t++] = blk_tp_names[BLK_TP_GETRQ];
	for (unsigned int i = 0; i < t; i++)
		cp->tgt_src[i] = src;
	cp->nr_targets = t;
	if (why[0])
		why_add(cp, "%s", why);
	if (cfg->queued && !plan->blk_origin)
		why_add(cp, "-Q: no block_io_start or block_rq_insert, timing from issue");
}

/* What the block layer's plan must know of its requests, from the options. */
struct blk_needs {
	bool uring_blk, aio_blk; /* which io_uring or aio request started one */
	bool fault_blk;		 /* which thread's major fault */
	bool call_bytes;	 /* each call's requests and bytes */
	bool submitter;		 /* who submitted each, known where it starts */
};

static struct blk_needs blk_needs_of(const struct config *cfg, const struct plan *plan)
{
	struct blk_needs n;
	/* Whose call a request belongs to, for the parts of calls. */
	bool split_calls = cfg->split_calls && (cfg->layers & THREAD_LAYERS);
	/* -K, -U: a request's stacks are its submitter's, taken at its origin;
	 * a bio joining it later counts its bytes under its own. */
	bool stacks = cfg->kstack || cfg->ustack;

	/* Which io_uring request's issue started a request (its parts and
	 * events; plan_uring ran before, the layers go in order). */
	n.uring_blk = plan->cells[LAYER_IO_URING][0].src != METHOD_NONE &&
		      (plan->uring_parts || cfg->slower || cfg->trace || cfg->record);
	/* And which aio request's submission or worker (plan_aio ran before). */
	n.aio_blk = plan->cells[LAYER_AIO][0].src != METHOD_NONE &&
		    (plan->aio_parts || cfg->slower || cfg->trace || cfg->record);
	/* And which fault (plan_fault ran before). */
	n.fault_blk = plan->cells[LAYER_FAULT][0].src != METHOD_NONE &&
		      (cfg->split_calls || cfg->slower || cfg->trace);
	/* Parts and events (--slower, --trace) give each call its block
	 * requests and bytes. */
	n.call_bytes = split_calls || cfg->slower || cfg->trace || cfg->record || n.uring_blk || n.aio_blk || stacks;
	n.submitter = n.uring_blk || n.aio_blk || n.fault_blk || split_calls || cfg->nr_pids || cfg->command ||
		      cfg->tid || cfg->comm || cfg->cgroup || cfg->per_process || cfg->per_cgroup ||
		      cfg->slower || cfg->trace || cfg->record || cfg->nr_files || stacks;
	return n;
}

/* The programs' source (tp_btf, else raw_tp), and in why what was not had. */
static enum attach_method blk_source(const struct kcaps *caps, const struct config *cfg,
				     char *why, size_t len)
{
	if (cfg->attach == METHOD_FENTRY || cfg->attach == METHOD_KPROBE)
		snprintf(why, len, "%s: the block layer is traced by its tracepoints only",
			 attach_name(cfg->attach));
	if (caps->btf)
		return METHOD_TP_BTF;
	snprintf(why + strlen(why), len - strlen(why), "%stp_btf: no kernel BTF",
		 why[0] ? "; " : "");
	return METHOD_RAW_TP;
}

/* One program per request, at completion, for every op. */
static void plan_blk_stamped(struct plan *plan, enum attach_method src, const char *why)
{
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		struct cell_plan *cp = &plan->cells[LAYER_BLK][op];

		cp->src = src;
		cp->targets[0] = blk_tp_names[BLK_TP_RQ_COMPLETE];
		cp->tgt_src[0] = src;
		cp->nr_targets = 1;
		if (why[0])
			why_add(cp, "%s", why);
	}
}

static void plan_blk(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	struct blk_needs needs = blk_needs_of(cfg, plan);
	enum attach_method src;
	char why[200] = "";

	if (!blk_tp_exists(caps, BLK_TP_RQ_ISSUE) || !blk_tp_exists(caps, BLK_TP_RQ_COMPLETE)) {
		for (unsigned int op = 0; op < NR_BLK_OPS; op++)
			why_add(&plan->cells[LAYER_BLK][op],
				"tracepoint: block:block_rq_issue/complete missing");
		return;
	}
	src = blk_source(caps, cfg, why, sizeof(why));
	plan->blk_rq_q_arg = caps->blk_rq_q_arg;
	if (needs.submitter) {
		snprintf(plan->blk_timing, sizeof(plan->blk_timing),
			 "programs keyed by request, not one per request: a task filter, -P, -G, "
			 "the parts of calls or of io_uring or aio requests, events or --file need "
			 "each request's submitter, known where it starts (and so do -K and -U)");
	} else if (blk_plan_stamped(caps, cfg, plan)) {
		plan_blk_stamped(plan, src, why);
		return;
	}
	plan->uring_blk = needs.uring_blk;
	plan->aio_blk = needs.aio_blk;
	plan->fault_blk = needs.fault_blk;
	/* Who submitted a request is known where it starts, not at issue. */
	if (needs.submitter || cfg->queued) {
		if (blk_tp_exists(caps, BLK_TP_IO_START))
			plan->blk_origin = blk_tp_names[BLK_TP_IO_START];
		else if (blk_tp_exists(caps, BLK_TP_RQ_INSERT))
			plan->blk_origin = blk_tp_names[BLK_TP_RQ_INSERT];
	}
	/*
	 * Before block_io_start (6.5) a PREFLUSH request is never seen where
	 * it starts: the flush queue takes it before insert, and kblockd
	 * sends its flush. Its bio is seen at block_getrq, in the submitter's
	 * context, so that its write and its flush are its submitter's.
	 */
	plan->blk_preflush_bios = needs.submitter &&
				  plan->blk_origin == blk_tp_names[BLK_TP_RQ_INSERT] &&
				  blk_tp_exists(caps, BLK_TP_GETRQ);
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		blk_keyed_cell(caps, cfg, plan, &plan->cells[LAYER_BLK][op], src, needs.call_bytes,
			       why);
}

/*
 * io_uring: its two tracepoints time every op, as blk's do; no fentry or
 * kprobe source would see more (the submission and the posting of the
 * completion are what a request's latency is).
 */
/* Why io-wq-queued is not told apart (plan_uring), in a few words. */
static const char *uring_no_iowq_run(const struct kcaps *caps, const struct config *cfg)
{
	if (cfg->attach != METHOD_NONE && cfg->attach != METHOD_FENTRY)
		return "--attach";
	if (!caps->fentry)
		return caps->fentry_why ? caps->fentry_why : "fentry refused";
	return "not in kernel BTF";
}

static void plan_uring(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	enum attach_method src = caps->btf ? METHOD_TP_BTF : METHOD_RAW_TP;
	const char *missing = NULL;

	bool parts = cfg->split_calls && !caps->uring_parts_other_args;

	/* The two that time requests; the others only split them. */
	plan->uring_submit_tp = uring_tp_names[URING_TP_SUBMIT];
	if (!caps->tracepoint_exists(caps->ctx, "io_uring", plan->uring_submit_tp) &&
	    caps->tracepoint_exists(caps->ctx, "io_uring", "io_uring_submit_sqe"))
		plan->uring_submit_tp = "io_uring_submit_sqe";
	if (!caps->tracepoint_exists(caps->ctx, "io_uring", plan->uring_submit_tp))
		missing = plan->uring_submit_tp;
	else if (!caps->tracepoint_exists(caps->ctx, "io_uring", uring_tp_names[URING_TP_COMPLETE]))
		missing = uring_tp_names[URING_TP_COMPLETE];
	plan->uring_complete_fields = caps->uring_complete_fields;
	for (unsigned int tp = URING_TP_COMPLETE + 1; tp < NR_URING_TPS && parts; tp++)
		parts = caps->tracepoint_exists(caps->ctx, "io_uring", uring_tp_names[tp]);
	plan->uring_parts = parts && !missing;
	/* No tracepoint marks a worker taking a request: fentry, where it
	 * attaches (not with --attach=tracepoint or kprobe). */
	plan->uring_iowq_run = plan->uring_parts && caps->fentry &&
			       (cfg->attach == METHOD_NONE || cfg->attach == METHOD_FENTRY) &&
			       caps->func_in_btf(caps->ctx, "io_wq_submit_work");
	for (unsigned int op = 0; op < NR_URING_OPS; op++) {
		struct cell_plan *cp = &plan->cells[LAYER_IO_URING][op];

		if (missing) {
			why_add(cp,
				"tracepoint: io_uring:%s missing (io_uring is not built in: "
				"CONFIG_IO_URING)",
				missing);
			continue;
		}
		if (cfg->attach == METHOD_FENTRY || cfg->attach == METHOD_KPROBE)
			why_add(cp, "%s: io_uring is traced by its tracepoints only",
				attach_name(cfg->attach));
		if (!caps->btf)
			why_add(cp, "tp_btf: no kernel BTF");
		cp->src = src;
		if (cfg->split_calls && caps->uring_parts_other_args)
			why_add(cp, "parts: io_uring tracepoints that do not take the request first");
		else if (cfg->split_calls && !parts)
			why_add(cp, "parts: io_uring:%s missing", uring_tp_names[NR_URING_TPS - 1]);
		else if (plan->uring_iowq_run)
			why_add(cp, "parts: io-wq-queued ends at fentry on io_wq_submit_work "
				    "(no tracepoint marks a worker taking a request)");
		else if (cfg->split_calls)
			why_add(cp, "parts: io-wq holds its queued time: no fentry on "
				    "io_wq_submit_work (%s)",
				uring_no_iowq_run(caps, cfg));
		for (unsigned int tp = 0; tp < (parts ? NR_URING_TPS : URING_TP_COMPLETE + 1); tp++) {
			cp->targets[cp->nr_targets] =
			    tp == URING_TP_SUBMIT ? plan->uring_submit_tp : uring_tp_names[tp];
			cp->tgt_src[cp->nr_targets++] = src;
		}
	}
}

/* Is a kernel function there for this source (BTF for fentry, kallsyms for
 * kprobes)? */
static bool func_exists(const struct kcaps *caps, enum attach_method src, const char *fn)
{
	return src == METHOD_FENTRY ? caps->func_in_btf(caps->ctx, fn)
				    : caps->func_in_kallsyms(caps->ctx, fn);
}

/*
 * The source of a layer whose ops share programs on kernel functions and
 * have no tracepoint (aio, fault), in cp: fentry, else kprobes, where the
 * nr functions of fns are all there; missing says what a kernel without
 * them lacks, marks what no tracepoint marks.
 */
static void plan_shared_fns(const struct kcaps *caps, const struct config *cfg,
			    unsigned int layer, struct cell_plan *cp, const char *const *fns,
			    unsigned int nr, const char *missing, const char *marks)
{
	static const enum attach_method srcs[] = { METHOD_FENTRY, METHOD_KPROBE };
	bool offered = false;

	for (unsigned int i = 0; i < sizeof(srcs) / sizeof(srcs[0]) && !cp->src; i++) {
		const char *why;
		bool there = true;

		if (forced_otherwise(cfg->attach, srcs[i]))
			continue;
		offered = true;
		why = source_unavailable(caps, srcs[i]);
		if (why) {
			why_add(cp, "%s: %s", method_name(srcs[i]), why);
			continue;
		}
		for (unsigned int f = 0; f < nr; f++)
			there = there && func_exists(caps, srcs[i], fns[f]);
		if (!there) {
			why_add(cp, "%s: %s", method_name(srcs[i]), missing);
			continue;
		}
		cp->src = srcs[i];
	}
	if (!offered)
		why_add(cp, "%s has no %s source: no tracepoint marks %s", layer_name(layer),
			attach_name(cfg->attach), marks);
	for (unsigned int f = 0; f < nr && cp->src; f++)
		cp->targets[cp->nr_targets++] = fns[f];
}

/* The layer's other ops share its first op's plan (and programs). */
static void share_first_cell(struct plan *plan, unsigned int layer)
{
	for (unsigned int op = 1; op < layer_nr_ops(layer); op++) {
		bool wanted = plan->cells[layer][op].wanted;

		plan->cells[layer][op] = plan->cells[layer][0];
		plan->cells[layer][op].wanted = wanted;
	}
}

/*
 * aio: no tracepoint marks an iocb's submission or completion, so fentry,
 * else kprobes, on io_submit_one and aio_complete time every op (their
 * programs are shared by all, as blk's are); aio_fsync_work where it is
 * there for the same source.
 */
static void plan_aio(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	struct cell_plan *cp = &plan->cells[LAYER_AIO][0];
	char missing[96];

	snprintf(missing, sizeof(missing), "no %s/%s in this kernel (CONFIG_AIO off?)",
		 aio_func_names[AIO_FUNC_SUBMIT], aio_func_names[AIO_FUNC_COMPLETE]);
	plan_shared_fns(caps, cfg, LAYER_AIO, cp, aio_func_names, AIO_FUNC_COMPLETE + 1, missing,
			"an aio request");
	if (cp->src) {
		plan->aio_worker =
		    func_exists(caps, cp->src, aio_func_names[AIO_FUNC_FSYNC_WORK]);
		if (plan->aio_worker)
			cp->targets[cp->nr_targets++] = aio_func_names[AIO_FUNC_FSYNC_WORK];
		else
			why_add(cp, "parts: no %s: an fsync's worker time is async",
				aio_func_names[AIO_FUNC_FSYNC_WORK]);
		for (unsigned int t = 0; t < cp->nr_targets; t++)
			cp->tgt_src[t] = cp->src;
		plan->aio_parts = cfg->split_calls;
	}
	share_first_cell(plan, LAYER_AIO);
}

/*
 * Faults: handle_mm_fault is every fault's, user or get_user_pages, and
 * no tracepoint marks its end; fentry/fexit, else kprobes, time every op
 * with one pair of programs.
 */
static void plan_fault(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	struct cell_plan *cp = &plan->cells[LAYER_FAULT][0];
	char missing[96];

	snprintf(missing, sizeof(missing), "no %s in this kernel",
		 fault_func_names[FAULT_FUNC_HANDLE]);
	plan_shared_fns(caps, cfg, LAYER_FAULT, cp, fault_func_names, NR_FAULT_FUNCS, missing,
			"a fault's end");
	if (cp->src)
		cp->tgt_src[0] = cp->src;
	share_first_cell(plan, LAYER_FAULT);
}

/* The bio layer: two tracepoints, a bio's queue and its completion. */
static void plan_bio(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	enum attach_method src = caps->btf ? METHOD_TP_BTF : METHOD_RAW_TP;

	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		struct cell_plan *cp = &plan->cells[LAYER_BIO][op];

		if (!blk_tp_exists(caps, BLK_TP_BIO_QUEUE) ||
		    !blk_tp_exists(caps, BLK_TP_BIO_COMPLETE) ||
		    !blk_tp_exists(caps, BLK_TP_BIO_RQ_COMPLETE)) {
			why_add(cp, "tracepoint: block:block_bio_queue/complete or "
				    "block_rq_complete missing");
			continue;
		}
		/* A request's completion walks its bios with bpf_loop. */
		if (caps->jit_off) {
			why_add(cp, "the BPF JIT is off, and the interpreter runs no bpf_loop, "
				    "which ends the bios of a request (sysctl -w "
				    "net.core.bpf_jit_enable=1)");
			continue;
		}
		cp->src = src;
		/* Completions last: attach_blk() attaches them first. */
		cp->nr_targets = 0;
		/* -D, events: the stack, from the remaps of stacked devices. */
		if ((cfg->per_disk || cfg->slower || cfg->trace || cfg->record) &&
		    blk_tp_exists(caps, BLK_TP_BIO_REMAP))
			cp->targets[cp->nr_targets++] = blk_tp_names[BLK_TP_BIO_REMAP];
		/* The pieces a bio is split into on a request-based disk. */
		if (blk_tp_exists(caps, BLK_TP_BIO_SPLIT))
			cp->targets[cp->nr_targets++] = blk_tp_names[BLK_TP_BIO_SPLIT];
		cp->targets[cp->nr_targets++] = blk_tp_names[BLK_TP_BIO_QUEUE];
		cp->targets[cp->nr_targets++] = blk_tp_names[BLK_TP_BIO_COMPLETE];
		cp->targets[cp->nr_targets++] = blk_tp_names[BLK_TP_BIO_RQ_COMPLETE];
		for (unsigned int i = 0; i < cp->nr_targets; i++)
			cp->tgt_src[i] = src;
		if (cfg->attach == METHOD_FENTRY || cfg->attach == METHOD_KPROBE)
			why_add(cp, "%s: the bio layer is traced by its tracepoints only",
				attach_name(cfg->attach));
		if (!caps->btf)
			why_add(cp, "tp_btf: no kernel BTF");
	}
	plan->bio_q_arg = caps->bio_q_arg;
}

static int plan_root_layer(const struct plan *plan);

void plan_build(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->mode = cfg->attach;
	plan->syscall_prefix = caps->syscall_prefix;
	plan->kprobe_fallback = cfg->attach == METHOD_NONE && caps->kprobes;
	plan->btf = caps->btf;
	plan->rdonly_cast = caps->rdonly_cast;
	plan->unloaded = cfg->plan_only && !cfg->plan_check;
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (layer_is_fs(layer) && !(caps->fs_mounted & (1U << layer)) &&
		    !(cfg->layers_given && (cfg->layers & (1U << layer))))
			plan->quiet_layers |= 1U << layer;
		if (!(cfg->layers & (1U << layer)))
			continue;
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
			plan->cells[layer][op].wanted = true;
		if (layer == LAYER_BLK) {
			plan_blk(caps, cfg, plan);
			continue;
		}
		if (layer == LAYER_IO_URING) {
			plan_uring(caps, cfg, plan);
			continue;
		}
		if (layer == LAYER_AIO) {
			plan_aio(caps, cfg, plan);
			continue;
		}
		if (layer == LAYER_FAULT) {
			plan_fault(caps, cfg, plan);
			continue;
		}
		if (layer == LAYER_BIO) {
			plan_bio(caps, cfg, plan);
			continue;
		}
		for (unsigned int op = 0; op < NR_FS_OPS; op++)
			plan_fn_cell(caps, cfg, layer, op, &plan->cells[layer][op]);
	}
	plan->root_layer = plan_root_layer(plan);
	plan->split_layer = cfg->split_calls ? plan->root_layer : -1;
	plan_why(caps, cfg, plan);
	plan_wb(caps, cfg, plan);
}

unsigned int plan_failed_layers(const struct plan *plan, const struct config *cfg)
{
	unsigned int failed = 0;

	if (!cfg->layers_given)
		return 0;
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		bool any = false;

		if (!(cfg->layers & (1U << layer)))
			continue;
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
			any |= plan->cells[layer][op].src != METHOD_NONE;
		if (!any)
			failed |= 1U << layer;
	}
	return failed;
}

void plan_layer_error(const struct plan *plan, unsigned int layer, char *buf, size_t sz)
{
	const char *remedy;

	if (layer_is_fs(layer) || layer == LAYER_VFS || layer == LAYER_AIO || layer == LAYER_FAULT)
		remedy = plan->mode == METHOD_NONE
			     ? "it needs a kernel with BPF trampolines (fentry) or "
			       "CONFIG_KPROBES=y; syscall and blk work without them"
			     : "try --attach=auto";
	else
		remedy = "see iostackbreak --plan";
	snprintf(buf, sz, "cannot trace %s on this kernel: %s; %s", layer_name(layer),
		 plan->cells[layer][0].why, remedy);
}

__u32 plan_timed_layers(const struct plan *plan)
{
	__u32 timed = 0;

	for (unsigned int layer = 0; layer < NR_CALL_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_OPS; op++)
			if (plan->cells[layer][op].src != METHOD_NONE)
				timed |= 1U << layer;
	return timed;
}

bool plan_traces_threads(const struct plan *plan)
{
	return plan_timed_layers(plan) != 0;
}

unsigned int plan_nr_traced(const struct plan *plan)
{
	unsigned int n = 0;

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_OPS; op++)
			n += plan->cells[layer][op].src != METHOD_NONE;
	return n;
}

/* The opcodes of each io_uring op (cells.def), for --plan. */
static const struct {
	unsigned char op;
	const char *opcode;
} uring_opcodes[] = {
#define URING_OPCODE(op, opcode) { op, #opcode },
#include "cells.def"
};

static void print_uring_opcodes(unsigned int op, FILE *out)
{
	unsigned int n = 0;

	fprintf(out, "  opcodes ");
	for (unsigned int i = 0; i < sizeof(uring_opcodes) / sizeof(uring_opcodes[0]); i++)
		if (uring_opcodes[i].op == op)
			fprintf(out, "%s%s", n++ ? "," : "", uring_opcodes[i].opcode);
	if (!n)
		fprintf(out, "all others");
	fprintf(out, ", matched by struct io_kiocb");
}

/* The aio layer in one line: its ops share their programs and sources. */
static void print_aio(const struct plan *plan, FILE *out)
{
	const struct cell_plan *cp = &plan->cells[LAYER_AIO][0];
	static const struct {
		unsigned char op;
		const char *cmd;
	} cmds[] = {
#define AIO_OPCODE(op, cmd) { op, #cmd },
#include "cells.def"
	};

	fprintf(out, "%-8s %-8s %-10s ", layer_name(LAYER_AIO), "all", method_name(cp->src));
	for (unsigned int i = 0; i < cp->nr_targets; i++)
		fprintf(out, "%s%s", i ? "," : "", cp->targets[i]);
	if (cp->src != METHOD_NONE) {
		fprintf(out, "  ops");
		for (unsigned int op = 0; op < NR_AIO_OPS; op++) {
			unsigned int n = 0;

			fprintf(out, " %s", op_name(LAYER_AIO, op));
			for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (cmds[i].op == op)
					fprintf(out, "%s%s", n++ ? "," : "=", cmds[i].cmd);
		}
		fprintf(out, ", matched by context and iocb");
	}
	if (cp->why[0])
		fprintf(out, "%s%s %s", cp->nr_targets ? "  " : "",
			cp->src == METHOD_NONE ? "skipped:" : "passed over:", cp->why);
	fputc('\n', out);
}

/* The fault layer in one line: its ops share their programs. */
static void print_fault(const struct plan *plan, FILE *out)
{
	const struct cell_plan *cp = &plan->cells[LAYER_FAULT][0];

	fprintf(out, "%-8s %-8s %-10s ", layer_name(LAYER_FAULT), "all", method_name(cp->src));
	for (unsigned int i = 0; i < cp->nr_targets; i++)
		fprintf(out, "%s%s", i ? "," : "", cp->targets[i]);
	if (cp->src != METHOD_NONE) {
		fprintf(out, "  ops");
		for (unsigned int op = 0; op < NR_FAULT_OPS; op++)
			fprintf(out, " %s", op_name(LAYER_FAULT, op));
		fprintf(out, ", major faults only (as /proc/PID/stat majflt), minor ones uncounted");
	}
	if (cp->why[0])
		fprintf(out, "%s%s %s", cp->nr_targets ? "  " : "",
			cp->src == METHOD_NONE ? "skipped: needs fentry or kprobes:" : "passed over:",
			cp->why);
	fputc('\n', out);
}

void plan_print(const struct plan *plan, FILE *out)
{
	fprintf(out, "%-8s %-8s %-10s %s\n", "LAYER", "OP", "SOURCE",
		plan->unloaded ? "WOULD ATTACH TO / WHY NOT" : "ATTACHED TO / WHY NOT");
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];

			if (!cp->wanted)
				continue;
			if (layer == LAYER_AIO) {
				if (!op)
					print_aio(plan, out);
				continue;
			}
			if (layer == LAYER_FAULT) {
				if (!op)
					print_fault(plan, out);
				continue;
			}
			fprintf(out, "%-8s %-8s %-10s ", layer_name(layer), op_name(layer, op),
				method_name(cp->src));
			if (layer == LAYER_SYSCALL && is_raw_source(cp->src))
				fprintf(out, "sys_enter/exit nr ");
			for (unsigned int i = 0; i < cp->nr_targets; i++) {
				const char *pre = "";

				if (layer == LAYER_SYSCALL && is_raw_source(cp->tgt_src[i])) {
					fprintf(out, "%s%s=%d", i ? "," : "", cp->targets[i],
						cell_targets[cp->target_ids[i]].nr);
					continue;
				}
				if (layer == LAYER_SYSCALL && cp->tgt_src[i] == METHOD_TRACEPOINT)
					pre = "sys_*_";
				else if (layer == LAYER_SYSCALL && plan->syscall_prefix)
					pre = plan->syscall_prefix;
				fprintf(out, "%s%s%s", i ? "," : "", pre, cp->targets[i]);
				if (cp->tgt_src[i] != cp->src)
					fprintf(out, "(%s)", method_name(cp->tgt_src[i]));
			}
			if (layer == LAYER_IO_URING && cp->src != METHOD_NONE)
				print_uring_opcodes(op, out);
			if (cp->why[0])
				fprintf(
				    out, "%s%s %s", cp->nr_targets ? "  " : "",
				    cp->src == METHOD_NONE ? "skipped:" : "passed over:", cp->why);
			fputc('\n', out);
		}
	}
	plan_why_print(plan, out);
	plan_wb_print(plan, out);
	if (plan->unloaded)
		fprintf(out, "%s\n", PLAN_UNLOADED_NOTE);
	if (plan->blk_timing[0] && plan->cells[LAYER_BLK][0].src != METHOD_NONE)
		fprintf(out, "blk timing: %s\n", plan->blk_timing);
}

static int plan_root_layer(const struct plan *plan)
{
	for (unsigned int layer = 0; layer < NR_CALL_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_FS_OPS; op++)
			if (plan->cells[layer][op].src != METHOD_NONE)
				return (int)layer;
	return -1;
}
