// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line parsing, table-driven: argv vectors in, the struct config
 * or the error message out. parse_options() must never exit: it runs
 * inside the tool's main(), which decides what to do with usage errors.
 */
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
/* After criterion.h (via unit.h): it must see the real assert macros. */
#include <criterion/redirect.h>

#define MAX_ARGS 16
#define LAYER(l) (1U << (l))

/* argv as main() gets it: program name first, NULL-terminated, writable
 * (argp permutes the pointers). */
struct argv_buf {
	char *v[MAX_ARGS + 2];
	int c;
};

static void build_argv(struct argv_buf *a, const char *const *args)
{
	a->c = 0;
	a->v[a->c++] = (char *)"iostackbreak";
	for (unsigned int i = 0; args[i]; i++) {
		cr_assert_lt(i, MAX_ARGS, "too many arguments in a test row");
		a->v[a->c++] = (char *)args[i];
	}
	a->v[a->c] = NULL;
}

/* "-T vfs 1" for messages. */
static const char *argv_str(const char *const *args)
{
	static char buf[256];
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; args[i] && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s'%s'", i ? " " : "",
					 args[i]);
	return buf;
}

struct ok_case {
	const char *args[MAX_ARGS];
	struct config want;	/* errmsg, command unused */
	const char *command[4]; /* expected -- COMMAND ARGS, NULL-terminated */
};

/* Defaults every row starts from: what an empty command line gives. */
#define DEF .layers = DEFAULT_LAYERS

