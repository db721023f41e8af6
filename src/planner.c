// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <string.h>
#include "layers.h"
#include "planner.h"

/* Candidates per cell, best first. Syscall cells name syscalls. */
static const char *const syscall_read[] = { "read", "pread64", "readv", "preadv", "preadv2", NULL };
static const char *const syscall_write[] = { "write",	"pwrite64", "writev",
					     "pwritev", "pwritev2", NULL };
static const char *const syscall_open[] = { "open", "openat", "openat2", "creat", NULL };
static const char *const syscall_fsync[] = { "fsync", "fdatasync", NULL };
static const char *const vfs_read[] = { "vfs_read", "vfs_readv", "vfs_iter_read", NULL };
static const char *const vfs_write[] = { "vfs_write", "vfs_writev", "vfs_iter_write", NULL };
static const char *const vfs_open[] = { "vfs_open", NULL };
static const char *const vfs_fsync[] = { "vfs_fsync_range", NULL };
static const char *const ext4_fns[NR_FS_OPS][2] = {
	{ "ext4_file_read_iter", NULL },
	{ "ext4_file_write_iter", NULL },
	{ "ext4_file_open", NULL },
	{ "ext4_sync_file", NULL },
};
static const char *const xfs_fns[NR_FS_OPS][2] = {
	{ "xfs_file_read_iter", NULL },
	{ "xfs_file_write_iter", NULL },
	{ "xfs_file_open", NULL },
	{ "xfs_file_fsync", NULL },
};
static const char *const btrfs_fns[NR_FS_OPS][2] = {
	{ "btrfs_file_read_iter", NULL },
	{ "btrfs_file_write_iter", NULL },
	{ "btrfs_file_open", NULL },
	{ "btrfs_sync_file", NULL },
};
static const char *const none[] = { NULL };

const char *const *cell_candidates(unsigned int layer, unsigned int op)
{
	static const char *const *const sys[NR_FS_OPS] = { syscall_read, syscall_write,
							   syscall_open, syscall_fsync };
	static const char *const *const vfs[NR_FS_OPS] = { vfs_read, vfs_write, vfs_open,
							   vfs_fsync };

	if (op >= NR_FS_OPS)
		return none;
	switch (layer) {
	case LAYER_SYSCALL:
		return sys[op];
	case LAYER_VFS:
		return vfs[op];
	case LAYER_EXT4:
		return ext4_fns[op];
	case LAYER_XFS:
		return xfs_fns[op];
	case LAYER_BTRFS:
		return btrfs_fns[op];
	default:
		return none;
	}
}

unsigned int cell_fn_slots(unsigned int layer, unsigned int op)
{
	const char *const *c = cell_candidates(layer, op);
	unsigned int n = 0;

	while (c[n])
		n++;
	return n; /* the BPF object has exactly one slot per candidate */
}

