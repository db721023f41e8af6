// SPDX-License-Identifier: GPL-2.0
/*
 * The command line, one row per option (options[] below): its names, its
 * help, how its value is parsed, and how it is checked against the other
 * options once all are read. parse_opt() only dispatches; adding an option
 * is one row (and its functions, when it takes more than a flag).
 */
#include <argp.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "layers.h"
#include "opt_stacks.h"
#include "opt_values.h"
#include "opts.h"
#include "stacks.h"

/* A number's macro as a string in a help text. */
#define IOSB_STR2(x) #x
#define IOSB_STR(x) IOSB_STR2(x)

#include "version.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The help's text around the options: the layers' part comes from cells.def. */
static const char doc_intro[] = "Break the latency of I/O down by layer of the storage stack: %s,\n"
				"%s requests, %s requests, %s (on mapped files and swap), %s, file system (%s),\n"
				"%s and %s.\n"
				"\n";
static const char doc_examples[] =
    "EXAMPLES:\n"
    "  iostackbreak                      # all layers, one report at Ctrl-C\n"
    "  iostackbreak 1 10                 # all layers, ten 1-second reports\n"
    "  iostackbreak -T vfs -p 4242       # VFS latency of process 4242\n"
    "  iostackbreak -T blk -d nvme0n1 -Q # one disk, including OS queue time\n"
    "  iostackbreak -T syscall,blk -u    # two layers, in microseconds\n"
    "  iostackbreak -T io_uring -- fio j.fio # io_uring requests of a command\n"
    "  iostackbreak -T aio,blk -p 4242   # Linux AIO requests and their block I/O\n"
    "  iostackbreak -T fault,blk -p 4242 # major page faults and their block I/O\n"
    "  iostackbreak --json 5             # NDJSON report every 5 seconds\n"
    "  iostackbreak -T syscall -P --top 5 # the five busiest processes\n"
    "  iostackbreak -T blk -D -F         # block latency by disk and flags\n"
    "  iostackbreak -T bio -D            # bios per device: dm-0, zram0, vda\n"
    "  iostackbreak --cgroup /sys/fs/cgroup/db.slice 10  # one container\n"
    "  iostackbreak --plan               # what would be attached, and why\n"
    "  iostackbreak -- make -j4          # a command and every process it forks\n"
    "  iostackbreak -p 4242 -f           # a process and its children\n"
    "  iostackbreak --prometheus=9633    # serve /metrics on 127.0.0.1:9633\n"
    "  iostackbreak --slower=10ms        # every call of 10 ms or more, as it ends\n"
    "  iostackbreak --file=/var/lib/db/base.dat -p 4242  # one file's I/O\n"
    "  iostackbreak --trace=io.json --slower=1ms -- ./load  # a Perfetto timeline\n"
    "  iostackbreak -T syscall,blk --record=io.rec -- ./load  # record, then:\n"
    "  iostackbreak report io.rec -P -D --slower=10ms  # any view of the recording\n"
    "\n";
static const char doc_layers[] =
    "Layers: %s (also \"all\"). Note: unlike\n"
    "bcc tools, -T selects layers here; it does not print timestamps.\n"
    "\n"
    "OPTIONS:";

/* Every layer's name, "syscall, vfs, ..., blk". */
static const char *layer_names_list(void)
{
	static char list[256];

	if (!list[0])
		layers_join(list, sizeof(list), ALL_LAYER_KINDS, false);
	return list;
}

/* The help's text, made once. */
static const char *help_doc(void)
{
	static char doc[sizeof(doc_intro) + sizeof(doc_examples) + sizeof(doc_layers) + 512];
	char fs[128];
	int n;

	if (doc[0])
		return doc;
	layers_join(fs, sizeof(fs), 1U << LAYER_KIND_FS, true);
	n = snprintf(doc, sizeof(doc), doc_intro, layer_help(LAYER_SYSCALL),
		     layer_help(LAYER_IO_URING), layer_help(LAYER_AIO), layer_help(LAYER_FAULT),
		     layer_help(LAYER_VFS), fs,
		     layer_help(LAYER_BIO),
		     layer_help(LAYER_BLK));
	n += snprintf(doc + n, sizeof(doc) - (size_t)n, "%s", doc_examples);
	snprintf(doc + n, sizeof(doc) - (size_t)n, doc_layers, layer_names_list());
	return doc;
}

