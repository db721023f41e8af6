// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cells.h"
#include "layers.h"
#include "blk_stamps.h"
#include "dev_switches.h"
#include "probe.h"

#define MAX_NAMES 64
#define SYSFS_BTF "/sys/kernel/btf/vmlinux"

/* What the probes found, behind caps->ctx. */
struct probe_ctx {
	struct btf *kernel; /* the kernel's own (sysfs); NULL without CONFIG_DEBUG_INFO_BTF */
	struct btf *types;  /* its types: --btf's file, else the kernel's own */
	struct btf *modules[NR_LAYERS]; /* split BTF of fs modules, by layer */
	const char *names[MAX_NAMES];	/* functions we may attach to */
	bool in_kallsyms[MAX_NAMES];
	unsigned int nr_names;
	char fentry_why[160];
	char kprobe_why[160];
	char syscall_prefix[32];
	bool trampolines; /* arch_prepare_bpf_trampoline in kallsyms */
};

/* kcaps_probe(.., trial = false): --plan, which loads no program and
 * mounts nothing; tracefs must then be there, and readable. */
static bool look_only;

const char *tracefs_path(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	static const char *found; /* asked once per tracepoint: look once */
	struct stat st;

	if (found)
		return found;

	for (unsigned int i = 0; i < 2; i++) {
		char probe[64];

		snprintf(probe, sizeof(probe), "%s/events", paths[i]);
		if (!stat(probe, &st))
			return found = paths[i];
	}
	/* Not mounted: libbpf needs it for tracepoint ids, so mount it. */
	if (!look_only && !mount("tracefs", paths[0], "tracefs", 0, NULL))
		return found = paths[0];
	return NULL;
}

static bool tracepoint_exists(void *ctx, const char *category, const char *event)
{
	const char *root = tracefs_path();
	char path[256];
	struct stat st;

	(void)ctx;
	if (!root)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/%s", root, category, event);
	return !stat(path, &st);
}

static bool btf_has_func(const struct btf *btf, const char *func)
{
	return btf && btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) >= 0;
}

static bool func_in_btf(void *ctx, const char *func)
{
	struct probe_ctx *p = ctx;

	if (btf_has_func(p->kernel, func))
		return true;
	for (unsigned int i = 0; i < NR_LAYERS; i++)
		if (btf_has_func(p->modules[i], func))
			return true;
	return false;
}

static bool func_in_kallsyms(void *ctx, const char *func)
{
	struct probe_ctx *p = ctx;

	for (unsigned int i = 0; i < p->nr_names; i++)
		if (!strcmp(p->names[i], func))
			return p->in_kallsyms[i];
	return false;
}

static bool fs_registered(void *ctx, const char *fs)
{
	FILE *f = fopen("/proc/filesystems", "r");
	char line[128];
	bool found = false;

	(void)ctx;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, '\t');

		name = name ? name + 1 : line;
		name[strcspn(name, "\n")] = '\0';
		found = !strcmp(name, fs);
	}
	fclose(f);
	return found;
}

/* Every function name a plan could use, with the syscall prefix applied. */
static void collect_names(struct probe_ctx *p)
{
	static char sys_names[NR_CELL_TARGETS][64];

	p->nr_names = 0;
	for (unsigned int i = 0; i < NR_CELL_TARGETS && p->nr_names < MAX_NAMES; i++) {
		const struct cell_target *t = &cell_targets[i];

		if (t->kind == TARGET_KFUNC) {
			p->names[p->nr_names++] = t->name;
		} else if (t->kind == TARGET_SYSCALL && p->syscall_prefix[0]) {
			snprintf(sys_names[i], sizeof(sys_names[i]), "%s%s", p->syscall_prefix,
				 t->name);
			p->names[p->nr_names++] = sys_names[i];
		}
	}
	/* The aio layer's, which are no cell's target of their own. */
	for (unsigned int i = 0; i < NR_AIO_FUNCS && p->nr_names < MAX_NAMES; i++)
		p->names[p->nr_names++] = aio_func_names[i];
	for (unsigned int i = 0; i < NR_FAULT_FUNCS && p->nr_names < MAX_NAMES; i++)
		p->names[p->nr_names++] = fault_func_names[i];
}

