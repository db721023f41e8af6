// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <ctype.h>
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
#include "opts.h"
#include "quote.h"
#include "version.h"

enum long_only_keys {
	OPT_JSON = 0x100,
	OPT_ATTACH,
	OPT_PLAN,
	OPT_CGROUP,
	OPT_TOP,
	OPT_TIMESTAMP,
	OPT_DURATION,
	OPT_MAX_KEYS,
	OPT_STATS,
	OPT_NO_CHILDREN,
	OPT_NO_PARTS,
	OPT_NO_OFFCPU,
	OPT_PROMETHEUS,
	OPT_TEXTFILE,
	OPT_SLOWER,
	OPT_FULL_PATH,
	OPT_FILE,
	OPT_TRACE,
	OPT_TRACE_MAX,
	OPT_NO_VERDICT,
	OPT_HEATMAP,
	OPT_LIVE,
};

static const char doc[] =
    "Break the latency of I/O down by layer of the storage stack: system call,\n"
    "VFS, file system (ext4, xfs, btrfs) and block layer.\n"
    "\n"
    "EXAMPLES:\n"
    "  iostackbreak                      # all layers, one report at Ctrl-C\n"
    "  iostackbreak 1 10                 # all layers, ten 1-second reports\n"
    "  iostackbreak -T vfs -p 4242       # VFS latency of process 4242\n"
    "  iostackbreak -T blk -d nvme0n1 -Q # one disk, including OS queue time\n"
    "  iostackbreak -T syscall,blk -u    # two layers, in microseconds\n"
    "  iostackbreak --json 5             # NDJSON report every 5 seconds\n"
    "  iostackbreak -T syscall -P --top 5 # the five busiest processes\n"
    "  iostackbreak -T blk -D -F         # block latency by disk and flags\n"
    "  iostackbreak --cgroup /sys/fs/cgroup/db.slice 10  # one container\n"
    "  iostackbreak --plan               # what would be attached, and why\n"
    "  iostackbreak -- make -j4          # a command and every process it forks\n"
    "  iostackbreak -p 4242 -f           # a process and its children\n"
    "  iostackbreak --prometheus=9633    # serve /metrics on 127.0.0.1:9633\n"
    "  iostackbreak --slower=10ms        # every call of 10 ms or more, as it ends\n"
    "  iostackbreak --file=/var/lib/db/base.dat -p 4242  # one file's I/O\n"
    "  iostackbreak --trace=io.json --slower=1ms -- ./load  # a Perfetto timeline\n"
    "\n"
    "Layers: syscall, vfs, ext4, xfs, btrfs, blk (also \"all\"). Note: unlike\n"
    "bcc tools, -T selects layers here; it does not print timestamps.\n"
    "\n"
    "OPTIONS:";