static const struct ok_case ok_cases[] = {
	{ .args = { NULL }, .want = { DEF } },
	{ .args = { "-T", "syscall", NULL },
	  .want = { .layers = LAYER(LAYER_SYSCALL), .layers_given = true } },
	{ .args = { "--all-fds", "-T", "syscall", NULL },
	  .want = { .layers = LAYER(LAYER_SYSCALL), .layers_given = true, .all_fds = true } },
	{ .args = { "-T", "vfs", NULL },
	  .want = { .layers = LAYER(LAYER_VFS), .layers_given = true } },
	{ .args = { "-T", "ext4", NULL },
	  .want = { .layers = LAYER(LAYER_EXT4), .layers_given = true } },
	{ .args = { "-T", "xfs", NULL },
	  .want = { .layers = LAYER(LAYER_XFS), .layers_given = true } },
	{ .args = { "-T", "btrfs", NULL },
	  .want = { .layers = LAYER(LAYER_BTRFS), .layers_given = true } },
	{ .args = { "-T", "blk", NULL },
	  .want = { .layers = LAYER(LAYER_BLK), .layers_given = true } },
	{ .args = { "-T", "block", NULL },
	  .want = { .layers = LAYER(LAYER_BLK), .layers_given = true } },
	{ .args = { "-T", "syscall,blk", NULL },
	  .want = { .layers = LAYER(LAYER_SYSCALL) | LAYER(LAYER_BLK), .layers_given = true } },
	{ .args = { "--type=ext4,xfs,btrfs", NULL },
	  .want = { .layers = LAYER(LAYER_EXT4) | LAYER(LAYER_XFS) | LAYER(LAYER_BTRFS),
		    .layers_given = true } },
	{ .args = { "-Tvfs,vfs", NULL },
	  .want = { .layers = LAYER(LAYER_VFS), .layers_given = true } },
	{ .args = { "-T", "all", NULL }, .want = { .layers = ALL_LAYERS, .layers_given = true } },
	{ .args = { "-T", "vfs,all", NULL },
	  .want = { .layers = ALL_LAYERS, .layers_given = true } },
	{ .args = { "-p", "4242", NULL }, .want = { DEF, .pids = { 4242 }, .nr_pids = 1 } },
	{ .args = { "--pid=1", NULL }, .want = { DEF, .pids = { 1 }, .nr_pids = 1 } },
	{ .args = { "-p", "2147483647", NULL },
	  .want = { DEF, .pids = { 2147483647 }, .nr_pids = 1 } },
	{ .args = { "-p", "3,1,2", NULL }, .want = { DEF, .pids = { 3, 1, 2 }, .nr_pids = 3 } },
	{ .args = { "-p", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", NULL },
	  .want = { DEF, .pids = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
		    .nr_pids = 16 } },
	{ .args = { "-t", "77", NULL }, .want = { DEF, .tid = 77 } },
	{ .args = { "-c", "postgres", NULL }, .want = { DEF, .comm = "postgres" } },
	{ .args = { "-c", "fifteen_chars_x", NULL }, .want = { DEF, .comm = "fifteen_chars_x" } },
	{ .args = { "--cgroup", "/sys/fs/cgroup/db.slice", NULL },
	  .want = { DEF, .cgroup = "/sys/fs/cgroup/db.slice" } },
	{ .args = { "--btf=/var/lib/btf/5.4.0-42-generic.btf", NULL },
	  .want = { DEF, .btf = "/var/lib/btf/5.4.0-42-generic.btf" } },
	{ .args = { "-P", NULL }, .want = { DEF, .per_process = true } },
	{ .args = { "-T", "blk", "-D", "-F", NULL },
	  .want = { .layers = LAYER(LAYER_BLK),
		    .layers_given = true,
		    .per_disk = true,
		    .per_flags = true } },
	{ .args = { "-P", "--top", "5", "--max-keys", "100", NULL },
	  .want = { DEF, .per_process = true, .top = 5, .max_keys = 100 } },
	/* -G alone, on every layer; its grace defaults to 300 s. */
	{ .args = { "-G", NULL }, .want = { DEF, .per_cgroup = true, .cgroup_grace = 300 } },
	{ .args = { "--per-cgroup", "-T", "vfs", "--top", "3", "--max-keys", "64", NULL },
	  .want = { .layers = LAYER(LAYER_VFS),
		    .layers_given = true,
		    .per_cgroup = true,
		    .cgroup_grace = 300,
		    .top = 3,
		    .max_keys = 64 } },
	{ .args = { "-G", "--prometheus=9633", "--cgroup-grace=5", NULL },
	  .want = { DEF, .per_cgroup = true, .cgroup_grace = 5, .prometheus = true,
		    .prom_addr = "127.0.0.1", .prom_port = 9633 } },
	{ .args = { "-G", "--textfile=/tmp", "--cgroup-grace", "1", NULL },
	  .want = { DEF, .per_cgroup = true, .cgroup_grace = 1, .textfile = "/tmp" } },
	{ .args = { "--timestamp", NULL }, .want = { DEF, .timestamp = true } },
	{ .args = { "--duration", "30", NULL }, .want = { DEF, .duration = 30 } },
	{ .args = { "-d", "nvme0n1", NULL }, .want = { DEF, .disk = "nvme0n1" } },
	{ .args = { "-T", "blk", "--disk", "sda", NULL },
	  .want = { .layers = LAYER(LAYER_BLK), .layers_given = true, .disk = "sda" } },
	{ .args = { "-Q", NULL }, .want = { DEF, .queued = true } },
	{ .args = { "-T", "vfs,blk", "-Q", NULL },
	  .want = { .layers = LAYER(LAYER_VFS) | LAYER(LAYER_BLK),
		    .layers_given = true,
		    .queued = true } },
	{ .args = { "-m", NULL }, .want = { DEF, .unit = UNIT_MS } },
	{ .args = { "--milliseconds", NULL }, .want = { DEF, .unit = UNIT_MS } },
	{ .args = { "-u", NULL }, .want = { DEF, .unit = UNIT_US } },
	{ .args = { "--microseconds", NULL }, .want = { DEF, .unit = UNIT_US } },
	{ .args = { "--json", NULL }, .want = { DEF, .json = true } },
	{ .args = { "--attach", "auto", NULL }, .want = { DEF, .attach = METHOD_NONE } },
	{ .args = { "--attach", "fentry", NULL }, .want = { DEF, .attach = METHOD_FENTRY } },
	{ .args = { "--attach=kprobe", NULL }, .want = { DEF, .attach = METHOD_KPROBE } },
	{ .args = { "--attach=tracepoint", NULL }, .want = { DEF, .attach = METHOD_TRACEPOINT } },
	{ .args = { "--plan", NULL }, .want = { DEF, .plan_only = true } },
	{ .args = { "-v", NULL }, .want = { DEF, .verbose = true } },
	{ .args = { "--verbose", NULL }, .want = { DEF, .verbose = true } },
	{ .args = { "5", NULL }, .want = { DEF, .interval = 5 } },
	{ .args = { "5", "10", NULL }, .want = { DEF, .interval = 5, .count = 10 } },
	/* getopt permutes: options may follow the positionals. */
	{ .args = { "2", "-u", "3", NULL },
	  .want = { DEF, .unit = UNIT_US, .interval = 2, .count = 3 } },
	{ .args = { "--", "dd", "if=f", "of=/dev/null", NULL },
	  .want = { DEF },
	  .command = { "dd", "if=f", "of=/dev/null", NULL } },
	/* After --, options belong to the command, not to us. */
	{ .args = { "-T", "vfs", "1", "--", "cmd", "-p", "--bogus", NULL },
	  .want = { .layers = LAYER(LAYER_VFS), .layers_given = true, .interval = 1 },
	  .command = { "cmd", "-p", "--bogus", NULL } },
	{ .args = { "-Tblk", "-d", "sda", "-Q", "-p", "7", "-u", "--json", "-v", "--attach=fentry",
		    "1", "3", NULL },
	  .want = { .layers = LAYER(LAYER_BLK),
		    .layers_given = true,
		    .pids = { 7 },
		    .nr_pids = 1,
		    .disk = "sda",
		    .queued = true,
		    .unit = UNIT_US,
		    .json = true,
		    .verbose = true,
		    .attach = METHOD_FENTRY,
		    .interval = 1,
		    .count = 3 } },
	/* Exporter mode: 127.0.0.1 unless an address is asked for. */
	{ .args = { "--prometheus=9633", NULL },
	  .want = { DEF, .prometheus = true, .prom_addr = "127.0.0.1", .prom_port = 9633 } },
	{ .args = { "--prometheus", "0.0.0.0:9100", NULL },
	  .want = { DEF, .prometheus = true, .prom_addr = "0.0.0.0", .prom_port = 9100 } },
	{ .args = { "--prometheus=[::1]:65535", NULL },
	  .want = { DEF, .prometheus = true, .prom_addr = "::1", .prom_ipv6 = true,
		    .prom_port = 65535 } },
	{ .args = { "--prometheus=[::]:1", NULL },
	  .want = { DEF, .prometheus = true, .prom_addr = "::", .prom_ipv6 = true,
		    .prom_port = 1 } },
	{ .args = { "--prometheus=10.1.2.3:9633", "-T", "syscall,blk", "-P", "-D", "-F", "--top",
		    "5", "--max-keys", "100", "--stats", "-p", "7", "--duration", "60", NULL },
	  .want = { .layers = LAYER(LAYER_SYSCALL) | LAYER(LAYER_BLK),
		    .layers_given = true,
		    .pids = { 7 },
		    .nr_pids = 1,
		    .per_process = true,
		    .per_disk = true,
		    .per_flags = true,
		    .top = 5,
		    .max_keys = 100,
		    .stats = true,
		    .duration = 60,
		    .prometheus = true,
		    .prom_addr = "10.1.2.3",
		    .prom_port = 9633 } },
	{ .args = { "--textfile=/var/lib/node_exporter", NULL },
	  .want = { DEF, .textfile = "/var/lib/node_exporter" } },
	/* With --textfile the interval is how often the file is written. */
	{ .args = { "--textfile", "/tmp", "60", NULL },
	  .want = { DEF, .textfile = "/tmp", .interval = 60 } },
	{ .args = { "--prometheus=9633", "--textfile=/tmp", "30", NULL },
	  .want = { DEF, .prometheus = true, .prom_addr = "127.0.0.1", .prom_port = 9633,
		    .textfile = "/tmp", .interval = 30 } },
	/* -o: the command after -- keeps its own stdout. */
	{ .args = { "-o", "/tmp/r.json", "--json", "--", "make", NULL },
	  .want = { DEF, .output = "/tmp/r.json", .json = true },
	  .command = { "make", NULL } },
	{ .args = { "--output=/tmp/r.txt", NULL }, .want = { DEF, .output = "/tmp/r.txt" } },
	{ .args = { "-V", NULL }, .want = { DEF, .help_shown = true } },
	{ .args = { "--version", NULL }, .want = { DEF, .help_shown = true } },
	{ .args = { "-h", NULL }, .want = { DEF, .help_shown = true } },
	{ .args = { "--help", NULL }, .want = { DEF, .help_shown = true } },
};

static void check_str(const char *what, const char *field, const char *got, const char *want)
{
	if (want)
		cr_assert(got && !strcmp(got, want), "[%s] %s %s, want %s", what, field,
			  got ? got : "NULL", want);
	else
		cr_assert_null(got, "[%s] %s %s, want none", what, field, got);
}

static void check_ok(const struct ok_case *tc)
{
	const char *what = argv_str(tc->args);
	const struct config *w = &tc->want;
	struct argv_buf a;
	struct config cfg;
	int rc;

	build_argv(&a, tc->args);
	rc = parse_options(a.c, a.v, &cfg);
	cr_assert_eq(rc, 0, "[%s] returned %d: %s", what, rc, cfg.errmsg);
	cr_assert_eq(cfg.errmsg[0], '\0', "[%s] errmsg set on success: %s", what, cfg.errmsg);
	cr_assert_eq(cfg.layers, w->layers, "[%s] layers 0x%x, want 0x%x", what, cfg.layers,
		     w->layers);
	cr_assert_eq(cfg.layers_given, w->layers_given, "[%s] layers_given", what);
	cr_assert_eq(cfg.nr_pids, w->nr_pids, "[%s] %u pids, want %u", what, cfg.nr_pids,
		     w->nr_pids);
	for (unsigned int i = 0; i < w->nr_pids; i++)
		cr_assert_eq(cfg.pids[i], w->pids[i], "[%s] pids[%u] %d, want %d", what, i,
			     cfg.pids[i], w->pids[i]);
	cr_assert_eq(cfg.tid, w->tid, "[%s] tid %d, want %d", what, cfg.tid, w->tid);
	check_str(what, "comm", cfg.comm, w->comm);
	check_str(what, "cgroup", cfg.cgroup, w->cgroup);
	check_str(what, "btf", cfg.btf, w->btf);
	cr_assert_eq(cfg.per_disk, w->per_disk, "[%s] per_disk", what);
	cr_assert_eq(cfg.per_process, w->per_process, "[%s] per_process", what);
	cr_assert_eq(cfg.per_flags, w->per_flags, "[%s] per_flags", what);
	cr_assert_eq(cfg.per_cgroup, w->per_cgroup, "[%s] per_cgroup", what);
	cr_assert_eq(cfg.cgroup_grace, w->cgroup_grace, "[%s] cgroup_grace %u, want %u", what,
		     cfg.cgroup_grace, w->cgroup_grace);
	cr_assert_eq(cfg.top, w->top, "[%s] top %u, want %u", what, cfg.top, w->top);
	cr_assert_eq(cfg.max_keys, w->max_keys, "[%s] max_keys %u, want %u", what, cfg.max_keys,
		     w->max_keys);
	cr_assert_eq(cfg.timestamp, w->timestamp, "[%s] timestamp", what);
	cr_assert_eq(cfg.all_fds, w->all_fds, "[%s] all_fds", what);
	cr_assert_eq(cfg.duration, w->duration, "[%s] duration %u, want %u", what, cfg.duration,
		     w->duration);
	check_str(what, "disk", cfg.disk, w->disk);
	cr_assert_eq(cfg.queued, w->queued, "[%s] queued", what);
	cr_assert_eq(cfg.unit, w->unit, "[%s] unit %s, want %s", what, unit_name(cfg.unit),
		     unit_name(w->unit));
	cr_assert_eq(cfg.json, w->json, "[%s] json", what);
	cr_assert_eq(cfg.plan_only, w->plan_only, "[%s] plan_only", what);
	cr_assert_eq(cfg.verbose, w->verbose, "[%s] verbose", what);
	cr_assert_eq(cfg.attach, w->attach, "[%s] attach %s, want %s", what,
		     attach_name(cfg.attach), attach_name(w->attach));
	cr_assert_eq(cfg.interval, w->interval, "[%s] interval %u, want %u", what, cfg.interval,
		     w->interval);
	cr_assert_eq(cfg.count, w->count, "[%s] count %u, want %u", what, cfg.count, w->count);
	cr_assert_eq(cfg.help_shown, w->help_shown, "[%s] help_shown", what);
	cr_assert_eq(cfg.prometheus, w->prometheus, "[%s] prometheus", what);
	if (w->prometheus) {
		cr_assert_str_eq(cfg.prom_addr, w->prom_addr, "[%s] prom_addr", what);
		cr_assert_eq(cfg.prom_port, w->prom_port, "[%s] prom_port %u, want %u", what,
			     cfg.prom_port, w->prom_port);
		cr_assert_eq(cfg.prom_ipv6, w->prom_ipv6, "[%s] prom_ipv6", what);
	}
	check_str(what, "textfile", cfg.textfile, w->textfile);
	check_str(what, "output", cfg.output, w->output);
	if (!tc->command[0]) {
		cr_assert_null(cfg.command, "[%s] unexpected command", what);
		return;
	}
	cr_assert_not_null(cfg.command, "[%s] no command", what);
	for (unsigned int i = 0;; i++) {
		if (!tc->command[i]) {
			cr_assert_null(cfg.command[i], "[%s] command has extra word %s", what,
				       cfg.command[i]);
			break;
		}
		cr_assert(cfg.command[i] && !strcmp(cfg.command[i], tc->command[i]),
			  "[%s] command[%u] = %s, want %s", what, i,
			  cfg.command[i] ? cfg.command[i] : "NULL", tc->command[i]);
	}
}

/* -h prints the help on stdout: keep it out of the test log. */
Test(opts, valid_command_lines, .init = cr_redirect_stdout)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(ok_cases); i++)
		check_ok(&ok_cases[i]);
}

