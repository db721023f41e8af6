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

static const struct target_progs {
	size_t entry[3], exit[3]; /* by METHOD_TRACEPOINT, _FENTRY, _KPROBE */
} target_progs[NR_CELL_TARGETS] = {
#define SYSCALL(op, n)                                                                             \
	{ { PROG(se_##n), PROG(fe_sys_##n), PROG(kp_sys_##n) },                                    \
	  { PROG(sx_##n), PROG(fx_sys_##n), PROG(kr_sys_##n) } },
#define KFUNC(layer, op, f)                                                                        \
	{ { 0, PROG(fe_##f), PROG(kp_##f) }, { 0, PROG(fx_##f), PROG(kr_##f) } },
#define CELL_TP(layer, op, category, enter, exit)                                                  \
	{ { PROG(tp_##enter), 0, 0 }, { PROG(tp_##exit), 0, 0 } },
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
};

static struct bpf_program *at(struct iostackbreak_bpf *skel, size_t off)
{
	return off ? *(struct bpf_program **)((char *)skel + off) : NULL;
}

void progtab_resolve(struct progtab *pt, struct iostackbreak_bpf *skel)
{
	memset(pt, 0, sizeof(*pt));
	for (unsigned int i = 0; i < NR_CELL_TARGETS; i++) {
		for (unsigned int m = METHOD_TRACEPOINT; m <= METHOD_KPROBE; m++) {
			struct prog_ref *r;

			if (!target_progs[i].entry[m])
				continue;
			r = &pt->refs[pt->n++];
			r->entry = at(skel, target_progs[i].entry[m]);
			r->exit = at(skel, target_progs[i].exit[m]);
			r->layer = cell_targets[i].layer;
			r->op = cell_targets[i].op;
			r->method = (enum prog_method)m;
			r->target_id = (int)i;
		}
	}
	for (unsigned int raw = 0; raw < 2; raw++) {
		struct prog_ref *r = &pt->refs[pt->n++];

		r->entry = at(skel, raw ? PROG(rt_sys_enter) : PROG(tb_sys_enter));
		r->exit = at(skel, raw ? PROG(rt_sys_exit) : PROG(tb_sys_exit));
		r->layer = LAYER_SYSCALL;
		r->method = raw ? METHOD_RAW_TP : METHOD_TP_BTF;
		r->target_id = -1;
	}
	for (unsigned int raw = 0; raw < 2; raw++) {
		struct prog_ref *r = &pt->refs[pt->n++];

		r->entry = at(skel, raw ? PROG(rt_fork) : PROG(tb_fork));
		r->exit = at(skel, raw ? PROG(rt_exit) : PROG(tb_exit));
		r->layer = LAYER_NONE;
		r->method = raw ? METHOD_RAW_TP : METHOD_TP_BTF;
		r->target_id = -1;
	}
	for (unsigned int tp = 0; tp < NR_BLK_TPS; tp++) {
		for (unsigned int raw = 0; raw < 2; raw++) {
			struct prog_ref *r = &pt->refs[pt->n++];

			r->entry = at(skel, raw ? blk_progs[tp].raw : blk_progs[tp].btf);
			r->layer = LAYER_BLK;
			r->method = raw ? METHOD_RAW_TP : METHOD_TP_BTF;
			r->target_id = -1;
			r->blk_tp = (enum blk_tp)tp;
		}
	}
}

const struct prog_ref *progtab_target(const struct progtab *pt, unsigned int target_id,
				      enum prog_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].target_id == (int)target_id && pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

const struct prog_ref *progtab_raw_syscalls(const struct progtab *pt, enum prog_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].target_id < 0 && pt->refs[i].layer == LAYER_SYSCALL &&
		    pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

const struct prog_ref *progtab_follow(const struct progtab *pt, enum prog_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].layer == LAYER_NONE && pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

const struct prog_ref *progtab_blk(const struct progtab *pt, enum blk_tp tp,
				   enum prog_method method)
{
	for (unsigned int i = 0; i < pt->n; i++)
		if (pt->refs[i].target_id < 0 && pt->refs[i].layer == LAYER_BLK &&
		    pt->refs[i].blk_tp == tp && pt->refs[i].method == method)
			return &pt->refs[i];
	return NULL;
}

enum prog_method source_method(enum source src)
{
	switch (src) {
	case SRC_FENTRY:
		return METHOD_FENTRY;
	case SRC_KPROBE:
		return METHOD_KPROBE;
	case SRC_TP_BTF:
		return METHOD_TP_BTF;
	case SRC_RAW_TP:
		return METHOD_RAW_TP;
	default:
		return METHOD_TRACEPOINT;
	}
}