static const struct argp_option options[] = {
	{ "type", 'T', "LAYERS", 0,
	  "Layers to trace, a comma list of syscall, vfs, ext4, xfs, btrfs, blk "
	  "(default: all)",
	  0 },
	{ "pid", 'p', "PID[,PID...]", 0, "Trace only these processes (thread group ids, up to 16)",
	  0 },
	{ "children", 'f', NULL, 0,
	  "With -p: also the processes they fork from now on, at any depth, and "
	  "their descendants that exist already",
	  0 },
	{ "part-histograms", 'B', NULL, 0,
	  "Where the time goes: a histogram of each part's time per call", 0 },
	{ "no-offcpu", OPT_NO_OFFCPU, NULL, 0,
	  "Where the time goes: no io_wait, blocked and runqueue parts (no "
	  "sched_switch program); waits count as the waiting layer's self time",
	  0 },
	{ "no-parts", OPT_NO_PARTS, NULL, 0,
	  "Do not split calls into where their time goes (fewer programs run)", 0 },
	{ "no-children", OPT_NO_CHILDREN, NULL, 0,
	  "With a COMMAND: trace its process alone, not the processes it forks", 0 },
	{ "tid", 't', "TID", 0, "Trace only this thread", 0 },
	{ "comm", 'c', "NAME", 0, "Trace only processes with this name (as in /proc/PID/comm)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Trace only tasks in this cgroup v2 directory and its descendants", 0 },
	{ "per-disk", 'D', NULL, 0, "Block layer: one cell per disk", 0 },
	{ "per-process", 'P', NULL, 0, "One cell per process (block layer: the submitting process)",
	  0 },
	{ "flags", 'F', NULL, 0,
	  "Block layer: one cell per set of request flags (sync, meta, fua, preflush)", 0 },
	{ "top", OPT_TOP, "N", 0, "With -D, -P or -F: show the N busiest keys per cell", 0 },
	{ "max-keys", OPT_MAX_KEYS, "N", 0,
	  "With -D, -P or -F: room for N keys in the kernel (default 2048); events of "
	  "keys beyond it are counted as dropped",
	  0 },
	{ "stats", OPT_STATS, NULL, 0,
	  "Report the tracer's own cost: BPF run time per layer as the kernel "
	  "measures it, map memory, dropped events",
	  0 },
	{ "timestamp", OPT_TIMESTAMP, NULL, 0, "Print the time before each report", 0 },
	{ "live", OPT_LIVE, NULL, 0,
	  "A full-screen view redrawn every interval (default 1 s): rates, p50, p99 and "
	  "where the time goes per layer and op, the busiest processes or disks, the "
	  "verdict; keys q quit, p/d processes/disks, s sort, space pause",
	  0 },
	{ "heatmap", OPT_HEATMAP, "FILE", 0,
	  "With an interval: write a latency heat map of the run to FILE (SVG) when it "
	  "ends, a panel per layer and op, a column per interval",
	  0 },
	{ "no-verdict", OPT_NO_VERDICT, NULL, 0,
	  "Text and JSON: leave out the verdict, the line that says where the time went", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0, "Stop after SECONDS and print the report", 0 },
	{ "disk", 'd', "DISK", 0,
	  "Block layer: trace only this disk, by its /sys/block name (e.g. nvme0n1)", 0 },
	{ "queued", 'Q', NULL, 0,
	  "Block layer: include OS queue time (from block_io_start or insert)", 0 },
	{ "milliseconds", 'm', NULL, 0, "Print times in milliseconds", 0 },
	{ "microseconds", 'u', NULL, 0, "Print times in microseconds", 0 },
	{ "json", OPT_JSON, NULL, 0,
	  "One JSON object per report, one per line (times in nanoseconds)", 0 },
	{ "attach", OPT_ATTACH, "METHOD", 0,
	  "auto (default), fentry, kprobe, tracepoint or raw (the raw syscall "
	  "tracepoints): force an attach method for the cells that offer it",
	  0 },
	{ "plan", OPT_PLAN, NULL, 0,
	  "Attach, print for every layer and operation the source used and why "
	  "others were rejected, then exit",
	  0 },
	{ "prometheus", OPT_PROMETHEUS, "[ADDR:]PORT", 0,
	  "Serve GET /metrics (Prometheus text format) on ADDR (default 127.0.0.1; "
	  "0.0.0.0 or [::] for every interface) until stopped: histograms since start",
	  0 },
	{ "textfile", OPT_TEXTFILE, "DIR", 0,
	  "Write DIR/iostackbreak.prom atomically every interval (default 15 s) for "
	  "node_exporter's textfile collector, until stopped",
	  0 },
	{ "slower", OPT_SLOWER, "DURATION", 0,
	  "Print each call of the outermost traced layer that took at least "
	  "DURATION (10ms, 250us, 1s; 0: every call) as it ends: who, which file, "
	  "where its time went, its block requests",
	  0 },
	{ "full-path", OPT_FULL_PATH, NULL, 0,
	  "With --slower or --trace: name files by their whole path, not their name", 0 },
	{ "file", OPT_FILE, "PATH", 0,
	  "Trace only I/O on this file (up to 8 --file): system calls on its "
	  "descriptors, vfs and file-system calls on it, block requests they submit",
	  0 },
	{ "trace", OPT_TRACE, "FILE", 0,
	  "Write a timeline of calls, their layers and waits and their block "
	  "requests to FILE (Chrome/Perfetto trace-event JSON); with --slower, "
	  "only the slow calls",
	  0 },
	{ "trace-max", OPT_TRACE_MAX, "N", 0,
	  "With --trace: at most N events in the file (default 1000000); the rest "
	  "are counted as lost",
	  0 },
	{ "verbose", 'v', NULL, 0, "Print the plan on stderr and libbpf's own messages", 0 },
	{ "help", 'h', NULL, 0, "Show this help and exit", -1 },
	{ "version", 'V', NULL, 0, "Show the version, the git commit built from and libbpf's version, then exit", -1 },
	{},
};