struct bad_case {
	const char *args[MAX_ARGS];
	const char *needle; /* the message must name this */
};

static const struct bad_case bad_cases[] = {
	{ { "-T", "foo", NULL }, "'foo'" },
	{ { "-T", "vfs,foo", NULL }, "'foo'" },
	{ { "-T", "", NULL }, "''" },
	{ { "-T", "vfs,", NULL }, "-T vfs," },
	{ { "-T", ",vfs", NULL }, "-T ,vfs" },
	{ { "-T", "vfs,,blk", NULL }, "-T vfs,,blk" },
	{ { "-T", "VFS", NULL }, "'VFS'" },
	{ { "-T", "averyveryveryverylonglayernamethatoverflows", NULL }, "averyvery" },
	{ { "-p", "0", NULL }, "'0'" },
	{ { "-p", "-5", NULL }, "'-5'" },
	{ { "-p", "abc", NULL }, "'abc'" },
	{ { "-p", "12x", NULL }, "'12x'" },
	{ { "-p", "99999999999", NULL }, "'99999999999'" },
	{ { "-p", "+5", NULL }, "'+5'" },
	{ { "-p", "", NULL }, "PID ''" },
	{ { "-p", "1,,2", NULL }, "PID ''" },
	{ { "-p", "1,x", NULL }, "PID 'x'" },
	{ { "-p", "1,", NULL }, "PID ''" },
	{ { "-p", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", NULL }, "at most 16" },
	{ { "-t", "0", NULL }, "'0'" },
	{ { "-t", "t1", NULL }, "'t1'" },
	{ { "-c", "", NULL }, "name ''" },
	{ { "-c", "sixteen_chars_xx", NULL }, "'sixteen_chars_xx'" },
	{ { "--cgroup", "", NULL }, "--cgroup" },
	{ { "-T", "vfs", "-D", NULL }, "-D" },
	{ { "-T", "vfs", "-F", NULL }, "-F" },
	{ { "--top", "5", NULL }, "--top" },
	{ { "-P", "--top", "0", NULL }, "'0'" },
	{ { "--max-keys", "5", NULL }, "--max-keys" },
	{ { "-P", "--max-keys", "1048577", NULL }, "'1048577'" },
	{ { "--cgroup-grace=5", "--prometheus=9633", NULL }, "add -G" },
	{ { "-G", "--cgroup-grace=5", NULL }, "--prometheus or --textfile" },
	{ { "-G", "--prometheus=9633", "--cgroup-grace=0", NULL }, "invalid --cgroup-grace '0'" },
	{ { "-G", "--prometheus=9633", "--cgroup-grace=1m", NULL }, "'1m'" },
	{ { "-G", "--prometheus=9633", "--cgroup-grace=1", "--cgroup-grace=2", NULL },
	  "--cgroup-grace given twice" },
	{ { "--duration", "0", NULL }, "'0'" },
	{ { "--duration", "5", "--", "cmd", NULL }, "--duration" },
	{ { "--duration", "5", "--plan", NULL }, "--duration" },
	{ { "-d", "a/b", NULL }, "'a/b'" },
	{ { "-d", "/dev/sda", NULL }, "'/dev/sda'" },
	{ { "-d", "", NULL }, "disk ''" },
	{ { "-m", "-u", NULL }, "-m and -u" },
	{ { "-u", "-m", NULL }, "-m and -u" },
	{ { "0", NULL }, "interval '0'" },
	{ { "x", NULL }, "interval 'x'" },
	{ { "-1", NULL }, "-1" },
	{ { "1.5", NULL }, "interval '1.5'" },
	{ { "1", "0", NULL }, "count '0'" },
	{ { "1", "x", NULL }, "count 'x'" },
	{ { "1", "2", "3", NULL }, "'3'" },
	{ { "--attach=bogus", NULL }, "'bogus'" },
	{ { "--attach", "", NULL }, "method ''" },
	{ { "-T", "vfs", "-d", "sda", NULL }, "-d" },
	{ { "-T", "vfs", "-Q", NULL }, "-Q" },
	{ { "-p", "1", "--", "cmd", NULL }, "-p" },
	{ { "--plan", "1", NULL }, "--plan" },
	{ { "--plan", "--", "cmd", NULL }, "--plan" },
	{ { "--", NULL }, "--" },
	{ { "-T", "vfs", "--", NULL }, "--" },
	{ { "--bogus", NULL }, "'--bogus'" },
	{ { "-x", NULL }, "-x" },
	{ { "-T", NULL }, "-T" },
	{ { "--usage", NULL }, "--usage" },
	/* --prometheus: [ADDR:]PORT, numeric addresses only. */
	{ { "--prometheus=", NULL }, "port ''" },
	{ { "--prometheus=0", NULL }, "port '0'" },
	{ { "--prometheus=65536", NULL }, "port '65536'" },
	{ { "--prometheus=http", NULL }, "port 'http'" },
	{ { "--prometheus=127.0.0.1", NULL }, "port '127.0.0.1'" },
	{ { "--prometheus=127.0.0.1:", NULL }, "port ''" },
	{ { "--prometheus=:9633", NULL }, "address ''" },
	{ { "--prometheus=localhost:9633", NULL }, "address 'localhost'" },
	{ { "--prometheus=1.2.3:9633", NULL }, "address '1.2.3'" },
	{ { "--prometheus=999.1.1.1:9633", NULL }, "address '999.1.1.1'" },
	{ { "--prometheus=::1:9633", NULL }, "[::1]:9633" },
	{ { "--prometheus=[::1]9633", NULL }, "[ADDR]:PORT" },
	{ { "--prometheus=[::1", NULL }, "[ADDR]:PORT" },
	{ { "--prometheus=[1.2.3.4]:9633", NULL }, "address '1.2.3.4'" },
	{ { "--prometheus=[::1]:x", NULL }, "port 'x'" },
	{ { "--textfile=", NULL }, "--textfile" },
	{ { "-o", "", NULL }, "empty -o" },
	{ { "-o", "/a", "--output=/b", NULL }, "given twice" },
	{ { "--btf=", NULL }, "empty --btf" },
	{ { "--btf=/a", "--btf", "/b", NULL }, "--btf given twice" },
	{ { "--prometheus=9633", "-o", "/tmp/r", NULL }, "drop -o" },
	{ { "--live", "-o", "/tmp/r", NULL }, "drop -o" },
	/* Exporter mode runs until stopped and exports seconds: options for
	 * printed reports, or that end the run, are refused. */
	{ { "--prometheus=9633", "--json", NULL }, "drop --json" },
	{ { "--textfile=/tmp", "--json", NULL }, "--textfile" },
	{ { "--prometheus=9633", "5", NULL }, "no interval" },
	{ { "--prometheus=9633", "5", "3", NULL }, "no count" },
	{ { "--textfile=/tmp", "5", "3", NULL }, "no count" },
	{ { "--prometheus=9633", "--", "cmd", NULL }, "-p PID" },
	{ { "--textfile=/tmp", "--", "cmd", NULL }, "-p PID" },
	{ { "--prometheus=9633", "--plan", NULL }, "--plan" },
	{ { "--prometheus=9633", "-u", NULL }, "seconds" },
	{ { "--prometheus=9633", "-m", NULL }, "seconds" },
	{ { "--textfile=/tmp", "--timestamp", NULL }, "--timestamp" },
};

Test(opts, invalid_command_lines, .init = cr_redirect_stderr)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *tc = &bad_cases[i];
		const char *what = argv_str(tc->args);
		struct argv_buf a;
		struct config cfg;
		int rc;

		build_argv(&a, tc->args);
		rc = parse_options(a.c, a.v, &cfg);
		cr_assert_eq(rc, 2, "[%s] returned %d, want 2 (errmsg: %s)", what, rc, cfg.errmsg);
		cr_assert_neq(cfg.errmsg[0], '\0', "[%s] no error message", what);
		cr_assert_not_null(strstr(cfg.errmsg, tc->needle),
				   "[%s] message does not name %s: %s", what, tc->needle,
				   cfg.errmsg);
	}
}