/* One pass over /proc/kallsyms for the names we care about. */
static void scan_kallsyms(struct probe_ctx *p)
{
	static const char *const prefixes[] = { "__x64_sys_",	"__arm64_sys_", "__s390x_sys_",
						"__riscv_sys_", "__ia32_sys_",	"sys_" };
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];

	if (!f)
		return;
	/* The table's first system call (read), which every arch has. */
	const char *probe_syscall = cell_targets[0].name;

	/* First pass finds the arch's syscall wrapper prefix. */
	while (!p->syscall_prefix[0] && fgets(line, sizeof(line), f)) {
		char sym[256], type;

		if (sscanf(line, "%*s %c %255s", &type, sym) != 2)
			continue;
		for (unsigned int i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t n = strlen(prefixes[i]);

			if (!strncmp(sym, prefixes[i], n) && !strcmp(sym + n, probe_syscall)) {
				snprintf(p->syscall_prefix, sizeof(p->syscall_prefix), "%s",
					 prefixes[i]);
				break;
			}
		}
	}
	collect_names(p);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char sym[256], type;

		if (sscanf(line, "%*s %c %255s", &type, sym) != 2)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (!strcmp(sym, "arch_prepare_bpf_trampoline"))
			p->trampolines = true;
		for (unsigned int i = 0; i < p->nr_names; i++)
			if (!p->in_kallsyms[i] && !strcmp(sym, p->names[i]))
				p->in_kallsyms[i] = true;
	}
	fclose(f);
}

/*
 * net.core.bpf_jit_enable = 0: the programs run in the kernel's BPF
 * interpreter. Everything still loads and attaches (Debian's 6.1 even
 * attaches fentry: the trampoline is generated apart from the JIT), but
 * every event costs more.
 */
bool bpf_jit_off(void)
{
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "r");
	int on = 1;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 1;
		fclose(f);
	}
	return on == 0;
}

static void describe_errno(char *buf, size_t sz, const char *what, int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		snprintf(buf, sz,
			 "%srefused by this kernel (%s: lockdown or a BPF LSM "
			 "policy)",
			 what, err == EPERM ? "EPERM" : "EACCES");
		break;
	case EOPNOTSUPP:
	case 524: /* ENOTSUPP, the kernel-internal errno */
		snprintf(buf, sz,
			 "%snot supported by this kernel build (no BPF "
			 "trampoline)",
			 what);
		break;
	default:
		snprintf(buf, sz, "%sfailed on this kernel (%s)", what, strerror(err));
	}
}

/*
 * --plan without --check loads nothing: fentry is planned where the kernel
 * has its own BTF and BPF trampolines, and the plan says it was not tried
 * (a lockdown or an LSM policy can still refuse it: --plan --check tries).
 */
static void predict_fentry(struct probe_ctx *p, struct kcaps *caps)
{
	if (!p->kernel) {
		snprintf(p->fentry_why, sizeof(p->fentry_why),
			 "no kernel BTF (" SYSFS_BTF "): fentry attaches by the "
			 "kernel's own, --btf's file does not serve");
		return;
	}
	if (!p->trampolines) {
		snprintf(p->fentry_why, sizeof(p->fentry_why),
			 "no BPF trampolines in this kernel (no arch_prepare_bpf_trampoline "
			 "in /proc/kallsyms)");
		return;
	}
	caps->fentry = true;
	caps->fentry_untried = true;
}

/*
 * Loads and attaches the smallest fentry program to one function, because
 * only trying tells: a kernel can have BTF and still refuse trampolines.
 */
static void probe_fentry(struct probe_ctx *p, struct kcaps *caps)
{
	/* The table's first kernel function (vfs read), else two that most
	 * kernels have. */
	const char *targets[] = { NULL, "ksys_read", "do_sys_openat2" };
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 },			  /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY);
	int id = -1, fd, link;

	for (unsigned int i = 0; i < NR_CELL_TARGETS && !targets[0]; i++)
		if (cell_targets[i].kind == TARGET_KFUNC)
			targets[0] = cell_targets[i].name;
	if (!p->kernel) {
		snprintf(p->fentry_why, sizeof(p->fentry_why),
			 "no kernel BTF (" SYSFS_BTF "): fentry attaches by the "
			 "kernel's own, --btf's file does not serve");
		return;
	}
	for (unsigned int i = 0; i < 3 && id < 0; i++)
		if (targets[i])
			id = btf__find_by_name_kind(p->kernel, targets[i], BTF_KIND_FUNC);
	if (id < 0) {
		snprintf(p->fentry_why, sizeof(p->fentry_why),
			 "no function to try fentry on in kernel BTF");
		return;
	}
	opts.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "iosb_probe", "GPL", insns, 2, &opts);
	if (fd < 0) {
		describe_errno(p->fentry_why, sizeof(p->fentry_why), "", errno);
		return;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0) {
		describe_errno(p->fentry_why, sizeof(p->fentry_why), "attach ", errno);
		close(fd);
		return;
	}
	close(link);
	close(fd);
	caps->fentry = true;
}