static int fail(struct config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cfg->errmsg, sizeof(cfg->errmsg), fmt, ap);
	va_end(ap);
	printable_line(cfg->errmsg, sizeof(cfg->errmsg));
	return EINVAL;
}

/* A whole positive decimal number that fits an int, or -1. */
static long parse_positive(const char *s)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return -1;
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state);

static int parse_pid_list(struct config *cfg, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		char word[24];
		long v = -1;

		if (len && len < sizeof(word)) {
			memcpy(word, p, len);
			word[len] = '\0';
			v = parse_positive(word);
		}
		if (v < 0)
			return fail(cfg,
				    "invalid PID '%.*s' in -p %s: give positive process "
				    "ids, separated by commas",
				    (int)len, p, arg);
		if (cfg->nr_pids == sizeof(cfg->pids) / sizeof(cfg->pids[0]))
			return fail(cfg, "too many PIDs in -p %s: at most 16", arg);
		cfg->pids[cfg->nr_pids++] = (int)v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * --slower: a duration with its unit (10ms, 250us, 1.5s, 800ns), or 0. A
 * bare number other than 0 is refused: 10 could mean any unit.
 */
static int parse_duration_ns(struct config *cfg, const char *arg)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	errno = 0;
	if (!*arg || *arg == '-' || *arg == '+' || isspace((unsigned char)*arg))
		goto bad;
	v = strtod(arg, &end);
	if (errno || end == arg || v < 0 || v != v)
		goto bad;
	if (!*end && v == 0) {
		cfg->slower_ns = 0;
		cfg->slower = true;
		return 0;
	}
	for (unsigned int i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].ns > 1e18)
			goto bad;
		cfg->slower_ns = (unsigned long long)(v * units[i].ns + 0.5);
		cfg->slower = true;
		return 0;
	}
bad:
	return fail(cfg,
		    "invalid --slower '%s': give a duration with its unit (ns, us, ms, s), "
		    "e.g. 10ms or 250us, or 0 for every call",
		    arg);
}

/* --prometheus [ADDR:]PORT: a numeric IPv4 address, or IPv6 in brackets. */
static int parse_listen(struct config *cfg, const char *arg)
{
	const char *addr = arg, *port = arg, *colon = strrchr(arg, ':');
	unsigned char bin[16];
	size_t len = 0;
	long v;

	snprintf(cfg->prom_addr, sizeof(cfg->prom_addr), "127.0.0.1");
	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');

		if (!end || end[1] != ':')
			return fail(cfg,
				    "invalid --prometheus '%s': write an IPv6 address as "
				    "[ADDR]:PORT, e.g. [::1]:9633",
				    arg);
		cfg->prom_ipv6 = true;
		addr = arg + 1;
		len = (size_t)(end - addr);
		port = end + 2;
	} else if (colon) {
		if (strchr(arg, ':') != colon)
			return fail(cfg,
				    "invalid --prometheus '%s': put an IPv6 address in "
				    "brackets, e.g. [::1]:9633",
				    arg);
		len = (size_t)(colon - arg);
		port = colon + 1;
	}
	if (port != arg) {
		if (len >= sizeof(cfg->prom_addr))
			len = sizeof(cfg->prom_addr) - 1;
		memcpy(cfg->prom_addr, addr, len);
		cfg->prom_addr[len] = '\0';
		if (inet_pton(cfg->prom_ipv6 ? AF_INET6 : AF_INET, cfg->prom_addr, bin) != 1)
			return fail(cfg,
				    "invalid address '%s' in --prometheus: give a numeric "
				    "address such as 127.0.0.1, 0.0.0.0, [::1] or [::]",
				    cfg->prom_addr);
	}
	v = parse_positive(port);
	if (v < 0 || v > 65535)
		return fail(cfg,
			    "invalid port '%s' in --prometheus: give a number from 1 to "
			    "65535, e.g. --prometheus=9633",
			    port);
	cfg->prom_port = (unsigned int)v;
	cfg->prometheus = true;
	return 0;
}

