/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the unit tests: a reproducible random generator, cells
 * built from sample arrays the way the BPF side builds them, fake kernels
 * for the planner, in-memory FILE streams and golden files.
 *
 * Every test_*.c is linked into one binary, so everything here is static
 * inline (or static data inside inline functions): no multiple definitions,
 * and no unused-function warnings in the files that need only a part.
 *
 * Golden files: run with UNIT_UPDATE_GOLDEN=1 to rewrite them from the
 * current output, then read the diff before keeping it.
 */
#ifndef UNIT_H
#define UNIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "hist.h"
#include "layers.h"
#include "opts.h"
#include "planner.h"
#include "report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Random numbers: xorshift64*, fixed seeds, same on every machine ---- */

static inline uint64_t unit_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). 53 bits: every double the range can hold. */
static inline double unit_rand01(uint64_t *state)
{
	return (double)(unit_rand(state) >> 11) / 9007199254740992.0;
}

/* Uniform in [lo, hi]. */
static inline uint64_t unit_rand_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + unit_rand(state) % (hi - lo + 1);
}

/* ---- Cells ---- */

/* Records one sample as the BPF programs do (see record() in the .bpf.c). */
/*
 * The unit (in ns) whose whole-unit slots cell_record() fills, as the BPF
 * side does for -u (1000) and -m (1000000); 0: none, as in ns runs.
 */
static uint64_t record_unit_ns __attribute__((unused));

static inline void cell_record(struct cell_hist *c, uint64_t ns)
{
	if (record_unit_ns)
		c->unit_slots[unit_slot(ns / record_unit_ns)]++;
	if (!c->count || ns < c->min_ns)
		c->min_ns = ns;
	if (ns > c->max_ns)
		c->max_ns = ns;
	c->count++;
	c->sum_ns += ns;
	c->buckets[hist_bucket(ns)]++;
}

static inline void cell_from_samples(struct cell_hist *c, const uint64_t *v, size_t n)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++)
		cell_record(c, v[i]);
}

static inline int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the most significant bit, by a loop: independent of hist_msb(). */
static inline unsigned int slow_msb(uint64_t v)
{
	unsigned int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/* ---- Fake kernels for the planner ---- */

#define FAKE_MAX_NAMES 256
#define FAKE_NAME_LEN 64

/*
 * What a kernel has, as "kind:name" strings: "tp:syscalls:sys_enter_read",
 * "btf:vfs_read", "ksym:vfs_read", "fs:ext4". Tests add and remove names
 * to model one kernel; the kcaps callbacks only look them up.
 */
struct fake_kernel {
	struct kcaps caps;
	char names[FAKE_MAX_NAMES][FAKE_NAME_LEN];
	unsigned int nr;
	unsigned int lookups; /* callback calls, to see the planner asked at all */
};

/*
 * "a:b" into dst; false if it does not fit. By hand, not snprintf: the
 * compiler cannot prove these short names fit and -Werror would object.
 */
static inline bool fake_join(char *dst, size_t sz, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + 1 + lb >= sz)
		return false;
	memcpy(dst, a, la);
	dst[la] = ':';
	memcpy(dst + la + 1, b, lb + 1);
	return true;
}

static inline int fake_find(const struct fake_kernel *fk, const char *kind, const char *name)
{
	char key[FAKE_NAME_LEN];

	if (!fake_join(key, sizeof(key), kind, name))
		return -1;
	for (unsigned int i = 0; i < fk->nr; i++)
		if (!strcmp(fk->names[i], key))
			return (int)i;
	return -1;
}

static inline void fake_add(struct fake_kernel *fk, const char *kind, const char *name)
{
	if (fake_find(fk, kind, name) >= 0)
		return;
	cr_assert_lt(fk->nr, FAKE_MAX_NAMES, "fake kernel full: raise FAKE_MAX_NAMES");
	cr_assert(fake_join(fk->names[fk->nr], FAKE_NAME_LEN, kind, name),
		  "fake name too long: %s:%s", kind, name);
	fk->nr++;
}

