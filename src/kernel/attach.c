// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "dev_switches.h"
#include "blk_leftovers.h"
#include "layers.h"
#include "iostackbreak.skel.h"
#include "iostackbreak_nokfunc.skel.h"

static int keep_link(struct tracer *t, struct bpf_link *link)
{
	if (t->nr_links == t->cap_links) {
		size_t cap = t->cap_links ? t->cap_links * 2 : 64;
		struct bpf_link **l = realloc(t->links, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		t->links = l;
		t->cap_links = cap;
	}
	t->links[t->nr_links++] = link;
	return 0;
}

/* The kernel function a fn-sourced target names. */
static void target_func(const struct plan *plan, unsigned int layer, const char *target, char *buf,
			size_t sz)
{
	if (layer == LAYER_SYSCALL)
		snprintf(buf, sz, "%s%s", plan->syscall_prefix ? plan->syscall_prefix : "", target);
	else
		snprintf(buf, sz, "%s", target);
}

/* Marks a program pair (or a lone blk program) for loading. */
static void load_pair(const struct prog_ref *r)
{
	bpf_program__set_autoload(r->entry, true);
	if (r->exit)
		bpf_program__set_autoload(r->exit, true);
}

/* The pair of a cell's target i for a method: the table has every one the
 * planner can choose. */
static const struct prog_ref *target_pair(const struct tracer *t, const struct cell_plan *cp,
					  unsigned int i, enum attach_method method)
{
	return progtab_target(&t->progs, cp->target_ids[i], method);
}

static const struct prog_ref *blk_prog(const struct tracer *t, unsigned int layer,
				       const struct cell_plan *cp, unsigned int i)
{
	return progtab_blk(&t->progs, (enum blk_tp)blk_tp_of_layer(layer, cp->targets[i]), cp->src);
}

/* Points a fentry/fexit pair at its function. */
static int bind_fentry(const struct prog_ref *r, const char *fn, char *err, size_t errsz)
{
	int e1 = bpf_program__set_attach_target(r->entry, 0, fn);
	int e2 = bpf_program__set_attach_target(r->exit, 0, fn);

	if (e1 || e2) {
		snprintf(err, errsz, "cannot point fentry at %s: %s", fn,
			 strerror(-(e1 ? e1 : e2)));
		return -1;
	}
	return 0;
}

/* The io_uring programs: submit/complete, and those of the parts. */
static void load_uring(const struct tracer *t, const struct plan *plan, enum attach_method src)
{
	const struct prog_ref *r = progtab_role(&t->progs, ROLE_URING, src);

	load_pair(r);
	/* tp_btf takes its tracepoint at load; raw_tp at attach (attach_uring). */
	if (src == METHOD_TP_BTF)
		bpf_program__set_attach_target(r->entry, 0, plan->uring_submit_tp);
	if (!plan->uring_parts)
		return;
	load_pair(progtab_role(&t->progs, ROLE_URING_PUNT, src));
	load_pair(progtab_role(&t->progs, ROLE_URING_POLL, src));
	if (plan->uring_iowq_run)
		load_pair(progtab_role(&t->progs, ROLE_URING_IOWQ_RUN, METHOD_FENTRY));
}

/* The aio programs (bpf/aio.bpf.c), all ops': fentry/fexit or kprobes. */
static void load_aio(const struct tracer *t, const struct plan *plan)
{
	enum attach_method src = plan->cells[LAYER_AIO][0].src;

	load_pair(progtab_role(&t->progs, ROLE_AIO_SUBMIT, src));
	load_pair(progtab_role(&t->progs, ROLE_AIO_COMPLETE, src));
	if (plan->aio_worker)
		load_pair(progtab_role(&t->progs, ROLE_AIO_WORK, src));
}

/* The fault programs (bpf/fault.bpf.c), all ops': fentry/fexit or kprobes. */
static void load_fault(const struct tracer *t, const struct plan *plan)
{
	load_pair(progtab_role(&t->progs, ROLE_FAULT, plan->cells[LAYER_FAULT][0].src));
}

/* --pattern's block (ROLE_PATTERN) or bio program (bpf/pattern_blk.bpf.c). */
static struct bpf_program *pattern_prog(const struct tracer *t, const struct plan *plan,
					enum prog_role role)
{
	return progtab_role(&t->progs, role, plan->btf ? METHOD_TP_BTF : METHOD_RAW_TP)->entry;
}

/* The programs of the cells' targets, by each cell's attach method. */
static int select_cell_programs(struct tracer *t, const struct plan *plan, char *err,
				size_t errsz)
{
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer) && layer != LAYER_AIO && layer != LAYER_FAULT;
		     op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];

			for (unsigned int i = 0; i < cp->nr_targets; i++) {
				char fn[128];

				switch (cp->src) {
				case METHOD_NONE:
				case NR_METHODS:
					break;
				case METHOD_TRACEPOINT:
					load_pair(target_pair(t, cp, i, METHOD_TRACEPOINT));
					break;
				case METHOD_TP_BTF:
				case METHOD_RAW_TP:
					if (layer == LAYER_SYSCALL)
						load_pair(progtab_role(&t->progs, ROLE_RAW_SYSCALLS,
								       cp->src));
					else if (layer == LAYER_IO_URING)
						load_uring(t, plan, cp->src);
					else
						load_pair(blk_prog(t, layer, cp, i));
					break;
				case METHOD_FENTRY:
					target_func(plan, layer, cp->targets[i], fn, sizeof(fn));
					if (bind_fentry(target_pair(t, cp, i, METHOD_FENTRY), fn,
							err, errsz))
						return -1;
					load_pair(target_pair(t, cp, i, METHOD_FENTRY));
					/* kprobes are loaded too, as a fallback */
					if (plan->kprobe_fallback)
						load_pair(target_pair(t, cp, i, METHOD_KPROBE));
					break;
				case METHOD_KPROBE:
					load_pair(target_pair(t, cp, i, METHOD_KPROBE));
					break;
				}
			}
		}
	}
	return 0;
}

