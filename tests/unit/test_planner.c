// SPDX-License-Identifier: GPL-2.0
/*
 * The attach planner against fake kernels (unit.h): which source every
 * cell gets, on which targets, and why the others were passed over.
 *
 * (a) FAKE_DEBIAN61     fentry and kprobes, no block_io_start
 * (b) FAKE_KPROBES      the trial fentry was refused, kprobes work
 * (c) FAKE_TRACEPOINTS  neither: tracepoints only (the build host)
 * (d) FAKE_NO_BTF       no kernel BTF, kprobes work
 */
#include "unit.h"
#include "cells.h"

#define LAYER(l) (1U << (l))
#define MAX_NEEDLES 4

static struct fake_kernel fk;
static struct plan plan;
static struct config cfg;

static void build(enum fake_profile p, const char *layers, enum attach_method mode)
{
	fake_kernel_init(&fk, p);
	unit_config(&cfg, layers, mode);
}

/* Re-plans after a test changed fk or cfg. */
static void replan(void)
{
	plan_build(&fk.caps, &cfg, &plan);
}

static void plan_for(enum fake_profile p, const char *layers, enum attach_method mode)
{
	build(p, layers, mode);
	replan();
}

/* "read,pread64" from a cell's targets, for messages. */
static const char *targets_str(const struct cell_plan *cp)
{
	static char buf[256];
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < cp->nr_targets && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
					 cp->targets[i]);
	return buf;
}

/*
 * One cell: its source, its targets in order (NULL-terminated; NULL list:
 * not checked) and phrases its reason must contain.
 */
static void expect_cell(unsigned int layer, unsigned int op, enum attach_method src,
			const char *const *targets, const char *const *needles)
{
	const struct cell_plan *cp = &plan.cells[layer][op];
	const char *name = layer_name(layer), *opn = op_name(layer, op);

	cr_assert(cp->wanted, "%s %s not wanted", name, opn);
	cr_assert_eq(cp->src, src, "%s %s: source %s, want %s (why: %s)", name, opn,
		     method_name(cp->src), method_name(src), cp->why);
	if (src == METHOD_NONE) {
		cr_assert_eq(cp->nr_targets, 0, "%s %s: skipped but has targets %s", name, opn,
			     targets_str(cp));
		cr_assert_neq(cp->why[0], '\0', "%s %s: skipped without a reason", name, opn);
	}
	if (targets) {
		unsigned int n = 0;

		while (targets[n])
			n++;
		cr_assert_eq(cp->nr_targets, n, "%s %s: targets %s, want %u of them", name, opn,
			     targets_str(cp), n);
		for (unsigned int i = 0; i < n; i++) {
			cr_assert_str_eq(cp->targets[i], targets[i], "%s %s: target %u (%s)", name,
					 opn, i, targets_str(cp));
			cr_assert_eq(cp->tgt_src[i], src, "%s %s: target %s source %s", name, opn,
				     targets[i], method_name(cp->tgt_src[i]));
		}
	}
	for (unsigned int i = 0; needles && needles[i]; i++)
		cr_assert_not_null(strstr(cp->why, needles[i]), "%s %s: reason lacks \"%s\": %s",
				   name, opn, needles[i], cp->why);
}

#define T(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_TARGETS ((const char *const[]){ NULL })

static const char *const *const sys_targets[NR_FS_OPS] = {
	T("read", "pread64", "readv", "preadv", "preadv2"),
	T("write", "pwrite64", "writev", "pwritev", "pwritev2"),
	T("open", "openat", "openat2", "creat"),
	T("fsync", "fdatasync"),
};

static const char *const *const vfs_targets[NR_FS_OPS] = {
	T("vfs_read", "vfs_readv", "vfs_iter_read"),
	T("vfs_write", "vfs_writev", "vfs_iter_write"),
	T("vfs_open"),
	T("vfs_fsync_range"),
};

static const char *const *const ext4_targets[NR_FS_OPS] = {
	T("ext4_file_read_iter"),
	T("ext4_file_write_iter"),
	T("ext4_file_open"),
	T("ext4_sync_file"),
};

static const char *const *const btrfs_targets[NR_FS_OPS] = {
	T("btrfs_file_read_iter"),
	T("btrfs_file_write_iter"),
	T("btrfs_file_open"),
	T("btrfs_sync_file"),
};

static void expect_layer(unsigned int layer, enum attach_method src,
			 const char *const *const targets[NR_FS_OPS], const char *const *needles)
{
	for (unsigned int op = 0; op < NR_FS_OPS; op++)
		expect_cell(layer, op, src, targets ? targets[op] : NULL, needles);
}

static void expect_blk(enum attach_method src, const char *origin)
{
	const char *const with[] = { origin, "block_rq_issue", "block_rq_complete", NULL };
	const char *const queued[] = { origin, "block_rq_complete", NULL };
	const char *const *t = origin ? with : with + 1;

	/* -Q from block_io_start: the origin and the completion are enough. */
	if (cfg.queued && origin && !strcmp(origin, "block_io_start"))
		t = queued;

	if (origin)
		cr_assert(plan.blk_origin && !strcmp(plan.blk_origin, origin),
			  "blk origin %s, want %s", plan.blk_origin ? plan.blk_origin : "NULL",
			  origin);
	else
		cr_assert_null(plan.blk_origin, "blk origin %s, want none", plan.blk_origin);
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BLK, op, src, t, NULL);
}

/* The bio layer: queue and completion of each bio, every op. */
static void expect_bio(enum attach_method src)
{
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BIO, op, src,
			    T("block_split", "block_bio_queue", "block_bio_complete",
			      "block_rq_complete"),
			    NULL);
}

/* ---- (a) a Debian 6.1 kernel ---- */

Test(planner, debian61_auto)
{
	plan_for(FAKE_DEBIAN61, NULL, METHOD_NONE);

	cr_assert_gt(fk.lookups, 0, "the planner never asked the kernel");
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_FENTRY, vfs_targets, NULL);
	expect_layer(LAYER_EXT4, METHOD_FENTRY, ext4_targets, NULL);
	expect_layer(LAYER_XFS, METHOD_NONE, NULL, T("xfs", "modprobe xfs"));
	expect_layer(LAYER_BTRFS, METHOD_FENTRY, btrfs_targets, NULL);
	expect_blk(METHOD_TP_BTF, NULL);
	cr_assert_eq(plan.mode, METHOD_NONE);
	cr_assert_str_eq(plan.syscall_prefix, "__x64_sys_");
	cr_assert(plan.kprobe_fallback, "auto mode with kprobes may fall back");
	cr_assert_not(plan.blk_rq_q_arg);
	expect_bio(METHOD_TP_BTF);
	/* 4 syscall + 4 vfs + 4 ext4 + 4 btrfs + 5 io_uring + 6 aio + 4 fault +
	 * 5 bio + 5 blk; xfs not loaded. */
	cr_assert_eq(plan_nr_traced(&plan), 41);
	/* Faults: one pair on handle_mm_fault for every op. */
	for (unsigned int op = 0; op < NR_FAULT_OPS; op++) {
		const struct cell_plan *cp = &plan.cells[LAYER_FAULT][op];

		cr_assert(cp->wanted);
		cr_assert_eq(cp->src, METHOD_FENTRY, "fault %s", op_name(LAYER_FAULT, op));
		cr_assert_eq(cp->nr_targets, 1);
		cr_assert_str_eq(cp->targets[0], "handle_mm_fault");
	}
	cr_assert(plan.uring_complete_fields);
	/* Unused slots of fs-like layers are never wanted. */
	for (unsigned int l = 0; l < NR_CALL_LAYERS; l++)
		cr_assert_not(plan.cells[l][NR_FS_OPS].wanted, "%s op 4", layer_name(l));
}

