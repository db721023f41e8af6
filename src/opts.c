// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
#include "opts.h"

const char *argp_program_version = "iostackbreak 0.1";

enum long_only_keys {
	OPT_JSON = 0x100,
	OPT_ATTACH,
	OPT_PLAN,
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
	"  iostackbreak --plan               # what would be attached, and why\n"
	"  iostackbreak -- dd if=f of=/dev/null  # trace one command until it exits\n"
	"\n"
	"Layers: syscall, vfs, ext4, xfs, btrfs, blk (also \"all\"). Note: unlike\n"
	"bcc tools, -T selects layers here; it does not print timestamps.\n"
	"\n"
	"OPTIONS:";

static const struct argp_option options[] = {
	{ "type", 'T', "LAYERS", 0,
	  "Layers to trace, a comma list of syscall, vfs, ext4, xfs, btrfs, blk "
	  "(default: all)", 0 },
	{ "pid", 'p', "PID", 0, "Trace only this process (thread group id)", 0 },
	{ "disk", 'd', "DISK", 0,
	  "Block layer: trace only this disk, by its /sys/block name (e.g. nvme0n1)", 0 },
	{ "queued", 'Q', NULL, 0,
	  "Block layer: include OS queue time (from block_io_start or insert)", 0 },
	{ "milliseconds", 'm', NULL, 0, "Print times in milliseconds", 0 },
	{ "microseconds", 'u', NULL, 0, "Print times in microseconds", 0 },
	{ "json", OPT_JSON, NULL, 0,
	  "One JSON object per report, one per line (times in nanoseconds)", 0 },
	{ "attach", OPT_ATTACH, "METHOD", 0,
	  "auto (default), fentry, kprobe or tracepoint: force an attach method "
	  "for the cells that offer it", 0 },
	{ "plan", OPT_PLAN, NULL, 0,
	  "Attach, print for every layer and operation the source used and why "
	  "others were rejected, then exit", 0 },
	{ "verbose", 'v', NULL, 0,
	  "Print the plan on stderr and libbpf's own messages", 0 },
	{ "help", 'h', NULL, 0, "Show this help and exit", -1 },
	{ "version", 'V', NULL, 0, "Show the version and exit", -1 },
	{},
};

static int fail(struct config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cfg->errmsg, sizeof(cfg->errmsg), fmt, ap);
	va_end(ap);
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

static const struct argp argp = { options, parse_opt, "[interval [count]] [-- COMMAND [ARGS...]]",
				  doc, NULL, NULL, NULL };

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct config *cfg = state->input;
	char bad[64];
	long v;

	switch (key) {
	case 'h':
		/* argp_state_help() is silenced by ARGP_NO_ERRS: print directly. */
		argp_help(&argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK,
			  (char *)"iostackbreak");
		cfg->help_shown = true;
		break;
	case 'T':
		if (parse_layer_list(arg, &cfg->layers, bad, sizeof(bad)))
			return fail(cfg, "unknown layer '%s' in -T %s; known layers: "
				    "syscall, vfs, ext4, xfs, btrfs, blk", bad, arg);
		cfg->layers_given = true;
		break;
	case 'p':
		v = parse_positive(arg);
		if (v < 0)
			return fail(cfg, "invalid PID '%s': give a positive process id", arg);
		cfg->pid = (int)v;
		break;
	case 'd':
		if (!*arg || strchr(arg, '/'))
			return fail(cfg, "invalid disk '%s': give a name from /sys/block, "
				    "e.g. nvme0n1 or sda", arg);
		cfg->disk = arg;
		break;
	case 'V':
		printf("%s\n", argp_program_version);
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
		else
			return fail(cfg, "unknown attach method '%s': use auto, fentry, "
				    "kprobe or tracepoint", arg);
		break;
	case OPT_PLAN:
		cfg->plan_only = true;
		break;
	case 'v':
		cfg->verbose = true;
		break;
	case ARGP_KEY_ARG:
		v = parse_positive(arg);
		if (state->arg_num == 0) {
			if (v < 0)
				return fail(cfg, "invalid interval '%s': give a whole number "
					    "of seconds, 1 or more", arg);
			cfg->interval = (unsigned int)v;
		} else if (state->arg_num == 1) {
			if (v < 0)
				return fail(cfg, "invalid count '%s': give a whole number of "
					    "reports, 1 or more", arg);
			cfg->count = (unsigned int)v;
		} else {
			return fail(cfg, "unexpected argument '%s': only interval and "
				    "count are positional (put a command after --)", arg);
		}
		break;
	case ARGP_KEY_ERROR:
		/* getopt was told to be quiet: name the word it choked on. */
		if (!cfg->errmsg[0] && state->next > 0 && state->next <= state->argc)
			fail(cfg, "unknown option or missing value: '%s'; see "
			     "iostackbreak --help", state->argv[state->next - 1]);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int parse_options(int argc, char **argv, struct config *cfg)
{
	int own_argc = argc, err;

	memset(cfg, 0, sizeof(*cfg));
	cfg->layers = ALL_LAYERS;
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
	if (cfg->command && cfg->pid)
		return fail(cfg, "-p and a command exclude each other: the command's "
			    "process is the one traced"), 2;
	if (cfg->disk && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-d applies to the blk layer only: add blk to -T"), 2;
	if (cfg->queued && !(cfg->layers & (1U << LAYER_BLK)))
		return fail(cfg, "-Q applies to the blk layer only: add blk to -T"), 2;
	if (cfg->plan_only && (cfg->interval || cfg->command))
		return fail(cfg, "--plan attaches and exits: it takes no interval or "
			    "command"), 2;
	return 0;
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
	static const char *const names[] = { "auto", "fentry", "kprobe", "tracepoint" };

	return names[mode];
}
