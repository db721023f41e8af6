// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF object against the table of cells, without root: the skeleton is
 * opened (ELF parsing only, nothing is loaded) and every program the attach
 * code can ask for must be there, with the section its method needs, and
 * every program of the object must serve some cell.
 */
#include <string.h>
#include <bpf/libbpf.h>
#include "unit.h"
#include "cells.h"
#include "progtab.h"
#include "iostackbreak.skel.h"

static struct iostackbreak_bpf *skel;
static struct progtab pt;

static void open_skel(void)
{
	skel = iostackbreak_bpf__open();
	cr_assert_not_null(skel, "cannot open the BPF object");
	progtab_resolve(&pt, skel);
}

static void close_skel(void)
{
	iostackbreak_bpf__destroy(skel);
}

/* The section a program of this ref must have: what libbpf attaches by. */
/* The aio roles' programs name their function in their section. */
static const char *aio_func_of(enum prog_role role)
{
	switch (role) {
	case ROLE_AIO_SUBMIT:
		return "/io_submit_one";
	case ROLE_AIO_COMPLETE:
		return "/aio_complete";
	case ROLE_AIO_WORK:
		return "/aio_fsync_work";
	case ROLE_FAULT:
		return "/handle_mm_fault";
	default:
		return "";
	}
}

static void expect_sections(const struct prog_ref *r, char *in, char *out, size_t sz)
{
	const struct cell_target *t = r->target_id >= 0 ? &cell_targets[r->target_id] : NULL;

	switch (r->method) {
	case METHOD_TRACEPOINT:
		if (r->role == ROLE_CACHE) {
			snprintf(in, sz, "tracepoint/filemap/mm_filemap_add_to_page_cache");
		} else if (r->role == ROLE_THROTTLE) {
			snprintf(in, sz, "tracepoint/writeback/balance_dirty_pages");
		} else if (r->role == ROLE_WRITEBACK) {
			snprintf(in, sz, "tracepoint/ext4/ext4_writepages_result");
		} else if (r->role == ROLE_READAHEAD) {
			snprintf(in, sz, "tracepoint/readahead/page_cache_sync_ra");
			snprintf(out, sz, "tracepoint/readahead/page_cache_async_ra");
		} else if (t->kind == TARGET_SYSCALL) {
			snprintf(in, sz, "tracepoint/syscalls/sys_enter_%s", t->name);
			snprintf(out, sz, "tracepoint/syscalls/sys_exit_%s", t->name);
		} else {
			snprintf(in, sz, "tracepoint/%s/%s", t->category, t->name);
			snprintf(out, sz, "tracepoint/%s/%s", t->category, t->exit_tp);
		}
		break;
	case METHOD_FENTRY:
		if (r->role == ROLE_URING_IOWQ_RUN) {
			snprintf(in, sz, "fentry/io_wq_submit_work");
			break;
		}
		snprintf(in, sz, "fentry%s", aio_func_of(r->role));
		snprintf(out, sz, "fexit%s", aio_func_of(r->role));
		break;
	case METHOD_KPROBE:
		snprintf(in, sz, "kprobe%s", aio_func_of(r->role));
		snprintf(out, sz, "kretprobe%s", aio_func_of(r->role));
		break;
	case METHOD_TP_BTF:
	case METHOD_RAW_TP: {
		const char *kind = r->method == METHOD_TP_BTF ? "tp_btf" : "raw_tp";

		if (r->role == ROLE_FOLLOW) {
			snprintf(in, sz, "%s/sched_process_fork", kind);
			snprintf(out, sz, "%s/sched_process_exit", kind);
		} else if (r->role == ROLE_OFFCPU) {
			snprintf(in, sz, "%s/sched_switch", kind);
			snprintf(out, sz, "%s/sched_wakeup", kind);
		} else if (r->role == ROLE_PATTERN) {
			snprintf(in, sz, "%s/block_rq_issue", kind);
		} else if (r->role == ROLE_PATTERN_BIO) {
			snprintf(in, sz, "%s/block_bio_queue", kind);
		} else if (r->role == ROLE_URING_PUNT) {
			snprintf(in, sz, "%s/io_uring_queue_async_work", kind);
		} else if (r->role == ROLE_URING_POLL) {
			snprintf(in, sz, "%s/io_uring_poll_arm", kind);
			snprintf(out, sz, "%s/io_uring_task_add", kind);
		} else if (r->role == ROLE_URING) {
			snprintf(in, sz, "%s/io_uring_submit_req", kind);
			snprintf(out, sz, "%s/io_uring_complete", kind);
		} else if (r->role == ROLE_JOURNAL_WAKER) {
			snprintf(in, sz, "%s/sched_waking", kind);
		} else if (r->role == ROLE_THREAD_GONE) {
			snprintf(in, sz, "%s/sched_process_exit", kind);
		} else if (r->role == ROLE_DIRTY) {
			snprintf(in, sz, "%s/writeback_dirty_folio", kind);
		} else if (r->role == ROLE_LOCK) {
			snprintf(in, sz, "%s/contention_begin", kind);
			snprintf(out, sz, "%s/contention_end", kind);
		} else if (r->role == ROLE_JOURNAL) {
			snprintf(in, sz, "%s/jbd2_start_commit", kind);
			snprintf(out, sz, "%s/jbd2_end_commit", kind);
		} else if (r->role == ROLE_RAW_SYSCALLS) {
			snprintf(in, sz, "%s/sys_enter", kind);
			snprintf(out, sz, "%s/sys_exit", kind);
		} else {
			snprintf(in, sz, "%s/%s", kind, blk_tp_names[r->blk_tp]);
		}
		break;
	}
	default:
		cr_assert_fail("unknown method %d", r->method);
	}
}