/*
 * The words of --attach, the edge where a method gets its user's name: the
 * rest of the program speaks enum attach_method. "raw" forces the raw
 * syscall pair, tp_btf (raw_tp on a kernel without BTF).
 */
static const struct {
	const char *word;
	enum attach_method method;
} attach_words[] = {
	{ "auto", METHOD_NONE },     { "fentry", METHOD_FENTRY },
	{ "kprobe", METHOD_KPROBE }, { "tracepoint", METHOD_TRACEPOINT },
	{ "raw", METHOD_TP_BTF },
};

/* "auto, fentry, kprobe, tracepoint or raw", "(default)" after the first. */
static const char *attach_list(bool with_default)
{
	static char lists[2][128];
	char *list = lists[with_default];
	size_t n = 0, last = ARRAY_SIZE(attach_words) - 1;

	if (list[0])
		return list;
	for (size_t i = 0; i <= last; i++)
		n += (size_t)snprintf(list + n, sizeof(lists[0]) - n, "%s%s%s",
				      i == 0	  ? ""
				      : i == last ? " or "
						  : ", ",
				      attach_words[i].word,
				      i == 0 && with_default ? " (default)" : "");
	return list;
}

/* The help of --attach, with its words. */
static const char *attach_help(void)
{
	static char help[256];

	if (!help[0])
		snprintf(help, sizeof(help),
			 "%s (the raw syscall tracepoints): force an attach method for the "
			 "cells that offer it",
			 attach_list(true));
	return help;
}

/* The help of -T, with the layers of cells.def. */
static const char *type_help(void)
{
	static char help[400];

	if (!help[0])
		snprintf(help, sizeof(help), "Layers to trace, a comma list of %s, or all (default: all)",
			 layer_names_list());
	return help;
}

/* Values that need this file's tables. */

static int parse_type(struct config *cfg, const char *arg)
{
	unsigned int layers;
	char bad[64];

	if (parse_layer_list(arg, &layers, bad, sizeof(bad)))
		return opt_fail(cfg, "unknown layer '%s' in -T %s; known layers: %s", bad, arg,
				layer_names_list());
	/* -T syscall -T blk is -T syscall,blk. */
	cfg->layers = cfg->layers_given ? cfg->layers | layers : layers;
	cfg->layers_given = true;
	return 0;
}

static int parse_attach(struct config *cfg, const char *arg)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(attach_words); i++) {
		if (!strcmp(arg, attach_words[i].word)) {
			cfg->attach = attach_words[i].method;
			return 0;
		}
	}
	return opt_fail(cfg, "unknown attach method '%s': use %s", arg, attach_list(false));
}

/* A bool field of struct config that a flag sets to a value. */
#define FIELD(f) offsetof(struct config, f)

static int parse_help(struct config *cfg, const char *arg);

static int parse_version(struct config *cfg, const char *arg)
{
	(void)arg;
	print_version(stdout);
	cfg->help_shown = true;
	return 0;
}

/* ---- The options ---- */

enum long_only_keys {
	OPT_JSON = 0x100,
	OPT_ATTACH,
	OPT_PLAN,
	OPT_CHECK,
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
	OPT_RECORD,
	OPT_RING,
	OPT_NO_VERDICT,
	OPT_HEATMAP,
	OPT_LIVE,
	OPT_ALL_FDS,
	OPT_CGROUP_GRACE,
	OPT_BTF,
	OPT_NO_WRITEBACK,
	OPT_IO,
	OPT_WEIGHT,
	OPT_MAX_STACKS,
	OPT_USTACK_SIZE,
	OPT_FOLDED,
	OPT_FLAMEGRAPH,
	OPT_PATTERN,
};

/*
 * One option. A flag sets the bool at flag to flag_value; an option with a
 * value (arg) has parse. once: a second value would silently replace the
 * first (-t 1 -t 2 traces thread 2 alone), so it is refused; -p, -T and
 * --file add up instead, and flags may repeat. check runs after every
 * option is read, in the order of the rows; those of check_last (the
 * run's mode: --plan, the exporter) after the others.
 */