Test(planner, debian61_xfs_loaded)
{
	build(FAKE_DEBIAN61, "xfs", METHOD_NONE);
	fake_add_fs(&fk, "xfs");
	replan();
	expect_cell(LAYER_XFS, FSOP_READ, METHOD_FENTRY, T("xfs_file_read_iter"), NULL);
	expect_cell(LAYER_XFS, FSOP_FSYNC, METHOD_FENTRY, T("xfs_file_fsync"), NULL);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
	/* Only the layer asked for is wanted. */
	cr_assert_not(plan.cells[LAYER_EXT4][FSOP_READ].wanted);
	cr_assert_eq(plan_nr_traced(&plan), 4);
}

Test(planner, debian61_f2fs_loaded)
{
	build(FAKE_DEBIAN61, "f2fs", METHOD_NONE);
	fake_add_fs(&fk, "f2fs");
	replan();
	expect_cell(LAYER_F2FS, FSOP_READ, METHOD_FENTRY, T("f2fs_file_read_iter"), NULL);
	expect_cell(LAYER_F2FS, FSOP_WRITE, METHOD_FENTRY, T("f2fs_file_write_iter"), NULL);
	expect_cell(LAYER_F2FS, FSOP_OPEN, METHOD_FENTRY, T("f2fs_file_open"), NULL);
	expect_cell(LAYER_F2FS, FSOP_FSYNC, METHOD_FENTRY, T("f2fs_sync_file"), NULL);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
	cr_assert_eq(plan_nr_traced(&plan), 4);
}

/* Candidates the kernel lacks are dropped, the others kept in order. */
Test(planner, missing_candidates_dropped)
{
	build(FAKE_DEBIAN61, "syscall,vfs", METHOD_NONE);
	fake_del_fn(&fk, "vfs_iter_read");
	fake_del_tp(&fk, "syscalls", "sys_enter_openat2"); /* half a pair is no pair */
	fake_del_tp(&fk, "syscalls", "sys_exit_pwritev2");
	replan();
	expect_cell(LAYER_VFS, FSOP_READ, METHOD_FENTRY, T("vfs_read", "vfs_readv"), NULL);
	expect_cell(LAYER_VFS, FSOP_WRITE, METHOD_FENTRY, vfs_targets[FSOP_WRITE], NULL);
	expect_cell(LAYER_SYSCALL, FSOP_OPEN, METHOD_TRACEPOINT, T("open", "openat", "creat"), NULL);
	expect_cell(LAYER_SYSCALL, FSOP_WRITE, METHOD_TRACEPOINT,
		    T("write", "pwrite64", "writev", "pwritev"), NULL);
}

/* arm64 has no open(2) nor creat(2). */
Test(planner, arm64_like_syscalls)
{
	build(FAKE_DEBIAN61, "syscall", METHOD_NONE);
	fake_del_tp(&fk, "syscalls", "sys_enter_open");
	fake_del_tp(&fk, "syscalls", "sys_exit_open");
	fake_del_tp(&fk, "syscalls", "sys_enter_creat");
	fake_del_tp(&fk, "syscalls", "sys_exit_creat");
	replan();
	expect_cell(LAYER_SYSCALL, FSOP_OPEN, METHOD_TRACEPOINT, T("openat", "openat2"), NULL);
}

/* A kernel without syscall tracepoints: syscalls by function instead. */
Test(planner, no_syscall_tracepoints)
{
	static const char *const sys[] = { FAKE_SYSCALLS };
	char ev[FAKE_NAME_LEN];

	build(FAKE_DEBIAN61, "syscall", METHOD_NONE);
	for (unsigned int i = 0; i < ARRAY_SIZE(sys); i++) {
		snprintf(ev, sizeof(ev), "sys_enter_%s", sys[i]);
		fake_del_tp(&fk, "syscalls", ev);
		snprintf(ev, sizeof(ev), "sys_exit_%s", sys[i]);
		fake_del_tp(&fk, "syscalls", ev);
	}
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_FENTRY, sys_targets, T("tracepoint: none"));
	cr_assert_str_eq(plan.syscall_prefix, "__x64_sys_");
}

/* Functions without BTF (a module built without it) but in kallsyms. */
Test(planner, fentry_without_functions_falls_to_kprobe)
{
	static const char *const fns[] = { "ext4_file_read_iter", "ext4_file_write_iter",
					   "ext4_file_open", "ext4_sync_file" };

	build(FAKE_DEBIAN61, "ext4", METHOD_NONE);
	for (unsigned int i = 0; i < ARRAY_SIZE(fns); i++)
		fake_del(&fk, "btf", fns[i]);
	replan();
	expect_layer(LAYER_EXT4, METHOD_KPROBE, ext4_targets, T("fentry: none of its functions"));
	expect_cell(LAYER_EXT4, FSOP_READ, METHOD_KPROBE, NULL, T("ext4_file_read_iter"));
}

/* ---- (b) kprobes only ---- */

Test(planner, kprobes_only_auto)
{
	plan_for(FAKE_KPROBES, NULL, METHOD_NONE);
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_KPROBE, vfs_targets, T("fentry: " FAKE_FENTRY_WHY));
	expect_layer(LAYER_EXT4, METHOD_KPROBE, ext4_targets, T("fentry: " FAKE_FENTRY_WHY));
	expect_layer(LAYER_BTRFS, METHOD_KPROBE, btrfs_targets, NULL);
	expect_blk(METHOD_TP_BTF, NULL);
	cr_assert(plan.kprobe_fallback);
}

/* ---- (c) tracepoints only ---- */

Test(planner, tracepoints_only_auto)
{
	plan_for(FAKE_TRACEPOINTS, NULL, METHOD_NONE);
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_NONE, NULL, T(FAKE_FENTRY_WHY, FAKE_KPROBE_WHY));
	for (unsigned int op = FSOP_READ; op < FSOP_FSYNC; op++)
		expect_cell(LAYER_EXT4, op, METHOD_NONE, NULL, T(FAKE_FENTRY_WHY, FAKE_KPROBE_WHY));
	/* ext4 has tracepoints around fsync: the one op that still works. */
	expect_cell(LAYER_EXT4, FSOP_FSYNC, METHOD_TRACEPOINT, T("ext4_sync_file_enter"),
		    T(FAKE_FENTRY_WHY, FAKE_KPROBE_WHY));
	expect_layer(LAYER_BTRFS, METHOD_NONE, NULL, NULL);
	expect_blk(METHOD_TP_BTF, NULL);
	cr_assert_not(plan.kprobe_fallback, "no kprobes: nothing to fall back to");
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0, "all layers by default: never failed");
}