/* Before load: only what the plan uses loads; fentry pairs get targets. */
static int select_programs(struct tracer *t, const struct plan *plan, bool follow, bool offcpu,
			   char *err, size_t errsz)
{
	enum attach_method shared = plan->btf ? METHOD_TP_BTF : METHOD_RAW_TP;
	struct bpf_program *p;

	bpf_object__for_each_program (p, t->skel->obj)
		bpf_program__set_autoload(p, false);
	if (t->skel->rodata->use_fast_slots)
		load_pair(progtab_role(&t->progs, ROLE_THREAD_GONE, METHOD_TP_BTF));
	if (offcpu)
		load_pair(progtab_role(&t->progs, ROLE_OFFCPU, shared));
	if (plan->why[WHY_LOCK])
		load_pair(progtab_role(&t->progs, ROLE_LOCK, shared));
	if (plan->why[WHY_JOURNAL]) {
		load_pair(progtab_role(&t->progs, ROLE_JOURNAL, shared));
		load_pair(progtab_role(&t->progs, ROLE_JOURNAL_WAKER, shared));
	}
	if (plan->why[WHY_CACHE])
		load_pair(progtab_role(&t->progs, ROLE_CACHE, METHOD_TRACEPOINT));
	if (plan->why[WHY_READAHEAD])
		load_pair(progtab_role(&t->progs, ROLE_READAHEAD, METHOD_TRACEPOINT));
	if (plan->why[WHY_WRITEBACK])
		load_pair(progtab_role(&t->progs, ROLE_WRITEBACK, METHOD_TRACEPOINT));
	if (plan->why[WHY_THROTTLE])
		load_pair(progtab_role(&t->progs, ROLE_THROTTLE, METHOD_TRACEPOINT));
	if (follow)
		load_pair(progtab_role(&t->progs, ROLE_FOLLOW, shared));
	if (plan->wb)
		load_pair(progtab_role(&t->progs, ROLE_DIRTY, shared));
	if (plan->cells[LAYER_AIO][0].src != METHOD_NONE)
		load_aio(t, plan);
	if (plan->cells[LAYER_FAULT][0].src != METHOD_NONE)
		load_fault(t, plan);
	if (t->skel->rodata->pattern_blk)
		bpf_program__set_autoload(pattern_prog(t, plan, ROLE_PATTERN), true);
	if (t->skel->rodata->pattern_bio)
		bpf_program__set_autoload(pattern_prog(t, plan, ROLE_PATTERN_BIO), true);
	return select_cell_programs(t, plan, err, errsz);
}

