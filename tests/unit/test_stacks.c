// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks of block I/O (-K, -U): the options, the report built from the
 * kernel's keys (frames named, keys that print the same merged, heaviest
 * first), the folded form and the flame graph, and the maps of a process
 * read into libdwfl from a fake /proc.
 */
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "opt_stacks.h"
#include "stack_report.h"
#include "stacks_out.h"
#include "flamegraph.h"
#include "symbolize.h"

static int parse(struct config *cfg, const char *const *args)
{
	char *v[16];
	int c = 0;

	v[c++] = (char *)"iostackbreak";
	for (unsigned int i = 0; args[i]; i++)
		v[c++] = (char *)args[i];
	v[c] = NULL;
	return parse_options(c, v, cfg);
}

Test(stacks, options)
{
	static const char *const ok[] = { "-T", "blk", "-K", "-U", "--io=r", "--weight=requests",
					  "--max-stacks=64", "--folded=x.folded", "--top=3", NULL };
	static const char *const to_stdout[] = { "-K", "--folded", NULL };
	struct config cfg;

	cr_assert_eq(parse(&cfg, ok), 0, "%s", cfg.errmsg);
	cr_assert(cfg.kstack && cfg.ustack);
	cr_assert_eq(cfg.stack_ops, 1U << BLKOP_READ);
	cr_assert_eq(cfg.weight, WEIGHT_REQUESTS);
	cr_assert_eq(cfg.max_stacks, 64);
	cr_assert_str_eq(cfg.folded_file, "x.folded");
	cr_assert_eq(cfg.top, 3);
	cr_assert_eq(parse(&cfg, to_stdout), 0, "%s", cfg.errmsg);
	cr_assert(cfg.folded && !cfg.folded_file);
	cr_assert_eq(cfg.weight, WEIGHT_BYTES, "bytes by default");
	cr_assert_eq(cfg.ustack_mode, USTACK_AUTO, "-U alone: auto");
	{
		static const char *const dwarf[] = { "-T", "blk", "-U", "--user-stack=dwarf",
						     "-U", "--user-stack-size=4096", NULL };

		cr_assert_eq(parse(&cfg, dwarf), 0, "%s", cfg.errmsg);
		cr_assert(cfg.ustack && cfg.ustack_mode == USTACK_DWARF);
		cr_assert_eq(cfg.ustack_size, 4096);
	}
}

Test(stacks, bad_options)
{
	static const struct {
		const char *args[8];
		const char *needle;
	} bad[] = {
		{ { "--folded", NULL }, "add -K, -U" },
		{ { "--weight=time", NULL }, "add -K, -U" },
		{ { "-K", "--weight=pages", NULL }, "requests, bytes or time" },
		{ { "-K", "--io=x", NULL }, "r (reads)" },
		{ { "-K", "-T", "syscall", NULL }, "add blk to -T" },
		{ { "-U", "1", NULL }, "at the end of the run" },
		{ { "-K", "--folded", "--json", NULL }, "drop --json" },
		{ { "-K", "--max-stacks=0", NULL }, "--max-stacks" },
	};
	struct config cfg;

	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_eq(parse(&cfg, bad[i].args), 2, "row %u", i);
		cr_assert_not_null(strstr(cfg.errmsg, bad[i].needle), "row %u: %s", i,
				   cfg.errmsg);
	}
}

/* A fake kernel: stack 1 and 2 are kernel stacks, 7 and 8 user stacks of
 * two processes whose different addresses are the same functions. */
static unsigned int fake_ips(void *ctx, __s32 id, uint64_t ips[STACK_DEPTH])
{
	(void)ctx;
	switch (id) {
	case 1:
		ips[0] = 0x50, ips[1] = 0x100, ips[2] = 0x200;
		return 3;
	case 2:
		ips[0] = 0x300, ips[1] = 0x200;
		return 2;
	case 7:
		ips[0] = 0x1010, ips[1] = 0x2020;
		return 2;
	case 8:
		ips[0] = 0x5010, ips[1] = 0x6020;
		return 2;
	default:
		return 0;
	}
}

static int fake_kname(void *ctx, uint64_t addr, char *buf, size_t sz)
{
	(void)ctx;
	if (addr == 0x300) {
		snprintf(buf, sz, "[unknown]");
		return -1;
	}
	snprintf(buf, sz, "%s",
		 addr == 0x50	 ? "bpf_prog_0123456789abcdef_tb_io_start [bpf]"
		 : addr == 0x100 ? "blk_mq_submit_bio"
				 : "submit_bio");
	return 0;
}