Test(planner, tracepoints_only_without_ext4_tracepoints)
{
	build(FAKE_TRACEPOINTS, "ext4", METHOD_NONE);
	fake_del_tp(&fk, "ext4", "ext4_sync_file_exit");
	replan();
	expect_cell(LAYER_EXT4, FSOP_FSYNC, METHOD_NONE, NULL, T("tracepoint: none"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_EXT4));
}

/* ---- (d) no BTF ---- */

Test(planner, no_btf)
{
	plan_for(FAKE_NO_BTF, NULL, METHOD_NONE);
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_KPROBE, vfs_targets, T("fentry", "BTF"));
	expect_layer(LAYER_EXT4, METHOD_KPROBE, ext4_targets, T("fentry", "BTF"));
	/* No BTF: the block layer's typed tracepoints are out, raw ones in. */
	expect_blk(METHOD_RAW_TP, NULL);
	expect_cell(LAYER_BLK, BLKOP_READ, METHOD_RAW_TP, NULL, T("tp_btf", "BTF"));
	cr_assert(plan.blk_rq_q_arg, "blk_rq_q_arg follows the kernel");
}

Test(planner, no_btf_forced_fentry)
{
	plan_for(FAKE_NO_BTF, "vfs", METHOD_FENTRY);
	expect_layer(LAYER_VFS, METHOD_NONE, NULL, T("fentry", "BTF"));
	cr_assert_null(strstr(plan.cells[LAYER_VFS][FSOP_READ].why, "kprobe"),
		       "--attach=fentry must not try kprobes: %s",
		       plan.cells[LAYER_VFS][FSOP_READ].why);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_VFS));
}

/* ---- --attach ---- */

Test(planner, attach_kprobe)
{
	plan_for(FAKE_DEBIAN61, NULL, METHOD_KPROBE);
	/* Syscalls by their kernel function, named without the prefix. */
	expect_layer(LAYER_SYSCALL, METHOD_KPROBE, sys_targets, NULL);
	cr_assert_str_eq(plan.syscall_prefix, "__x64_sys_");
	expect_layer(LAYER_VFS, METHOD_KPROBE, vfs_targets, NULL);
	expect_layer(LAYER_EXT4, METHOD_KPROBE, ext4_targets, NULL);
	expect_blk(METHOD_TP_BTF, NULL);
	expect_cell(LAYER_BLK, BLKOP_WRITE, METHOD_TP_BTF, NULL, T("tracepoints only"));
	cr_assert_not(plan.kprobe_fallback, "kprobe mode has no fallback");
	cr_assert_eq(plan.mode, METHOD_KPROBE);
}

/* The prefixed name is what must be in kallsyms. */
Test(planner, attach_kprobe_uses_prefixed_names)
{
	build(FAKE_DEBIAN61, "syscall", METHOD_KPROBE);
	fake_del(&fk, "ksym", "__x64_sys_preadv2");
	replan();
	expect_cell(LAYER_SYSCALL, FSOP_READ, METHOD_KPROBE, T("read", "pread64", "readv", "preadv"),
		    NULL);

	build(FAKE_DEBIAN61, "syscall", METHOD_KPROBE);
	fk.caps.syscall_prefix = NULL; /* an architecture we do not know */
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_NONE, NULL, T("kprobe"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_SYSCALL));
}

Test(planner, attach_fentry)
{
	plan_for(FAKE_DEBIAN61, NULL, METHOD_FENTRY);
	expect_layer(LAYER_SYSCALL, METHOD_FENTRY, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_FENTRY, vfs_targets, NULL);
	cr_assert_not(plan.kprobe_fallback);

	plan_for(FAKE_TRACEPOINTS, NULL, METHOD_FENTRY);
	expect_layer(LAYER_VFS, METHOD_NONE, NULL, T("fentry: " FAKE_FENTRY_WHY));
	cr_assert_null(strstr(plan.cells[LAYER_VFS][FSOP_READ].why, FAKE_KPROBE_WHY),
		       "forced fentry: kprobes are not considered: %s",
		       plan.cells[LAYER_VFS][FSOP_READ].why);
	expect_cell(LAYER_EXT4, FSOP_FSYNC, METHOD_NONE, NULL, T("fentry"));
	expect_layer(LAYER_SYSCALL, METHOD_NONE, NULL, T("fentry"));
	expect_blk(METHOD_TP_BTF, NULL);
	expect_cell(LAYER_BLK, BLKOP_READ, METHOD_TP_BTF, NULL, T("fentry", "tracepoints only"));
}

Test(planner, attach_tracepoint)
{
	plan_for(FAKE_DEBIAN61, NULL, METHOD_TRACEPOINT);
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	expect_layer(LAYER_VFS, METHOD_NONE, NULL, T("has no tracepoint source"));
	expect_cell(LAYER_VFS, FSOP_OPEN, METHOD_NONE, NULL,
		    T("vfs has no tracepoint source for open"));
	expect_cell(LAYER_EXT4, FSOP_READ, METHOD_NONE, NULL, T("has no tracepoint source"));
	expect_cell(LAYER_EXT4, FSOP_FSYNC, METHOD_TRACEPOINT, T("ext4_sync_file_enter"), NULL);
	expect_blk(METHOD_TP_BTF, NULL);
	cr_assert_eq(plan.cells[LAYER_BLK][BLKOP_READ].why[0], '\0',
		     "blk is traced by tracepoints, nothing passed over: %s",
		     plan.cells[LAYER_BLK][BLKOP_READ].why);
	cr_assert_not(plan.kprobe_fallback);
}

Test(planner, kprobe_fallback_only_in_auto_with_kprobes)
{
	static const enum fake_profile profiles[] = { FAKE_DEBIAN61, FAKE_KPROBES, FAKE_TRACEPOINTS,
						      FAKE_NO_BTF };
	static const enum attach_method modes[] = { METHOD_NONE, METHOD_FENTRY, METHOD_KPROBE,
						  METHOD_TRACEPOINT };

	for (unsigned int p = 0; p < ARRAY_SIZE(profiles); p++) {
		for (unsigned int m = 0; m < ARRAY_SIZE(modes); m++) {
			plan_for(profiles[p], NULL, modes[m]);
			cr_assert_eq(plan.kprobe_fallback,
				     modes[m] == METHOD_NONE && fk.caps.kprobes,
				     "profile %u mode %s", p, attach_name(modes[m]));
		}
	}
}

/* A file system that is not registered says how to fix it, whatever the mode. */
Test(planner, fs_not_registered)
{
	static const enum attach_method modes[] = { METHOD_NONE, METHOD_FENTRY, METHOD_KPROBE,
						  METHOD_TRACEPOINT };
	char err[512];

	for (unsigned int m = 0; m < ARRAY_SIZE(modes); m++) {
		plan_for(FAKE_DEBIAN61, "xfs", modes[m]);
		expect_layer(LAYER_XFS, METHOD_NONE, NULL, T("modprobe xfs"));
		cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_XFS));
		plan_layer_error(&plan, LAYER_XFS, err, sizeof(err));
		cr_assert_not_null(strstr(err, "modprobe xfs"), "%s", err);
	}
	build(FAKE_DEBIAN61, "btrfs", METHOD_NONE);
	fake_del(&fk, "fs", "btrfs");
	replan();
	expect_layer(LAYER_BTRFS, METHOD_NONE, NULL, T("modprobe btrfs"));
}