static struct bpf_link *attach_kprobe(struct bpf_program *p, bool ret, const char *fn)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = ret);

	return bpf_program__attach_kprobe_opts(p, fn, &opts);
}

/*
 * Attaches an exit program, then its entry: an entry without its exit would
 * leave start slots that never close.
 */
static int attach_pair(struct tracer *t, struct bpf_link *exit_link,
		       struct bpf_link *(*entry)(struct bpf_program *, const char *),
		       struct bpf_program *entry_prog, const char *fn)
{
	struct bpf_link *l;
	int err;

	if (!exit_link)
		return -errno;
	l = entry(entry_prog, fn);
	if (!l) {
		err = -errno;
		bpf_link__destroy(exit_link);
		return err;
	}
	if (keep_link(t, exit_link) || keep_link(t, l))
		return -ENOMEM;
	return 0;
}

static struct bpf_link *entry_plain(struct bpf_program *p, const char *fn)
{
	(void)fn;
	return bpf_program__attach(p);
}

/* A raw tracepoint program on the tracepoint fn, whatever its section says. */
static struct bpf_link *entry_raw_tp(struct bpf_program *p, const char *fn)
{
	return bpf_program__attach_raw_tracepoint(p, fn);
}

static struct bpf_link *entry_kprobe(struct bpf_program *p, const char *fn)
{
	return attach_kprobe(p, false, fn);
}

static void note_failure(struct cell_plan *cp, const char *what, const char *target, int err)
{
	size_t used = strlen(cp->why);

	snprintf(cp->why + used, sizeof(cp->why) - used, "%s%s %s: %s", used ? "; " : "", what,
		 target, strerror(-err));
}

/* Attaches one target of a fn-sourced cell, falling back to kprobe. */
static int attach_fn_target(struct tracer *t, const struct plan *plan, unsigned int layer,
			    struct cell_plan *cp, unsigned int i)
{
	const struct prog_ref *fe = target_pair(t, cp, i, METHOD_FENTRY);
	const struct prog_ref *kp = target_pair(t, cp, i, METHOD_KPROBE);
	char fn[128];
	int err = 0;

	target_func(plan, layer, cp->targets[i], fn, sizeof(fn));
	if (cp->tgt_src[i] == METHOD_FENTRY) {
		err = attach_pair(t, bpf_program__attach(fe->exit), entry_plain, fe->entry, fn);
		if (!err)
			return 0;
		note_failure(cp, "fentry", fn, err);
		if (!plan->kprobe_fallback)
			return err;
		cp->tgt_src[i] = METHOD_KPROBE;
	}
	err = attach_pair(t, attach_kprobe(kp->exit, true, fn), entry_kprobe, kp->entry, fn);
	if (err)
		note_failure(cp, "kprobe", fn, err);
	return err;
}

static int attach_cell(struct tracer *t, const struct plan *plan, unsigned int layer,
		       struct cell_plan *cp)
{
	const struct prog_ref *tp;
	unsigned int ok = 0;
	int err;

	for (unsigned int i = 0; i < cp->nr_targets; i++) {
		switch (cp->src) {
		case METHOD_TRACEPOINT:
			tp = target_pair(t, cp, i, METHOD_TRACEPOINT);
			err = attach_pair(t, bpf_program__attach(tp->exit), entry_plain, tp->entry,
					  NULL);
			if (err)
				note_failure(cp, "tracepoint", cp->targets[i], err);
			break;
		case METHOD_FENTRY:
		case METHOD_KPROBE:
			err = attach_fn_target(t, plan, layer, cp, i);
			break;
		case METHOD_TP_BTF:
		case METHOD_RAW_TP:
			err = 0; /* the raw syscall pair, attached once for all cells */
			break;
		default:
			err = 0;
		}
		ok += !err;
	}
	if (!ok)
		cp->src = METHOD_NONE;
	return 0;
}