static int fake_uname(void *ctx, uint32_t tgid, uint64_t addr, bool ret, struct stack_frame *f)
{
	(void)ctx;
	(void)tgid;
	cr_assert_eq(ret, (addr & 0xfff) == 0x020, "the first frame is no return address");
	f->name = strdup((addr & 0xfff) == 0x010 ? "pread64" : "main");
	f->module = strdup("/lib/libc.so.6");
	f->elf_addr = addr - 1;
	return 0;
}

static const struct stack_source fake = { NULL, fake_ips, fake_kname, fake_uname };

static struct stack_raw raw_key(uint32_t tgid, __s32 k, __s32 u, uint32_t op, uint64_t req,
				uint64_t bytes)
{
	struct stack_raw r = { .key = { .tgid = tgid, .kstack = k, .ustack = u, .op = op },
			       .counts = { .requests = req, .bytes = bytes, .time_ns = req * 1000,
					   .timed = req } };

	snprintf(r.key.comm, sizeof(r.key.comm), "app");
	return r;
}

/* The report of raw's n keys under the options args. */
static void build(const char *const *args, const struct stack_raw *raw, size_t n,
		  struct stack_report *r)
{
	struct config cfg;

	cr_assert_eq(parse(&cfg, args), 0, "%s", cfg.errmsg);
	cr_assert_eq(stack_report_build(r, &cfg, raw, n, &fake), 0);
}

/* What writer writes of r, as a string to free. */
static char *written(const struct stack_report *r, int (*writer)(FILE *, const struct stack_report *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(writer(f, r), 0);
	fclose(f);
	return buf;
}

Test(stacks, merged_by_frames_heaviest_first_folded)
{
	static const char *const args[] = { "-K", "-U", NULL };
	struct stack_raw raw[] = {
		raw_key(10, 1, 7, BLKOP_READ, 100, 409600),
		raw_key(11, 1, 8, BLKOP_READ, 300, 1228800), /* same frames: merged */
		raw_key(10, 2, 7, BLKOP_WRITE, 1, 4096),
		raw_key(10, STACK_LOST, 7, BLKOP_READ, 2, 8192),
	};
	struct stack_report r;
	char *buf;

	build(args, raw, ARRAY_SIZE(raw), &r);
	cr_assert_eq(r.nr_entries, 3);
	cr_assert_eq(r.entries[0].weight, 409600 + 1228800);
	cr_assert_eq(r.entries[0].w.requests[BLKOP_READ], 400);
	cr_assert_str_eq(r.entries[0].kframes[0].name, "blk_mq_submit_bio");
	cr_assert_str_eq(r.entries[0].uframes[1].name, "main");
	cr_assert(r.entries[1].klost);
	/* The write's first kernel frame is unknown, once. */
	cr_assert_eq(r.unresolved, 1);
	buf = written(&r, stacks_folded);
	cr_assert_str_eq(buf, "app;main;pread64;submit_bio_[k];blk_mq_submit_bio_[k] 1638400\n"
			      "app;main;pread64;[stack lost]_[k] 8192\n"
			      "app;main;pread64;submit_bio_[k];[unknown]_[k] 4096\n");
	free(buf);
	stack_report_free(&r);
}

Test(stacks, requests_weight_and_process)
{
	static const char *const args[] = { "-U", "-P", "--weight=requests", NULL };
	struct stack_raw raw[] = {
		raw_key(10, STACK_NONE, 7, BLKOP_READ, 100, 409600),
		raw_key(11, STACK_NONE, 8, BLKOP_READ, 300, 1228800),
	};
	struct stack_report r;
	char *buf;

	build(args, raw, ARRAY_SIZE(raw), &r);
	buf = written(&r, stacks_folded);
	/* -P keeps the processes apart; no kernel frames, no _[k]. */
	cr_assert_str_eq(buf, "app [11];main;pread64 300\napp [10];main;pread64 100\n");
	free(buf);
	stack_report_free(&r);
}

/*
 * A process's maps read into a fake /proc, then resolved with the process
 * "gone": this test binary itself, mapped where the maps say, names its
 * own function; an address no mapping holds is [unknown]; a process whose
 * maps cannot be read is counted.
 */
__attribute__((noinline)) int stacks_test_marker(int x)
{
	return x * 3 + 1;
}

Test(stacks, user_symbols_from_saved_maps)
{
	char dir[] = "/tmp/iosb-proc-XXXXXX", path[256];
	struct symbolizer *s;
	struct sym_frame fr;
	FILE *in, *out;
	char line[512];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/4242", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/4242/maps", dir);
	in = fopen("/proc/self/maps", "r");
	out = fopen(path, "w");
	cr_assert(in && out);
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fclose(in);
	fclose(out);
	s = sym_new(dir);
	cr_assert_not_null(s);
	cr_assert_eq(sym_proc_note(s, 4242), 0);
	cr_assert_eq(sym_proc_note(s, 4343), -1, "no such process");
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242", dir);
	rmdir(path);
	rmdir(dir);
	cr_assert_eq(sym_user(s, 4242, (uint64_t)(uintptr_t)stacks_test_marker + 4, false, &fr),
		     0);
	cr_assert_str_eq(fr.name, "stacks_test_marker");
	cr_assert(strstr(fr.module, "unit-tests"), "%s", fr.module);
	cr_assert_neq(sym_user(s, 4242, 0x10, false, &fr), 0);
	cr_assert_str_eq(fr.name, "[unknown]");
	cr_assert_eq(sym_procs_unread(s), 1);
	sym_free(s);
}

