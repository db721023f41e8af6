// SPDX-License-Identifier: GPL-2.0
/*
 * A tracing session: configuration -> targets (what -p, --cgroup, -d and
 * --file resolve to) -> plan -> start (knobs.c sets the BPF globals) ->
 * loop -> report -> stop. One poll() loop waits on the session's sources
 * of work, each a descriptor: a signalfd for the stop signals and SIGCHLD,
 * a timerfd for interval reports (or the textfile) and one for --duration,
 * stdout when its reader can go away, the events ring buffer (--slower,
 * --trace), a pidfd per -p target. The exporter's HTTP listener is not one
 * of them: libmicrohttpd serves it on its own thread (metrics.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "cgroup.h"
#include "collect.h"
#include "command.h"
#include "dev_switches.h"
#include "disk.h"
#include "events.h"
#include "fileid.h"
#include "layers.h"
#include "metrics.h"
#include "probe.h"
#include "recording.h"
#include "report.h"
#include "session.h"
#include "sink.h"
#include "take.h"
#include "heatmap.h"
#include "live.h"
#include "opt_stacks.h"
#include "stacks_out.h"
#include "flamegraph.h"
#include "stacks_read.h"

enum end_reason {
	END_NONE,
	END_SIGNAL,	   /* SIGINT or SIGTERM */
	END_COMMAND,	   /* the -- COMMAND exited */
	END_DURATION,	   /* --duration elapsed */
	END_COUNT,	   /* the last of `count` interval reports is out */
	END_TARGETS_GONE,  /* every -p process exited */
	END_OUTPUT_CLOSED, /* the reader of stdout went away (| head -1) */
	END_ERROR,
};

struct session {
	const struct config *cfg;
	const sigset_t *child_mask; /* the signal mask a command runs with */
	struct kcaps caps;
	bool have_caps;
	struct plan plan; /* what the planner chose, never changed after */
	/* What attaching did (tracer_start): where a target fell back or
	 * failed; what every report reads once tracing. */
	struct plan done;
	struct targets targets;
	struct tracer tracer;
	struct command cmd;
	/* Every report goes to each: the report (text, JSON, or the live
	 * view while it is on) and --heatmap's columns. */
	struct sinks sinks;
	struct sink *report_sink; /* the first of them: text, JSON or live */
	struct live *live;	  /* --live: the terminal, while it is ours */
	struct metrics *metrics;  /* exporter mode (--prometheus, --textfile) */
	struct event_feed events; /* --slower, --trace */
	struct stack_reader *stacks; /* -K, -U */
	struct stack_report stack_report; /* the last report's, while it is written */
	bool have_events;
	struct trace_writer *trace; /* --trace, until the feed takes it */
	struct rec_writer rec;	    /* --record: its file while rec.f */
	struct report_source source; /* where the reports are taken */
	int sig_fd, tick_fd, end_fd, stats_fd;
	int out_fd; /* stdout when it is a pipe or socket, watched for its reader; else -1 */
	FILE *out; /* -o: where the reports go; NULL: stdout */
	int pid_fd[MAX_PID_FILTER]; /* -1 once that process has exited */
	unsigned int nr_pid_fds, nr_alive;
	unsigned int reports;
	enum end_reason end;
	int exit_code;
};

static bool verbose;

/* --ring's memory at most: at about 500 bytes an event, a million events. */
#define RING_BYTES (512U << 20)

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr, prefixed with the tool's name. */
static void say(const char *fmt, ...)
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
	(void)level;
	/* libbpf's own messages only with -v: ours say what to do. */
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
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

