/* SPDX-License-Identifier: GPL-2.0 */
/* Command-line parsing: argv in, a validated struct config out, no exits. */
#ifndef OPTS_H
#define OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "iostackbreak.h"
#include "stacks.h"

/* Most --file options (the kernel's filter has room for this many). */
#define MAX_FILES 8

/*
 * Microseconds first, so a config fresh from memset has the default:
 * biolatency and fsdist print microseconds, the unit these users read.
 */
enum unit {
	UNIT_US,
	UNIT_MS,
	UNIT_NS, /* the unit tests' golden files; no option asks for it */
};

/* What a stack's count is (--weight): by default bytes for block
 * requests, time for calls (opt_check_stacks decides). */
enum stack_weight {
	WEIGHT_DEFAULT,
	WEIGHT_BYTES,
	WEIGHT_REQUESTS,
	WEIGHT_TIME,
};

struct config {
	unsigned int layers; /* bit mask of enum layer */
	bool layers_given;   /* -T was given: untraceable layers are errors */
	int pids[MAX_PID_FILTER]; /* -p: the processes traced (none: all) */
	unsigned int nr_pids;
	int tid;	       /* -t: one thread; 0: all */
	const char *comm;      /* -c: processes of this name */
	const char *cgroup;    /* --cgroup: a cgroup v2 directory */
	bool per_disk;	       /* -D: blk cells by disk */
	bool per_process;      /* -P: cells by process */
	bool per_flags;	       /* -F: blk cells by request flags */
	bool per_cgroup;       /* -G: cells by cgroup v2 */
	unsigned int cgroup_grace; /* --cgroup-grace: seconds a gone cgroup stays exported */
	unsigned int top;      /* --top: keys shown per cell in text; 0: all */
	unsigned int max_keys; /* --max-keys: room of the breakdown map; 0: default */
	bool timestamp;	       /* --timestamp on each report */
	bool no_verdict;       /* --no-verdict: no verdict line (src/report/verdict.h) */
	const char *heatmap;   /* --heatmap: the SVG written at the end (src/sinks/heatmap.h) */
	bool live;	       /* --live: a full-screen view (src/sinks/live.h) */
	bool stats;	       /* --stats: the tracer's own cost in each report */
	unsigned int duration; /* --duration: stop after this many seconds */
	const char *disk;      /* -d name, resolved later against sysfs */
	bool queued;	       /* -Q */
	enum unit unit;	       /* UNIT_US unless -m or -u */
	bool unit_given;       /* -m or -u */
	bool json;
	bool plan_only;		   /* --plan: print the plan, exit */
	bool plan_check;	   /* --check: --plan loads and attaches first */
	bool verbose;		   /* -v: plan on stderr and libbpf's messages */
	enum attach_method attach; /* --attach: METHOD_NONE (auto) or the one forced */
	const char *btf;	   /* --btf: the kernel's BTF from this file */
	unsigned int interval;	   /* seconds between reports; 0: one at the end */
	unsigned int count;	   /* number of interval reports; 0: until stopped */
	char **command;		   /* -- COMMAND ARGS...: NULL-terminated */
	bool children;		   /* -f: -p's processes' descendants too */
	bool no_children;	   /* --no-children: the command's process alone */
	bool split_calls;	   /* where each call's time goes (off with --no-parts) */
	bool offcpu;		   /* its off-CPU parts (off with --no-offcpu) */
	bool writeback; /* written-back requests charged to their dirtiers (--no-writeback) */
	bool part_hists;	   /* -B: a histogram per part in text */
	bool all_fds;		   /* --all-fds: count calls on pipes, sockets, ... too */
	bool pattern;		   /* --pattern: sequential or random (src/report/pattern.h) */
	bool help_shown;	   /* --help/--usage/--version printed; exit 0 */
	char errmsg[256];	   /* why parsing failed */
	unsigned long long given;  /* parsing only: options seen (a bit per option) */

	/* Exporter mode (src/sinks/metrics.c): counters since start, until stopped. */
	bool prometheus;	/* --prometheus: serve GET /metrics */
	char prom_addr[64];	/* its numeric address, "127.0.0.1" by default */
	unsigned int prom_port; /* its port */
	bool prom_ipv6;		/* prom_addr is an IPv6 address */
	const char *textfile;	/* --textfile: directory to write iostackbreak.prom to */
	const char *output;	/* -o: reports to this file, not stdout */

	/* Single calls (src/kernel/events.c, src/sinks/trace.c). */
	bool slower; /* --slower: print calls at least slower_ns long */
	unsigned long long slower_ns;
	bool full_path;		      /* --full-path: events name files by path */
	const char *files[MAX_FILES]; /* --file: only I/O on these files */
	unsigned int nr_files;
	const char *trace;	 /* --trace: the timeline's file */
	unsigned long trace_max; /* --trace-max: events in it at most */
	const char *record;	 /* --record: the recording's file (docs/record.md) */
	unsigned int ring;	 /* --ring: seconds kept, written on SIGUSR1; 0: all */
	/* iostackbreak report FILE: the reports of a recording, not a run;
	 * the options are views of it (src/report/replay.c). */
	const char *replay;
	int argc; /* the command line as given, for the recording's header */
	char **argv;

	/* Stacks of block I/O (src/report/stacks.c, src/cli/opt_stacks.c). */
	bool kstack;		  /* -K: the kernel stack of each request */
	bool ustack;		  /* -U: the user stack of its submitter */
	enum ustack_mode ustack_mode; /* --user-stack=fp|dwarf|auto */
	bool ustack_mode_given;       /* a walk was named (not -U alone) */
	unsigned int ustack_size; /* --user-stack-size; 0: DEFAULT_USTACK_SIZE */
	bool call_stacks;	  /* -U without blk: of the root layer's calls instead */
	unsigned int stack_ops;	  /* --io: a bit per enum blk_op; 0: every op */
	enum stack_weight weight; /* --weight */
	unsigned int max_stacks;  /* --max-stacks; 0: DEFAULT_MAX_STACKS */
	bool folded;		  /* --folded */
	const char *folded_file;  /* its FILE; NULL: stdout, instead of the report */
	const char *flamegraph;	  /* --flamegraph: the SVG written at the end */
};

/*
 * Parses argv into cfg. Returns 0 on success, 2 on a usage error (errmsg says
 * what is wrong and what to do). Never exits; --help sets help_shown.
 */
int parse_options(int argc, char **argv, struct config *cfg);

/*
 * iostackbreak report FILE [options]: argv[1] is "report". Parses the
 * options after FILE, which are views of the recording (cfg->replay), and
 * refuses those that trace rather than view. Returns as parse_options().
 */
int parse_report_options(int argc, char **argv, struct config *cfg);

/* Are cells broken down by key (-P, -D, -F or -G)? */
bool config_breaks_down(const struct config *cfg);

const char *unit_name(enum unit unit);
/* One unit in ns: 1, 1000 or 1000000. */
uint64_t unit_ns(enum unit unit);
/*
 * The unit the histograms also count whole units of, in ns; 0: none. Only
 * text prints those rows (JSON and the exporter print none), and only when
 * the unit is not ns, so that no other run pays a division per event.
 */
uint64_t config_count_unit_ns(const struct config *cfg);
/* The word of --attach that forces a method ("auto" for METHOD_NONE). */
const char *attach_name(enum attach_method method);

#endif /* OPTS_H */
