// SPDX-License-Identifier: GPL-2.0
/*
 * Single calls from the kernel, as raw bytes: call events (with or without
 * their path, names with no NUL, a depth past the array, an end before the
 * start), slices and requests in any order, into the event lines and the
 * --trace writer, under any threshold and bound. Each JSON line must parse
 * as one object; each text line must be one line; the trace must parse,
 * with as many trace events as the writer says it wrote.
 */
#include <json-c/json.h>
#include "fuzz.h"
#include "event_fmt.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void disk(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, "d%u", dev % 7);
}

static void take_bytes(struct fuzz_in *in, void *dst, size_t n)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = take_u8(in);
}

/* A small time, so that slices and calls of a thread meet now and then. */
static uint64_t take_time(struct fuzz_in *in)
{
	return take_u8(in) * 100ULL + (take_u8(in) % 4 ? 0 : take_u64(in));
}

static void check_call_lines(const struct event_ctx *ctx, const struct call_path_event *pe,
			     size_t size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_object *o = event_json(ctx, &pe->call, size), *back;
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	FUZZ_CHECK(f, "open_memstream");
	back = json_tokener_parse(s);
	FUZZ_CHECK(back && json_object_is_type(back, json_type_object), "event JSON: %s", s);
	json_object_put(back);
	json_object_put(o);
	event_text_line(f, ctx, &pe->call, size);
	fclose(f);
	FUZZ_CHECK(len && text[len - 1] == '\n' && memchr(text, '\n', len) == text + len - 1,
		   "text event is not one line: %s", text);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	static struct plan plan;
	struct event_ctx ctx = { .disk_name = disk };
	struct trace_totals tt;
	struct trace_writer *t;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	json_object *root, *evs;

	FUZZ_CHECK(f, "open_memstream");
	ctx.unit = (enum unit)(take_u8(&in) % 3);
	ctx.parts = take_u8(&in) & 1;
	ctx.offcpu = take_u8(&in) & 1;
	for (unsigned int layer = 0; layer < NR_CALL_LAYERS; layer++)
		for (unsigned int op = 0; op < NR_FS_OPS; op++)
			plan.cells[layer][op].src = take_u8(&in) & 1 ? METHOD_TP_BTF : METHOD_NONE;
	ctx.plan = &plan;
	t = trace_open_stream(f, 1 + take_u8(&in) * 4, take_u8(&in) % 4 ? take_u8(&in) * 50 : 0,
			      disk);
	FUZZ_CHECK(t, "trace_open_stream");
	for (unsigned int i = 0; i < 64 && in.n; i++) {
		switch (take_u8(&in) % 3) {
		case 0: {
			struct call_path_event pe;
			size_t sz = take_u8(&in) & 1 ? sizeof(pe) : sizeof(pe.call);

			take_bytes(&in, &pe, sizeof(pe));
			pe.call.kind = EV_CALL;
			pe.call.layer %= NR_CALL_LAYERS;
			pe.call.op %= NR_FS_OPS;
			pe.call.tid %= 4;
			pe.call.call_ns = take_time(&in);
			check_call_lines(&ctx, &pe, sz);
			trace_call(t, &pe.call, pe.call.file[0] ? "f" : NULL);
			break;
		}
		case 1: {
			struct slice_event s;

			take_bytes(&in, &s, sizeof(s));
			s.kind = EV_SLICE;
			s.what %= NR_PARTS;
			s.op %= NR_FS_OPS;
			s.tid %= 4;
			s.call_ns = take_time(&in);
			trace_slice(t, &s);
			break;
		}
		default: {
			struct request_event r;

			take_bytes(&in, &r, sizeof(r));
			r.kind = EV_REQUEST;
			r.op %= NR_BLK_OPS;
			r.tid %= 4;
			r.call_ns = take_time(&in);
			trace_request(t, &r);
			break;
		}
		}
	}
	FUZZ_CHECK(trace_close(t, take_u8(&in), &tt) == 0, "trace_close failed");
	fclose(f);
	root = json_tokener_parse(out);
	FUZZ_CHECK(root && json_object_object_get_ex(root, "traceEvents", &evs), "trace: %s", out);
	FUZZ_CHECK(json_object_array_length(evs) == tt.written, "%zu events, %lu written",
		   json_object_array_length(evs), tt.written);
	json_object_put(root);
	free(out);
	return 0;
}
