// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak: the skeleton's lifecycle. Parse, check, probe, plan, load,
 * attach, report until stopped, detach. Everything that can be tested
 * without a kernel lives in the modules this file calls.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "collect.h"
#include "disk.h"
#include "layers.h"
#include "metrics.h"
#include "opts.h"
#include "planner.h"
#include "probe.h"
#include "report.h"
#include "stats.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t child_exited;
static bool verbose;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_child(int sig)
{
	(void)sig;
	child_exited = 1;
}

static void die_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die_line(const char *fmt, ...)
{
	va_list ap;

	fputs("iostackbreak: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own messages only when asked for: ours say what to do. */
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* CAP_BPF + CAP_PERFMON (5.8+) or CAP_SYS_ADMIN, in the effective set. */
static bool has_bpf_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};
	unsigned long long eff;

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	eff = ((unsigned long long)data[1].effective << 32) | data[0].effective;
	if (eff & (1ULL << CAP_SYS_ADMIN))
		return true;
	return (eff & (1ULL << 39)) && (eff & (1ULL << 38)); /* CAP_BPF, CAP_PERFMON */
}

static double elapsed_s(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

/* Starts COMMAND stopped at a pipe; it execs when released. */
static pid_t spawn_held(char **argv, int *release_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char go;

		close(fds[1]);
		/* Released (or the tracer died): EOF either way; go only on a byte. */
		if (read(fds[0], &go, 1) != 1)
			_exit(126);
		close(fds[0]);
		signal(SIGINT, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "iostackbreak: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*release_fd = fds[1];
	return pid;
}

static int print_report(const struct config *cfg, const struct plan *plan,
			const struct snapshot *cur, const struct snapshot *prev, double secs)
{
	static const struct snapshot empty;
	static struct report r;
	struct breakdown_set breakdowns = {};
	struct self_stats stats;

	if (!prev)
		prev = &empty;
	memset(&r, 0, sizeof(r));
	clock_gettime(CLOCK_REALTIME, &r.wall);
	r.interval_s = secs;
	r.plan = plan;
	r.timestamp = cfg->timestamp;
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++) {
		r.drops[i] = cur->drops[i] - prev->drops[i];
		r.dropped += r.drops[i];
	}
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < NR_OPS; o++)
			cell_diff(&r.cells[l][o], &cur->cells[l][o], &prev->cells[l][o]);
	if (cfg->per_process || cfg->per_disk || cfg->per_flags) {
		if (breakdown_diff(&breakdowns, &cur->breakdowns, &prev->breakdowns))
			return -ENOMEM;
		breakdown_sort_for_report(&breakdowns);
		r.breakdowns = &breakdowns;
		r.by_pid = cfg->per_process;
		r.by_disk = cfg->per_disk;
		r.by_flags = cfg->per_flags;
		r.top = cfg->top;
		r.disk_name = disk_name_kdev;
	}
	if (cfg->stats) {
		stats_diff(&stats, &cur->stats, &prev->stats);
		r.stats = &stats;
	}
	if (cfg->json)
		report_json(stdout, &r);
	else
		report_text(stdout, &r, cfg->unit);
	fflush(stdout);
	breakdown_free(&breakdowns);
	return 0;
}

/* An open cgroup v2 directory for the kernel's ancestry check, or -1. */
static int open_cgroup(const char *path, char *err, size_t errsz)
{
	struct statfs sf;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errsz,
			 "cannot open cgroup %s: %s; give a directory under "
			 "/sys/fs/cgroup",
			 path, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &sf) || sf.f_type != 0x63677270 /* CGROUP2_SUPER_MAGIC */) {
		snprintf(err, errsz,
			 "%s is not a cgroup v2 directory: --cgroup needs the "
			 "unified hierarchy (mount -t cgroup2 none /sys/fs/cgroup)",
			 path);
		close(fd);
		return -1;
	}
	return fd;
}

