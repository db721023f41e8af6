// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "recording.h"

static void on_call(struct event_feed *f, const struct call_event *e, size_t size)
{
	uint64_t lat = e->end_ns - e->call_ns;

	f->calls++;
	if (f->trace) {
		char file[PATH_DEPTH * FILE_NAME_LEN + 8];

		event_file_label(e, size, file, sizeof(file));
		trace_call(f->trace, e, file);
	}
	/* With --trace the kernel sends every call: the threshold is ours. */
	if (!f->cfg->slower || lat < f->cfg->slower_ns || f->write_errno)
		return;
	if (f->cfg->json) {
		json_object *o = event_json(&f->ctx, e, size);

		fprintf(f->out, "%s\n",
			json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		event_text_line(f->out, &f->ctx, e, size);
	}
	if (ferror(f->out))
		f->write_errno = errno ? errno : EIO;
	f->printed++;
}

static int on_event(void *arg, void *data, size_t size)
{
	struct event_feed *f = arg;

	/* The recording first: what it holds does not depend on the views. */
	if (f->rec)
		rec_write_event(f->rec, data, size);
	event_feed_take(f, data, size);
	return 0;
}

void event_feed_take(struct event_feed *f, const void *data, size_t size)
{
	const struct call_event *kind = data;

	switch (size ? kind->kind : 0) {
	case EV_CALL:
		if (size >= sizeof(struct call_event))
			on_call(f, data, size);
		break;
	case EV_SLICE:
		if (f->trace && size >= sizeof(struct slice_event))
			trace_slice(f->trace, data);
		break;
	case EV_REQUEST:
		/* --record sends requests of no call too: not the trace's. */
		if (f->trace && size >= sizeof(struct request_event) &&
		    ((const struct request_event *)data)->call_ns)
			trace_request(f->trace, data);
		break;
	}
}

void event_feed_init(struct event_feed *f, const struct config *cfg, const struct event_ctx *ctx,
		     FILE *out, struct trace_writer *trace)
{
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	f->ctx = *ctx;
	f->out = out;
	f->trace = trace;
	if (cfg->slower && !cfg->json)
		event_text_header(out, ctx);
}

int event_feed_open(struct event_feed *f, int map_fd, const struct config *cfg,
		    const struct event_ctx *ctx, FILE *out, struct trace_writer *trace,
		    struct rec_writer *rec, char *err, size_t errsz)
{
	event_feed_init(f, cfg, ctx, out, trace);
	f->rec = rec;
	f->rb = ring_buffer__new(map_fd, on_event, f, NULL);
	if (!f->rb) {
		snprintf(err, errsz, "cannot read the events' ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int event_feed_fd(const struct event_feed *f)
{
	return f->rb ? ring_buffer__epoll_fd(f->rb) : -1;
}

int event_feed_drain(struct event_feed *f)
{
	if (f->rb)
		ring_buffer__consume(f->rb);
	if (f->cfg->slower && !f->write_errno && fflush(f->out))
		f->write_errno = errno ? errno : EIO;
	errno = f->write_errno;
	return f->write_errno ? -1 : 0;
}

int event_feed_close(struct event_feed *f, uint64_t kernel_lost)
{
	struct trace_totals tt;
	int ret = 0;

	if (!f->cfg)
		return 0;
	ring_buffer__free(f->rb);
	f->rb = NULL;
	if (f->trace) {
		if (trace_close(f->trace, kernel_lost, &tt)) {
			fprintf(stderr, "iostackbreak: cannot write the trace to '%s': %s\n",
				f->cfg->trace, strerror(errno));
			ret = -1;
		} else {
			fprintf(stderr,
				"iostackbreak: trace %s: %lu calls, %lu trace events; lost: %lu "
				"beyond --trace-max %lu, %lu whose call was lost\n",
				f->cfg->trace, tt.calls, tt.written, tt.over_max, f->cfg->trace_max,
				tt.orphaned);
		}
		f->trace = NULL;
	}
	if (kernel_lost)
		fprintf(stderr,
			"iostackbreak: %llu calls received, %llu events LOST: the ring buffer was "
			"full (the reader fell behind: a slower --slower threshold, or a faster "
			"reader of the output, loses fewer)\n",
			f->calls, (unsigned long long)kernel_lost);
	else
		fprintf(stderr, "iostackbreak: %llu calls received, 0 events lost\n", f->calls);
	f->cfg = NULL;
	return ret;
}
