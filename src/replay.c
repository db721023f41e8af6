// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak report FILE: a recording read back through the live run's
 * stages. Its events go to the same feed as a ring buffer's (--slower's
 * lines, --trace) and are counted into a snapshot as the kernel counted
 * them (rec_count.c); the report is built from that snapshot by
 * report_build() and printed by the same sinks, so that it is the live
 * run's report, field for field.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "disk.h"
#include "events.h"
#include "rec_count.h"
#include "recording.h"
#include "replay.h"
#include "report.h"
#include "sink.h"

/* One line on stderr, of the file when it is the file's fault. */
static void say(const char *file, const char *msg)
{
	fprintf(stderr, "iostackbreak: %s%s%s\n", file ? file : "", file ? ": " : "", msg);
}

/* The options the recorded run counted with are the recording's. */
static void take_recorded(struct config *cfg, const struct rec_header *h)
{
	cfg->all_fds = h->all_fds;
	cfg->offcpu = h->offcpu;
	cfg->queued = h->queued;
	cfg->split_calls = h->plan.split_layer >= 0;
	cfg->disk = h->disk[0] ? h->disk : NULL;
}

/* The events: each to the feed and the counts. 0, or -1 after saying why. */
static int read_events(struct rec_reader *rd, struct event_feed *feed, struct rec_count *rc,
		       const char *path)
{
	char err[256];
	const void *data;
	size_t size;
	int n;

	while ((n = rec_next(rd, &data, &size, err, sizeof(err))) > 0) {
		rec_count_event(rc, data, size);
		event_feed_take(feed, data, size);
		if (feed->write_errno)
			break;
	}
	if (n < 0) {
		say(path, err);
		return -1;
	}
	if (rc->err) {
		say(path, "out of memory");
		return -1;
	}
	return 0;
}

