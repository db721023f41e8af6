// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>
#include "progtab.h"
#include "iostackbreak.skel.h"

/*
 * Where each program sits in the skeleton, generated from the same lines of
 * cells.def as the programs themselves: a program missing from the object
 * is a build error here, not a failed look-up at run time. 0 is "none" (the
 * skeleton's first member is not a program).
 */
#define PROG(name) offsetof(struct iostackbreak_bpf, progs.name)

#define BY_METHOD(tp, fentry, kprobe)                                                              \
	{                                                                                          \
		[METHOD_TRACEPOINT] = tp, [METHOD_FENTRY] = fentry, [METHOD_KPROBE] = kprobe       \
	}
static const struct target_progs {
	size_t entry[NR_METHODS], exit[NR_METHODS];
} target_progs[NR_CELL_TARGETS] = {
#define SYSCALL(op, n, a)                                                                          \
	{ BY_METHOD(PROG(se_##n), PROG(fe_sys_##n), PROG(kp_sys_##n)),                             \
	  BY_METHOD(PROG(sx_##n), PROG(fx_sys_##n), PROG(kr_sys_##n)) },
#define KFUNC(layer, op, f, a)                                                                     \
	{ BY_METHOD(0, PROG(fe_##f), PROG(kp_##f)), BY_METHOD(0, PROG(fx_##f), PROG(kr_##f)) },
#define CELL_TP(layer, op, category, enter, exit)                                                  \
	{ BY_METHOD(PROG(tp_##enter), 0, 0), BY_METHOD(PROG(tp_##exit), 0, 0) },
#include "cells.def"
};

/* The block programs, by tracepoint: tp_btf (tb_) and raw_tp (rt_). */
static const struct {
	size_t btf, raw;
} blk_progs[NR_BLK_TPS] = {
	[BLK_TP_IO_START] = { PROG(tb_io_start), PROG(rt_io_start) },
	[BLK_TP_RQ_INSERT] = { PROG(tb_rq_insert), PROG(rt_rq_insert) },
	[BLK_TP_RQ_ISSUE] = { PROG(tb_rq_issue), PROG(rt_rq_issue) },
	[BLK_TP_RQ_COMPLETE] = { PROG(tb_rq_complete), PROG(rt_rq_complete) },
	[BLK_TP_RQ_MERGE] = { PROG(tb_rq_merge), PROG(rt_rq_merge) },
	[BLK_TP_BIO_BACKMERGE] = { PROG(tb_bio_backmerge), PROG(rt_bio_backmerge) },
	[BLK_TP_BIO_FRONTMERGE] = { PROG(tb_bio_frontmerge), PROG(rt_bio_frontmerge) },
	[BLK_TP_GETRQ] = { PROG(tb_getrq), PROG(rt_getrq) },
	[BLK_TP_BIO_QUEUE] = { PROG(tb_bio_queue), PROG(rt_bio_queue) },
	[BLK_TP_BIO_COMPLETE] = { PROG(tb_bio_complete), PROG(rt_bio_complete) },
	[BLK_TP_BIO_RQ_COMPLETE] = { PROG(tb_bio_rq_complete), PROG(rt_bio_rq_complete) },
	[BLK_TP_BIO_REMAP] = { PROG(tb_bio_remap), PROG(rt_bio_remap) },
	[BLK_TP_BIO_SPLIT] = { PROG(tb_bio_split), PROG(rt_bio_split) },
};

static struct bpf_program *at(struct iostackbreak_bpf *skel, size_t off)
{
	return off ? *(struct bpf_program **)((char *)skel + off) : NULL;
}

/* The tp_btf and raw_tp programs of one role that is not a cell target. */
static const struct {
	enum prog_role role;
	unsigned char layer;
	size_t btf[2], raw[2]; /* entry, exit (0: a lone program) */
} shared_progs[] = {
	{ ROLE_RAW_SYSCALLS,
	  LAYER_SYSCALL,
	  { PROG(tb_sys_enter), PROG(tb_sys_exit) },
	  { PROG(rt_sys_enter), PROG(rt_sys_exit) } },
	{ ROLE_FOLLOW,
	  LAYER_NONE,
	  { PROG(tb_fork), PROG(tb_exit) },
	  { PROG(rt_fork), PROG(rt_exit) } },
	/* entry: sched_switch; exit: sched_wakeup (a pair only in name) */
	{ ROLE_OFFCPU,
	  LAYER_NONE,
	  { PROG(tb_switch), PROG(tb_wakeup) },
	  { PROG(rt_switch), PROG(rt_wakeup) } },
	/* entry: io_uring_submit_req; exit: io_uring_complete */
	{ ROLE_URING,
	  LAYER_IO_URING,
	  { PROG(tb_uring_submit), PROG(tb_uring_complete) },
	  { PROG(rt_uring_submit), PROG(rt_uring_complete) } },
	{ ROLE_URING_PUNT, LAYER_IO_URING, { PROG(tb_uring_punt), 0 }, { PROG(rt_uring_punt), 0 } },
	/* entry: io_uring_poll_arm; exit: io_uring_task_add */
	{ ROLE_URING_POLL,
	  LAYER_IO_URING,
	  { PROG(tb_uring_poll), PROG(tb_uring_task_add) },
	  { PROG(rt_uring_poll), PROG(rt_uring_task_add) } },
	{ ROLE_LOCK,
	  LAYER_NONE,
	  { PROG(tb_lock_begin), PROG(tb_lock_end) },
	  { PROG(rt_lock_begin), PROG(rt_lock_end) } },
	{ ROLE_JOURNAL,
	  LAYER_NONE,
	  { PROG(tb_commit_start), PROG(tb_commit_end) },
	  { PROG(rt_commit_start), PROG(rt_commit_end) } },
	/* the waker of a sleep: the journal's thread? (lone) */
	{ ROLE_JOURNAL_WAKER, LAYER_NONE, { PROG(tb_waking), 0 }, { PROG(rt_waking), 0 } },
	/* sched_process_exit (lone, tp_btf only, as fast slots are) */
	{ ROLE_THREAD_GONE, LAYER_NONE, { PROG(tb_thread_gone), 0 }, { 0, 0 } },
	/* writeback_dirty_folio (lone): who dirtied each folio */
	{ ROLE_DIRTY, LAYER_BLK, { PROG(tb_dirty_folio), 0 }, { PROG(rt_dirty_folio), 0 } },
	/* --pattern at block_rq_issue (lone): its cost is the blk layer's */
	{ ROLE_PATTERN, LAYER_BLK, { PROG(tb_pattern_issue), 0 }, { PROG(rt_pattern_issue), 0 } },
	/* --pattern at block_bio_queue (lone): the bio layer's cost */
	{ ROLE_PATTERN_BIO, LAYER_BIO, { PROG(tb_pattern_bio), 0 }, { PROG(rt_pattern_bio), 0 } },
};

static struct prog_ref *add_ref(struct progtab *pt, enum prog_role role, unsigned int layer,
				enum attach_method method, struct bpf_program *entry,
				struct bpf_program *exit)
{
	struct prog_ref *r = &pt->refs[pt->n++];

	r->role = role;
	r->layer = (unsigned char)layer;
	r->method = method;
	r->entry = entry;
	r->exit = exit;
	r->target_id = -1;
	return r;
}

void progtab_resolve(struct progtab *pt, struct iostackbreak_bpf *skel)
{
	memset(pt, 0, sizeof(*pt));
	for (unsigned int i = 0; i < NR_CELL_TARGETS; i++) {
		for (unsigned int m = 0; m < NR_METHODS; m++) {
			struct prog_ref *r;

			if (!target_progs[i].entry[m])
				continue;
			r = add_ref(pt, ROLE_TARGET, cell_targets[i].layer, (enum attach_method)m,
				    at(skel, target_progs[i].entry[m]),
				    at(skel, target_progs[i].exit[m]));
			r->op = cell_targets[i].op;
			r->target_id = (int)i;
		}
	}
	for (unsigned int i = 0; i < sizeof(shared_progs) / sizeof(shared_progs[0]); i++) {
		add_ref(pt, shared_progs[i].role, shared_progs[i].layer, METHOD_TP_BTF,
			at(skel, shared_progs[i].btf[0]), at(skel, shared_progs[i].btf[1]));
		if (shared_progs[i].raw[0]) /* none: tp_btf only */
			add_ref(pt, shared_progs[i].role, shared_progs[i].layer, METHOD_RAW_TP,
				at(skel, shared_progs[i].raw[0]), at(skel, shared_progs[i].raw[1]));
	}
	/* Classic tracepoints: their records name what they say on any kernel. */
	add_ref(pt, ROLE_CACHE, LAYER_NONE, METHOD_TRACEPOINT, at(skel, PROG(tp_cache_add)), NULL);
	add_ref(pt, ROLE_READAHEAD, LAYER_NONE, METHOD_TRACEPOINT, at(skel, PROG(tp_ra_sync)),
		at(skel, PROG(tp_ra_async)));
	add_ref(pt, ROLE_WRITEBACK, LAYER_NONE, METHOD_TRACEPOINT, at(skel, PROG(tp_writeback)),
		NULL);
	add_ref(pt, ROLE_THROTTLE, LAYER_NONE, METHOD_TRACEPOINT, at(skel, PROG(tp_dirty_pause)),
		NULL);
	/* No tracepoint marks an io-wq worker taking a request: fentry only. */
	add_ref(pt, ROLE_URING_IOWQ_RUN, LAYER_IO_URING, METHOD_FENTRY,
		at(skel, PROG(fe_uring_iowq_run)), NULL);
	/* aio: no tracepoint; fentry/fexit, else kprobes (bpf/aio.bpf.c). */
	add_ref(pt, ROLE_AIO_SUBMIT, LAYER_AIO, METHOD_FENTRY, at(skel, PROG(fe_aio_submit)),
		at(skel, PROG(fx_aio_submit)));
	add_ref(pt, ROLE_AIO_SUBMIT, LAYER_AIO, METHOD_KPROBE, at(skel, PROG(kp_aio_submit)),
		at(skel, PROG(kr_aio_submit)));
	add_ref(pt, ROLE_AIO_COMPLETE, LAYER_AIO, METHOD_FENTRY, at(skel, PROG(fe_aio_complete)),
		NULL);
	add_ref(pt, ROLE_AIO_COMPLETE, LAYER_AIO, METHOD_KPROBE, at(skel, PROG(kp_aio_complete)),
		NULL);
	add_ref(pt, ROLE_AIO_WORK, LAYER_AIO, METHOD_FENTRY, at(skel, PROG(fe_aio_work)),
		at(skel, PROG(fx_aio_work)));
	add_ref(pt, ROLE_AIO_WORK, LAYER_AIO, METHOD_KPROBE, at(skel, PROG(kp_aio_work)),
		at(skel, PROG(kr_aio_work)));
	/* Faults: no tracepoint marks a fault's end (bpf/fault.bpf.c). */
	add_ref(pt, ROLE_FAULT, LAYER_FAULT, METHOD_FENTRY, at(skel, PROG(fe_fault)),
		at(skel, PROG(fx_fault)));
	add_ref(pt, ROLE_FAULT, LAYER_FAULT, METHOD_KPROBE, at(skel, PROG(kp_fault)),
		at(skel, PROG(kr_fault)));
	for (unsigned int tp = 0; tp < NR_BLK_TPS; tp++) {
		unsigned int layer = blk_tp_layer((enum blk_tp)tp);

		add_ref(pt, ROLE_BLK, layer, METHOD_TP_BTF, at(skel, blk_progs[tp].btf), NULL)
		    ->blk_tp = (enum blk_tp)tp;
		add_ref(pt, ROLE_BLK, layer, METHOD_RAW_TP, at(skel, blk_progs[tp].raw), NULL)
		    ->blk_tp = (enum blk_tp)tp;
	}
}

const struct prog_ref *progtab_target(const struct progtab *pt, unsigned int target_id,
				      enum attach_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].target_id == (int)target_id && pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

const struct prog_ref *progtab_role(const struct progtab *pt, enum prog_role role,
				    enum attach_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].role == role && pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

const struct prog_ref *progtab_blk(const struct progtab *pt, enum blk_tp tp,
				   enum attach_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].role == ROLE_BLK && pt->refs[i].blk_tp == tp &&
		    pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}