struct opt_row {
	const char *name;
	int key;
	const char *arg;
	const char *help;
	const char *(*make_help)(void); /* help built from cells.def or a table */
	size_t flag;			/* FIELD(f) of a flag's bool */
	bool flag_value;
	/* A whole number from 1 to max (0: no bound but int's) into the field
	 * at number, of number_size bytes; if not, "invalid <what> '<arg>':
	 * give <want>". */
	size_t number, number_size;
	long max;
	const char *what, *want;
	int (*parse)(struct config *cfg, const char *arg);
	int (*check)(struct config *cfg);
	bool check_last;
	bool once;
	bool optional; /* its value may be left out (--folded) */
	int group; /* -1: last, for --help and --version */
};

#define NUMBER(f, most, name, wanted)                                                              \
	.number = FIELD(f), .number_size = sizeof(((struct config *)0)->f), .max = most,           \
	.what = name, .want = wanted
#define SET(f) .flag = FIELD(f), .flag_value = true
#define CLEAR(f) .flag = FIELD(f), .flag_value = false

static const struct opt_row rows[] = {
	{ "type", 'T', "LAYERS", .make_help = type_help, .parse = parse_type },
	{ "pid", 'p', "PID[,PID...]", "Trace only these processes (thread group ids, up to " IOSB_STR(MAX_PID_FILTER) ")",
	  .parse = opt_pid_list, .check = opt_check_pid },
	{ "children", 'f', NULL,
	  "With -p: also the processes they fork from now on, at any depth, and "
	  "their descendants that exist already",
	  SET(children), .check = opt_check_children },
	{ "part-histograms", 'B', NULL,
	  "Where the time goes: a histogram of each part's time per call", SET(part_hists) },
	{ "no-offcpu", OPT_NO_OFFCPU, NULL,
	  "Where the time goes: no io_wait, blocked and runqueue parts (no "
	  "sched_switch program); waits count as the waiting layer's self time",
	  CLEAR(offcpu) },
	{ "no-writeback", OPT_NO_WRITEBACK, NULL,
	  "Block layer: do not charge written-back requests to the processes that "
	  "dirtied their pages (no writeback_dirty_folio program, no page walk)",
	  CLEAR(writeback), .check = opt_check_no_writeback },
	{ "no-parts", OPT_NO_PARTS, NULL,
	  "Do not split calls into where their time goes (fewer programs run)", CLEAR(split_calls),
	  .check = opt_check_no_parts },
	{ "no-children", OPT_NO_CHILDREN, NULL,
	  "With a COMMAND: trace its process alone, not the processes it forks", SET(no_children),
	  .check = opt_check_no_children },
	{ "all-fds", OPT_ALL_FDS, NULL,
	  "Count system calls and vfs calls on every descriptor: pipes, sockets, "
	  "character devices too (default: regular files, block devices and "
	  "directories; each report says what it left out)",
	  SET(all_fds) },
	{ "tid", 't', "TID", "Trace only this thread",
	  NUMBER(tid, 0, "TID", "a positive thread id"), .once = true },
	{ "comm", 'c', "NAME", "Trace only processes with this name (as in /proc/PID/comm)",
	  .parse = opt_comm, .once = true },
	{ "cgroup", OPT_CGROUP, "PATH",
	  "Trace only tasks in this cgroup v2 directory and its descendants", .parse = opt_cgroup,
	  .once = true },
	{ "per-disk", 'D', NULL,
	  "Bio and block layers: one cell per disk (bio: per device of a stack)", SET(per_disk),
	  .check = opt_check_per_disk },
	{ "per-process", 'P', NULL, "One cell per process (block layer: the submitting process)",
	  SET(per_process) },
	{ "per-cgroup", 'G', NULL,
	  "One cell per cgroup v2, every layer (block layer: the submitter's), named by "
	  "its path, with the container and pod ids the path holds",
	  SET(per_cgroup) },
	{ "cgroup-grace", OPT_CGROUP_GRACE, "SECONDS",
	  "With -G in exporter mode: a cgroup that is gone leaves the scrape (and the "
	  "kernel's map) after SECONDS (default 300)",
	  NUMBER(cgroup_grace, 0, "--cgroup-grace", "a whole number of seconds, 1 or more"),
	  .check = opt_check_cgroup_grace, .once = true },
	{ "flags", 'F', NULL,
	  "Block layer: one cell per set of request flags (sync, meta, fua, preflush)",
	  SET(per_flags), .check = opt_check_per_flags },
	{ "pattern", OPT_PATTERN, NULL,
	  "Access patterns: per file (system calls at a file position), per disk (block "
	  "requests by sector) and per device of a stack (bios): the share of sequential "
	  "accesses, the gaps of the others and the sizes; by process, disk, cgroup or "
	  "file with -P, -D, -G, --file",
	  SET(pattern) },
	{ "top", OPT_TOP, "N", "With -D, -P, -F or -G: show the N busiest keys per cell; with -K or -U the N "
	  "heaviest stacks per disk (default 10)",
	  NUMBER(top, 0, "--top", "a whole number, 1 or more"), .check = opt_check_top,
	  .once = true },
	{ "max-keys", OPT_MAX_KEYS, "N",
	  "With -D, -P, -F or -G: room for N keys in the kernel (default 2048); events of "
	  "keys beyond it are counted as dropped",
	  NUMBER(max_keys, 1 << 20, "--max-keys", "a whole number from 1 to 1048576"),
	  .check = opt_check_max_keys, .once = true },
	{ "stats", OPT_STATS, NULL,
	  "Report the tracer's own cost: BPF run time per layer as the kernel "
	  "measures it, map memory, dropped events",
	  SET(stats) },
	{ "timestamp", OPT_TIMESTAMP, NULL, "Print the time before each report", SET(timestamp) },
	{ "live", OPT_LIVE, NULL,
	  "A full-screen view redrawn every interval (default 1 s): rates, p50, p99 and "
	  "where the time goes per layer and op, the busiest processes or disks, the "
	  "verdict; keys q quit, p/d/c processes/disks/cgroups, s sort, space pause",
	  SET(live), .check = opt_check_live },
	{ "heatmap", OPT_HEATMAP, "FILE",
	  "With an interval: write a latency heat map of the run to FILE (SVG) when it "
	  "ends, a panel per layer and op, a column per interval",
	  .parse = opt_heatmap, .check = opt_check_heatmap },
	{ "no-verdict", OPT_NO_VERDICT, NULL,
	  "Text and JSON: leave out the verdict, the line that says where the time went",
	  SET(no_verdict) },
	{ "duration", OPT_DURATION, "SECONDS", "Stop after SECONDS and print the report",
	  NUMBER(duration, 0, "--duration", "a whole number of seconds, 1 or more"),
	  .check = opt_check_duration, .once = true },
	{ "disk", 'd', "DISK",
	  "Bio and block layers: trace only this disk, by its /sys/block name (e.g. "
	  "nvme0n1, dm-0, zram0)",
	  .parse = opt_disk, .check = opt_check_disk, .once = true },
	{ "queued", 'Q', NULL, "Block layer: include OS queue time (from block_io_start or insert)",
	  SET(queued), .check = opt_check_queued },
	{ "milliseconds", 'm', NULL, "Print times in milliseconds", .parse = opt_ms },
	{ "microseconds", 'u', NULL, "Print times in microseconds (the default)", .parse = opt_us },
	{ "output", 'o', "FILE",
	  "Write the reports (text or JSON) to FILE instead of stdout; a traced "
	  "COMMAND keeps stdout and stderr to itself",
	  .parse = opt_output, .check = opt_check_output, .once = true },
	{ "json", OPT_JSON, NULL, "One JSON object per report, one per line (times in nanoseconds)",
	  SET(json) },
	{ "attach", OPT_ATTACH, "METHOD", .make_help = attach_help, .parse = parse_attach,
	  .once = true },
	{ "btf", OPT_BTF, "FILE",
	  "Read the kernel's types from this BTF file (a BTFHub file, or a copy of "
	  "/sys/kernel/btf/vmlinux) instead of /sys/kernel/btf/vmlinux: for kernels "
	  "built without CONFIG_DEBUG_INFO_BTF; fentry and tp_btf still need the "
	  "kernel's own BTF (kprobes and raw tracepoints serve without it)",
	  .parse = opt_btf, .once = true },
	{ "plan", OPT_PLAN, NULL,
	  "Print for every layer and operation the source that would be used and why "
	  "others were rejected, read from BTF, tracefs and /proc/kallsyms, then exit; "
	  "loads nothing",
	  SET(plan_only), .check = opt_check_plan, .check_last = true },
	{ "check", OPT_CHECK, NULL,
	  "With --plan: load and attach every program first, as a run does (needs "
	  "root), and print what attached",
	  SET(plan_check), .check = opt_check_plan, .check_last = true },
	{ "prometheus", OPT_PROMETHEUS, "[ADDR:]PORT",
	  "Serve GET /metrics (Prometheus text format) on ADDR (default 127.0.0.1; "
	  "0.0.0.0 or [::] for every interface) until stopped: histograms since start",
	  .parse = opt_listen, .check = opt_check_exporter, .check_last = true, .once = true },
	{ "textfile", OPT_TEXTFILE, "DIR",
	  "Write DIR/iostackbreak.prom atomically every interval (default 15 s) for "
	  "node_exporter's textfile collector, until stopped",
	  .parse = opt_textfile, .once = true },
	{ "slower", OPT_SLOWER, "DURATION",
	  "Print each call of the outermost traced layer that took at least "
	  "DURATION (10ms, 250us, 1s; 0: every call) as it ends: who, which file, "
	  "where its time went, its block requests",
	  .parse = opt_duration_ns, .once = true },
	{ "full-path", OPT_FULL_PATH, NULL,
	  "With --slower or --trace: name files by their whole path, not their name",
	  SET(full_path), .check = opt_check_full_path },
	{ "file", OPT_FILE, "PATH",
	  "Trace only I/O on this file (up to 8 --file): system calls on its "
	  "descriptors, vfs and file-system calls on it, block requests they submit",
	  .parse = opt_file, .check = opt_check_file },
	{ "trace", OPT_TRACE, "FILE",
	  "Write a timeline of calls, their layers and waits and their block "
	  "requests to FILE (Chrome/Perfetto trace-event JSON); with --slower, "
	  "only the slow calls",
	  .parse = opt_trace, .check = opt_check_calls, .once = true },
	{ "trace-max", OPT_TRACE_MAX, "N",
	  "With --trace: at most N events in the file (default 1000000); the rest "
	  "are counted as lost",
	  NUMBER(trace_max, 0, "--trace-max", "a whole number of events, 1 or more"),
	  .check = opt_check_trace_max, .once = true },
	{ "record", OPT_RECORD, "FILE",
	  "Write every call and block request traced to FILE (a binary recording), "
	  "besides the run's own output; iostackbreak report FILE prints its reports "
	  "again, with any view options",
	  .parse = opt_record, .check = opt_check_record, .once = true },
	{ "ring", OPT_RING, "SECONDS",
	  "With --record: keep only the last SECONDS of events in memory, and write "
	  "them to the file on SIGUSR1 and at the end (a flight recorder)",
	  NUMBER(ring, 86400, "--ring", "a whole number of seconds, 1 to 86400"),
	  .check = opt_check_ring, .once = true },
	{ "kernel-stack", 'K', NULL,
	  "Count block requests by the kernel stack that made them (bytes by default; "
	  "--weight), per disk with -D, per process with -P",
	  SET(kstack), .check = opt_check_stacks },
	{ "user-stack", 'U', "fp|dwarf|auto",
	  "Count block requests by the user stack of the thread that submitted them "
	  "(with -K: both), or without blk the calls by theirs; walked by frame pointers "
	  "(fp), by unwinding a copy of the stack with the binaries' call frame "
	  "information (dwarf), or per process, fp where its executable has frame "
	  "pointers and dwarf where not (auto, the default)",
	  .parse = opt_ustack, .optional = true },
	{ "user-stack-size", OPT_USTACK_SIZE, "BYTES",
	  "With --user-stack=dwarf or auto: bytes of user stack copied per event for "
	  "unwinding, from 256 to " IOSB_STR(USTACK_SIZE_OPT_MAX) " (default "
	  IOSB_STR(DEFAULT_USTACK_SIZE) "); a deeper stack ends in [truncated]",
	  .parse = opt_ustack_size, .once = true },
	{ "io", OPT_IO, "r|w|rw", "With -K or -U: count reads, writes or both (default: every request)",
	  .parse = opt_io, .once = true },
	{ "weight", OPT_WEIGHT, "requests|bytes|time",
	  "With -K or -U: what a stack counts, requests, bytes (default) or time (the "
	  "device's; with -Q from the request's origin)",
	  .parse = opt_weight, .once = true },
	{ "max-stacks", OPT_MAX_STACKS, "N",
	  "With -K or -U: room for N keys (stacks by process, disk and op) in the kernel "
	  "(default " IOSB_STR(DEFAULT_MAX_STACKS) "); requests beyond it are counted as lost",
	  NUMBER(max_stacks, 1 << 20, "--max-stacks", "a whole number from 1 to 1048576"),
	  .once = true },
	{ "folded", OPT_FOLDED, "FILE",
	  "With -K or -U: write the stacks in folded form (comm;frame;...;frame weight, "
	  "for flamegraph.pl, inferno, speedscope) to FILE, or without FILE to stdout "
	  "instead of the report",
	  .parse = opt_folded, .optional = true },
	{ "flamegraph", OPT_FLAMEGRAPH, "FILE",
	  "With -K or -U: write the stacks as an interactive SVG flame graph to FILE "
	  "(click to zoom, search), when the run ends",
	  .parse = opt_flamegraph, .once = true },
	{ "verbose", 'v', NULL, "Print the plan on stderr and libbpf's own messages",
	  SET(verbose) },
	{ "help", 'h', NULL, "Show this help and exit", .parse = parse_help, .group = -1 },
	{ "version", 'V', NULL,
	  "Show the version, the git commit built from and libbpf's version, then exit",
	  .parse = parse_version, .group = -1 },
};