static int check_layers(const struct plan *plan, const struct config *cfg)
{
	unsigned int failed = plan_failed_layers(plan, cfg);
	char line[1024];

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (!(failed & (1U << layer)))
			continue;
		plan_layer_error(plan, layer, line, sizeof(line));
		die_line("%s", line);
	}
	return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	static struct snapshot prev, cur;
	struct tracer_knobs knobs = {};
	struct tracer tracer = {};
	struct metrics *metrics = NULL; /* exporter mode */
	struct timespec t0, tlast, now;
	struct disk_id disk = {};
	struct config cfg;
	struct kcaps caps;
	struct plan plan;
	int release_fd = -1, exit_code = 0, child_status = 0, stats_fd = -1;
	pid_t child = 0;
	char err[512];
	unsigned int reports = 0;

	switch (parse_options(argc, argv, &cfg)) {
	case 0:
		break;
	default:
		die_line("%s", cfg.errmsg);
		return 2;
	}
	if (cfg.help_shown)
		return 0;
	verbose = cfg.verbose;
	libbpf_set_print(libbpf_print);
	if (!has_bpf_caps()) {
		die_line("needs root, or the capabilities CAP_BPF and CAP_PERFMON (or "
			 "CAP_SYS_ADMIN): run it with sudo");
		return 1;
	}
	/* ---- Exporter mode, 1/3: the port before loading anything ---- */
	if (cfg.prometheus || cfg.textfile) {
		metrics = metrics_open(&cfg, err, sizeof(err));
		if (!metrics) {
			die_line("%s", err);
			return 1;
		}
	}
	for (unsigned int i = 0; i < cfg.nr_pids; i++) {
		if (kill(cfg.pids[i], 0) && errno == ESRCH) {
			die_line("no process with PID %d: check the PID (it may have exited)",
				 cfg.pids[i]);
			return 1;
		}
		knobs.tgids[knobs.nr_tgids++] = cfg.pids[i];
	}
	if (cfg.tid && kill(cfg.tid, 0) && errno == ESRCH) {
		die_line("no thread with TID %d: check the TID (it may have exited)", cfg.tid);
		return 1;
	}
	knobs.tid = cfg.tid;
	knobs.comm = cfg.comm;
	knobs.cgroup_fd = -1;
	if (cfg.cgroup) {
		knobs.cgroup_fd = open_cgroup(cfg.cgroup, err, sizeof(err));
		if (knobs.cgroup_fd < 0) {
			die_line("%s", err);
			return 1;
		}
	}
	knobs.by_pid = cfg.per_process;
	knobs.by_disk = cfg.per_disk;
	knobs.by_flags = cfg.per_flags;
	knobs.max_keys = cfg.max_keys;
	if (cfg.disk) {
		if (disk_resolve("/sys", cfg.disk, &disk, err, sizeof(err))) {
			die_line("%s", err);
			return 1;
		}
		knobs.filter_dev = true;
		knobs.dev_major = disk.major;
		knobs.dev_minor = disk.minor;
	}
	if (kcaps_probe(&caps, err, sizeof(err))) {
		die_line("%s", err);
		return 1;
	}
	plan_build(&caps, &cfg, &plan);
	if (check_layers(&plan, &cfg)) {
		kcaps_free(&caps);
		return 1;
	}
	if (cfg.command) {
		signal(SIGCHLD, on_child);
		child = spawn_held(cfg.command, &release_fd);
		if (child < 0) {
			die_line("cannot start %s: %s", cfg.command[0], strerror(errno));
			kcaps_free(&caps);
			return 1;
		}
	}
	if (cfg.command) {
		knobs.tgids[0] = child;
		knobs.nr_tgids = 1;
	}
	knobs.queued = cfg.queued;
	/* Before attaching: every run of our programs is then accounted. */
	if (cfg.stats) {
		stats_fd = stats_enable(err, sizeof(err));
		if (stats_fd < 0) {
			die_line("%s", err);
			exit_code = 1;
			goto out;
		}
	}
	if (tracer_start(&tracer, &plan, &knobs, err, sizeof(err))) {
		die_line("%s", err);
		exit_code = 1;
		goto out;
	}
	if (check_layers(&plan, &cfg)) {
		exit_code = 1;
		goto out;
	}
	tracer.with_stats = cfg.stats;
	if (cfg.verbose)
		plan_print(&plan, stderr);
	if (cfg.plan_only) {
		plan_print(&plan, stdout);
		goto out;
	}
	if (!plan_nr_traced(&plan)) {
		die_line("nothing to trace on this kernel: see iostackbreak --plan");
		exit_code = 1;
		goto out;
	}
	/* ---- Exporter mode, 2/3: serve until stopped (src/metrics.c) ---- */
	if (metrics) {
		signal(SIGINT, on_stop);
		signal(SIGTERM, on_stop);
		exit_code = metrics_serve(metrics, &tracer, &plan, &stop_signal);
		goto out;
	}
	report_skipped_text(stderr, &plan);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tlast = t0;
	if (cfg.command)
		fprintf(stderr, "Tracing %s (pid %d). Hit Ctrl-C to end.\n", cfg.command[0], child);
	else
		fprintf(stderr, "Tracing I/O latency by layer. Hit Ctrl-C to end.\n");
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1)
			die_line("cannot release %s: %s", cfg.command[0], strerror(errno));
		close(release_fd);
		release_fd = -1;
	}

	for (;;) {
		struct timespec nap = { 0, 100 * 1000 * 1000 };

		if (child_exited && waitpid(child, &child_status, WNOHANG) == child)
			break;
		child_exited = 0;
		if (stop_signal)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (cfg.duration && elapsed_s(&t0, &now) >= cfg.duration)
			break;
		if (cfg.interval && elapsed_s(&tlast, &now) >= cfg.interval) {
			if (snapshot_take(&tracer, &cur) ||
			    print_report(&cfg, &plan, &cur, &prev, elapsed_s(&tlast, &now))) {
				die_line("cannot read the BPF maps: %s", strerror(errno));
				exit_code = 1;
				goto out;
			}
			snapshot_free(&prev);
			prev = cur;
			memset(&cur, 0, sizeof(cur));
			/* Advance by the interval, not to now: reports do not drift. */
			tlast.tv_sec += cfg.interval;
			if (cfg.count && ++reports >= cfg.count)
				goto out;
			continue;
		}
		nanosleep(&nap, NULL);
	}
	/* Stopped by a signal or the command's end: report what is not yet. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (snapshot_take(&tracer, &cur) ||
	    print_report(&cfg, &plan, &cur, cfg.interval ? &prev : NULL, elapsed_s(&tlast, &now))) {
		die_line("cannot read the BPF maps: %s", strerror(errno));
		exit_code = 1;
		goto out;
	}
	if (cfg.command && !stop_signal) {
		if (WIFEXITED(child_status))
			exit_code = WEXITSTATUS(child_status);
		else if (WIFSIGNALED(child_status))
			exit_code = 128 + WTERMSIG(child_status);
	}
out:
	metrics_close(metrics); /* ---- Exporter mode, 3/3 ---- */
	snapshot_free(&cur);
	snapshot_free(&prev);
	tracer_stop(&tracer);
	if (knobs.cgroup_fd >= 0)
		close(knobs.cgroup_fd);
	if (stats_fd >= 0)
		close(stats_fd); /* the kernel stops its accounting with it */
	kcaps_free(&caps);
	if (release_fd >= 0)
		close(release_fd); /* an unreleased command exits without running */
	if (child > 0 && exit_code && !WIFEXITED(child_status))
		waitpid(child, NULL, 0);
	return exit_code;
}
