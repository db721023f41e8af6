// SPDX-License-Identifier: GPL-2.0
/* The checks of options against each other, once all are read (opts.c's
 * rows name them): each returns 0, or says what is wrong and what to do. */
#include "layers.h"
#include "opt_stacks.h"
#include "opt_values.h"

#define WITH_BLK(cfg) ((cfg)->layers & (1U << LAYER_BLK))
#define WITH_DEVICES(cfg) ((cfg)->layers & DEVICE_LAYERS)

int opt_check_pid(struct config *cfg)
{
	if (cfg->command && cfg->nr_pids)
		return opt_fail(cfg, "-p and a command exclude each other: the command's "
				     "process is the one traced");
	return 0;
}

int opt_check_children(struct config *cfg)
{
	if (cfg->children && !cfg->nr_pids)
		return opt_fail(cfg, "-f follows the children of -p processes: add -p (a "
				     "command's children are followed by default)");
	return 0;
}

int opt_check_no_parts(struct config *cfg)
{
	if (!cfg->split_calls && (cfg->part_hists || !cfg->offcpu))
		return opt_fail(cfg,
				"-B and --no-offcpu shape the parts of calls: drop --no-parts");
	return 0;
}

int opt_check_no_children(struct config *cfg)
{
	if (cfg->no_children && !cfg->command)
		return opt_fail(cfg, "--no-children applies to a -- COMMAND: add one");
	return 0;
}

int opt_check_per_disk(struct config *cfg)
{
	if (cfg->per_disk && !WITH_DEVICES(cfg))
		return opt_fail(cfg,
				"-D applies to the bio and blk layers only: add bio or blk to -T");
	return 0;
}

int opt_check_per_flags(struct config *cfg)
{
	if (cfg->per_flags && !WITH_BLK(cfg))
		return opt_fail(cfg, "-F applies to the blk layer only: add blk to -T");
	return 0;
}

/* Only the blk layer's write requests are charged to their dirtiers. */
int opt_check_no_writeback(struct config *cfg)
{
	if (!cfg->writeback && !WITH_BLK(cfg))
		return opt_fail(cfg, "--no-writeback applies to the blk layer only: add blk to -T "
				     "or drop --no-writeback");
	return 0;
}

/* Printed reports keep every cgroup they saw: a grace has meaning only
 * where the same counters are exported again and again. */
int opt_check_cgroup_grace(struct config *cfg)
{
	if (cfg->cgroup_grace && (!cfg->per_cgroup || (!cfg->prometheus && !cfg->textfile)))
		return opt_fail(cfg, "--cgroup-grace keeps gone cgroups of -G in exporter mode: "
				     "add -G and --prometheus or --textfile");
	if (!cfg->cgroup_grace && cfg->per_cgroup)
		cfg->cgroup_grace = 300;
	return 0;
}

int opt_check_top(struct config *cfg)
{
	if (cfg->top && !config_breaks_down(cfg) && !config_stacks(cfg))
		return opt_fail(cfg, "--top ranks the keys of -D, -P, -F or -G, or the stacks of "
				     "-K and -U: add one of them");
	return 0;
}

int opt_check_max_keys(struct config *cfg)
{
	if (cfg->max_keys && !config_breaks_down(cfg))
		return opt_fail(cfg,
				"--max-keys sizes the keys of -D, -P, -F or -G: add one of them");
	return 0;
}

int opt_check_duration(struct config *cfg)
{
	if (cfg->duration && (cfg->command || cfg->plan_only))
		return opt_fail(cfg, "--duration does not go with a command or --plan");
	return 0;
}

int opt_check_disk(struct config *cfg)
{
	if (cfg->disk && !WITH_DEVICES(cfg))
		return opt_fail(cfg,
				"-d applies to the bio and blk layers only: add bio or blk to -T");
	return 0;
}

int opt_check_queued(struct config *cfg)
{
	if (cfg->queued && !WITH_BLK(cfg))
		return opt_fail(cfg, "-Q applies to the blk layer only: add blk to -T");
	return 0;
}