/* A config left over from an earlier call must not leak into the next. */
Test(opts, resets_config_between_calls)
{
	static const char *const first[] = { "-T", "vfs", "-p", "9", "-u", "3", NULL };
	static const char *const bad[] = { "-T", "nope", NULL };
	static const char *const none[] = { NULL };
	struct argv_buf a;
	struct config cfg;

	build_argv(&a, first);
	cr_assert_eq(parse_options(a.c, a.v, &cfg), 0);
	build_argv(&a, bad);
	cr_assert_eq(parse_options(a.c, a.v, &cfg), 2);
	build_argv(&a, none);
	cr_assert_eq(parse_options(a.c, a.v, &cfg), 0, "errmsg: %s", cfg.errmsg);
	cr_assert_eq(cfg.layers, DEFAULT_LAYERS);
	cr_assert_eq(cfg.nr_pids, 0);
	cr_assert_eq(cfg.unit, UNIT_US);
	cr_assert_eq(cfg.interval, 0);
	cr_assert_eq(cfg.errmsg[0], '\0', "stale errmsg: %s", cfg.errmsg);
}

/*
 * Runs parse_options() in a child: argp's own exit() (what --help or a bad
 * option does without ARGP_NO_EXIT) would end the child with its status;
 * returning hands back 100 + rc, so the parent can tell the two apart.
 */