#define NR_ROWS ARRAY_SIZE(rows)
_Static_assert(NR_ROWS <= 8 * sizeof(((struct config *)0)->given),
	       "struct config's given has a bit per option");

/* argp's view of the rows, made once. */
static struct argp_option options[NR_ROWS + 1];

static error_t parse_opt(int key, char *arg, struct argp_state *state);

static struct argp argp = { options, parse_opt, "[interval [count]] [-- COMMAND [ARGS...]]",
			    NULL,    NULL,	NULL,
			    NULL };

static void make_options(void)
{
	if (options[0].name)
		return;
	argp.doc = help_doc();
	for (unsigned int i = 0; i < NR_ROWS; i++)
		options[i] = (struct argp_option){
			.name = rows[i].name,
			.key = rows[i].key,
			.arg = rows[i].arg,
			.doc = rows[i].make_help ? rows[i].make_help() : rows[i].help,
			.group = rows[i].group,
			.flags = rows[i].optional ? OPTION_ARG_OPTIONAL : 0,
		};
}

static int parse_help(struct config *cfg, const char *arg)
{
	(void)arg;
	/* argp_state_help() is silenced by ARGP_NO_ERRS: print directly. */
	argp_help(&argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK, (char *)"iostackbreak");
	cfg->help_shown = true;
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

static int parse_number(struct config *cfg, const struct opt_row *r, const char *arg)
{
	long v = opt_positive(arg);
	unsigned long ul = (unsigned long)v;
	unsigned int u = (unsigned int)v;

	if (v < 0 || (r->max && v > r->max))
		return opt_fail(cfg, "invalid %s '%s': give %s", r->what, arg, r->want);
	if (r->number_size == sizeof(ul))
		memcpy((char *)cfg + r->number, &ul, sizeof(ul));
	else
		memcpy((char *)cfg + r->number, &u, sizeof(u));
	return 0;
}

/* interval [count]: the positional arguments, numbers as option values are. */
static const struct opt_row positional[] = {
	{ NUMBER(interval, 0, "interval", "a whole number of seconds, 1 or more") },
	{ NUMBER(count, 0, "count", "a whole number of reports, 1 or more") },
};

/* A second value for an option of one value: refused, named as typed. */
static int given_twice(struct config *cfg, const struct opt_row *r, const char *arg)
{
	char name[32];

	if (r->key < OPT_JSON) /* a letter */
		snprintf(name, sizeof(name), "-%c", r->key);
	else
		snprintf(name, sizeof(name), "--%s", r->name);
	return opt_fail(cfg, "%s given twice (the second time: '%s'): give it once", name, arg);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct config *cfg = state->input;

	for (unsigned int i = 0; i < NR_ROWS; i++) {
		const struct opt_row *r = &rows[i];

		if (r->key != key)
			continue;
		if (r->once && (cfg->given & (1ULL << i)))
			return given_twice(cfg, r, arg);
		cfg->given |= 1ULL << i;
		if (r->parse)
			return r->parse(cfg, arg);
		if (r->what)
			return parse_number(cfg, r, arg);
		*(bool *)((char *)cfg + r->flag) = r->flag_value;
		return 0;
	}
	switch (key) {
	case ARGP_KEY_ARG:
		if (state->arg_num < ARRAY_SIZE(positional))
			return parse_number(cfg, &positional[state->arg_num], arg);
		return opt_fail(cfg,
				"unexpected argument '%s': only interval and "
				"count are positional (put a command after --)",
				arg);
	case ARGP_KEY_ERROR:
		/* getopt was told to be quiet: name the word it choked on. */
		if (!cfg->errmsg[0] && state->next > 0 && state->next <= state->argc)
			opt_fail(cfg,
				 "unknown option or missing value: '%s'; see "
				 "iostackbreak --help",
				 bad_word(state));
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int parse_options(int argc, char **argv, struct config *cfg)
{
	int own_argc = argc, err;

	memset(cfg, 0, sizeof(*cfg));
	make_options();
	cfg->layers = DEFAULT_LAYERS;
	cfg->split_calls = true;
	cfg->offcpu = true;
	cfg->writeback = true;
	/* Everything after "--" is a command to run, not ours to parse. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			own_argc = i;
			if (i + 1 < argc)
				cfg->command = &argv[i + 1];
			else
				return opt_fail(cfg, "nothing after --: give a command to run"), 2;
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
	cfg->argc = argc;
	cfg->argv = argv;
	for (int last = 0; last <= 1; last++)
		for (unsigned int i = 0; i < NR_ROWS; i++)
			if (rows[i].check && rows[i].check_last == last && rows[i].check(cfg))
				return 2;
	return 0;
}

int parse_report_options(int argc, char **argv, struct config *cfg)
{
	char *own[argc > 1 ? argc - 1 : 1];
	int n = 0, err;

	/* iostackbreak report FILE [view options]: the options are parsed as a
	 * run's, then checked as views of a recording. */
	if (argc < 3 || argv[2][0] == '-' || !argv[2][0]) {
		memset(cfg, 0, sizeof(*cfg));
		return opt_fail(cfg, "report reads a recording: iostackbreak report FILE [options], "
				     "FILE made by --record"),
		       2;
	}
	own[n++] = argv[0];
	for (int i = 3; i < argc; i++) {
		/* Before --record's own checks, which speak of a run. */
		if (!strncmp(argv[i], "--record", 8) || !strncmp(argv[i], "--ring", 6)) {
			memset(cfg, 0, sizeof(*cfg));
			return opt_fail(cfg, "report reads a recording: no --record, --ring, "
					     "--plan, --stats or exporter"),
			       2;
		}
		own[n++] = argv[i];
	}
	err = parse_options(n, own, cfg);
	if (err || cfg->help_shown)
		return err;
	cfg->replay = argv[2];
	return opt_check_replay(cfg) ? 2 : 0;
}

bool config_breaks_down(const struct config *cfg)
{
	return cfg->per_disk || cfg->per_process || cfg->per_flags || cfg->per_cgroup;
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

uint64_t unit_ns(enum unit unit)
{
	switch (unit) {
	case UNIT_US:
		return 1000;
	case UNIT_MS:
		return 1000000;
	default:
		return 1;
	}
}

uint64_t config_count_unit_ns(const struct config *cfg)
{
	if (cfg->unit == UNIT_NS || cfg->json || cfg->prometheus || cfg->textfile)
		return 0;
	return unit_ns(cfg->unit);
}

const char *attach_name(enum attach_method method)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(attach_words); i++)
		if (attach_words[i].method == method)
			return attach_words[i].word;
	return "?";
}