int replay_run(struct config *cfg)
{
	const char *path = cfg->replay;
	FILE *f = fopen(path, "re"), *out = stdout;
	struct trace_writer *trace = NULL;
	struct rec_reader *rd = NULL;
	struct event_feed feed = {};
	struct rec_count rc;
	struct sinks sinks = {};
	const struct sink *failed;
	struct sink *sink;
	struct report r;
	char err[512];
	int ret = 1;

	rec_count_init(&rc, cfg);
	if (!f) {
		snprintf(err, sizeof(err), "cannot open the recording: %s", strerror(errno));
		say(path, err);
		return 1;
	}
	rd = calloc(1, sizeof(*rd));
	if (!rd || rec_open(rd, f, err, sizeof(err))) {
		say(path, rd ? err : "out of memory");
		goto out;
	}
	take_recorded(cfg, &rd->h);
	if (cfg->output) {
		out = fopen(cfg->output, "we");
		if (!out) {
			snprintf(err, sizeof(err), "cannot open -o %s: %s", cfg->output,
				 strerror(errno));
			say(NULL, err);
			out = stdout;
			goto out;
		}
	}
	if (cfg->trace) {
		trace = trace_open(cfg->trace, cfg->trace_max, cfg->slower ? cfg->slower_ns : 0,
				   disk_name_kdev, err, sizeof(err));
		if (!trace) {
			say(NULL, err);
			goto out;
		}
	}
	event_feed_init(&feed, cfg,
			&(struct event_ctx){
			    .unit = cfg->unit,
			    .plan = &rd->h.plan,
			    .parts = rd->h.plan.split_layer >= 0,
			    .offcpu = rd->h.plan.split_layer >= 0 && cfg->offcpu,
			    .mono_to_real_ns = rd->h.mono_to_real_ns,
			    .disk_name = disk_name_kdev,
			},
			stdout, trace);
	trace = NULL; /* the feed's now */
	if (read_events(rd, &feed, &rc, path))
		goto out;
	if (rd->truncated)
		fprintf(stderr,
			"iostackbreak: %s is cut short (no trailer) after %llu whole records: "
			"the report counts those; what the run lost is not known\n",
			path, (unsigned long long)rd->records);
	if (rd->have_trailer && !rd->tr.have_report)
		fprintf(stderr,
			"iostackbreak: %s holds no report's totals (a --ring window, or a run "
			"that ended before its report): what the run lost is not known\n",
			path);
	if (event_feed_drain(&feed)) {
		say(NULL, strerror(errno));
		goto out;
	}
	rec_count_finish(&rc, &rd->tr);
	sink = sinks_add(&sinks);
	if (cfg->json ? sink_json_open(sink, out) : sink_text_open(sink, out, cfg->unit)) {
		say(NULL, "out of memory");
		goto out;
	}
	if (report_build(&r, cfg, &rd->h.plan, &rc.snap, NULL, rd->tr.interval_s,
			 disk_name_kdev)) {
		say(NULL, "out of memory");
		goto out;
	}
	/* The live report's moment, not now: the same report. */
	r.wall.tv_sec = rd->tr.wall_sec;
	r.wall.tv_nsec = rd->tr.wall_nsec;
	ret = 0;
	if (sinks_write(&sinks, &r, &failed)) {
		snprintf(err, sizeof(err), "cannot write the report: %s", strerror(errno));
		say(NULL, err);
		ret = 1;
	}
	report_release(&r);
out:
	/* What the events gave, said once the report is out; after a failure
	 * only the failure is said. */
	if (feed.cfg && !ret)
		event_feed_close(&feed, rd->have_trailer ? rd->tr.kernel_lost : 0);
	else if (feed.trace)
		trace_close(feed.trace, 0, NULL);
	if (trace)
		trace_close(trace, 0, NULL);
	if (sinks_close(&sinks, err, sizeof(err)) && !ret) {
		fprintf(stderr, "iostackbreak: cannot write %s: %s\n", err, strerror(errno));
		ret = 1;
	}
	if (out != stdout && fclose(out) && !ret) {
		fprintf(stderr, "iostackbreak: cannot write -o %s: %s\n", cfg->output,
			strerror(errno));
		ret = 1;
	}
	rec_count_free(&rc);
	if (rd)
		rec_reader_free(rd);
	free(rd);
	fclose(f);
	return ret;
}

/* One side of a diff: a recording (its magic) or a JSON report. */
static int load_side(struct cmp_side *side, const char *path)
{
	char err[512], magic[REC_MAGIC_LEN], *text = NULL;
	FILE *f = fopen(path, "re");
	size_t len = 0;
	int ret = -1;

	if (!f) {
		snprintf(err, sizeof(err), "cannot open it: %s", strerror(errno));
		say(path, err);
		return -1;
	}
	if (fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
	    !memcmp(magic, REC_MAGIC, REC_MAGIC_LEN)) {
		rewind(f);
		ret = cmp_load_recording(side, f, err, sizeof(err));
	} else {
		FILE *m = open_memstream(&text, &len);
		char buf[65536];
		size_t n;

		rewind(f);
		while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		if (m && !fclose(m) && !ferror(f))
			ret = cmp_load_json(side, text, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "cannot read it: %s", strerror(errno));
		free(text);
	}
	if (ret)
		say(path, err);
	fclose(f);
	return ret;
}

int diff_run(int argc, char **argv)
{
	static struct cmp_side a, b;

	if (argc != 4 || argv[2][0] == '-' || argv[3][0] == '-') {
		say(NULL, "diff compares two runs: iostackbreak diff A B, each a recording "
			  "(--record) or a JSON report (--json)");
		return 2;
	}
	if (load_side(&a, argv[2]) || load_side(&b, argv[3]))
		return 1;
	printf("A: %s\nB: %s\n\n", argv[2], argv[3]);
	cmp_print(stdout, &a, &b);
	return fflush(stdout) ? 1 : 0;
}