const char *source_name(enum source src)
{
	switch (src) {
	case SRC_TRACEPOINT:
		return "tracepoint";
	case SRC_TP_BTF:
		return "tp_btf";
	case SRC_RAW_TP:
		return "raw_tp";
	case SRC_FENTRY:
		return "fentry";
	case SRC_KPROBE:
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

static bool tp_pair_exists(const struct kcaps *caps, const char *category, const char *enter,
			   const char *exit_)
{
	return caps->tracepoint_exists(caps->ctx, category, enter) &&
	       caps->tracepoint_exists(caps->ctx, category, exit_);
}

/* Fills targets with the candidates the kernel has for a source. */
static unsigned int find_targets(const struct kcaps *caps, unsigned int layer, unsigned int op,
				 enum source src, struct cell_plan *cp)
{
	const char *const *cand = cell_candidates(layer, op);
	char name[128];

	cp->nr_targets = 0;
	for (unsigned int i = 0; cand[i] && cp->nr_targets < MAX_TARGETS; i++) {
		bool ok = false;

		if (layer == LAYER_SYSCALL && src == SRC_TRACEPOINT) {
			char enter[96], exit_[96];

			snprintf(enter, sizeof(enter), "sys_enter_%s", cand[i]);
			snprintf(exit_, sizeof(exit_), "sys_exit_%s", cand[i]);
			ok = tp_pair_exists(caps, "syscalls", enter, exit_);
		} else if (layer == LAYER_EXT4 && src == SRC_TRACEPOINT) {
			ok =
			    op == FSOP_FSYNC && tp_pair_exists(caps, "ext4", "ext4_sync_file_enter",
							       "ext4_sync_file_exit");
		} else if (src == SRC_FENTRY || src == SRC_KPROBE) {
			if (layer == LAYER_SYSCALL) {
				if (!caps->syscall_prefix)
					break;
				snprintf(name, sizeof(name), "%s%s", caps->syscall_prefix, cand[i]);
			} else {
				snprintf(name, sizeof(name), "%s", cand[i]);
			}
			ok = src == SRC_FENTRY ? caps->func_in_btf(caps->ctx, name)
					       : caps->func_in_kallsyms(caps->ctx, name);
		}
		if (ok) {
			cp->tgt_src[cp->nr_targets] = src;
			cp->targets[cp->nr_targets++] = cand[i];
		}
	}
	return cp->nr_targets;
}

/* Sources a cell offers, best first, for auto mode. */
static unsigned int cell_sources(unsigned int layer, unsigned int op, enum source *out)
{
	unsigned int n = 0;

	if (layer == LAYER_SYSCALL)
		out[n++] = SRC_TRACEPOINT;
	out[n++] = SRC_FENTRY;
	out[n++] = SRC_KPROBE;
	if (layer == LAYER_EXT4 && op == FSOP_FSYNC)
		out[n++] = SRC_TRACEPOINT;
	return n;
}

static const char *mode_source_match(enum attach_mode mode, enum source src)
{
	switch (mode) {
	case ATTACH_FENTRY:
		return src == SRC_FENTRY ? NULL : "fentry";
	case ATTACH_KPROBE:
		return src == SRC_KPROBE ? NULL : "kprobe";
	case ATTACH_TRACEPOINT:
		return src == SRC_TRACEPOINT ? NULL : "tracepoint";
	default:
		return NULL;
	}
}

/* Why a source cannot serve at all on this kernel, or NULL if it can. */
static const char *source_unavailable(const struct kcaps *caps, enum source src)
{
	switch (src) {
	case SRC_FENTRY:
		if (!caps->btf)
			return "no kernel BTF (/sys/kernel/btf/vmlinux)";
		return caps->fentry ? NULL : caps->fentry_why;
	case SRC_KPROBE:
		return caps->kprobes ? NULL : caps->kprobe_why;
	default:
		return NULL;
	}
}

static void plan_fn_cell(const struct kcaps *caps, const struct config *cfg, unsigned int layer,
			 unsigned int op, struct cell_plan *cp)
{
	enum source srcs[4];
	unsigned int n = cell_sources(layer, op, srcs);
	bool offered = false;

	if (layer_is_fs(layer) && !caps->fs_registered(caps->ctx, layer_name(layer))) {
		why_add(cp,
			"%s is not registered in this kernel (module not loaded? "
			"modprobe %s or mount one)",
			layer_name(layer), layer_name(layer));
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		const char *why, *forced = mode_source_match(cfg->attach, srcs[i]);

		if (forced)
			continue; /* --attach picked another method */
		offered = true;
		why = source_unavailable(caps, srcs[i]);
		if (why) {
			why_add(cp, "%s: %s", source_name(srcs[i]), why);
			continue;
		}
		if (!find_targets(caps, layer, op, srcs[i], cp)) {
			if (srcs[i] == SRC_TRACEPOINT)
				why_add(cp, "tracepoint: none in this kernel");
			else
				why_add(cp, "%s: none of its functions (%s...) in this kernel",
					source_name(srcs[i]), cell_candidates(layer, op)[0]);
			continue;
		}
		cp->src = srcs[i];
		return;
	}
	if (!offered)
		why_add(cp, "%s has no %s source for %s", layer_name(layer),
			attach_mode_name(cfg->attach), op_name(layer, op));
}

static void plan_blk(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	enum source src;
	char why[200] = "";
	/* Who submitted a request is known where it starts, not at issue. */
	bool need_origin = cfg->queued || cfg->nr_pids || cfg->command || cfg->tid || cfg->comm ||
			   cfg->cgroup || cfg->per_process;

	if (!caps->tracepoint_exists(caps->ctx, "block", "block_rq_issue") ||
	    !caps->tracepoint_exists(caps->ctx, "block", "block_rq_complete")) {
		for (unsigned int op = 0; op < NR_BLK_OPS; op++)
			why_add(&plan->cells[LAYER_BLK][op],
				"tracepoint: block:block_rq_issue/complete missing");
		return;
	}
	if (cfg->attach == ATTACH_FENTRY || cfg->attach == ATTACH_KPROBE)
		snprintf(why, sizeof(why),
			 "%s: the block layer is traced by its "
			 "tracepoints only",
			 attach_mode_name(cfg->attach));
	if (caps->btf) {
		src = SRC_TP_BTF;
	} else {
		src = SRC_RAW_TP;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%stp_btf: no kernel BTF",
			 why[0] ? "; " : "");
	}
	plan->blk_rq_q_arg = caps->blk_rq_q_arg;
	if (need_origin) {
		if (caps->tracepoint_exists(caps->ctx, "block", "block_io_start"))
			plan->blk_origin = "block_io_start";
		else if (caps->tracepoint_exists(caps->ctx, "block", "block_rq_insert"))
			plan->blk_origin = "block_rq_insert";
	}
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		struct cell_plan *cp = &plan->cells[LAYER_BLK][op];
		unsigned int t = 0;

		cp->src = src;
		if (plan->blk_origin)
			cp->targets[t++] = plan->blk_origin;
		cp->targets[t++] = "block_rq_issue";
		cp->targets[t++] = "block_rq_complete";
		for (unsigned int i = 0; i < t; i++)
			cp->tgt_src[i] = src;
		cp->nr_targets = t;
		if (why[0])
			why_add(cp, "%s", why);
		if (cfg->queued && !plan->blk_origin)
			why_add(cp, "-Q: no block_io_start or block_rq_insert, timing from issue");
	}
}