/* A timerfd firing after secs seconds, and every secs seconds if periodic. */
static int timer_open(unsigned int secs, bool periodic)
{
	struct itimerspec its = { .it_value = { .tv_sec = secs } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (periodic)
		its.it_interval = its.it_value;
	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Has a stop signal arrived (and not yet been read from the signalfd)? */
static bool stop_pending(void)
{
	sigset_t pending;

	if (sigpending(&pending))
		return false;
	return sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM);
}

/* -p: each process must exist; a pidfd tells the loop when it exits. */
static int watch_pids(struct session *s)
{
	const struct config *cfg = s->cfg;

	for (unsigned int i = 0; i < cfg->nr_pids; i++) {
		int fd = (int)syscall(SYS_pidfd_open, cfg->pids[i], 0);

		if (fd < 0 && errno == ESRCH) {
			say("no process with PID %d: check the PID (it may have exited)",
			    cfg->pids[i]);
			return -1;
		}
		/* Before 5.3 there are no pidfds: trace on, until stopped. An
		 * exporter keeps serving after its targets are gone: a fleet's
		 * scrape target must not vanish. */
		if (fd >= 0 && s->metrics) {
			close(fd);
		} else if (fd >= 0) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			s->pid_fd[s->nr_pid_fds++] = fd;
		}
		s->targets.tgids[s->targets.nr_tgids++] = cfg->pids[i];
	}
	s->nr_alive = s->nr_pid_fds;
	return 0;
}

/* The command line's targets: each must exist; what they resolve to. */
static int resolve_targets(struct session *s)
{
	const struct config *cfg = s->cfg;
	struct targets *tg = &s->targets;
	struct disk_id disk;
	char err[512];

	tg->cgroup_fd = -1;
	if (watch_pids(s))
		return -1;
	if (cfg->tid && kill(cfg->tid, 0) && errno == ESRCH) {
		say("no thread with TID %d: check the TID (it may have exited)", cfg->tid);
		return -1;
	}
	if (cfg->cgroup) {
		tg->cgroup_fd = open_cgroup(cfg->cgroup, err, sizeof(err));
		if (tg->cgroup_fd < 0) {
			say("%s", err);
			return -1;
		}
	}
	if (cfg->disk) {
		if (disk_resolve("/sys", cfg->disk, &disk, err, sizeof(err))) {
			say("%s", err);
			return -1;
		}
		tg->dev = KDEV_MAKE(disk.major, disk.minor);
		/* blk alone would accept the disk and never see a request of it. */
		if ((cfg->layers & DEVICE_LAYERS) == (1U << LAYER_BLK) &&
		    disk_bio_based("/sys", cfg->disk)) {
			say("%s is bio-based (no blk-mq queue): it has no block requests for -T blk "
			    "to time; its bios are timed with -T bio",
			    cfg->disk);
			return -1;
		}
	}
	for (unsigned int i = 0; i < cfg->nr_files; i++) {
		if (file_id_resolve(cfg->files[i], "/proc/self/mountinfo", &tg->files[i], err,
				    sizeof(err))) {
			say("%s", err);
			return -1;
		}
	}
	return 0;
}

/* Layers named with -T that cannot be traced at all: one line each; by
 * plan before loading, by what attached after. */
static int check_layers(const struct session *s, const struct plan *plan)
{
	unsigned int failed = plan_failed_layers(plan, s->cfg);
	char line[1024];

	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (!(failed & (1U << layer)))
			continue;
		plan_layer_error(plan, layer, line, sizeof(line));
		say("%s", line);
	}
	return failed ? -1 : 0;
}

/*
 * Probe, plan, load and attach. Returns 0 when tracing (or when stopped by
 * a signal before that), -1 after saying why not. A stop signal that comes
 * during start-up stays pending (it is blocked) and ends the run as soon as
 * what is being attached is whole.
 */
/* The kernel's features, the targets and the plan: nothing loaded yet. */
static int session_plan(struct session *s)
{
	const struct config *cfg = s->cfg;
	char err[512];

	if (dev_switches_read(err, sizeof(err))) {
		say("%s", err);
		return -1;
	}
	if (resolve_targets(s))
		return -1;
	if (kcaps_probe(&s->caps, cfg->btf, !cfg->plan_only || cfg->plan_check, err,
			sizeof(err))) {
		say("%s", err);
		return -1;
	}
	s->have_caps = true;
	if (bpf_jit_off())
		say("note: the BPF JIT is off (net.core.bpf_jit_enable=0): every program runs "
		    "in the kernel's interpreter, at a higher cost per event; to turn it on: "
		    "sysctl -w net.core.bpf_jit_enable=1");
	plan_build(&s->caps, cfg, &s->plan);
	return check_layers(s, &s->plan);
}