static void probe_kprobes(struct probe_ctx *p, struct kcaps *caps)
{
	const char *tfs = tracefs_path();
	char path[256];
	struct stat st;

	/* The kprobe PMU (4.17+) or the legacy kprobe_events file. */
	if (!stat("/sys/bus/event_source/devices/kprobe/type", &st)) {
		caps->kprobes = true;
		return;
	}
	snprintf(path, sizeof(path), "%s/kprobe_events", tfs ? tfs : "/sys/kernel/tracing");
	if (tfs && !stat(path, &st)) {
		caps->kprobes = true;
		return;
	}
	snprintf(p->kprobe_why, sizeof(p->kprobe_why),
		 "not built into this kernel (no kprobe PMU, no kprobe_events: "
		 "CONFIG_KPROBES off)");
}

/* One program per request where the kernel stamps the disk's requests;
 * the programs keyed by request where a test or bench asks for them. */
static bool blk_stamped(void *ctx, const char *disk, bool queued, char *why, size_t whysz)
{
	(void)ctx;
	if (dev_switches()->blk_keyed) {
		snprintf(why, whysz, "IOSB_BLK_STAMPS=0 in the environment");
		return false;
	}
	return blk_disks_stamped("/sys", disk, queued, why, whysz);
}

/* A tracepoint's prototype in this kernel's BTF (its btf_trace_<name>
 * typedef, with the leading void *), or NULL. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, (__u32)id); /* typedef */
	t = btf__type_by_id(btf, t->type);   /* pointer */
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type); /* func proto */
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* The number of parameters of a tracepoint's prototype, or -1. */
static int tp_proto_params(const struct btf *btf, const char *tp)
{
	const struct btf_type *t = tp_proto(btf, tp);

	return t ? btf_vlen(t) : -1;
}

/* Is the first argument of a tracepoint (after its void *) a pointer to
 * struct name? */
static bool tp_first_arg_is(const struct btf *btf, const char *tp, const char *name)
{
	const struct btf_type *t = tp_proto(btf, tp);

	if (!t || btf_vlen(t) < 2)
		return false;
	t = btf__type_by_id(btf, btf_params(t)[1].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), name);
}

/* The io_uring tracepoints that split requests take the request first
 * (since 6.0); any other form is not read. */
static bool probe_uring_parts_args(const struct btf *btf)
{
	for (unsigned int tp = URING_TP_COMPLETE + 1; tp < NR_URING_TPS; tp++)
		if (!tp_first_arg_is(btf, uring_tp_names[tp], "io_kiocb"))
			return false;
	return true;
}

/*
 * The kernel's BTF from --btf's file (path), which must hold a kernel's
 * types: a bad one is refused with what to give instead.
 */
static int load_btf_file(struct probe_ctx *p, const char *path, char *err, size_t errsz)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(err, errsz, "--btf %s: %s: give a BTF file of this kernel", path,
			 strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "--btf %s: not a regular file: give a BTF file of this kernel",
			 path);
		return -1;
	}
	p->types = btf__parse(path, NULL);
	if (!p->types) {
		snprintf(err, errsz,
			 "--btf %s: not a BTF file (raw BTF as in /sys/kernel/btf/vmlinux, or "
			 "an ELF file with a .BTF section; BTFHub's .btf.tar.xz files must be "
			 "unpacked first)",
			 path);
		return -1;
	}
	/* A BPF object's BTF has the kernel's structs it reads, but none of the
	 * kernel's functions. */
	if (btf__find_by_name_kind(p->types, "task_struct", BTF_KIND_STRUCT) < 0 ||
	    btf__find_by_name_kind(p->types, "schedule", BTF_KIND_FUNC) < 0) {
		snprintf(err, errsz,
			 "--btf %s: BTF, but not a kernel's (no struct task_struct or function "
			 "schedule): give this kernel's vmlinux BTF, not a module's or a BPF "
			 "program's",
			 path);
		return -1;
	}
	return 0;
}

/*
 * The kernel's own BTF, which fentry and tp_btf attach by and module BTF
 * extends, and the types to read its structures by: --btf's file when
 * given (libbpf's CO-RE relocations use the same file, src/kernel/attach.c),
 * else the kernel's own, else a vmlinux image libbpf finds in /boot.
 */
static int load_btf(struct probe_ctx *p, const char *path, char *err, size_t errsz)
{
	if (!access(SYSFS_BTF, R_OK))
		p->kernel = btf__parse(SYSFS_BTF, NULL);
	if (path)
		return load_btf_file(p, path, err, errsz);
	p->types = p->kernel ? p->kernel : btf__load_vmlinux_btf();
	if (!p->types) {
		snprintf(err, errsz,
			 "this kernel has no BTF (" SYSFS_BTF " missing: built without "
			 "CONFIG_DEBUG_INFO_BTF); iostackbreak needs it: give this kernel's BTF "
			 "with --btf=FILE (BTFHub has files for many distribution kernels), or "
			 "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian, Ubuntu, Fedora "
			 "and RHEL kernels are)");
		return -1;
	}
	return 0;
}