void plan_build(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->mode = cfg->attach;
	plan->syscall_prefix = caps->syscall_prefix;
	plan->kprobe_fallback = cfg->attach == ATTACH_AUTO && caps->kprobes;
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (!(cfg->layers & (1U << layer)))
			continue;
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
			plan->cells[layer][op].wanted = true;
		if (layer == LAYER_BLK) {
			plan_blk(caps, cfg, plan);
			continue;
		}
		for (unsigned int op = 0; op < NR_FS_OPS; op++)
			plan_fn_cell(caps, cfg, layer, op, &plan->cells[layer][op]);
	}
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
			any |= plan->cells[layer][op].src != SRC_NONE;
		if (!any)
			failed |= 1U << layer;
	}
	return failed;
}

void plan_layer_error(const struct plan *plan, unsigned int layer, char *buf, size_t sz)
{
	const char *remedy;

	if (layer_is_fs(layer) || layer == LAYER_VFS)
		remedy = plan->mode == ATTACH_AUTO
			     ? "it needs a kernel with BPF trampolines (fentry) or "
			       "CONFIG_KPROBES=y; syscall and blk work without them"
			     : "try --attach=auto";
	else
		remedy = "see iostackbreak --plan";
	snprintf(buf, sz, "cannot trace %s on this kernel: %s; %s", layer_name(layer),
		 plan->cells[layer][0].why, remedy);
}

bool plan_traces_threads(const struct plan *plan)
{
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_OPS; op++)
			if (layer != LAYER_BLK && plan->cells[layer][op].src != SRC_NONE)
				return true;
	return false;
}

unsigned int plan_nr_traced(const struct plan *plan)
{
	unsigned int n = 0;

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_OPS; op++)
			n += plan->cells[layer][op].src != SRC_NONE;
	return n;
}

void plan_print(const struct plan *plan, FILE *out)
{
	fprintf(out, "%-8s %-8s %-10s %s\n", "LAYER", "OP", "SOURCE", "ATTACHED TO / WHY NOT");
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			const struct cell_plan *cp = &plan->cells[layer][op];

			if (!cp->wanted)
				continue;
			fprintf(out, "%-8s %-8s %-10s ", layer_name(layer), op_name(layer, op),
				source_name(cp->src));
			for (unsigned int i = 0; i < cp->nr_targets; i++) {
				const char *pre = "";

				if (layer == LAYER_SYSCALL && cp->tgt_src[i] == SRC_TRACEPOINT)
					pre = "sys_*_";
				else if (layer == LAYER_SYSCALL && plan->syscall_prefix)
					pre = plan->syscall_prefix;
				fprintf(out, "%s%s%s", i ? "," : "", pre, cp->targets[i]);
				if (cp->tgt_src[i] != cp->src)
					fprintf(out, "(%s)", source_name(cp->tgt_src[i]));
			}
			if (cp->why[0])
				fprintf(out, "%s%s %s", cp->nr_targets ? "  " : "",
					cp->src == SRC_NONE ? "skipped:" : "passed over:", cp->why);
			fputc('\n', out);
		}
	}
}