/* ---- Failed layers and their error ---- */

/* The file-system layers of the table but those in `but`. */
static unsigned int fs_layers_but(unsigned int but)
{
	unsigned int mask = 0;

	for (unsigned int l = 0; l < NR_LAYERS; l++)
		if (layer_is_fs(l) && !(but & LAYER(l)))
			mask |= LAYER(l);
	return mask;
}

Test(planner, failed_layers)
{
	static const struct {
		enum fake_profile p;
		const char *layers; /* NULL: default, all layers */
		enum attach_method mode;
		unsigned int failed;
		unsigned int fs_but; /* and every file system but these */
	} rows[] = {
		{ FAKE_TRACEPOINTS, "vfs", METHOD_NONE, LAYER(LAYER_VFS), 0 },
		{ FAKE_TRACEPOINTS, NULL, METHOD_NONE, 0, 0 },
		{ FAKE_TRACEPOINTS, "ext4", METHOD_NONE, 0, 0 }, /* fsync works */
		{ FAKE_TRACEPOINTS, "syscall,vfs,ext4,blk", METHOD_NONE, LAYER(LAYER_VFS), 0 },
		{ FAKE_TRACEPOINTS, "vfs,btrfs", METHOD_NONE,
		  LAYER(LAYER_VFS) | LAYER(LAYER_BTRFS), 0 },
		{ FAKE_TRACEPOINTS, "syscall,blk", METHOD_NONE, 0, 0 },
		/* Every file system but ext4, whose fsync has tracepoints; aio
		 * and fault have no tracepoints. */
		{ FAKE_TRACEPOINTS, "all", METHOD_NONE,
		  LAYER(LAYER_VFS) | LAYER(LAYER_AIO) | LAYER(LAYER_FAULT),
		  LAYER(LAYER_EXT4) },
		/* Every file system that the fake does not register. */
		{ FAKE_DEBIAN61, "all", METHOD_NONE, 0, LAYER(LAYER_EXT4) | LAYER(LAYER_BTRFS) },
		{ FAKE_DEBIAN61, "vfs,ext4", METHOD_TRACEPOINT, LAYER(LAYER_VFS), 0 },
		{ FAKE_KPROBES, "vfs", METHOD_FENTRY, LAYER(LAYER_VFS), 0 },
		{ FAKE_KPROBES, "vfs", METHOD_NONE, 0, 0 },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		unsigned int want = rows[i].failed;

		if (rows[i].fs_but)
			want |= fs_layers_but(rows[i].fs_but);
		plan_for(rows[i].p, rows[i].layers, rows[i].mode);
		cr_assert_eq(plan_failed_layers(&plan, &cfg), want,
			     "row %u (-T %s --attach=%s): failed 0x%x, want 0x%x", i,
			     rows[i].layers ? rows[i].layers : "(default)",
			     attach_name(rows[i].mode), plan_failed_layers(&plan, &cfg), want);
	}
}

Test(planner, layer_error_names_reasons_and_remedy)
{
	char err[1024];

	plan_for(FAKE_TRACEPOINTS, "vfs", METHOD_NONE);
	plan_layer_error(&plan, LAYER_VFS, err, sizeof(err));
	cr_assert_not_null(strstr(err, "vfs"), "%s", err);
	cr_assert_not_null(strstr(err, FAKE_FENTRY_WHY), "lacks the fentry reason: %s", err);
	cr_assert_not_null(strstr(err, FAKE_KPROBE_WHY), "lacks the kprobe reason: %s", err);
	cr_assert_not_null(strstr(err, "CONFIG_KPROBES"), "lacks the remedy: %s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);

	/* Forced: the remedy is to stop forcing. */
	plan_for(FAKE_TRACEPOINTS, "vfs", METHOD_FENTRY);
	plan_layer_error(&plan, LAYER_VFS, err, sizeof(err));
	cr_assert_not_null(strstr(err, "--attach=auto"), "%s", err);
	cr_assert_not_null(strstr(err, FAKE_FENTRY_WHY), "%s", err);

	/* A small buffer is cut, not overrun. */
	memset(err, 'x', sizeof(err));
	plan_layer_error(&plan, LAYER_VFS, err, 16);
	cr_assert_eq(strlen(err), 15);
	cr_assert_eq(err[16], 'x');
}

/* ---- Block layer ---- */

Test(planner, blk_origin)
{
	plan_for(FAKE_DEBIAN61, "blk", METHOD_NONE);
	expect_blk(METHOD_TP_BTF, NULL);

	/* 6.1 has no block_io_start: insert is where queueing starts. */
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	cfg.queued = true;
	replan();
	expect_blk(METHOD_TP_BTF, "block_rq_insert");

	build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
	cfg.queued = true;
	replan();
	expect_blk(METHOD_TP_BTF, "block_io_start");

	/* Neither: -Q times from issue, and says so. */
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fake_del_tp(&fk, "block", "block_rq_insert");
	cfg.queued = true;
	replan();
	expect_blk(METHOD_TP_BTF, NULL);
	expect_cell(LAYER_BLK, BLKOP_FLUSH, METHOD_TP_BTF, NULL, T("-Q", "from issue"));
}

/* Filters by task need the submitter, known only where a request starts. */
Test(planner, blk_origin_for_task_filters)
{
	static char *cmd[] = { (char *)"dd", NULL };

	for (int i = 0; i < 6; i++) {
		build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
		switch (i) {
		case 0:
			cfg.pids[0] = 42;
			cfg.nr_pids = 1;
			break;
		case 1:
			cfg.command = cmd;
			break;
		case 2:
			cfg.tid = 43;
			break;
		case 3:
			cfg.comm = "fio";
			break;
		case 4:
			cfg.cgroup = "/sys/fs/cgroup/x";
			break;
		case 5:
			cfg.per_process = true;
			break;
		}
		replan();
		cr_assert(plan.blk_origin && !strcmp(plan.blk_origin, "block_io_start"),
			  "case %d: origin %s", i, plan.blk_origin ? plan.blk_origin : "NULL");
		expect_blk(METHOD_TP_BTF, "block_io_start");
	}
}

/*
 * Before block_io_start a PREFLUSH request is never seen where it starts:
 * block_getrq sees its bio in the submitter's context, where the submitter
 * is needed and insert is the origin; nowhere else.
 */
Test(planner, blk_preflush_bios_before_block_io_start)
{
	const char *const getrq[] = { "block_rq_insert", "block_rq_issue", "block_rq_complete",
				      "block_getrq", NULL };

	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fake_add_tp(&fk, "block", "block_getrq");
	cfg.pids[0] = 42;
	cfg.nr_pids = 1;
	replan();
	cr_assert(plan.blk_preflush_bios);
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BLK, op, METHOD_TP_BTF, getrq, NULL);

	/* -P names each flush's owner too. */
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fake_add_tp(&fk, "block", "block_getrq");
	cfg.per_process = true;
	replan();
	cr_assert(plan.blk_preflush_bios);

	/* No one to name (-Q alone), or no block_getrq: not attached. */
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fake_add_tp(&fk, "block", "block_getrq");
	cfg.queued = true;
	replan();
	cr_assert_not(plan.blk_preflush_bios);
	expect_blk(METHOD_TP_BTF, "block_rq_insert");
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	cfg.pids[0] = 42;
	cfg.nr_pids = 1;
	replan();
	cr_assert_not(plan.blk_preflush_bios);
	expect_blk(METHOD_TP_BTF, "block_rq_insert");

	/* block_io_start sees every request where it starts. */
	build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
	fake_add_tp(&fk, "block", "block_getrq");
	cfg.pids[0] = 42;
	cfg.nr_pids = 1;
	replan();
	cr_assert_not(plan.blk_preflush_bios);
	expect_blk(METHOD_TP_BTF, "block_io_start");
}