static const struct argp argp = { options, parse_opt, "[interval [count]] [-- COMMAND [ARGS...]]",
				  doc,	   NULL,      NULL,
				  NULL };

/*
 * Options that hold one value: a second one would silently replace the
 * first (-t 1 -t 2 traces thread 2 alone), so it is refused. -p and -T add
 * up instead, and flags may repeat.
 */
static int given_twice(struct config *cfg, int key, const char *arg)
{
	static const struct {
		int key;
		const char *name;
	} once[] = {
		{ 't', "-t" },
		{ 'c', "-c" },
		{ 'd', "-d" },
		{ OPT_CGROUP, "--cgroup" },
		{ OPT_TOP, "--top" },
		{ OPT_MAX_KEYS, "--max-keys" },
		{ OPT_DURATION, "--duration" },
		{ OPT_ATTACH, "--attach" },
		{ OPT_PROMETHEUS, "--prometheus" },
		{ OPT_TEXTFILE, "--textfile" },
		{ OPT_SLOWER, "--slower" },
		{ OPT_TRACE, "--trace" },
		{ OPT_TRACE_MAX, "--trace-max" },
	};

	for (unsigned int i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
		if (once[i].key != key)
			continue;
		if (cfg->given & (1U << i))
			return fail(cfg, "%s given twice (the second time: '%s'): give it once",
				    once[i].name, arg);
		cfg->given |= 1U << i;
	}
	return 0;
}

/*
 * The word getopt choked on. Inside a cluster of short options (-Q=1)
 * getopt has not moved past the word yet, so the one before it is the
 * program name or an option's value: then the word is the next one.
 */