int opt_check_full_path(struct config *cfg)
{
	if (cfg->full_path && !cfg->slower && !cfg->trace)
		return opt_fail(cfg,
				"--full-path names the files of events: add --slower or --trace");
	return 0;
}

int opt_check_live(struct config *cfg)
{
	if (!cfg->live)
		return 0;
	if (cfg->json || cfg->plan_only || cfg->command || cfg->slower || cfg->trace ||
	    cfg->prometheus || cfg->textfile)
		return opt_fail(cfg,
				"--live owns the terminal: it does not go with --json, --plan, "
				"--slower, --trace, an exporter or a command (trace the command "
				"with -p from another terminal)");
	/* The busiest processes, cgroups (and disks) need their breakdowns. */
	cfg->per_process = true;
	cfg->per_cgroup = true;
	cfg->per_disk = cfg->layers & DEVICE_LAYERS;
	if (!cfg->interval)
		cfg->interval = 1;
	return 0;
}

/* -o holds printed reports: an exporter prints none, --live draws them. */
int opt_check_output(struct config *cfg)
{
	if (!cfg->output)
		return 0;
	if (cfg->prometheus || cfg->textfile)
		return opt_fail(cfg, "%s prints no reports for -o to hold: drop -o",
				cfg->prometheus ? "--prometheus" : "--textfile");
	if (cfg->live)
		return opt_fail(cfg,
				"--live draws the reports on the terminal: drop -o, or drop "
				"--live to write them to %s",
				cfg->output);
	return 0;
}

int opt_check_heatmap(struct config *cfg)
{
	if (cfg->heatmap && !cfg->interval && !cfg->plan_only && !cfg->prometheus && !cfg->textfile)
		return opt_fail(cfg,
				"--heatmap draws a column per interval report: give an interval, "
				"e.g. iostackbreak --heatmap=io.svg 1");
	if (cfg->heatmap && cfg->plan_only)
		return opt_fail(cfg, "--plan attaches and exits: it draws no --heatmap");
	return 0;
}

/*
 * --record keeps what a report is counted from again: the calls of the root
 * layer and the block requests, each an event. The rest of the stack (nested
 * layers, bios, io_uring and aio requests, flags, cgroups, stacks, patterns)
 * is counted in the kernel alone: refused rather than reported unlike live.
 */
int opt_check_record(struct config *cfg)
{
	unsigned int calls = cfg->layers & ~(1U << LAYER_BLK);

	if (!cfg->record)
		return 0;
	if (!cfg->layers_given || (calls & (calls - 1)) || (calls & ~THREAD_LAYERS))
		return opt_fail(cfg, "--record rebuilds reports from each call and request: give -T "
				     "one layer of calls (syscall, vfs or a file system) and/or blk, "
				     "e.g. -T syscall,blk");
	if (cfg->per_flags || cfg->per_cgroup || cfg->pattern || cfg->kstack || cfg->ustack ||
	    cfg->stats)
		return opt_fail(cfg, "--record keeps calls and requests, not what -F, -G, "
				     "--pattern, -K, -U or --stats count in the kernel: drop those");
	if (cfg->plan_only || cfg->prometheus || cfg->textfile)
		return opt_fail(cfg, "--record goes with a run that reports: not with --plan "
				     "or an exporter");
	return 0;
}

int opt_check_ring(struct config *cfg)
{
	if (cfg->ring && !cfg->record)
		return opt_fail(cfg, "--ring keeps the last seconds of a recording: add "
				     "--record=FILE");
	return 0;
}

/*
 * iostackbreak report FILE: the options left are views of what was
 * recorded. What picks what to trace, or needs what a recording does not
 * keep, is refused with what to do instead.
 */