static int parse_in_child(const char *const *args, bool *help_shown)
{
	int fds[2], status;
	struct argv_buf a;
	pid_t pid;
	char flag = 0;

	cr_assert_eq(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	cr_assert_geq(pid, 0, "fork failed");
	if (!pid) {
		struct config cfg;
		int rc;

		close(fds[0]);
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(1);
		build_argv(&a, args);
		rc = parse_options(a.c, a.v, &cfg);
		flag = cfg.help_shown ? 'h' : '-';
		if (write(fds[1], &flag, 1) != 1)
			_exit(1);
		_exit(100 + rc);
	}
	close(fds[1]);
	if (read(fds[0], &flag, 1) != 1)
		flag = 0;
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "[%s] child killed by a signal", argv_str(args));
	*help_shown = flag == 'h';
	return WEXITSTATUS(status);
}

Test(opts, never_exits)
{
	static const struct {
		const char *args[4];
		int rc;
		bool help;
	} rows[] = {
		{ { "--help", NULL }, 0, true },     { { "-h", NULL }, 0, true },
		{ { "--version", NULL }, 0, true },  { { "--bogus", NULL }, 2, false },
		{ { "-T", "foo", NULL }, 2, false }, { { "-p", NULL }, 2, false },
		{ { "--", NULL }, 2, false },	     { { "1", NULL }, 0, false },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		bool help = false;
		int st = parse_in_child(rows[i].args, &help);

		cr_assert_eq(st, 100 + rows[i].rc,
			     "[%s] child ended with status %d: parse_options exited instead of "
			     "returning %d",
			     argv_str(rows[i].args), st, rows[i].rc);
		cr_assert_eq(help, rows[i].help, "[%s] help_shown", argv_str(rows[i].args));
	}
}