Test(progtab, every_target_has_its_programs, .init = open_skel, .fini = close_skel)
{
	for (unsigned int i = 0; i < NR_CELL_TARGETS; i++) {
		const struct cell_target *t = &cell_targets[i];
		bool tp = t->kind != TARGET_KFUNC, fn = t->kind != TARGET_TP;

		cr_assert_eq(progtab_target(&pt, i, METHOD_TRACEPOINT) != NULL, tp, "%s", t->name);
		cr_assert_eq(progtab_target(&pt, i, METHOD_FENTRY) != NULL, fn, "%s", t->name);
		cr_assert_eq(progtab_target(&pt, i, METHOD_KPROBE) != NULL, fn, "%s", t->name);
	}
	cr_assert_not_null(progtab_role(&pt, ROLE_RAW_SYSCALLS, METHOD_TP_BTF));
	cr_assert_not_null(progtab_role(&pt, ROLE_RAW_SYSCALLS, METHOD_RAW_TP));
	cr_assert_not_null(progtab_role(&pt, ROLE_FOLLOW, METHOD_TP_BTF));
	cr_assert_not_null(progtab_role(&pt, ROLE_FOLLOW, METHOD_RAW_TP));
	cr_assert_not_null(progtab_role(&pt, ROLE_OFFCPU, METHOD_TP_BTF));
	cr_assert_not_null(progtab_role(&pt, ROLE_OFFCPU, METHOD_RAW_TP));
	cr_assert_not_null(progtab_role(&pt, ROLE_URING, METHOD_TP_BTF));
	cr_assert_not_null(progtab_role(&pt, ROLE_URING, METHOD_RAW_TP));
	cr_assert_not_null(progtab_role(&pt, ROLE_URING_IOWQ_RUN, METHOD_FENTRY));
	for (enum prog_role role = ROLE_AIO_SUBMIT; role <= ROLE_AIO_WORK; role++) {
		cr_assert_not_null(progtab_role(&pt, role, METHOD_FENTRY));
		cr_assert_not_null(progtab_role(&pt, role, METHOD_KPROBE));
	}
	for (enum prog_role role = ROLE_LOCK; role <= ROLE_JOURNAL_WAKER; role++) {
		cr_assert_not_null(progtab_role(&pt, role, METHOD_TP_BTF));
		cr_assert_not_null(progtab_role(&pt, role, METHOD_RAW_TP));
	}
	/* Fast thread slots are tp_btf only (bpf/thread.bpf.h). */
	cr_assert_not_null(progtab_role(&pt, ROLE_THREAD_GONE, METHOD_TP_BTF));
	cr_assert_null(progtab_role(&pt, ROLE_THREAD_GONE, METHOD_RAW_TP));
	cr_assert_not_null(progtab_role(&pt, ROLE_CACHE, METHOD_TRACEPOINT));
	cr_assert_not_null(progtab_role(&pt, ROLE_READAHEAD, METHOD_TRACEPOINT));
	cr_assert_not_null(progtab_role(&pt, ROLE_WRITEBACK, METHOD_TRACEPOINT));
	cr_assert_not_null(progtab_role(&pt, ROLE_THROTTLE, METHOD_TRACEPOINT));
	cr_assert_not_null(progtab_role(&pt, ROLE_DIRTY, METHOD_TP_BTF));
	cr_assert_not_null(progtab_role(&pt, ROLE_DIRTY, METHOD_RAW_TP));
	for (unsigned int tp = 0; tp < NR_BLK_TPS; tp++) {
		cr_assert_not_null(progtab_blk(&pt, (enum blk_tp)tp, METHOD_TP_BTF));
		cr_assert_not_null(progtab_blk(&pt, (enum blk_tp)tp, METHOD_RAW_TP));
	}
}