static inline void fake_del(struct fake_kernel *fk, const char *kind, const char *name)
{
	int i = fake_find(fk, kind, name);

	cr_assert_geq(i, 0, "fake kernel has no %s:%s to remove", kind, name);
	memmove(fk->names[i], fk->names[i + 1], (fk->nr - (unsigned int)i - 1) * FAKE_NAME_LEN);
	fk->nr--;
}

/* Tracepoints are stored as "tp:category:event". */
static inline void fake_add_tp(struct fake_kernel *fk, const char *cat, const char *event)
{
	char name[FAKE_NAME_LEN];

	cr_assert(fake_join(name, sizeof(name), cat, event), "%s:%s too long", cat, event);
	fake_add(fk, "tp", name);
}

static inline void fake_del_tp(struct fake_kernel *fk, const char *cat, const char *event)
{
	char name[FAKE_NAME_LEN];

	cr_assert(fake_join(name, sizeof(name), cat, event), "%s:%s too long", cat, event);
	fake_del(fk, "tp", name);
}

/* A kernel function: in BTF (fentry can see it) and in kallsyms. */
static inline void fake_add_fn(struct fake_kernel *fk, const char *fn)
{
	fake_add(fk, "btf", fn);
	fake_add(fk, "ksym", fn);
}

static inline void fake_del_fn(struct fake_kernel *fk, const char *fn)
{
	fake_del(fk, "btf", fn);
	fake_del(fk, "ksym", fn);
}

static inline bool fake_tp_exists(void *ctx, const char *category, const char *event)
{
	struct fake_kernel *fk = ctx;
	char name[FAKE_NAME_LEN];

	fk->lookups++;
	return fake_join(name, sizeof(name), category, event) && fake_find(fk, "tp", name) >= 0;
}

static inline bool fake_in_btf(void *ctx, const char *func)
{
	struct fake_kernel *fk = ctx;

	fk->lookups++;
	return fake_find(fk, "btf", func) >= 0;
}

static inline bool fake_in_kallsyms(void *ctx, const char *func)
{
	struct fake_kernel *fk = ctx;

	fk->lookups++;
	return fake_find(fk, "ksym", func) >= 0;
}

static inline bool fake_fs_registered(void *ctx, const char *fs)
{
	struct fake_kernel *fk = ctx;

	fk->lookups++;
	return fake_find(fk, "fs", fs) >= 0;
}

/*
 * Written out here rather than taken from bpf/cells.def: the tests must
 * not learn what a kernel has from the code they check.
 */
#define FAKE_SYSCALLS                                                                              \
	"read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev", "pwritev", \
	    "pwritev2", "open", "openat", "openat2", "creat", "fsync", "fdatasync", "close",       \
	    "lseek", "sync_file_range"
#define FAKE_VFS_FNS                                                                               \
	"vfs_read", "vfs_readv", "vfs_iter_read", "vfs_write", "vfs_writev", "vfs_iter_write",     \
	    "vfs_open", "vfs_fsync_range", "vfs_fsync", "vfs_llseek", "io_submit_one",             \
	    "aio_complete", "aio_fsync_work", "handle_mm_fault"

enum fake_profile {
	FAKE_DEBIAN61,	  /* (a) 6.1: fentry and kprobes, no block_io_start */
	FAKE_KPROBES,	  /* (b) kprobes only: the trial fentry was refused */
	FAKE_TRACEPOINTS, /* (c) tracepoints only, like the build host */
	FAKE_NO_BTF,	  /* (d) an old kernel without BTF, with kprobes */
};

#define FAKE_FENTRY_WHY "trial fentry refused (ENOTSUPP)"
#define FAKE_KPROBE_WHY "kprobes unavailable (CONFIG_KPROBES off)"