Test(planner, blk_rq_q_arg_follows_caps)
{
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fk.caps.blk_rq_q_arg = true;
	replan();
	cr_assert(plan.blk_rq_q_arg);
	fk.caps.blk_rq_q_arg = false;
	replan();
	cr_assert_not(plan.blk_rq_q_arg);
}

Test(planner, blk_without_issue_tracepoints)
{
	build(FAKE_DEBIAN61, "blk", METHOD_NONE);
	fake_del_tp(&fk, "block", "block_rq_complete");
	replan();
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BLK, op, METHOD_NONE, NULL, T("block_rq_issue/complete"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_BLK));
}

/* ---- plan_print ---- */

static unsigned int count_substr(const char *s, const char *needle)
{
	unsigned int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* The line of a cell, "vfs      read     ...". */
static const char *find_line(const char *text, const char *layer, const char *op, char *line,
			     size_t sz)
{
	char head[32];
	const char *p, *end;

	snprintf(head, sizeof(head), "%-8s %-8s ", layer, op);
	for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, head, strlen(head)))
			continue;
		end = strchr(p, '\n');
		snprintf(line, sz, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
		return line;
	}
	cr_assert_fail("no line for %s %s in:\n%s", layer, op, text);
	return NULL;
}

/* ---- io_uring ---- */

/* Its two tracepoints time every op, tp_btf where BTF is, raw_tp else;
 * --attach=fentry or kprobe leaves it on its tracepoints, saying so. */
Test(planner, io_uring_from_its_tracepoints)
{
	const char *const *tps = T("io_uring_submit_req", "io_uring_complete");

	build(FAKE_TRACEPOINTS, "io_uring", METHOD_NONE);
	replan();
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		expect_cell(LAYER_IO_URING, op, METHOD_TP_BTF, tps, NULL);
	cr_assert_not(plan.uring_complete_fields);
	cr_assert_not(plan_traces_threads(&plan), "io_uring requests are not calls of threads");
	cr_assert_eq(plan.root_layer, -1);
	build(FAKE_NO_BTF, "io_uring", METHOD_NONE);
	replan();
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		expect_cell(LAYER_IO_URING, op, METHOD_RAW_TP, tps, T("tp_btf: no kernel BTF"));
	build(FAKE_DEBIAN61, "io_uring", METHOD_KPROBE);
	replan();
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		expect_cell(LAYER_IO_URING, op, METHOD_TP_BTF, tps,
			    T("kprobe: io_uring is traced by its tracepoints only"));
	cr_assert(plan.uring_complete_fields);
}

/* Debian 12's 6.1 names the submission io_uring_submit_sqe (renamed later),
 * with the request first as well: the layer is timed from it. */
Test(planner, io_uring_from_submit_sqe_before_the_rename)
{
	build(FAKE_DEBIAN61, "io_uring", METHOD_NONE);
	fake_del_tp(&fk, "io_uring", "io_uring_submit_req");
	fake_add_tp(&fk, "io_uring", "io_uring_submit_sqe");
	replan();
	cr_assert_str_eq(plan.uring_submit_tp, "io_uring_submit_sqe");
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		cr_assert_str_eq(plan.cells[LAYER_IO_URING][op].targets[0], "io_uring_submit_sqe");
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
}

/* A kernel without them (before 6.0, or no CONFIG_IO_URING): -T io_uring
 * fails with the reason; in the default set it is skipped. */
Test(planner, io_uring_without_tracepoints)
{
	build(FAKE_DEBIAN61, "io_uring", METHOD_NONE);
	fake_del_tp(&fk, "io_uring", "io_uring_submit_req");
	replan();
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		expect_cell(LAYER_IO_URING, op, METHOD_NONE, NULL,
			    T("io_uring:io_uring_submit_req missing", "CONFIG_IO_URING"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_IO_URING));
	build(FAKE_DEBIAN61, NULL, METHOD_NONE);
	fake_del_tp(&fk, "io_uring", "io_uring_complete");
	replan();
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
	cr_assert_eq(plan.cells[LAYER_IO_URING][UOP_OTHER].src, METHOD_NONE);
}

/* The parts: three more tracepoints where the kernel has them, none with
 * --no-parts; without them requests are timed whole, saying why. */
Test(planner, io_uring_parts)
{
	const char *const *all = T("io_uring_submit_req", "io_uring_complete",
				   "io_uring_queue_async_work", "io_uring_poll_arm",
				   "io_uring_task_add");

	build(FAKE_TRACEPOINTS, "io_uring", METHOD_NONE);
	fake_add_tp(&fk, "io_uring", "io_uring_queue_async_work");
	fake_add_tp(&fk, "io_uring", "io_uring_poll_arm");
	fake_add_tp(&fk, "io_uring", "io_uring_task_add");
	cfg.split_calls = true; /* the default of the command line */
	replan();
	cr_assert(plan.uring_parts);
	for (unsigned int op = 0; op < NR_URING_OPS; op++)
		expect_cell(LAYER_IO_URING, op, METHOD_TP_BTF, all, NULL);
	cfg.split_calls = false;
	replan();
	cr_assert_not(plan.uring_parts, "--no-parts");
	cfg.split_calls = true;
	fk.caps.uring_parts_other_args = true;
	replan();
	cr_assert_not(plan.uring_parts, "tracepoints of another prototype");
	expect_cell(LAYER_IO_URING, UOP_READ, METHOD_TP_BTF,
		    T("io_uring_submit_req", "io_uring_complete"), T("do not take the request"));
	build(FAKE_TRACEPOINTS, "io_uring", METHOD_NONE);
	cfg.split_calls = true;
	replan();
	cr_assert_not(plan.uring_parts);
	expect_cell(LAYER_IO_URING, UOP_READ, METHOD_TP_BTF,
		    T("io_uring_submit_req", "io_uring_complete"),
		    T("parts: io_uring:io_uring_task_add missing"));
}

/* io-wq-queued: fentry on io_wq_submit_work (no tracepoint marks a worker
 * taking a request), where fentry attaches and the function is in BTF, and
 * not when --attach forces another method; --plan says which. */