/* The parent of a process, from /proc/PID/stat; 0 if it is gone. */
static int parent_of(int pid)
{
	char path[64], buf[512], *close_paren;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* "pid (comm) state ppid": comm may hold spaces and parentheses. */
	if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')))
		sscanf(close_paren + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* Is pid a descendant of one of the traced tgids (at any depth)? */
static bool descends_from(int pid, const struct targets *tg)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		pid = parent_of(pid);
		for (unsigned int i = 0; i < tg->nr_tgids; i++)
			if (pid == tg->tgids[i])
				return true;
	}
	return false;
}

/*
 * Follows forks: the fork/exit pair is attached before anything else, so
 * that a child forked from now on is added by the kernel; then, for -p
 * --children, the descendants that exist already are added from /proc.
 */
static int attach_follow(struct tracer *t, const struct targets *tg, bool seed, bool btf, char *err,
			 size_t errsz)
{
	const struct prog_ref *r =
	    progtab_role(&t->progs, ROLE_FOLLOW, btf ? METHOD_TP_BTF : METHOD_RAW_TP);
	int ret = attach_pair(t, bpf_program__attach(r->exit), entry_plain, r->entry, NULL);
	struct dirent *d;
	__u8 one = 1;
	DIR *proc;

	if (ret) {
		snprintf(err, errsz,
			 "cannot attach to sched_process_fork/exit (%s) to follow children: %s; "
			 "run with --no-children or without --children",
			 btf ? "tp_btf" : "raw_tp", strerror(-ret));
		return -1;
	}
	if (!seed)
		return 0;
	proc = opendir("/proc");
	if (!proc) {
		snprintf(err, errsz, "cannot list /proc to find the children: %s", strerror(errno));
		return -1;
	}
	while ((d = readdir(proc))) {
		__u32 pid = (__u32)strtoul(d->d_name, NULL, 10);

		if (pid && descends_from((int)pid, tg))
			bpf_map__update_elem(t->skel->maps.followed, &pid, sizeof(pid), &one,
					     sizeof(one), BPF_NOEXIST);
	}
	closedir(proc);
	return 0;
}

/* sched_switch and sched_wakeup, for the off-CPU parts of calls: before the
 * layers, so that no call opens without them. */
static int attach_offcpu(struct tracer *t, bool btf, char *err, size_t errsz)
{
	const struct prog_ref *r =
	    progtab_role(&t->progs, ROLE_OFFCPU, btf ? METHOD_TP_BTF : METHOD_RAW_TP);
	int ret = attach_pair(t, bpf_program__attach(r->exit), entry_plain, r->entry, NULL);

	if (ret)
		snprintf(err, errsz,
			 "cannot attach to sched_switch/sched_wakeup (%s) for the off-CPU parts: "
			 "%s; run with --no-offcpu",
			 btf ? "tp_btf" : "raw_tp", strerror(-ret));
	return ret;
}

static int attach_lone(struct tracer *t, struct bpf_program *p)
{
	struct bpf_link *l = bpf_program__attach(p);

	if (!l)
		return -errno;
	return keep_link(t, l);
}

/* Before any layer: every fast thread slot claimed is freed at its exit. */
static int attach_thread_gone(struct tracer *t, char *err, size_t errsz)
{
	int ret = attach_lone(t, progtab_role(&t->progs, ROLE_THREAD_GONE, METHOD_TP_BTF)->entry);

	if (ret)
		snprintf(err, errsz,
			 "cannot attach to sched_process_exit (tp_btf) to free thread slots: %s; "
			 "IOSB_FAST_SLOTS=0 keeps every thread's state in task storage",
			 strerror(-ret));
	return ret;
}

/*
 * The lock and journal parts and the page cache counts (bpf/why.bpf.c):
 * with the off-CPU parts, before the layers. The journal's end first, so
 * no commit is left open by us.
 */