/* A file system's functions, present only when it is registered. */
static inline void fake_add_fs(struct fake_kernel *fk, const char *fs)
{
	static const char *const ops[] = { "file_read_iter", "file_write_iter", "file_open" };
	char fn[FAKE_NAME_LEN];

	fake_add(fk, "fs", fs);
	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		snprintf(fn, sizeof(fn), "%s_%s", fs, ops[i]);
		fake_add_fn(fk, fn);
	}
	/* The one name that breaks the pattern. */
	snprintf(fn, sizeof(fn), "%s_%s", fs, strcmp(fs, "xfs") ? "sync_file" : "file_fsync");
	fake_add_fn(fk, fn);
}

static inline void fake_kernel_init(struct fake_kernel *fk, enum fake_profile p)
{
	static const char *const syscalls[] = { FAKE_SYSCALLS };
	static const char *const vfs[] = { FAKE_VFS_FNS };
	char name[FAKE_NAME_LEN];

	memset(fk, 0, sizeof(*fk));
	for (unsigned int i = 0; i < ARRAY_SIZE(syscalls); i++) {
		snprintf(name, sizeof(name), "sys_enter_%s", syscalls[i]);
		fake_add_tp(fk, "syscalls", name);
		snprintf(name, sizeof(name), "sys_exit_%s", syscalls[i]);
		fake_add_tp(fk, "syscalls", name);
		if (p != FAKE_NO_BTF) {
			snprintf(name, sizeof(name), "__x64_sys_%s", syscalls[i]);
			fake_add_fn(fk, name);
		} else {
			/* Without BTF only kallsyms knows functions. */
			snprintf(name, sizeof(name), "__x64_sys_%s", syscalls[i]);
			fake_add(fk, "ksym", name);
		}
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(vfs); i++) {
		if (p != FAKE_NO_BTF)
			fake_add_fn(fk, vfs[i]);
		else
			fake_add(fk, "ksym", vfs[i]);
	}
	fake_add_fs(fk, "ext4");
	fake_add_tp(fk, "ext4", "ext4_sync_file_enter");
	fake_add_tp(fk, "ext4", "ext4_sync_file_exit");
	fake_add_tp(fk, "ext4", "ext4_da_write_begin");
	fake_add_fs(fk, "btrfs");
	fake_add_tp(fk, "block", "block_rq_insert");
	fake_add_tp(fk, "block", "block_rq_issue");
	fake_add_tp(fk, "block", "block_rq_complete");
	fake_add_tp(fk, "block", "block_bio_queue");
	fake_add_tp(fk, "io_uring", "io_uring_submit_req");
	fake_add_tp(fk, "io_uring", "io_uring_complete");
	fake_add_tp(fk, "block", "block_bio_complete");
	fake_add_tp(fk, "block", "block_bio_remap");
	fake_add_tp(fk, "block", "block_split");

	fk->caps = (struct kcaps){
		.btf = true,
		.fentry = true,
		.kprobes = true,
		.syscall_prefix = "__x64_sys_",
		.ctx = fk,
		.tracepoint_exists = fake_tp_exists,
		.func_in_btf = fake_in_btf,
		.func_in_kallsyms = fake_in_kallsyms,
		.fs_registered = fake_fs_registered,
	};
	switch (p) {
	case FAKE_DEBIAN61:
		/* 6.1: io_uring_complete(ctx, req, user_data, res, cflags, ...) */
		fk->caps.uring_complete_fields = true;
		break;
	case FAKE_KPROBES:
		fk->caps.fentry = false;
		fk->caps.fentry_why = FAKE_FENTRY_WHY;
		break;
	case FAKE_TRACEPOINTS:
		fk->caps.fentry = false;
		fk->caps.fentry_why = FAKE_FENTRY_WHY;
		fk->caps.kprobes = false;
		fk->caps.kprobe_why = FAKE_KPROBE_WHY;
		fake_add_tp(fk, "block", "block_io_start");
		break;
	case FAKE_NO_BTF:
		/* A reason that does not say BTF: the planner must say it. */
		fk->caps.btf = false;
		fk->caps.fentry = false;
		fk->caps.fentry_why = "trial not run";
		fk->caps.blk_rq_q_arg = true;
		break;
	}
}