/* -U without blk: the calls of the root layer, a leaf per part, by time. */
Test(stacks, calls_with_parts_as_leaves)
{
	static const char *const args[] = { "-T", "syscall", "-U", "-m", NULL };
	static const char *const bytes[] = { "-T", "syscall", "-U", "--weight=bytes", NULL };
	struct stack_raw raw[] = {
		raw_key(10, STACK_NONE, 7, FSOP_READ, 100, 0),
		raw_key(10, STACK_NONE, 7, FSOP_READ, 100, 0),
	};
	struct stack_report r;
	struct config cfg;
	char *buf;

	cr_assert_eq(parse(&cfg, args), 0, "%s", cfg.errmsg);
	cr_assert(cfg.call_stacks);
	cr_assert_eq(cfg.weight, WEIGHT_TIME, "time by default for calls");
	cr_assert_eq(parse(&cfg, bytes), 2);
	raw[0].key.part = 1 + PART_IO_WAIT;
	raw[0].counts.time_ns = 30000000; /* 30 ms */
	raw[1].key.part = 1 + LAYER_SYSCALL;
	raw[1].counts.time_ns = 2000000;
	build(args, raw, ARRAY_SIZE(raw), &r);
	buf = written(&r, stacks_folded);
	cr_assert_str_eq(buf, "app;main;pread64;[io_wait] 30\napp;main;pread64;[syscall] 2\n");
	free(buf);
	stack_report_free(&r);
}

/* The flame graph: a frame per node of the merged stacks, its weight, its
 * path's depth; the script inside. UNIT_FLAMEGRAPH=FILE keeps a copy to
 * open in a browser. */
Test(stacks, flamegraph_frames_and_weights)
{
	static const char *const args[] = { "-K", "-U", NULL };
	struct stack_raw raw[] = {
		raw_key(10, 1, 7, BLKOP_READ, 100, 409600),
		raw_key(10, 2, 7, BLKOP_WRITE, 1, 4096),
	};
	const char *keep = getenv("UNIT_FLAMEGRAPH");
	struct stack_report r;
	char *buf;
	FILE *f;

	build(args, raw, ARRAY_SIZE(raw), &r);
	buf = written(&r, stacks_flamegraph);
	cr_assert_not_null(strstr(buf, "data-d=\"0\" data-v=\"413696\" data-k=\"root\" data-n=\"all\""));
	cr_assert_not_null(strstr(buf, "data-d=\"3\" data-v=\"413696\" data-k=\"user\" data-n=\"pread64\""));
	cr_assert_not_null(strstr(buf, "data-d=\"5\" data-v=\"409600\" data-k=\"kernel\" data-n=\"blk_mq_submit_bio\""));
	cr_assert_not_null(strstr(buf, "data-k=\"kernel\" data-n=\"[unknown]\""));
	cr_assert_not_null(strstr(buf, "<title>blk_mq_submit_bio (409,600 bytes, 99.01%)</title>"));
	cr_assert_not_null(strstr(buf, "]]></script>"));
	if (keep) {
		f = fopen(keep, "w");
		cr_assert_not_null(f);
		fputs(buf, f);
		fclose(f);
	}
	free(buf);
	stack_report_free(&r);
}

static int text_of(FILE *f, const struct stack_report *r)
{
	stacks_text(f, r);
	return 0;
}

/* Text: kernel frames, "--", user frames, who, then per op its figures;
 * the closing line with the keys and what was not resolved or lost. */