Test(planner, io_uring_iowq_queued_from_fentry)
{
	const char *const *tps = T("io_uring_submit_req", "io_uring_complete",
				   "io_uring_queue_async_work", "io_uring_poll_arm",
				   "io_uring_task_add");
	static const struct {
		enum fake_profile profile;
		enum attach_method attach;
		bool in_btf, run;
		const char *why;
	} cases[] = {
		{ FAKE_DEBIAN61, METHOD_NONE, true, true, "io-wq-queued ends at fentry" },
		{ FAKE_DEBIAN61, METHOD_FENTRY, true, true, "io-wq-queued ends at fentry" },
		{ FAKE_DEBIAN61, METHOD_TRACEPOINT, true, false, "(--attach)" },
		{ FAKE_DEBIAN61, METHOD_NONE, false, false, "(not in kernel BTF)" },
		{ FAKE_TRACEPOINTS, METHOD_NONE, true, false, FAKE_FENTRY_WHY },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(cases[i].profile, "io_uring", cases[i].attach);
		for (unsigned int tp = 2; tp < 5; tp++)
			fake_add_tp(&fk, "io_uring", tps[tp]);
		if (cases[i].in_btf)
			fake_add_fn(&fk, "io_wq_submit_work");
		cfg.split_calls = true;
		replan();
		cr_assert(plan.uring_parts, "case %u", i);
		cr_assert_eq(plan.uring_iowq_run, cases[i].run, "case %u", i);
		expect_cell(LAYER_IO_URING, UOP_FSYNC, METHOD_TP_BTF, tps, T(cases[i].why));
		cfg.split_calls = false;
		replan();
		cr_assert_not(plan.uring_iowq_run, "--no-parts, case %u", i);
	}
}

/* --plan names each op's opcodes. */
Test(planner, io_uring_plan_names_opcodes)
{
	char line[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	build(FAKE_TRACEPOINTS, "io_uring", METHOD_NONE);
	replan();
	plan_print(&plan, out);
	fclose(out);
	cr_assert_not_null(strstr(find_line(text, "io_uring", "read", line, sizeof(line)),
				  "opcodes READ,READV,READ_FIXED,READ_MULTISHOT"),
			   "%s", line);
	cr_assert_not_null(strstr(find_line(text, "io_uring", "fsync", line, sizeof(line)),
				  "opcodes FSYNC,SYNC_FILE_RANGE"),
			   "%s", line);
	cr_assert_not_null(strstr(find_line(text, "io_uring", "other", line, sizeof(line)),
				  "opcodes all others"),
			   "%s", line);
	free(text);
}

Test(planner, print_table)
{
	struct membuf m;
	const char *text;
	char line[1024];
	unsigned int skipped = 0;

	build(FAKE_TRACEPOINTS, "syscall,vfs,ext4,blk", METHOD_NONE);
	cfg.queued = true;
	replan();
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);

	cr_assert_eq(strncmp(text, "LAYER", 5), 0, "no header:\n%s", text);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int op = 0; op < layer_nr_ops(l); op++)
			skipped += plan.cells[l][op].wanted && plan.cells[l][op].src == METHOD_NONE;
	cr_assert_eq(skipped, 7, "4 vfs + 3 ext4 cells skipped");
	/* Calls are not split here: the parts' lines (lock, journal, cache, ra,
	 * wb, the journal's requests) say so too, and so does the charging
	 * of written-back requests to their dirtiers (off here). */
	cr_assert_eq(count_substr(text, "skipped:"), skipped + NR_WHYS + 1 + 1,
		     "one skipped: per skipped cell and part:\n%s", text);
	/* One line per wanted cell and per part, plus the header and how blk
	 * times requests. */
	cr_assert_eq(count_substr(text, "\n"), 1 + 4 + 4 + 4 + 5 + NR_WHYS + 1 + 1 + 1, "%s", text);
	cr_assert_not_null(strstr(text, "\nblk      dirtier  -          skipped: "), "%s", text);
	cr_assert_not_null(strstr(text, "\nblk timing: programs keyed by request"), "%s", text);
	cr_assert_null(strstr(text, "xfs"), "xfs was not asked for:\n%s", text);

	find_line(text, "syscall", "read", line, sizeof(line));
	cr_assert_not_null(strstr(line, "tracepoint"), "%s", line);
	cr_assert_not_null(strstr(line, "sys_*_read,sys_*_pread64"), "%s", line);
	find_line(text, "vfs", "open", line, sizeof(line));
	cr_assert_not_null(strstr(line, "skipped:"), "%s", line);
	cr_assert_not_null(strstr(line, FAKE_FENTRY_WHY), "%s", line);
	find_line(text, "ext4", "fsync", line, sizeof(line));
	cr_assert_not_null(strstr(line, "tracepoint"), "%s", line);
	cr_assert_not_null(strstr(line, "ext4_sync_file"), "%s", line);
	cr_assert_not_null(strstr(line, "passed over:"), "%s", line);
	find_line(text, "blk", "discard", line, sizeof(line));
	cr_assert_not_null(strstr(line, "tp_btf"), "%s", line);
	cr_assert_not_null(strstr(line, "block_io_start,block_rq_complete"), "%s", line);
	membuf_free(&m);
}

/* By function: syscalls print with the architecture's prefix, and a target
 * that fell back at attach time says to what. */
Test(planner, print_prefix_and_fallback)
{
	struct membuf m;
	const char *text;
	char line[1024];

	plan_for(FAKE_DEBIAN61, "syscall,vfs", METHOD_KPROBE);
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);
	find_line(text, "syscall", "fsync", line, sizeof(line));
	cr_assert_not_null(strstr(line, "kprobe"), "%s", line);
	cr_assert_not_null(strstr(line, "__x64_sys_fsync,__x64_sys_fdatasync"), "%s", line);
	membuf_free(&m);

	plan_for(FAKE_DEBIAN61, "vfs", METHOD_NONE);
	plan.cells[LAYER_VFS][FSOP_READ].tgt_src[1] = METHOD_KPROBE; /* as attach would */
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);
	find_line(text, "vfs", "read", line, sizeof(line));
	cr_assert_not_null(strstr(line, "vfs_read,vfs_readv(kprobe),vfs_iter_read"), "%s", line);
	membuf_free(&m);
}

/* ---- The raw syscall tracepoints ---- */

static void add_raw_syscalls(void)
{
	fake_add_tp(&fk, "raw_syscalls", "sys_enter");
	fake_add_tp(&fk, "raw_syscalls", "sys_exit");
}

/* Where raw_syscalls exists, auto takes it for every syscall cell, with the
 * x86-64 numbers, and says why the per-syscall tracepoints were not. */
Test(planner, raw_syscalls_first_in_auto)
{
	build(FAKE_TRACEPOINTS, "syscall", METHOD_NONE);
	add_raw_syscalls();
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_TP_BTF, sys_targets, T("tracepoint: a pair per syscall"));
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		const struct cell_plan *cp = &plan.cells[LAYER_SYSCALL][op];

		for (unsigned int i = 0; i < cp->nr_targets; i++)
			cr_assert_geq(cell_targets[cp->target_ids[i]].nr, 0, "%s", cp->targets[i]);
	}