/* A config as parse_options() leaves it; layers NULL: the default (all). */
static inline void unit_config(struct config *cfg, const char *layers, enum attach_method mode)
{
	char bad[64];

	memset(cfg, 0, sizeof(*cfg));
	cfg->layers = ALL_LAYERS;
	cfg->attach = mode;
	if (layers) {
		cr_assert_eq(parse_layer_list(layers, &cfg->layers, bad, sizeof(bad)), 0,
			     "bad layer list in a test: %s", layers);
		cfg->layers_given = true;
	}
}

/* ---- In-memory output ---- */

struct membuf {
	FILE *f;
	char *buf;
	size_t len;
};

static inline FILE *membuf_open(struct membuf *m)
{
	memset(m, 0, sizeof(*m));
	m->f = open_memstream(&m->buf, &m->len);
	cr_assert_not_null(m->f, "open_memstream failed");
	return m->f;
}

/* Closes the stream; the text stays in m->buf until membuf_free(). */
static inline const char *membuf_close(struct membuf *m)
{
	cr_assert_eq(fclose(m->f), 0, "closing the memory stream failed");
	m->f = NULL;
	return m->buf;
}

static inline void membuf_free(struct membuf *m)
{
	free(m->buf);
	m->buf = NULL;
}

/*
 * A layer that needs fentry or kprobes, on the fake without either:
 * -T LAYER fails with one error line that names both reasons and the
 * remedy, and --plan gives it one line, "skipped: " then skipped then the
 * reasons.
 */
static inline void expect_refused_in_one_line(const struct plan *plan, const struct config *cfg,
					      unsigned int layer, const char *skipped)
{
	char err[1024], want[256], head[32];
	const char *text, *line;
	struct membuf m;

	cr_assert_eq(plan_failed_layers(plan, cfg), 1U << layer);
	plan_layer_error(plan, layer, err, sizeof(err));
	snprintf(want, sizeof(want), "cannot trace %s on this kernel: fentry: " FAKE_FENTRY_WHY
		 "; kprobe: " FAKE_KPROBE_WHY, layer_name(layer));
	cr_assert_not_null(strstr(err, want), "%s", err);
	cr_assert_not_null(strstr(err, "CONFIG_KPROBES=y"), "%s", err);
	cr_assert_null(strchr(err, '\n'), "%s", err);
	plan_print(plan, membuf_open(&m));
	text = membuf_close(&m);
	snprintf(head, sizeof(head), "\n%s ", layer_name(layer));
	line = strstr(text, head);
	cr_assert_not_null(line, "%s", text);
	cr_assert_null(strstr(line + 1, head), "%s in more than one line:\n%s", head + 1, text);
	snprintf(want, sizeof(want), "skipped: %sfentry: " FAKE_FENTRY_WHY, skipped);
	cr_assert_not_null(strstr(line, want), "%s", text);
	membuf_free(&m);
}

/* ---- Golden files ---- */

#define GOLDEN_DIR "tests/unit/golden/"

static inline char *unit_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len, "short read of %s", path);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Compares with GOLDEN_DIR name, or rewrites it under UNIT_UPDATE_GOLDEN=1. */
static inline void golden_check(const char *name, const char *actual)
{
	char path[256];
	char *want;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("UNIT_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		cr_assert_not_null(f, "cannot write %s (run from the repository root)", path);
		fputs(actual, f);
		fclose(f);
		return;
	}
	want = unit_read_file(path);
	cr_assert_not_null(want,
			   "missing golden file %s (run from the repository root; "
			   "UNIT_UPDATE_GOLDEN=1 creates it)",
			   path);
	cr_assert_str_eq(actual, want, "output differs from %s\n--- got:\n%s--- want:\n%s", path,
			 actual, want);
	free(want);
}

#endif /* UNIT_H */