/* The help goes to stdout and names the options and the layers. */
Test(opts, help_text, .init = cr_redirect_stdout)
{
	static const char *const args[] = { "--help", NULL };
	struct argv_buf a;
	struct config cfg;
	char text[16384]; /* the whole help (9 KiB with --btf) */
	char layers[256];
	size_t n, used = 0;
	FILE *f;

	build_argv(&a, args);
	cr_assert_eq(parse_options(a.c, a.v, &cfg), 0);
	cr_assert(cfg.help_shown);
	fflush(stdout);
	f = cr_get_redirected_stdout();
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	cr_assert_not_null(strstr(text, "--type"), "help lacks --type:\n%s", text);
	/* The layer list may wrap: one line. */
	for (char *c = text; *c; c++)
		if (*c == '\n')
			*c = ' ';
	cr_assert_not_null(strstr(text, "--attach"), "help lacks --attach:\n%s", text);
	/* Every layer of the table, in its order. */
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		used += (size_t)snprintf(layers + used, sizeof(layers) - used, "%s%s",
					 l ? ", " : "Layers: ", layer_name(l));
	cr_assert_not_null(strstr(text, layers), "help lacks '%s':\n%s", layers, text);
}

Test(opts, names)
{
	cr_assert_str_eq(unit_name(UNIT_NS), "ns");
	cr_assert_str_eq(unit_name(UNIT_US), "us");
	cr_assert_str_eq(unit_name(UNIT_MS), "ms");
	cr_assert_str_eq(attach_name(METHOD_NONE), "auto");
	cr_assert_str_eq(attach_name(METHOD_FENTRY), "fentry");
	cr_assert_str_eq(attach_name(METHOD_KPROBE), "kprobe");
	cr_assert_str_eq(attach_name(METHOD_TRACEPOINT), "tracepoint");
}

/* parse_layer_list() on its own: the word it returns is the bad one. */
Test(opts, layer_list)
{
	unsigned int mask;
	char bad[16];

	cr_assert_eq(parse_layer_list("blk,syscall", &mask, bad, sizeof(bad)), 0);
	cr_assert_eq(mask, LAYER(LAYER_BLK) | LAYER(LAYER_SYSCALL));
	cr_assert_eq(parse_layer_list("vfs,zfs,blk", &mask, bad, sizeof(bad)), -1);
	cr_assert_str_eq(bad, "zfs");
	cr_assert_eq(parse_layer_list("vfs,", &mask, bad, sizeof(bad)), -1);
	cr_assert_str_eq(bad, "");
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		cr_assert_eq(layer_by_name(layer_name(l)), (int)l, "layer %u", l);
	cr_assert_eq(layer_by_name("nope"), -1);
}