static const char *bad_word(const struct argp_state *state)
{
	const char *prev = state->argv[state->next - 1];

	if ((state->next == 1 || prev[0] != '-') && state->next < state->argc)
		return state->argv[state->next];
	return prev;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct config *cfg = state->input;
	unsigned int layers;
	char bad[64];
	long v;

	if (arg && given_twice(cfg, key, arg))
		return EINVAL;
	switch (key) {
	case 'h':
		/* argp_state_help() is silenced by ARGP_NO_ERRS: print directly. */
		argp_help(&argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK,
			  (char *)"iostackbreak");
		cfg->help_shown = true;
		break;
	case 'T':
		if (parse_layer_list(arg, &layers, bad, sizeof(bad)))
			return fail(cfg,
				    "unknown layer '%s' in -T %s; known layers: "
				    "syscall, vfs, ext4, xfs, btrfs, blk",
				    bad, arg);
		/* -T syscall -T blk is -T syscall,blk. */
		cfg->layers = cfg->layers_given ? cfg->layers | layers : layers;
		cfg->layers_given = true;
		break;
	case 'p':
		return parse_pid_list(cfg, arg);
	case 't':
		v = parse_positive(arg);
		if (v < 0)
			return fail(cfg, "invalid TID '%s': give a positive thread id", arg);
		cfg->tid = (int)v;
		break;
	case 'c':
		if (!*arg || strlen(arg) >= 16)
			return fail(cfg,
				    "invalid name '%s' for -c: give a process name of 1 "
				    "to 15 characters, as in /proc/PID/comm",
				    arg);
		cfg->comm = arg;
		break;
	case OPT_CGROUP:
		if (!*arg)
			return fail(cfg, "empty --cgroup: give a cgroup v2 directory, e.g. "
					 "/sys/fs/cgroup/system.slice");
		cfg->cgroup = arg;
		break;
	case 'f':
		cfg->children = true;
		break;
	case 'B':
		cfg->part_hists = true;
		break;
	case OPT_NO_OFFCPU:
		cfg->offcpu = false;
		break;
	case OPT_NO_VERDICT:
		cfg->no_verdict = true;
		break;
	case OPT_LIVE:
		cfg->live = true;
		break;
	case OPT_HEATMAP:
		if (!*arg)
			return fail(cfg, "empty --heatmap: give the SVG file to write, e.g. "
					 "--heatmap=io.svg");
		cfg->heatmap = arg;
		break;
	case OPT_NO_PARTS:
		cfg->split_calls = false;
		break;
	case OPT_NO_CHILDREN:
		cfg->no_children = true;
		break;
	case 'D':
		cfg->per_disk = true;
		break;
	case 'P':
		cfg->per_process = true;
		break;
	case 'F':
		cfg->per_flags = true;
		break;
	case OPT_TOP:
		v = parse_positive(arg);
		if (v < 0)
			return fail(cfg, "invalid --top '%s': give a whole number, 1 or more", arg);
		cfg->top = (unsigned int)v;
		break;
	case OPT_MAX_KEYS:
		v = parse_positive(arg);
		if (v < 0 || v > 1 << 20)
			return fail(cfg,
				    "invalid --max-keys '%s': give a whole number from 1 "
				    "to 1048576",
				    arg);
		cfg->max_keys = (unsigned int)v;
		break;
	case OPT_STATS:
		cfg->stats = true;
		break;
	case OPT_TIMESTAMP:
		cfg->timestamp = true;
		break;
	case OPT_DURATION:
		v = parse_positive(arg);
		if (v < 0)
			return fail(cfg,
				    "invalid --duration '%s': give a whole number of "
				    "seconds, 1 or more",
				    arg);
		cfg->duration = (unsigned int)v;
		break;
	case 'd':
		if (!*arg || strchr(arg, '/'))
			return fail(cfg,
				    "invalid disk '%s': give a name from /sys/block, "
				    "e.g. nvme0n1 or sda",
				    arg);
		cfg->disk = arg;
		break;
	case 'V':
		print_version(stdout);
		cfg->help_shown = true;
		break;
	case 'Q':
		cfg->queued = true;
		break;
	case 'm':
	case 'u':
		if (cfg->unit != UNIT_NS)
			return fail(cfg, "-m and -u exclude each other: pick one unit");
		cfg->unit = key == 'm' ? UNIT_MS : UNIT_US;
		break;
	case OPT_JSON:
		cfg->json = true;
		break;
	case OPT_ATTACH:
		if (!strcmp(arg, "auto"))
			cfg->attach = ATTACH_AUTO;
		else if (!strcmp(arg, "fentry"))
			cfg->attach = ATTACH_FENTRY;
		else if (!strcmp(arg, "kprobe"))
			cfg->attach = ATTACH_KPROBE;
		else if (!strcmp(arg, "tracepoint"))
			cfg->attach = ATTACH_TRACEPOINT;
		else if (!strcmp(arg, "raw"))
			cfg->attach = ATTACH_RAW;
		else
			return fail(cfg,
				    "unknown attach method '%s': use auto, fentry, "
				    "kprobe, tracepoint or raw",
				    arg);
		break;
	case OPT_PLAN:
		cfg->plan_only = true;
		break;
	case 'v':
		cfg->verbose = true;
		break;
	case OPT_PROMETHEUS:
		return parse_listen(cfg, arg);
	case OPT_TEXTFILE:
		if (!*arg)
			return fail(cfg, "empty --textfile: give the directory node_exporter's "
					 "textfile collector reads");
		cfg->textfile = arg;
		break;
	case OPT_SLOWER:
		return parse_duration_ns(cfg, arg);
	case OPT_FULL_PATH:
		cfg->full_path = true;
		break;
	case OPT_FILE:
		if (!*arg)
			return fail(cfg, "empty --file: give the path of a file to trace");
		if (cfg->nr_files == MAX_FILES)
			return fail(cfg, "too many --file (at '%s'): at most %d", arg, MAX_FILES);
		cfg->files[cfg->nr_files++] = arg;
		break;
	case OPT_TRACE:
		if (!*arg)
			return fail(cfg, "empty --trace: give the file to write the timeline to");
		cfg->trace = arg;
		break;
	case OPT_TRACE_MAX:
		v = parse_positive(arg);
		if (v < 0)
			return fail(cfg,
				    "invalid --trace-max '%s': give a whole number of events, "
				    "1 or more",
				    arg);
		cfg->trace_max = (unsigned long)v;
		break;
	case ARGP_KEY_ARG:
		v = parse_positive(arg);
		if (state->arg_num == 0) {
			if (v < 0)
				return fail(cfg,
					    "invalid interval '%s': give a whole number "
					    "of seconds, 1 or more",
					    arg);
			cfg->interval = (unsigned int)v;
		} else if (state->arg_num == 1) {
			if (v < 0)
				return fail(cfg,
					    "invalid count '%s': give a whole number of "
					    "reports, 1 or more",
					    arg);
			cfg->count = (unsigned int)v;
		} else {
			return fail(cfg,
				    "unexpected argument '%s': only interval and "
				    "count are positional (put a command after --)",
				    arg);
		}
		break;
	case ARGP_KEY_ERROR:
		/* getopt was told to be quiet: name the word it choked on. */
		if (!cfg->errmsg[0] && state->next > 0 && state->next <= state->argc)
			fail(cfg,
			     "unknown option or missing value: '%s'; see "
			     "iostackbreak --help",
			     bad_word(state));
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * Exporter mode serves counters since start until it is stopped: options
 * that shape printed reports, or end the run by themselves, have no meaning
 * there and are refused rather than silently ignored.
 */
static int check_exporter(struct config *cfg)
{
	const char *mode = cfg->prometheus ? "--prometheus" : "--textfile";

	if (!cfg->prometheus && !cfg->textfile)
		return 0;
	if (cfg->json)
		return fail(cfg, "%s exports metrics instead of printing reports: drop --json",
			    mode);
	if (cfg->heatmap)
		return fail(cfg, "%s exports metrics instead of printing reports: drop --heatmap",
			    mode);
	if (cfg->plan_only)
		return fail(cfg, "--plan attaches and exits: it does not go with %s", mode);
	if (cfg->command)
		return fail(cfg,
			    "%s serves until stopped, not for the life of one command: "
			    "trace its process with -p PID instead",
			    mode);
	if (cfg->unit != UNIT_NS || cfg->timestamp)
		return fail(cfg,
			    "-m, -u and --timestamp shape text reports: %s exports "
			    "seconds, drop them",
			    mode);
	if (cfg->count)
		return fail(cfg, "%s runs until stopped: give no count", mode);
	if (cfg->interval && !cfg->textfile)
		return fail(cfg, "--prometheus serves counters since start at every scrape: "
				 "it takes no interval (the scraper sets the pace)");
	if (cfg->slower || cfg->trace)
		return fail(cfg,
			    "--slower and --trace follow single calls: run them apart from %s, "
			    "which exports histograms",
			    mode);
	return 0;
}

int parse_options(int argc, char **argv, struct config *cfg)
{
	int own_argc = argc, err;

	memset(cfg, 0, sizeof(*cfg));
	cfg->layers = ALL_LAYERS;
	cfg->split_calls = true;
	cfg->offcpu = true;
	/* Everything after "--" is a command to run, not ours to parse. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			own_argc = i;
			if (i + 1 < argc)
				cfg->command = &argv[i + 1];
			else
				return fail(cfg, "nothing after --: give a command to run"), 2;
			break;
		}
	}
	err = argp_parse(&argp, own_argc, argv, ARGP_NO_EXIT | ARGP_NO_HELP | ARGP_NO_ERRS, NULL,
			 cfg);
	if (err) {
		if (!cfg->errmsg[0])
			snprintf(cfg->errmsg, sizeof(cfg->errmsg),
				 "invalid command line: see iostackbreak --help");
		return 2;
	}
	if (cfg->help_shown)
		return 0;
	if (cfg->command && cfg->nr_pids)
		return fail(cfg, "-p and a command exclude each other: the command's "
				 "process is the one traced"),
		       2;
	if (cfg->children && !cfg->nr_pids)
		return fail(cfg, "-f follows the children of -p processes: add -p (a "
				 "command's children are followed by default)"),
		       2;
	if (!cfg->split_calls && (cfg->part_hists || !cfg->offcpu))
		return fail(cfg, "-B and --no-offcpu shape the parts of calls: drop --no-parts"), 2;
	if (cfg->no_children && !cfg->command)
		return fail(cfg, "--no-children applies to a -- COMMAND: add one"), 2;
	if (cfg->per_disk && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-D applies to the blk layer only: add blk to -T"), 2;
	if (cfg->per_flags && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-F applies to the blk layer only: add blk to -T"), 2;
	if (cfg->top && !cfg->per_disk && !cfg->per_process && !cfg->per_flags)
		return fail(cfg, "--top ranks the keys of -D, -P or -F: add one of them"), 2;
	if (cfg->max_keys && !cfg->per_disk && !cfg->per_process && !cfg->per_flags)
		return fail(cfg, "--max-keys sizes the keys of -D, -P or -F: add one of them"), 2;
	if (cfg->duration && (cfg->command || cfg->plan_only))
		return fail(cfg, "--duration does not go with a command or --plan"), 2;
	if (cfg->disk && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-d applies to the blk layer only: add blk to -T"), 2;
	if (cfg->queued && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-Q applies to the blk layer only: add blk to -T"), 2;
	if (cfg->full_path && !cfg->slower && !cfg->trace)
		return fail(cfg, "--full-path names the files of events: add --slower or --trace"),
		       2;
	if (cfg->live && (cfg->json || cfg->plan_only || cfg->command || cfg->slower ||
			  cfg->trace || cfg->prometheus || cfg->textfile))
		return fail(cfg, "--live owns the terminal: it does not go with --json, --plan, "
				 "--slower, --trace, an exporter or a command (trace the command "
				 "with -p from another terminal)"),
		       2;
	if (cfg->live) {
		/* The busiest processes (and disks) need their breakdowns. */
		cfg->per_process = true;
		cfg->per_disk = cfg->layers & (1U << LAYER_BLK);
		if (!cfg->interval)
			cfg->interval = 1;
	}
	if (cfg->heatmap && !cfg->interval && !cfg->plan_only && !cfg->prometheus && !cfg->textfile)
		return fail(cfg, "--heatmap draws a column per interval report: give an interval, "
				 "e.g. iostackbreak --heatmap=io.svg 1"),
		       2;
	if (cfg->heatmap && cfg->plan_only)
		return fail(cfg, "--plan attaches and exits: it draws no --heatmap"), 2;
	if (cfg->trace_max && !cfg->trace)
		return fail(cfg, "--trace-max bounds the --trace file: add --trace"), 2;
	if (!cfg->trace_max)
		cfg->trace_max = 1000000;
	if (cfg->nr_files && !(cfg->layers & THREAD_LAYERS))
		return fail(cfg, "--file finds block requests through the calls that submit them: "
				 "add a layer with files to -T (syscall, vfs or a file system)"),
		       2;
	if ((cfg->slower || cfg->trace) && !(cfg->layers & THREAD_LAYERS))
		return fail(cfg, "--slower and --trace follow calls: add a layer of calls to -T "
				 "(syscall, vfs or a file system)"),
		       2;
	if (cfg->plan_only && (cfg->interval || cfg->command))
		return fail(cfg, "--plan attaches and exits: it takes no interval or "
				 "command"),
		       2;
	return check_exporter(cfg) ? 2 : 0;
}

const char *unit_name(enum unit unit)
{
	switch (unit) {
	case UNIT_US:
		return "us";
	case UNIT_MS:
		return "ms";
	default:
		return "ns";
	}
}

const char *attach_mode_name(enum attach_mode mode)
{
	static const char *const names[] = { "auto", "fentry", "kprobe", "tracepoint", "raw" };

	return names[mode];
}