#if defined(__x86_64__)
	/* The numbers of the x86-64 ABI (arch/x86/entry/syscalls/syscall_64.tbl). */
	cr_assert_eq(cell_targets[plan.cells[LAYER_SYSCALL][FSOP_READ].target_ids[1]].nr, 17);
	cr_assert_eq(cell_targets[plan.cells[LAYER_SYSCALL][FSOP_OPEN].target_ids[1]].nr, 257);
	cr_assert_eq(cell_targets[plan.cells[LAYER_SYSCALL][FSOP_FSYNC].target_ids[1]].nr, 75);
#endif
}

Test(planner, raw_syscalls_without_btf_use_raw_tp)
{
	build(FAKE_NO_BTF, "syscall", METHOD_NONE);
	add_raw_syscalls();
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_RAW_TP, sys_targets, T("tp_btf: no kernel BTF"));
}

/* --attach=tracepoint forces one pair per syscall; --attach=raw the raw
 * pair, and where there is none the layer fails with the reason. */
Test(planner, attach_forces_either_syscall_source)
{
	build(FAKE_TRACEPOINTS, "syscall", METHOD_TRACEPOINT);
	add_raw_syscalls();
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_TRACEPOINT, sys_targets, NULL);
	build(FAKE_TRACEPOINTS, "syscall", METHOD_TP_BTF);
	add_raw_syscalls();
	replan();
	expect_layer(LAYER_SYSCALL, METHOD_TP_BTF, sys_targets, NULL);
	cr_assert_null(strstr(plan.cells[LAYER_SYSCALL][0].why, "a pair per syscall"),
		       "forced, not chosen: %s", plan.cells[LAYER_SYSCALL][0].why);
	plan_for(FAKE_TRACEPOINTS, "syscall", METHOD_TP_BTF);
	expect_layer(LAYER_SYSCALL, METHOD_NONE, NULL, T("no raw_syscalls:sys_enter/sys_exit"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 1U << LAYER_SYSCALL);
}

/* ---- The table of cells ---- */

/* Every fs-like cell has targets, none has more than a plan can hold. */
Test(planner, every_cell_has_targets_that_fit_a_plan)
{
	for (unsigned int l = 0; l < NR_LAYERS; l++) {
		for (unsigned int op = 0; op < NR_OPS; op++) {
			unsigned int ids[NR_CELL_TARGETS], n = 0;

			for (unsigned int k = TARGET_SYSCALL; k <= TARGET_TP; k++)
				n += cell_targets_of(l, op, (enum target_kind)k, ids,
						     NR_CELL_TARGETS);
			cr_assert_leq(n, MAX_TARGETS, "%s op %u: more targets than a plan holds",
				      layer_name(l), op);
			if (l >= NR_CALL_LAYERS || op >= NR_FS_OPS)
				cr_assert_eq(n, 0, "%s op %u has no functions", layer_name(l), op);
			else
				cr_assert_gt(n, 0, "%s %s has no target", layer_name(l),
					     op_name(l, op));
		}
	}
}

Test(planner, source_names)
{
	cr_assert_str_eq(method_name(METHOD_NONE), "-");
	cr_assert_str_eq(method_name(METHOD_TRACEPOINT), "tracepoint");
	cr_assert_str_eq(method_name(METHOD_TP_BTF), "tp_btf");
	cr_assert_str_eq(method_name(METHOD_RAW_TP), "raw_tp");
	cr_assert_str_eq(method_name(METHOD_FENTRY), "fentry");
	cr_assert_str_eq(method_name(METHOD_KPROBE), "kprobe");
}

/* The lock and journal parts, and the page counts: with their tracepoints
 * and split calls; a kernel without them (6.1 has no readahead ones, 5.15
 * no contention ones) keeps the time in blocked, and --plan says so. */
Test(planner, parts_follow_their_tracepoints)
{
	struct membuf m;
	const char *text;
	char line[1024];

	build(FAKE_TRACEPOINTS, "syscall", METHOD_NONE);
	cfg.split_calls = true;
	cfg.offcpu = true;
	fake_add_tp(&fk, "lock", "contention_begin");
	fake_add_tp(&fk, "lock", "contention_end");
	fake_add_tp(&fk, "jbd2", "jbd2_start_commit");
	fake_add_tp(&fk, "jbd2", "jbd2_end_commit");
	fake_add_tp(&fk, "block", "block_bio_backmerge");
	fake_add_tp(&fk, "block", "block_bio_frontmerge");
	fake_add_tp(&fk, "filemap", "mm_filemap_add_to_page_cache");
	fake_add_tp(&fk, "readahead", "page_cache_sync_ra");
	fake_add_tp(&fk, "readahead", "page_cache_async_ra");
	fake_add_tp(&fk, "ext4", "ext4_writepages_result");
	fake_add_tp(&fk, "writeback", "balance_dirty_pages");
	replan();
	for (unsigned int w = 0; w < NR_WHYS; w++)
		cr_assert(plan.why[w], "part %u not planned", w);
	cr_assert(part_traced(&plan, true, FSOP_WRITE, PART_THROTTLED));
	cr_assert_str_eq(part_name(PART_THROTTLED), "throttled");

	fake_del_tp(&fk, "lock", "contention_end");
	fake_del_tp(&fk, "readahead", "page_cache_async_ra");
	replan();
	cr_assert_not(plan.why[WHY_LOCK]);
	cr_assert_not(plan.why[WHY_READAHEAD]);
	cr_assert(plan.why[WHY_JOURNAL] && plan.why[WHY_CACHE]);
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);
	find_line(text, "parts", "lock", line, sizeof(line));
	cr_assert_not_null(strstr(line, "skipped: no lock:contention_begin/end"), "%s", line);
	cr_assert_not_null(strstr(line, "blocked"), "%s", line);
	find_line(text, "parts", "journal", line, sizeof(line));
	cr_assert_not_null(strstr(line, "jbd2:jbd2_start_commit,jbd2_end_commit"), "%s", line);
	membuf_free(&m);

	/* The waits need the off-CPU parts; the pages do not. */
	cfg.offcpu = false;
	replan();
	cr_assert_not(plan.why[WHY_JOURNAL]);
	cr_assert_not(plan.why[WHY_THROTTLE]);
	cr_assert(plan.why[WHY_CACHE] && plan.why[WHY_WRITEBACK]);

	/* No ext4 (not loaded): no writeback pages, and --plan says so. */
	fake_del_tp(&fk, "ext4", "ext4_writepages_result");
	replan();
	cr_assert_not(plan.why[WHY_WRITEBACK]);
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);
	find_line(text, "parts", "wb", line, sizeof(line));
	cr_assert_not_null(strstr(line, "writeback_pages is 0"), "%s", line);
	membuf_free(&m);

	/* No dirty throttling tracepoint: its pauses stay in io_wait. */
	cfg.offcpu = true;
	fake_del_tp(&fk, "writeback", "balance_dirty_pages");
	replan();
	cr_assert_not(plan.why[WHY_THROTTLE]);
	cr_assert_not(part_traced(&plan, true, FSOP_WRITE, PART_THROTTLED));
	plan_print(&plan, membuf_open(&m));
	text = membuf_close(&m);
	find_line(text, "parts", "throttle", line, sizeof(line));
	cr_assert_not_null(strstr(line, "stays in io_wait"), "%s", line);
	membuf_free(&m);
}