/* The command started, the programs loaded and attached, what was done checked. */
static int session_attach(struct session *s)
{
	const struct config *cfg = s->cfg;
	char err[512];

	if (cfg->command) {
		if (command_spawn(&s->cmd, cfg->command, s->child_mask)) {
			say("cannot start %s: %s", cfg->command[0], strerror(errno));
			return -1;
		}
		s->targets.tgids[0] = s->cmd.pid;
		s->targets.nr_tgids = 1;
	}
	/* Before attaching: every run of our programs is then accounted. */
	if (cfg->stats) {
		s->stats_fd = stats_enable(err, sizeof(err));
		if (s->stats_fd < 0) {
			say("%s", err);
			return -1;
		}
	}
	if (tracer_start(&s->tracer, &s->plan, cfg, &s->targets, &s->done, err, sizeof(err))) {
		say("%s", err);
		return -1;
	}
	if (cfg->verbose && plan_traces_threads(&s->done)) {
		tracer_thread_state(&s->tracer, err, sizeof(err));
		fprintf(stderr, "%s\n", err);
	}
	return check_layers(s, &s->done);
}

static int session_start(struct session *s)
{
	const struct config *cfg = s->cfg;
	char err[512];

	if (session_plan(s))
		return -1;
	/* --plan without --check loads nothing: the plan is all. */
	if (stop_pending() || s->plan.unloaded)
		return 0;
	if (session_attach(s))
		return -1;
	/* Gone (or empty: a loop device with no file) before tracing began:
	 * there would be nothing to report, so it is an error, unlike a disk
	 * that goes away during the run. */
	if (cfg->disk && !disk_present_kdev(s->targets.dev)) {
		say("disk %s has no medium or went away (size 0, or gone from /sys/block): "
		    "give -d a disk that is there",
		    cfg->disk);
		return -1;
	}
	s->tracer.with_stats = cfg->stats;
	if (config_stacks(cfg) && !cfg->plan_only) {
		s->stacks = stack_reader_start(&s->tracer, cfg, err, sizeof(err));
		if (!s->stacks) {
			say("%s", err);
			return -1;
		}
	}
	if (cfg->verbose)
		plan_print(&s->done, stderr);
	if (!cfg->plan_only && !plan_nr_traced(&s->done)) {
		say("nothing to trace on this kernel: see iostackbreak --plan");
		return -1;
	}
	return 0;
}