static int attach_why(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	static const struct {
		enum why why;
		enum prog_role role;
		const char *what;
	} roles[] = {
		{ WHY_LOCK, ROLE_LOCK, "lock:contention_begin/end" },
		{ WHY_JOURNAL, ROLE_JOURNAL_WAKER, "sched:sched_waking" },
		{ WHY_JOURNAL, ROLE_JOURNAL, "jbd2:jbd2_start_commit/end_commit" },
		{ WHY_CACHE, ROLE_CACHE, "filemap:mm_filemap_add_to_page_cache" },
		{ WHY_READAHEAD, ROLE_READAHEAD, "readahead:page_cache_sync_ra/async_ra" },
		{ WHY_WRITEBACK, ROLE_WRITEBACK, "ext4:ext4_writepages_result" },
		{ WHY_THROTTLE, ROLE_THROTTLE, "writeback:balance_dirty_pages" },
	};
	enum attach_method shared = plan->btf ? METHOD_TP_BTF : METHOD_RAW_TP;

	for (unsigned int i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		bool tp = roles[i].role == ROLE_CACHE || roles[i].role == ROLE_READAHEAD ||
			  roles[i].role == ROLE_WRITEBACK || roles[i].role == ROLE_THROTTLE;
		const struct prog_ref *r;
		int ret;

		if (!plan->why[roles[i].why])
			continue;
		r = progtab_role(&t->progs, roles[i].role, tp ? METHOD_TRACEPOINT : shared);
		if (r->exit)
			ret = attach_pair(t, bpf_program__attach(r->exit), entry_plain, r->entry,
					  NULL);
		else
			ret = attach_lone(t, r->entry);
		if (ret) {
			snprintf(err, errsz, "cannot attach to %s (%s): %s; run with --no-offcpu",
				 roles[i].what, method_name(r->method), strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/*
 * --pattern's block and bio programs, after the device layers' own: on the
 * same tracepoint theirs run first and record the request or bio
 * (bpf/pattern_blk.bpf.c).
 */
static int attach_patterns(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	static const struct {
		enum prog_role role;
		const char *tp;
	} progs[] = { { ROLE_PATTERN, "block_rq_issue" }, { ROLE_PATTERN_BIO, "block_bio_queue" } };

	for (unsigned int i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		bool on = progs[i].role == ROLE_PATTERN ? t->skel->rodata->pattern_blk
							 : t->skel->rodata->pattern_bio;
		int ret = on ? attach_lone(t, pattern_prog(t, plan, progs[i].role)) : 0;

		if (ret) {
			snprintf(err, errsz, "cannot attach to tracepoint block:%s (%s) for --pattern: %s",
				 progs[i].tp, plan->btf ? "tp_btf" : "raw_tp", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* A device layer (blk, bio): completion first, so no request or bio is
 * left open by us. */
static int attach_blk(struct tracer *t, const struct plan *plan, unsigned int layer, char *err,
		      size_t errsz)
{
	const struct cell_plan *cp = &plan->cells[layer][0];

	for (int i = (int)cp->nr_targets - 1; i >= 0; i--) {
		const char *tp = cp->targets[i];
		struct bpf_link *l =
		    bpf_program__attach(blk_prog(t, layer, cp, (unsigned int)i)->entry);

		if (!l || keep_link(t, l)) {
			snprintf(err, errsz, "cannot attach to tracepoint block:%s (%s): %s", tp,
				 method_name(cp->src), strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* io_uring: completion first (attach_pair), so no request is left open by us. */
static int attach_uring(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	enum attach_method src = plan->cells[LAYER_IO_URING][0].src;
	const struct prog_ref *r = progtab_role(&t->progs, ROLE_URING, src);
	const struct prog_ref *punt = progtab_role(&t->progs, ROLE_URING_PUNT, src);
	const struct prog_ref *poll = progtab_role(&t->progs, ROLE_URING_POLL, src);
	struct bpf_link *l;
	int ret = 0;

	/* The parts' programs first: a request is split from its start. */
	if (plan->uring_iowq_run) {
		l = bpf_program__attach(
		    progtab_role(&t->progs, ROLE_URING_IOWQ_RUN, METHOD_FENTRY)->entry);
		ret = l ? keep_link(t, l) : -errno;
		if (ret) {
			snprintf(err, errsz,
				 "cannot attach fentry to io_wq_submit_work: %s; --attach=tracepoint "
				 "leaves it out (io-wq then holds its queued time)",
				 strerror(-ret));
			return ret;
		}
	}
	if (plan->uring_parts) {
		l = bpf_program__attach(punt->entry);
		ret = l ? keep_link(t, l) : -errno;
		if (!ret)
			ret = attach_pair(t, bpf_program__attach(poll->exit), entry_plain,
					  poll->entry, NULL);
	}
	if (!ret)
		ret = attach_pair(t, bpf_program__attach(r->exit),
				  src == METHOD_RAW_TP ? entry_raw_tp : entry_plain, r->entry,
				  plan->uring_submit_tp);
	if (ret)
		snprintf(err, errsz,
			 "cannot attach to tracepoints io_uring:* (%s): %s; leave io_uring out "
			 "of -T (or its parts: --no-parts)",
			 method_name(src), strerror(-ret));
	return ret;
}

/*
 * aio: the completion first, then the fsync worker, then the submission
 * (its exit before its entry, attach_pair), so that no request is left
 * open by us.
 */
static int attach_aio(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	enum attach_method src = plan->cells[LAYER_AIO][0].src;
	const struct prog_ref *done = progtab_role(&t->progs, ROLE_AIO_COMPLETE, src);
	const struct prog_ref *work = progtab_role(&t->progs, ROLE_AIO_WORK, src);
	const struct prog_ref *sub = progtab_role(&t->progs, ROLE_AIO_SUBMIT, src);
	const char *fn = "aio_complete";
	int ret = attach_lone(t, done->entry);

	if (!ret && plan->aio_worker) {
		fn = "aio_fsync_work";
		ret = attach_pair(t, bpf_program__attach(work->exit), entry_plain, work->entry,
				  NULL);
	}
	if (!ret) {
		fn = "io_submit_one";
		ret = attach_pair(t, bpf_program__attach(sub->exit), entry_plain, sub->entry, NULL);
	}
	if (ret)
		snprintf(err, errsz, "cannot attach %s to %s: %s; leave aio out of -T",
			 method_name(src), fn, strerror(-ret));
	return ret;
}

/* Faults: the exit before the entry (attach_pair), so that no fault is
 * left open by us. */
static int attach_fault(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	enum attach_method src = plan->cells[LAYER_FAULT][0].src;
	const struct prog_ref *p = progtab_role(&t->progs, ROLE_FAULT, src);
	int ret = attach_pair(t, bpf_program__attach(p->exit), entry_plain, p->entry, NULL);

	if (ret)
		snprintf(err, errsz, "cannot attach %s to handle_mm_fault: %s; leave fault out of -T",
			 method_name(src), strerror(-ret));
	return ret;
}

/* The source of the syscall cells when they use the raw pair, else METHOD_NONE. */
static enum attach_method raw_syscall_source(const struct plan *plan)
{
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		enum attach_method src = plan->cells[LAYER_SYSCALL][op].src;

		if (src == METHOD_TP_BTF || src == METHOD_RAW_TP)
			return src;
	}
	return METHOD_NONE;
}

/* The raw sys_enter/sys_exit pair, once for every syscall cell. */
static int attach_raw_syscalls(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	enum attach_method src = raw_syscall_source(plan);
	const struct prog_ref *r = progtab_role(&t->progs, ROLE_RAW_SYSCALLS, src);
	int ret = attach_pair(t, bpf_program__attach(r->exit), entry_plain, r->entry, NULL);

	if (ret)
		snprintf(err, errsz,
			 "cannot attach to the raw syscall tracepoints sys_enter/sys_exit (%s): "
			 "%s; try --attach=tracepoint",
			 method_name(src), strerror(-ret));
	return ret;
}

/*
 * The skeleton's open, with the object that calls no kernel function unless
 * the plan calls one: where the kernel has no BTF of its own, libbpf
 * resolves a kfunc there only and refuses to load an object that declares
 * one without it (ESRCH), --btf or not; with the BPF JIT off the kernel
 * refuses any program that calls one (ENOTSUPP, "Unknown error 524" on
 * Debian's 6.1 booted with bpf_jit_enable=0). Both objects come from one
 * source (Makefile), with the same maps, programs and .rodata, so the one
 * skeleton serves either.
 */
static struct iostackbreak_bpf *open_object(const struct bpf_object_open_opts *opts,
					    bool kfuncs)
{
	struct iostackbreak_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj)
		return NULL;
	err = iostackbreak_bpf__create_skeleton(obj);
	if (!err && (!kfuncs || access("/sys/kernel/btf/vmlinux", R_OK)))
		obj->skeleton->data = (void *)iostackbreak_nokfunc_bpf__elf_bytes(
			&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, opts);
	if (err) {
		iostackbreak_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/*
 * Opens and loads the object, start slots in task storage or in a hash (of
 * hash_slots entries; 0: MAX_THREADS).
 */
static int open_and_load(struct tracer *t, const struct plan *plan, const struct config *cfg,
			 const struct targets *tg, bool task_storage, long hash_slots,
			 long fast_slots, char *err, size_t errsz)
{
	/* --btf's file for CO-RE, as for the probes (src/plan/probe.c). */
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = cfg->btf);
	int ret;

	t->skel = open_object(&open_opts, plan->rdonly_cast);
	if (!t->skel) {
		snprintf(err, errsz, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	knobs_set(t->skel, cfg, tg, plan, task_storage, hash_slots,
		  task_storage && plan->btf ? fast_slots : 0);
	t->breaking_down = config_breaks_down(cfg);
	progtab_resolve(&t->progs, t->skel);
	if (select_programs(t, plan, knobs_follow_children(cfg),
			    plan->split_layer >= 0 && cfg->offcpu, err, errsz))
		return -1;
	ret = iostackbreak_bpf__load(t->skel);
	if (ret) {
		/* 524, the kernel's own ENOTSUPP, has no text in libc. */
		snprintf(err, errsz,
			 "the kernel refused to load the BPF programs (%s); run "
			 "with -v to see the verifier's log",
			 -ret == 524 ? "ENOTSUPP: a feature they use is not supported here"
				     : strerror(-ret));
		return -1;
	}
	t->task_storage = task_storage;
	t->fast_slots = t->skel->rodata->use_fast_slots ? t->skel->rodata->fast_slots_mask + 1 : 0;
	t->hash_slots = task_storage ? 0 : (unsigned int)(hash_slots ? hash_slots : MAX_THREADS);
	t->events_fd = t->skel->rodata->events_on || t->skel->rodata->record_on
			   ? bpf_map__fd(t->skel->maps.events)
			   : -1;
	return 0;
}

void tracer_thread_state(const struct tracer *t, char *buf, size_t sz)
{
	if (t->fast_slots)
		snprintf(buf, sz,
			 "thread state: in %u fast slots at the thread's id, else in task storage",
			 t->fast_slots);
	else if (t->task_storage)
		snprintf(buf, sz, "thread state: in task storage");
	else
		snprintf(buf, sz, "thread state: in an LRU hash of %u threads", t->hash_slots);
}

/* --writeback's dirtier program, on writeback:writeback_dirty_folio. */
static int attach_dirtier(struct tracer *t, const struct plan *plan, char *err, size_t errsz)
{
	const struct prog_ref *r =
	    progtab_role(&t->progs, ROLE_DIRTY, plan->btf ? METHOD_TP_BTF : METHOD_RAW_TP);
	int ret = attach_lone(t, r->entry);

	if (ret)
		snprintf(err, errsz, "cannot attach to writeback:writeback_dirty_folio (%s): %s",
			 plan->btf ? "tp_btf" : "raw_tp", strerror(-ret));
	return ret ? -1 : 0;
}

int tracer_start(struct tracer *t, const struct plan *plan, const struct config *cfg,
		 const struct targets *tg, struct plan *done, char *err, size_t errsz)
{
	long slots = dev_switches()->hash_slots;
	long fast = dev_switches()->fast_slots;

	memset(t, 0, sizeof(*t));
	/*
	 * Only loading tells whether this kernel lets these program types use
	 * task storage: try it, and load again with the hash if it refuses.
	 */
	*done = *plan;
	t->plan = done;
	if (open_and_load(t, plan, cfg, tg, plan_traces_threads(plan) && !slots, slots, fast, err,
			  errsz)) {
		if (!plan_traces_threads(plan))
			return -1;
		iostackbreak_bpf__destroy(t->skel);
		t->skel = NULL;
		if (open_and_load(t, plan, cfg, tg, false, slots, 0, err, errsz))
			return -1;
	}
	if (tg->cgroup_fd >= 0) {
		__u32 zero = 0;

		if (bpf_map__update_elem(t->skel->maps.cgroup_filter, &zero, sizeof(zero),
					 &tg->cgroup_fd, sizeof(tg->cgroup_fd), BPF_ANY)) {
			snprintf(err, errsz, "cannot filter by cgroup: %s", strerror(errno));
			return -1;
		}
	}
	if (t->skel->rodata->use_fast_slots && attach_thread_gone(t, err, errsz))
		return -1;
	if (knobs_follow_children(cfg) &&
	    attach_follow(t, tg, cfg->children, plan->btf, err, errsz))
		return -1;
	if (plan->split_layer >= 0 && cfg->offcpu && attach_offcpu(t, plan->btf, err, errsz))
		return -1;
	if (attach_why(t, plan, err, errsz))
		return -1;
	/* Dirtiers before the requests that write their pages back. */
	if (plan->wb && attach_dirtier(t, plan, err, errsz))
		return -1;
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		if (layer_is_device(layer) && plan->cells[layer][0].src != METHOD_NONE &&
		    attach_blk(t, plan, layer, err, errsz))
			return -1;
	if (attach_patterns(t, plan, err, errsz))
		return -1;
	if (raw_syscall_source(plan) != METHOD_NONE && attach_raw_syscalls(t, plan, err, errsz))
		return -1;
	if (plan->cells[LAYER_IO_URING][0].src != METHOD_NONE && attach_uring(t, plan, err, errsz))
		return -1;
	if (plan->cells[LAYER_AIO][0].src != METHOD_NONE && attach_aio(t, plan, err, errsz))
		return -1;
	if (plan->cells[LAYER_FAULT][0].src != METHOD_NONE && attach_fault(t, plan, err, errsz))
		return -1;
	for (unsigned int layer = 0; layer < NR_CALL_LAYERS; layer++) {
		for (unsigned int op = 0; op < NR_FS_OPS; op++)
			if (plan->cells[layer][op].src != METHOD_NONE)
				attach_cell(t, plan, layer, &done->cells[layer][op]);
	}
	return 0;
}

/* A slice of the links, destroyed by one thread of tracer_stop(). */
struct detach_slice {
	struct bpf_link **links;
	size_t n;
};

static void *detach_slice(void *arg)
{
	struct detach_slice *d = arg;

	for (size_t i = d->n; i > 0; i--)
		bpf_link__destroy(d->links[i - 1]);
	return NULL;
}

#define DETACH_THREADS 16

/*
 * Detaching a classic tracepoint's link waits for an RCU grace period in
 * the kernel (tracepoint_synchronize_unregister), one after the other: 32
 * syscall tracepoints took seconds. Threads detaching slices side by side
 * wait for overlapping grace periods. Everything is going away, so the
 * order within the run no longer matters; the tracer's maps outlive them.
 */
static void detach_all(struct bpf_link **links, size_t n)
{
	struct detach_slice slices[DETACH_THREADS];
	pthread_t threads[DETACH_THREADS];
	size_t per = (n + DETACH_THREADS - 1) / DETACH_THREADS, nr = 0;

	for (size_t at = 0; at < n && per; at += per) {
		slices[nr] = (struct detach_slice){ links + at, n - at < per ? n - at : per };
		if (pthread_create(&threads[nr], NULL, detach_slice, &slices[nr]))
			detach_slice(&slices[nr]); /* no thread: do it here */
		else
			nr++;
	}
	for (size_t i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);
}

void tracer_detach(struct tracer *t)
{
	struct blk_leftovers m;

	blk_leftovers_mark(&m);
	t->aio_missed_at_end = aio_leftovers_count(t);
	detach_all(t->links, t->nr_links);
	t->nr_links = 0;
	t->blk_missed_at_end = blk_leftovers_count(t, &m);
}

void tracer_stop(struct tracer *t)
{
	detach_all(t->links, t->nr_links);
	free(t->links);
	iostackbreak_bpf__destroy(t->skel);
	memset(t, 0, sizeof(*t));
}