/* ---- One program per request where the kernel stamps requests ---- */

static bool fake_stamped(void *ctx, const char *disk, bool queued, char *why, size_t whysz)
{
	(void)ctx;
	snprintf(why, whysz, "fake %s %s", disk ? disk : "all", queued ? "iostats" : "stats");
	return !disk || strcmp(disk, "unstamped0");
}

static void expect_stamped(const char *field, const char *why)
{
	const char *const complete[] = { "block_rq_complete", NULL };

	cr_assert(plan.blk_stamped, "not stamped: %s", plan.blk_timing);
	cr_assert_null(plan.blk_origin, "origin %s", plan.blk_origin);
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BLK, op, METHOD_TP_BTF, complete, NULL);
	cr_assert(strstr(plan.blk_timing, "one program per request"), "%s", plan.blk_timing);
	cr_assert(strstr(plan.blk_timing, field), "%s", plan.blk_timing);
	cr_assert(strstr(plan.blk_timing, why), "%s", plan.blk_timing);
}

Test(planner, blk_one_program_where_requests_are_stamped)
{
	build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
	fk.caps.blk_stamped = fake_stamped;
	replan();
	expect_stamped("rq->io_start_time_ns", "fake all stats");

	cfg.queued = true;
	cfg.disk = "loop3";
	cfg.per_disk = true;
	cfg.per_flags = true;
	replan();
	expect_stamped("rq->start_time_ns", "fake loop3 iostats");
}

Test(planner, blk_falls_back_and_says_why)
{
	/* A kernel that cannot tell (no callback): today's programs. */
	plan_for(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
	expect_blk(METHOD_TP_BTF, NULL);
	cr_assert_not(plan.blk_stamped);
	cr_assert(strstr(plan.blk_timing, "programs keyed by request"), "%s", plan.blk_timing);

	/* The disk is not stamped. */
	build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
	fk.caps.blk_stamped = fake_stamped;
	cfg.disk = "unstamped0";
	cfg.queued = true;
	replan();
	expect_blk(METHOD_TP_BTF, "block_io_start");
	cr_assert_not(plan.blk_stamped);
	cr_assert(strstr(plan.blk_timing, "fake unstamped0 iostats"), "%s", plan.blk_timing);

	/* Who submitted a request is needed (-P, -G): never one program. */
	for (int g = 0; g < 2; g++) {
		build(FAKE_TRACEPOINTS, "blk", METHOD_NONE);
		fk.caps.blk_stamped = fake_stamped;
		cfg.per_process = !g;
		cfg.per_cgroup = g;
		replan();
		expect_blk(METHOD_TP_BTF, "block_io_start");
		cr_assert_not(plan.blk_stamped);
		cr_assert(strstr(plan.blk_timing, "submitter"), "%s", plan.blk_timing);
	}
}

/* ---- The bio layer ---- */

Test(planner, bio_from_its_tracepoints)
{
	plan_for(FAKE_TRACEPOINTS, "bio", METHOD_NONE);
	expect_bio(METHOD_TP_BTF);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
	cr_assert_not(plan_traces_threads(&plan), "bio times bios, not calls of threads");
	cr_assert_eq(plan.root_layer, -1);
	plan_for(FAKE_NO_BTF, "bio", METHOD_NONE);
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BIO, op, METHOD_RAW_TP, NULL, T("tp_btf", "BTF"));
	plan_for(FAKE_DEBIAN61, "bio", METHOD_KPROBE);
	expect_cell(LAYER_BIO, BLKOP_READ, METHOD_TP_BTF, NULL, T("kprobe", "tracepoints only"));
}

/* -D: the stack needs the remaps of stacked devices too, first. */
/* The interpreter (JIT off) runs no bpf_loop: no bio layer, and why. */
Test(planner, bio_not_without_the_jit)
{
	build(FAKE_TRACEPOINTS, "bio,blk", METHOD_NONE);
	fk.caps.jit_off = true;
	replan();
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BIO, op, METHOD_NONE, NULL, T("JIT is off", "bpf_jit_enable=1"));
	cr_assert_neq(plan.cells[LAYER_BLK][BLKOP_READ].src, METHOD_NONE);
}

Test(planner, bio_per_disk_adds_the_remaps)
{
	build(FAKE_TRACEPOINTS, "bio", METHOD_NONE);
	cfg.per_disk = true;
	replan();
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BIO, op, METHOD_TP_BTF,
			    T("block_bio_remap", "block_split", "block_bio_queue", "block_bio_complete",
			      "block_rq_complete"),
			    NULL);
}

Test(planner, bio_without_its_tracepoints)
{
	build(FAKE_DEBIAN61, "bio", METHOD_NONE);
	fake_del_tp(&fk, "block", "block_bio_complete");
	replan();
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		expect_cell(LAYER_BIO, op, METHOD_NONE, NULL, T("block_bio_queue/complete"));
	cr_assert_eq(plan_failed_layers(&plan, &cfg), LAYER(LAYER_BIO));
}

Test(planner, bio_q_arg_follows_caps)
{
	build(FAKE_DEBIAN61, "bio", METHOD_NONE);
	fk.caps.bio_q_arg = true;
	replan();
	cr_assert(plan.bio_q_arg);
	fk.caps.bio_q_arg = false;
	replan();
	cr_assert_not(plan.bio_q_arg);
}

/*
 * The journal commits' requests are counted only where every request is
 * seen where it starts (block_io_start); at block_rq_insert (6.1) a
 * commit's blocks have merged and its commit block has left for the flush
 * machinery: not counted, and --plan says why.
 */
Test(planner, journal_requests_only_from_block_io_start)
{
	struct membuf m;
	const char *text;
	char line[1024];
	static const enum fake_profile kernels[] = { FAKE_TRACEPOINTS, FAKE_DEBIAN61 };

	for (unsigned int k = 0; k < ARRAY_SIZE(kernels); k++) {
		bool io_start = kernels[k] == FAKE_TRACEPOINTS;

		build(kernels[k], "syscall,blk", METHOD_NONE);
		cfg.split_calls = true;
		cfg.offcpu = true;
		fake_add_tp(&fk, "jbd2", "jbd2_start_commit");
		fake_add_tp(&fk, "jbd2", "jbd2_end_commit");
		replan();
		cr_assert(plan.why[WHY_JOURNAL]);
		cr_assert_eq(plan.journal_blk, io_start, "kernel %u", k);
		plan_print(&plan, membuf_open(&m));
		text = membuf_close(&m);
		find_line(text, "parts", "jreqs", line, sizeof(line));
		cr_assert_not_null(strstr(line, io_start ? "block:block_io_start"
							 : "skipped: no block:block_io_start"),
				   "%s", line);
		membuf_free(&m);
	}
	/* No blk layer: no request is seen. */
	build(FAKE_TRACEPOINTS, "syscall", METHOD_NONE);
	cfg.split_calls = true;
	cfg.offcpu = true;
	fake_add_tp(&fk, "jbd2", "jbd2_start_commit");
	fake_add_tp(&fk, "jbd2", "jbd2_end_commit");
	replan();
	cr_assert(plan.why[WHY_JOURNAL] && !plan.journal_blk);
}