/* --slower, --trace: the ring buffer's reader, once tracing. */
static int open_events(struct session *s)
{
	struct timespec mono, real;
	struct event_ctx ctx = {
		.unit = s->cfg->unit,
		.plan = &s->done,
		.parts = s->done.split_layer >= 0,
		.offcpu = s->done.split_layer >= 0 && s->cfg->offcpu,
		.disk_name = disk_name_kdev,
	};
	char err[512];

	if (s->tracer.events_fd < 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	ctx.mono_to_real_ns =
	    (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
	if (s->rec.f && rec_write_header(&s->rec, s->cfg, &s->done, ctx.mono_to_real_ns)) {
		say("cannot write the recording %s: %s", s->cfg->record, strerror(s->rec.err));
		return -1;
	}
	if (event_feed_open(&s->events, s->tracer.events_fd, s->cfg, &ctx, stdout, s->trace,
			    s->rec.f ? &s->rec : NULL, err, sizeof(err))) {
		say("%s", err);
		return -1;
	}
	s->trace = NULL; /* the feed's now */
	s->have_events = true;
	return 0;
}

/* Events waiting in the ring buffer, to their outputs. */
static void on_events(struct session *s)
{
	if (event_feed_drain(&s->events) == 0)
		return;
	if (errno == EPIPE) {
		s->end = END_OUTPUT_CLOSED;
	} else {
		s->end = END_ERROR;
		say("cannot write the events: %s", strerror(errno));
	}
}

/* The sinks chosen by the options: the report's, then the heat map's. */
static int open_sinks(struct session *s)
{
	const struct config *cfg = s->cfg;
	FILE *out = s->out ? s->out : stdout;
	struct heatmap *h;
	char err[512];

	s->report_sink = sinks_add(&s->sinks);
	if (cfg->json ? sink_json_open(s->report_sink, out)
		      : sink_text_open(s->report_sink, out, cfg->unit)) {
		say("out of memory");
		return -1;
	}
	/* Its file now: one that cannot be written fails at once. */
	if (cfg->heatmap) {
		h = heatmap_open(cfg->heatmap, err, sizeof(err));
		if (!h) {
			say("%s", err);
			return -1;
		}
		heatmap_sink_open(sinks_add(&s->sinks), h);
	}
	return 0;
}

/* --live: the terminal becomes the view; interval reports redraw it. */
static int open_live(struct session *s)
{
	char err[256];

	s->live = live_open(STDIN_FILENO, stdout, s->cfg->unit, err, sizeof(err));
	if (!s->live) {
		say("%s", err);
		return -1;
	}
	sink_close(s->report_sink);
	return live_sink_open(s->report_sink, s->live);
}

static void close_live(struct session *s)
{
	sink_close(s->report_sink);
	live_close(s->live);
	s->live = NULL;
	sink_text_open(s->report_sink, stdout, s->cfg->unit);
}

/*
 * -K, -U: the stacks into the report (one, at the end), and the folded
 * form to its file or, instead of the report, to the report's output.
 */
static int write_stacks(struct session *s, struct report *r)
{
	const struct config *cfg = s->cfg;
	FILE *f;
	int err = stack_reader_report(s->stacks, disk_name_kdev, &s->stack_report);

	if (err) {
		say("cannot read the stacks: %s", strerror(-err));
		return -1;
	}
	r->stacks = &s->stack_report;
	if (cfg->flamegraph) {
		f = fopen(cfg->flamegraph, "we");
		if (f)
			err = stacks_flamegraph(f, &s->stack_report);
		if (f && fclose(f))
			err = -1;
		if (!f || err) {
			say("cannot write the flame graph to %s: %s", cfg->flamegraph,
			    strerror(errno));
			goto fail;
		}
	}
	if (!cfg->folded)
		return 0;
	f = cfg->folded_file ? fopen(cfg->folded_file, "we") : (s->out ? s->out : stdout);
	if (f)
		err = stacks_folded(f, &s->stack_report);
	if (f && cfg->folded_file && fclose(f))
		err = -1;
	if (!f || err) {
		say("cannot write the folded stacks to %s: %s",
		    cfg->folded_file ? cfg->folded_file : "the output", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	stack_report_free(&s->stack_report);
	r->stacks = NULL;
	return -1;
}

/* The report since the last one (or the start), through every sink. */
static int write_report(struct session *s, bool interval)
{
	const struct sink *failed;
	struct report r;
	int err;

	err = report_take(&s->source, &r, interval);
	if (err) {
		say("cannot read the BPF maps: %s", strerror(-err));
		return -1;
	}
	/* What the recording's trailer keeps of the run beside its events. */
	if (s->rec.f && !interval)
		rec_note_report(&s->rec, &r);
	if (s->stacks && write_stacks(s, &r)) {
		report_release(&r);
		return -1;
	}
	/* --folded without a file: the stacks are the output. */
	err = s->cfg->folded && !s->cfg->folded_file ? 0 : sinks_write(&s->sinks, &r, &failed);
	if (r.stacks) {
		stack_report_free(&s->stack_report);
		r.stacks = NULL;
	}
	report_release(&r);
	/* The reader of the report went away (| head -1): a normal end. */
	if (err && failed == s->report_sink && errno == EPIPE) {
		s->end = END_OUTPUT_CLOSED;
		return 0;
	}
	if (err) {
		say("cannot write %s: %s", failed->what, strerror(errno));
		return -1;
	}
	return 0;
}

/* The signalfd is readable: a stop signal, or the command's SIGCHLD. */
/* --ring, on SIGUSR1: the events first, then the window to the file. */
static void dump_ring(struct session *s)
{
	uint64_t events;

	if (!s->rec.ring)
		return;
	if (s->have_events)
		on_events(s);
	if (rec_ring_dump(&s->rec, &events))
		say("cannot write the recording %s: %s", s->cfg->record, strerror(errno));
	else
		say("recording %s: the last %u s, %llu events (%llu dropped for room)",
		    s->cfg->record, s->cfg->ring, (unsigned long long)events,
		    (unsigned long long)s->rec.ring->overflowed);
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (command_reap(&s->cmd))
				s->end = END_COMMAND;
		} else if (si.ssi_signo == SIGWINCH) {
			if (s->live)
				live_redraw(s->live);
		} else if (si.ssi_signo == SIGUSR1) {
			dump_ring(s);
		} else {
			s->end = END_SIGNAL;
		}
	}
}

static void on_tick(struct session *s)
{
	uint64_t expirations;

	if (read(s->tick_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	if (s->metrics) {
		metrics_tick(s->metrics);
		return;
	}
	if (write_report(s, true))
		s->end = END_ERROR;
	else if (s->end == END_NONE && s->cfg->count && ++s->reports >= s->cfg->count)
		s->end = END_COUNT;
}

static void on_target_exit(struct session *s, unsigned int i)
{
	close(s->pid_fd[i]);
	s->pid_fd[i] = -1;
	if (!--s->nr_alive)
		s->end = END_TARGETS_GONE;
}

static int session_loop(struct session *s)
{
	struct pollfd fds[6 + MAX_PID_FILTER];
	unsigned int pid_of[6 + MAX_PID_FILTER];

	while (s->end == END_NONE) {
		nfds_t n = 0;

		fds[n++] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = s->tick_fd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = s->end_fd, .events = POLLIN };
		/* No events asked: a pipe whose reader is gone reports POLLERR. */
		fds[n++] = (struct pollfd){ .fd = s->out_fd, .events = 0 };
		fds[n++] = (struct pollfd){ .fd = s->have_events ? event_feed_fd(&s->events) : -1,
					    .events = POLLIN };
		fds[n++] =
		    (struct pollfd){ .fd = s->live ? live_fd(s->live) : -1, .events = POLLIN };
		for (unsigned int i = 0; i < s->nr_pid_fds; i++) {
			if (s->pid_fd[i] < 0)
				continue;
			pid_of[n] = i;
			fds[n++] = (struct pollfd){ .fd = s->pid_fd[i], .events = POLLIN };
		}
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			say("poll: %s", strerror(errno));
			return -1;
		}
		if (fds[0].revents)
			on_signal(s);
		if (fds[1].revents && s->end == END_NONE)
			on_tick(s);
		if (fds[2].revents && s->end == END_NONE)
			s->end = END_DURATION;
		if (fds[3].revents & (POLLERR | POLLHUP))
			s->end = END_OUTPUT_CLOSED;
		if (fds[4].revents && s->end == END_NONE)
			on_events(s);
		/* q in the live view: a stop, as Ctrl-C. */
		if (fds[5].revents && s->end == END_NONE && live_on_keys(s->live))
			s->end = END_SIGNAL;
		for (nfds_t i = 6; i < n; i++)
			if (fds[i].revents)
				on_target_exit(s, pid_of[i]);
	}
	return s->end == END_ERROR ? -1 : 0;
}

/* Says how a run ended when that is not the user's own doing. */
static void say_why_ended(const struct session *s)
{
	if (s->end == END_TARGETS_GONE)
		say("every process given with -p has exited: run ended");
}

static void session_stop(struct session *s)
{
	uint64_t lost = s->have_events ? tracer_drops(&s->tracer, DROP_EVENT_LOST) : 0;
	char what[512];

	if (s->have_events)
		event_feed_close(&s->events, lost);
	if (s->rec.f && !s->rec.bytes) {
		rec_close(&s->rec, 0); /* stopped before tracing: nothing to keep */
	} else if (s->rec.f) {
		if (rec_close(&s->rec, lost))
			say("cannot write the recording %s: %s", s->cfg->record, strerror(errno));
		else
			say("recording %s: %llu events, %llu bytes; %llu events lost to a full ring "
			    "buffer",
			    s->cfg->record, (unsigned long long)s->rec.events,
			    (unsigned long long)s->rec.bytes, (unsigned long long)lost);
	}
	if (s->trace) /* never fed: a run stopped before tracing began */
		trace_close(s->trace, 0, NULL);
	if (s->live)
		close_live(s); /* however the run ended, the terminal is given back */
	if (sinks_close(&s->sinks, what, sizeof(what)))
		say("cannot write %s: %s", what, strerror(errno));
	report_source_free(&s->source);
	metrics_close(s->metrics); /* no scrape may read the maps from here on */
	stack_reader_stop(s->stacks); /* before the maps go */
	s->stacks = NULL;
	tracer_stop(&s->tracer);
	if (s->out && fclose(s->out))
		say("cannot write the reports to %s: %s", s->cfg->output, strerror(errno));
	s->out = NULL;
	if (s->targets.cgroup_fd >= 0)
		close(s->targets.cgroup_fd);
	if (s->stats_fd >= 0)
		close(s->stats_fd); /* the kernel stops its accounting with it */
	for (unsigned int i = 0; i < s->nr_pid_fds; i++)
		if (s->pid_fd[i] >= 0)
			close(s->pid_fd[i]);
	if (s->have_caps)
		kcaps_free(&s->caps);
	if (s->cmd.pid)
		command_cleanup(&s->cmd);
	if (s->tick_fd >= 0)
		close(s->tick_fd);
	if (s->end_fd >= 0)
		close(s->end_fd);
	close(s->sig_fd);
}

/* The loop's clocks: a tick every `every` seconds (0: none), and the end
 * of --duration. */
static int open_timers(struct session *s, unsigned int every, char *err, size_t errsz)
{
	if (every)
		s->tick_fd = timer_open(every, true);
	if (s->cfg->duration)
		s->end_fd = timer_open(s->cfg->duration, false);
	if ((every && s->tick_fd < 0) || (s->cfg->duration && s->end_fd < 0)) {
		snprintf(err, errsz, "timerfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Exporter mode: counts since start, served on the HTTP library's thread
 * (created now, with the stop signals blocked, so they stay ours) and
 * written to the textfile on the interval timer, until a stop signal or
 * --duration. No report goes to stdout.
 */
static int serve_metrics(struct session *s)
{
	unsigned int every = metrics_interval(s->metrics);
	char err[512];
	int ret = 0;

	if (metrics_start(s->metrics, &s->tracer, &s->done, err, sizeof(err)))
		goto fail;
	if (open_timers(s, every, err, sizeof(err)))
		goto fail;
	if (session_loop(s))
		ret = 1;
	if (metrics_finish(s->metrics, err, sizeof(err)))
		goto fail;
	session_stop(s);
	return ret;
fail:
	say("%s", err);
	session_stop(s);
	return 1;
}

/*
 * stdout, when its reader can go away before the run ends (`| head -1`):
 * a pipe or a socket. The exporter modes write nothing there.
 */
static int output_watch_fd(const struct config *cfg)
{
	struct stat st;

	if (cfg->prometheus || cfg->textfile || cfg->output || fstat(STDOUT_FILENO, &st))
		return -1;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ? STDOUT_FILENO : -1;
}

/* Tracing begins: the sinks, the events, the timers, the ready line, the
 * command let go, the live view. Returns 0, or -1 after saying why. */
static int begin_tracing(struct session *s)
{
	const struct config *cfg = s->cfg;
	char err[512];

	report_skipped_text(stderr, &s->done);
	if (open_events(s))
		return -1;
	if (open_timers(s, cfg->interval, err, sizeof(err))) {
		say("%s", err);
		return -1;
	}
	report_source_start(&s->source, &s->tracer, cfg, &s->done,
			    cfg->disk ? s->targets.dev : 0);
	if (cfg->command)
		fprintf(stderr, "Tracing %s (pid %d). Hit Ctrl-C to end.\n", cfg->command[0],
			s->cmd.pid);
	else
		fprintf(stderr, "Tracing I/O latency by layer. Hit Ctrl-C to end.\n");
	if (cfg->command && command_release(&s->cmd))
		say("cannot release %s: %s", cfg->command[0], strerror(errno));
	if (cfg->live && open_live(s))
		return -1;
	return 0;
}

/* The run is over: detach, the last events, the final report. Returns 0,
 * or -1 when the report could not be written. */
static int finish_run(struct session *s)
{
	/* The terminal back as it was; the final report in text below. */
	if (s->live)
		close_live(s);
	/*
	 * The run is over: detached first, the maps stop moving, so the final
	 * report's cells, calls and parts are read as one (interval reports
	 * are read while the programs run, and read again until they agree:
	 * snapshot_take). The calls that ended before come before it.
	 */
	if (s->end != END_OUTPUT_CLOSED)
		tracer_detach(&s->tracer);
	if (s->have_events && s->end != END_OUTPUT_CLOSED)
		on_events(s);
	/* Stopped, or the command or the targets ended: what is not reported yet. */
	if (s->end != END_COUNT && s->end != END_OUTPUT_CLOSED && write_report(s, false))
		return -1;
	return 0;
}

/*
 * What the run writes to, opened before anything is loaded: a file, a
 * terminal or a port that cannot serve fails at once, with one line.
 * Returns 0, or -1 after saying why.
 */
static int open_outputs(struct session *s)
{
	const struct config *cfg = s->cfg;
	char err[512];

	/* The trace file before anything is loaded: one that cannot be
	 * written fails at once. */
	if (cfg->trace) {
		s->trace = trace_open(cfg->trace, cfg->trace_max, cfg->slower ? cfg->slower_ns : 0,
				      disk_name_kdev, err, sizeof(err));
		if (!s->trace) {
			say("%s", err);
			return -1;
		}
	}
	/* The recording too; its header once the plan is known. */
	if (cfg->record && rec_create(&s->rec, cfg->record, err, sizeof(err))) {
		say("%s", err);
		return -1;
	}
	if (cfg->ring && rec_ring_start(&s->rec, cfg->ring, RING_BYTES)) {
		say("no memory for --ring's %u MiB", RING_BYTES >> 20);
		return -1;
	}
	/* --live needs a terminal: said before anything is loaded. */
	if (cfg->live && !cfg->plan_only && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		say("--live draws on a terminal: run it in one (stdin and stdout), or use "
		    "interval reports instead (iostackbreak 1)");
		return -1;
	}
	/* The reports' file too: one that cannot be written fails at once.
	 * Close-on-exec: a traced command never writes into it. */
	if (cfg->output) {
		int fd = open(cfg->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		s->out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!s->out) {
			say("cannot open -o %s: %s: give a file that can be written", cfg->output,
			    strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	/* The port before anything is loaded: one in use fails at once. */
	if (cfg->prometheus || cfg->textfile) {
		s->metrics = metrics_open(cfg, err, sizeof(err));
		if (!s->metrics) {
			say("%s", err);
			return -1;
		}
		return 0; /* the exporter takes its reports per scrape */
	}
	return cfg->plan_only ? 0 : open_sinks(s);
}

int session_run(const struct config *cfg, const sigset_t *stop_signals, const sigset_t *child_mask)
{
	static struct session sess;
	struct session *s = &sess;
	char err[512];
	int ret = 1;

	*s = (struct session){
		.cfg = cfg,
		.child_mask = child_mask,
		.tick_fd = -1,
		.end_fd = -1,
		.stats_fd = -1,
		.targets.cgroup_fd = -1,
		.out_fd = output_watch_fd(cfg),
	};
	/* A closed stdout is an EPIPE from write and ends the run (exit 0), as
	 * the poll above sees it first; the command gets SIGPIPE back. */
	signal(SIGPIPE, SIG_IGN);
	verbose = cfg->verbose;
	libbpf_set_print(libbpf_print);
	s->sig_fd = signalfd(-1, stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sig_fd < 0) {
		say("signalfd: %s", strerror(errno));
		return 1;
	}
	if (cfg->command && command_findable(cfg->command[0], err, sizeof(err))) {
		say("%s", err);
		ret = 127; /* as a shell says it */
		goto out;
	}
	if ((!cfg->plan_only || cfg->plan_check) && !has_bpf_caps()) {
		say("needs root, or the capabilities CAP_BPF and CAP_PERFMON (or "
		    "CAP_SYS_ADMIN): run it with sudo");
		goto out;
	}
	if (open_outputs(s))
		goto out;
	if (session_start(s))
		goto out;
	ret = 0;
	if (cfg->plan_only) {
		plan_print(s->plan.unloaded ? &s->plan : &s->done, stdout);
		goto out;
	}
	if (stop_pending())
		goto out; /* stopped before tracing began: nothing to report */
	if (s->metrics)
		return serve_metrics(s);
	if (begin_tracing(s)) {
		ret = 1;
		goto out;
	}
	if (session_loop(s)) {
		ret = 1;
		goto out;
	}
	if (finish_run(s)) {
		ret = 1;
		goto out;
	}
	say_why_ended(s);
	if (s->end == END_COMMAND)
		ret = command_exit_code(&s->cmd);
out:
	session_stop(s);
	return ret;
}