Test(stacks, text_as_the_seed_prints)
{
	static const char *const args[] = { "-K", "-U", "-u", NULL };
	struct stack_raw raw[] = {
		raw_key(10, 1, 7, BLKOP_READ, 300, 1228800),
		raw_key(10, 2, 7, BLKOP_WRITE, 1, 4096),
	};
	struct stack_report r;
	char *buf;

	build(args, raw, ARRAY_SIZE(raw), &r);
	r.losses[STACK_LOSS_KEYS] = 2;
	r.losses[STACK_LOSS_KEY_BYTES] = 8192;
	buf = written(&r, text_of);
	cr_assert_not_null(strstr(buf, "Block I/O by kernel and user stack, heaviest first by bytes "
				       "(the 10 heaviest):\n\n"
				       "    blk_mq_submit_bio\n    submit_bio\n    --\n"
				       "    pread64\n    main\n        app\n"
				       "        read: 300 requests, 1,228,800 bytes, 300 us device time\n"),
			   "%s", buf);
	cr_assert_not_null(strstr(buf, "(stacks: 2 keys of room for 1,024; 2 requests (8,192 bytes) "
				       "LOST with no room for their key: --max-stacks; 1 frames "
				       "[unknown])\n"),
			   "%s", buf);
	free(buf);
	stack_report_free(&r);
}

/* Maps read when the process was young miss what it mapped since (ld.so
 * maps libc after its first reads): an address outside them reads the
 * maps again; one inside does not. */
Test(stacks, maps_read_again_for_an_address_they_miss)
{
	char dir[] = "/tmp/iosb-proc-XXXXXX", path[256];
	uint64_t inside = 0x1000, outside = 0x9000;
	struct symbolizer *s;
	struct sym_frame fr;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/77", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/77/maps", dir);
	f = fopen(path, "w");
	fputs("00001000-00002000 r-xp 00000000 08:01 1 /nonexistent/app\n", f);
	fclose(f);
	s = sym_new(dir);
	sym_proc_cover(s, 77, &inside, 1);
	f = fopen(path, "w");
	fputs("00001000-00002000 r-xp 00000000 08:01 1 /nonexistent/app\n"
	      "00009000-0000a000 r-xp 00000000 08:01 2 /nonexistent/libz.so.1\n",
	      f);
	fclose(f);
	sym_user(s, 77, outside, false, &fr);
	cr_assert_eq(fr.module[0], '\0', "not read again before asked: %s", fr.module);
	sym_proc_cover(s, 77, &inside, 1);
	sym_user(s, 77, outside, false, &fr);
	cr_assert_eq(fr.module[0], '\0', "read again though every address was mapped");
	sym_proc_cover(s, 77, &outside, 1);
	sym_user(s, 77, outside, false, &fr);
	cr_assert_str_eq(fr.module, "/nonexistent/libz.so.1");
	cr_assert_str_eq(fr.name, "[unknown] (libz.so.1)");
	unlink(path);
	snprintf(path, sizeof(path), "%s/77", dir);
	rmdir(path);
	rmdir(dir);
	sym_free(s);
}

/*
 * --user-stack=dwarf's unwinding, of this process's own stack: the
 * registers and a copy of the stack taken in unwind_here, as the BPF
 * program takes them at an event, unwound through libdwfl and this
 * binary's .eh_frame to its callers, named; and the frame-pointer walk of
 * a hand-made copy.
 */
static uint8_t unwind_copy[8192];

/* Copies the stack byte by byte up to its mapping's end, as the kernel's
 * copy stops there: other frames' red zones are not ours to check. */
static __attribute__((noinline, no_sanitize_address)) size_t copy_stack(uint64_t sp)
{
	const volatile uint8_t *from = (const uint8_t *)(uintptr_t)sp;
	unsigned long long lo, hi;
	size_t n = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			n = hi - sp < sizeof(unwind_copy) ? hi - sp : sizeof(unwind_copy);
	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++)
		unwind_copy[i] = from[i];
	return n;
}

static __attribute__((noinline)) unsigned int unwind_here(struct symbolizer *s, uint64_t *ips,
							  unsigned int max)
{
	struct sym_regs r = { 0 };
	size_t n;

#if defined(__x86_64__)
	__asm__ volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(r.ip), "=r"(r.sp), "=r"(r.fp));
#elif defined(__aarch64__)
	__asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"
			 : "=r"(r.ip), "=r"(r.sp), "=r"(r.fp), "=r"(r.lr));
#endif
	n = copy_stack(r.sp);
	return sym_unwind(s, getpid(), &r, unwind_copy, n, n == sizeof(unwind_copy), ips, max);
}

static __attribute__((noinline)) unsigned int unwind_caller(struct symbolizer *s, uint64_t *ips,
							    unsigned int max)
{
	unsigned int n = unwind_here(s, ips, max);

	__asm__ volatile("" ::: "memory"); /* a call, not a jump: its frame stays */
	return n;
}