Test(progtab, programs_have_the_sections_of_their_method, .init = open_skel, .fini = close_skel)
{
	for (unsigned int i = 0; i < pt.n; i++) {
		const struct prog_ref *r = &pt.refs[i];
		char in[128] = "", out[128] = "";

		expect_sections(r, in, out, sizeof(in));
		cr_assert_not_null(r->entry, "ref %u has no program", i);
		cr_assert_str_eq(bpf_program__section_name(r->entry), in, "program %s",
				 bpf_program__name(r->entry));
		if (r->role == ROLE_BLK || r->role == ROLE_URING_PUNT || r->role == ROLE_CACHE ||
		    r->role == ROLE_JOURNAL_WAKER || r->role == ROLE_WRITEBACK ||
		    r->role == ROLE_THROTTLE || r->role == ROLE_DIRTY ||
		    r->role == ROLE_THREAD_GONE || r->role == ROLE_AIO_COMPLETE ||
		    r->role == ROLE_PATTERN || r->role == ROLE_PATTERN_BIO ||
		    r->role == ROLE_URING_IOWQ_RUN) {
			cr_assert_null(r->exit, "%s is a lone program",
				       bpf_program__name(r->entry));
			continue;
		}
		cr_assert_not_null(r->exit, "%s has no exit program", bpf_program__name(r->entry));
		cr_assert_str_eq(bpf_program__section_name(r->exit), out, "program %s",
				 bpf_program__name(r->exit));
	}
}

/* No program of the object is left out of the table, none is in it twice. */
Test(progtab, every_program_serves_exactly_one_ref, .init = open_skel, .fini = close_skel)
{
	struct bpf_program *p;
	unsigned int nr_progs = 0;

	bpf_object__for_each_program (p, skel->obj) {
		unsigned int uses = 0;

		nr_progs++;
		for (unsigned int i = 0; i < pt.n; i++)
			uses += (pt.refs[i].entry == p) + (pt.refs[i].exit == p);
		cr_assert_eq(uses, 1, "program %s (%s) is used %u times by the table",
			     bpf_program__name(p), bpf_program__section_name(p), uses);
	}
	cr_assert_gt(nr_progs, NR_CELL_TARGETS);
}