int opt_check_replay(struct config *cfg)
{
	if (cfg->layers_given || cfg->disk || cfg->cgroup || cfg->tid || cfg->comm ||
	    cfg->command || cfg->queued || cfg->all_fds)
		return opt_fail(cfg, "report: the layers, disk and tasks traced are the "
				     "recording's; -p PID picks processes from it");
	if (cfg->interval || cfg->count || cfg->duration || cfg->live)
		return opt_fail(cfg, "report prints one report of the whole recording: no "
				     "interval, --duration or --live");
	if (cfg->record || cfg->ring || cfg->plan_only || cfg->prometheus || cfg->textfile ||
	    cfg->stats)
		return opt_fail(cfg, "report reads a recording: no --record, --ring, --plan, "
				     "--stats or exporter");
	if (cfg->per_flags || cfg->per_cgroup || cfg->pattern || cfg->kstack || cfg->ustack ||
	    cfg->heatmap || cfg->nr_files)
		return opt_fail(cfg, "a recording keeps no request flags, cgroups, patterns, "
				     "stacks, interval columns or files' ids: no -F, -G, "
				     "--pattern, -K, -U, --heatmap or --file on a report");
	return 0;
}

int opt_check_trace_max(struct config *cfg)
{
	if (cfg->trace_max && !cfg->trace)
		return opt_fail(cfg, "--trace-max bounds the --trace file: add --trace");
	if (!cfg->trace_max)
		cfg->trace_max = 1000000;
	return 0;
}

int opt_check_file(struct config *cfg)
{
	if (cfg->nr_files && !(cfg->layers & (THREAD_LAYERS | 1U << LAYER_IO_URING |
					      1U << LAYER_AIO | 1U << LAYER_FAULT)))
		return opt_fail(cfg,
				"--file finds block requests through the calls that submit them: "
				"add a layer with files to -T (syscall, vfs, a file system, "
				"io_uring, aio or fault)");
	return 0;
}

int opt_check_calls(struct config *cfg)
{
	if ((cfg->slower || cfg->trace) && !(cfg->layers & (THREAD_LAYERS | 1U << LAYER_IO_URING |
							     1U << LAYER_AIO | 1U << LAYER_FAULT)))
		return opt_fail(cfg,
				"--slower and --trace follow calls: add a layer of calls to -T "
				"(syscall, vfs, a file system, io_uring, aio or fault)");
	return 0;
}

int opt_check_plan(struct config *cfg)
{
	if (cfg->plan_check && !cfg->plan_only)
		return opt_fail(cfg, "--check goes with --plan: it loads and attaches the plan's "
				     "programs, then exits");
	if (cfg->plan_only && (cfg->interval || cfg->command))
		return opt_fail(cfg, "--plan prints the plan and exits: it takes no interval or "
				     "command");
	return 0;
}

/*
 * Exporter mode serves counters since start until it is stopped: options
 * that shape printed reports, or end the run by themselves, have no meaning
 * there and are refused rather than silently ignored.
 */
int opt_check_exporter(struct config *cfg)
{
	const char *mode = cfg->prometheus ? "--prometheus" : "--textfile";

	if (!cfg->prometheus && !cfg->textfile)
		return 0;
	if (cfg->json)
		return opt_fail(cfg, "%s exports metrics instead of printing reports: drop --json",
				mode);
	if (cfg->heatmap)
		return opt_fail(
		    cfg, "%s exports metrics instead of printing reports: drop --heatmap", mode);
	if (cfg->plan_only)
		return opt_fail(cfg, "--plan attaches and exits: it does not go with %s", mode);
	if (cfg->command)
		return opt_fail(cfg,
				"%s serves until stopped, not for the life of one command: "
				"trace its process with -p PID instead",
				mode);
	if (cfg->unit_given || cfg->timestamp)
		return opt_fail(cfg,
				"-m, -u and --timestamp shape text reports: %s exports "
				"seconds, drop them",
				mode);
	if (cfg->count)
		return opt_fail(cfg, "%s runs until stopped: give no count", mode);
	if (cfg->interval && !cfg->textfile)
		return opt_fail(cfg, "--prometheus serves counters since start at every scrape: "
				     "it takes no interval (the scraper sets the pace)");
	if (cfg->slower || cfg->trace)
		return opt_fail(cfg,
				"--slower and --trace follow single calls: run them apart from %s, "
				"which exports histograms",
				mode);
	return 0;
}