Test(stacks, dwarf_unwinds_a_copy_of_this_stack)
{
	struct symbolizer *s = sym_new(NULL);
	uint64_t ips[STACK_DEPTH];
	struct sym_frame fr;
	unsigned int n;

	cr_assert_not_null(s);
	n = unwind_caller(s, ips, STACK_DEPTH);
	cr_assert_geq(n, 3, "%u frames", n);
	cr_assert_eq(sym_user(s, getpid(), ips[0], false, &fr), 0);
	/* The compiler's clones keep the name before a dot (.constprop.0). */
	cr_assert_eq(strncmp(fr.name, "unwind_here", 11), 0, "%s", fr.name);
	cr_assert_eq(sym_user(s, getpid(), ips[1], true, &fr), 0);
	cr_assert_eq(strncmp(fr.name, "unwind_caller", 13), 0, "%s", fr.name);
	cr_assert_eq(sym_user(s, getpid(), ips[2], true, &fr), 0);
	cr_assert(strstr(fr.name, "dwarf_unwinds_a_copy_of_this_stack"), "%s", fr.name);
	/*
	 * A copy cut short: the unwinding says so in its last frame. The
	 * frame pointer lies above sp, as a live one does: a build whose
	 * unwind_here() finds its frame through rbp (the sanitizers') reads
	 * above sp too, past the empty copy. (With rbp 0, libdwfl took the
	 * read below sp that failed as the outermost frame, unmarked.)
	 */
	n = sym_unwind(s, getpid(), &(struct sym_regs){ ips[0], 0x1000, 0x1100, 0 }, unwind_copy, 0,
		       true, ips, STACK_DEPTH);
	cr_assert_geq(n, 1);
	cr_assert(ips[n - 1] & SYM_MARK, "%u frames, last %#lx", n, (unsigned long)ips[n - 1]);
	sym_free(s);
}

Test(stacks, frame_pointer_walk_of_a_copy)
{
	/* Records at sp+16 and sp+48: (caller's fp, return address). */
	uint64_t copy[10] = { 0 }, ips[8];
	uint64_t sp = 0x7ffd0000;
	struct sym_regs r = { 0x401000, sp, sp + 16, 0 };

	copy[2] = sp + 48;
	copy[3] = 0x401100;
	copy[6] = 0;
	copy[7] = 0x401200;
	cr_assert_eq(sym_walk_fp(&r, copy, sizeof(copy), false, ips, 8), 3);
	cr_assert_eq(ips[0], 0x401000);
	cr_assert_eq(ips[1], 0x401100);
	cr_assert_eq(ips[2], 0x401200);
	/* The chain goes on above a full copy: truncated. */
	copy[6] = sp + 4096;
	cr_assert_eq(sym_walk_fp(&r, copy, sizeof(copy), true, ips, 8), 4);
	cr_assert_eq(ips[3], SYM_MARK);
}

/*
 * --user-stack=auto's rule on the two builds of the stacks test program,
 * beside this binary: the one built with frame pointers has them, the one
 * built at -O2 without them has not.
 */
Test(stacks, auto_tells_frame_pointers_by_the_executable)
{
	char dir[] = "/tmp/iosb-proc-XXXXXX", self[512], path[600], exe[600];
	static const struct {
		const char *name;
		int has_fp;
	} builds[] = { { "stackwork", 1 }, { "stackwork-nofp", 0 } };
	struct symbolizer *s;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool fresh;

	cr_assert_gt(n, 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	cr_assert_not_null(mkdtemp(dir));
	s = sym_new(dir);
	cr_assert_not_null(s);
	for (int i = 0; i < 2; i++) {
		snprintf(exe, sizeof(exe), "%s/%s", self, builds[i].name);
		if (access(exe, R_OK))
			cr_skip_test("%s is not built (make all)", exe);
		snprintf(path, sizeof(path), "%s/%d", dir, 100 + i);
		cr_assert_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/%d/exe", dir, 100 + i);
		cr_assert_eq(symlink(exe, path), 0);
		cr_assert_eq(sym_proc_has_fp(s, 100 + i, &fresh), builds[i].has_fp, "%s", exe);
		cr_assert(fresh);
		cr_assert_eq(sym_proc_has_fp(s, 100 + i, &fresh), builds[i].has_fp);
		cr_assert(!fresh, "asked once a process");
		unlink(path);
		snprintf(path, sizeof(path), "%s/%d", dir, 100 + i);
		rmdir(path);
	}
	rmdir(dir);
	sym_free(s);
}