/* The file-system layers with a file system of their type mounted. */
static unsigned int fs_mounted(void)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char line[4096], type[64];
	unsigned int mounted = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* "DEVICE DIR TYPE OPTIONS 0 0" */
		if (sscanf(line, "%*s %*s %63s", type) != 1)
			continue;
		for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
			const char *name = layer_name(layer);
			size_t n = strlen(name);

			/* TYPE, or TYPE.SUBTYPE as FUSE names its mounts
			 * (fuse.sshfs: the fuse layer). */
			if (layer_is_fs(layer) && !strncmp(type, name, n) &&
			    (type[n] == '\0' || type[n] == '.'))
				mounted |= 1U << layer;
		}
	}
	fclose(f);
	return mounted;
}

/* --plan as a user who cannot read tracefs: say so, rather than plan as
 * if the kernel had no tracepoints. */
static int tracefs_readable(char *err, size_t errsz)
{
	static const char *const paths[] = { "/sys/kernel/tracing/events",
					      "/sys/kernel/debug/tracing/events" };
	struct stat st;
	int denied = 0;

	for (unsigned int i = 0; i < 2; i++) {
		if (!stat(paths[i], &st))
			return 0;
		if (errno == EACCES)
			denied = (int)i + 1;
	}
	if (denied)
		snprintf(err, errsz,
			 "cannot read %s (permission denied): the plan needs the kernel's "
			 "tracepoints listed there; run --plan as root",
			 paths[denied - 1]);
	else
		snprintf(err, errsz,
			 "tracefs is not mounted (no /sys/kernel/tracing/events) and --plan "
			 "mounts nothing: mount -t tracefs tracefs /sys/kernel/tracing, or run "
			 "--plan --check, which mounts it as a run does");
	return -1;
}

int kcaps_probe(struct kcaps *caps, const char *btf_path, bool trial, char *err, size_t errsz)
{
	struct probe_ctx *p;

	memset(caps, 0, sizeof(*caps));
	look_only = !trial;
	if (look_only && tracefs_readable(err, errsz))
		return -1;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	caps->ctx = p;
	caps->tracepoint_exists = tracepoint_exists;
	caps->func_in_btf = func_in_btf;
	caps->func_in_kallsyms = func_in_kallsyms;
	caps->fs_registered = fs_registered;
	caps->fs_mounted = fs_mounted();
	caps->blk_stamped = blk_stamped;
	if (load_btf(p, btf_path, err, errsz))
		return -1;
	/* tp_btf and fentry: the kernel checks them against its own BTF. */
	caps->btf = p->kernel != NULL;
	/* Layers in modules: their functions are in the module's BTF. */
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		char path[64];

		if (!layer_module(layer))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", layer_module(layer));
		if (p->kernel && !access(path, R_OK))
			p->modules[layer] = btf__parse_split(path, p->kernel);
	}
	scan_kallsyms(p);
	if (p->syscall_prefix[0])
		caps->syscall_prefix = p->syscall_prefix;
	if (trial)
		probe_fentry(p, caps);
	else
		predict_fentry(p, caps);
	caps->fentry_why = p->fentry_why;
	probe_kprobes(p, caps);
	caps->kprobe_why = p->kprobe_why;
	/* block_rq_issue(void *, q, rq): before 5.11 */
	caps->blk_rq_q_arg = tp_proto_params(p->types, "block_rq_issue") == 3;
	caps->bio_q_arg = tp_proto_params(p->types, "block_bio_queue") == 3; /* (q, bio) */
	/* io_uring_complete(void *, ctx, req, cqe) since 6.3; more before */
	caps->uring_complete_fields = tp_proto_params(p->types, "io_uring_complete") > 4;
	/* A kfunc: libbpf and the kernel resolve it in the kernel's own BTF,
	 * and only the JIT can call one (the interpreter refuses to load a
	 * program that does: ENOTSUPP). */
	caps->jit_off = bpf_jit_off();
	caps->rdonly_cast = p->kernel && !caps->jit_off &&
			    btf__find_by_name_kind(p->kernel, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	caps->uring_parts_other_args = !probe_uring_parts_args(p->types);
	return 0;
}

void kcaps_free(struct kcaps *caps)
{
	struct probe_ctx *p = caps->ctx;

	if (!p)
		return;
	for (unsigned int i = 0; i < NR_LAYERS; i++)
		btf__free(p->modules[i]);
	if (p->types != p->kernel)
		btf__free(p->types);
	btf__free(p->kernel);
	free(p);
	caps->ctx = NULL;
}
