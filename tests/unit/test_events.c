// SPDX-License-Identifier: GPL-2.0
/*
 * Single calls: --slower's durations, the text and JSON lines of a call
 * event, the path a --full-path event carries, and the --trace writer fed
 * hand-made sequences of kernel events (slices and requests before their
 * call, calls kept or left out by the threshold, the size bound).
 */
#include <unistd.h>
#include <json-c/json.h>
#include "unit.h"
#include "event_fmt.h"
#include "trace.h"

static void fake_disk(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, "disk%u", dev);
}

static uint64_t parse_slower(const char *arg, int *rc)
{
	char *argv[] = { (char *)"iostackbreak", (char *)arg, NULL };
	struct config cfg;

	*rc = parse_options(2, argv, &cfg);
	return cfg.slower_ns;
}

Test(events, slower_durations)
{
	static const struct {
		const char *arg;
		uint64_t ns;
	} ok[] = {
		{ "--slower=0", 0 },	       { "--slower=10ms", 10000000 },
		{ "--slower=250us", 250000 },  { "--slower=1s", 1000000000 },
		{ "--slower=1.5ms", 1500000 }, { "--slower=800ns", 800 },
	};
	static const char *const bad[] = { "--slower=10",  "--slower=-1ms", "--slower=1h",
					   "--slower=ms",  "--slower=",	    "--slower=1e30s",
					   "--slower= 1s", "--slower=nan" };
	int rc;

	for (unsigned int i = 0; i < ARRAY_SIZE(ok); i++) {
		uint64_t ns = parse_slower(ok[i].arg, &rc);

		cr_assert_eq(rc, 0, "%s refused", ok[i].arg);
		cr_assert_eq(ns, ok[i].ns, "%s: %" PRIu64 " ns", ok[i].arg, ns);
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		parse_slower(bad[i], &rc);
		cr_assert_eq(rc, 2, "%s accepted", bad[i]);
	}
}

/* A read of 4096 bytes at 8192 that took 30 ms, 29 of them in io_wait. */
static void sample_call(struct call_path_event *pe)
{
	struct call_event *e = &pe->call;

	memset(pe, 0, sizeof(*pe));
	e->kind = EV_CALL;
	e->layer = LAYER_SYSCALL;
	e->op = FSOP_READ;
	e->pid = 4242;
	e->tid = 4243;
	e->call_ns = 1000000000;
	e->end_ns = e->call_ns + 30000000;
	e->ret = 4096;
	e->pos = 8192;
	e->bytes = 4096;
	e->part_ns[LAYER_SYSCALL] = 700000;
	e->part_ns[PART_IO_WAIT] = 29000000;
	e->part_ns[PART_RUNQUEUE] = 300000;
	e->blk_requests = 1;
	e->blk_bytes = 4096;
	e->blk_max_ns = 28000000;
	e->blk_max_dev = 7;
	e->ino = 99;
	memcpy(e->comm, "postgres", 9);
	memcpy(e->file, "base.dat", 9);
	/* the way up from the file: /var is a mount, crossed at step 3 */
	strcpy(pe->path[0], "base.dat");
	strcpy(pe->path[1], "db");
	strcpy(pe->path[2], "lib");
	pe->path[3][0] = '\0';
	strcpy(pe->path[4], "var");
	e->path_depth = 5;
}

/* The syscall layer traces reads; nothing else is traced. */
static const struct plan syscall_reads = { .cells[LAYER_SYSCALL][FSOP_READ].src = METHOD_TP_BTF };

static const struct event_ctx ctx = {
	.unit = UNIT_US,
	.plan = &syscall_reads,
	.parts = true,
	.offcpu = true,
	.mono_to_real_ns = 0,
	.disk_name = fake_disk,
};

Test(events, file_labels)
{
	struct call_path_event pe;
	char buf[PATH_DEPTH * FILE_NAME_LEN + 8];

	sample_call(&pe);
	cr_assert_null(event_file_label(&pe.call, sizeof(pe.call), buf, sizeof(buf)));
	cr_assert_str_eq(buf, "base.dat");
	cr_assert_null(event_file_label(&pe.call, sizeof(pe), buf, sizeof(buf)));
	cr_assert_str_eq(buf, "/var/lib/db/base.dat");
	pe.call.flags |= EVF_PATH_CUT;
	cr_assert_not_null(event_file_label(&pe.call, sizeof(pe), buf, sizeof(buf)));
	cr_assert_str_eq(buf, ".../var/lib/db/base.dat");
	pe.call.flags = EVF_PATH_NONE;
	cr_assert_not_null(event_file_label(&pe.call, sizeof(pe), buf, sizeof(buf)));
	cr_assert_str_eq(buf, "base.dat");
	/* a name the kernel filled to the brim has no NUL: it is cut, not run over */
	pe.call.flags = 0;
	memset(pe.call.file, 'x', sizeof(pe.call.file));
	event_file_label(&pe.call, sizeof(pe.call), buf, sizeof(buf));
	cr_assert_eq(strlen(buf), FILE_NAME_LEN - 1);
	pe.call.flags = EVF_NO_FILE;
	event_file_label(&pe.call, sizeof(pe), buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
}

Test(events, json_line_has_the_documented_keys)
{
	struct call_path_event pe;
	json_object *o, *v, *parts, *blk;

	sample_call(&pe);
	o = event_json(&ctx, &pe.call, sizeof(pe.call));
	cr_assert(json_object_object_get_ex(o, "event", &v));
	cr_assert_str_eq(json_object_get_string(v), "io");
	cr_assert(json_object_object_get_ex(o, "latency_ns", &v));
	cr_assert_eq(json_object_get_uint64(v), 30000000);
	cr_assert(json_object_object_get_ex(o, "file", &v));
	cr_assert_str_eq(json_object_get_string(v), "base.dat");
	cr_assert(json_object_object_get_ex(o, "offset", &v));
	cr_assert_eq(json_object_get_uint64(v), 8192);
	cr_assert(json_object_object_get_ex(o, "comm", &v));
	cr_assert_str_eq(json_object_get_string(v), "postgres");
	cr_assert(json_object_object_get_ex(o, "parts", &parts));
	/* the traced layer and the three waits; no untraced layer */
	cr_assert_eq(json_object_object_length(parts), 4);
	cr_assert(json_object_object_get_ex(parts, "io_wait", &v));
	cr_assert_eq(json_object_get_uint64(v), 29000000);
	cr_assert_not(json_object_object_get_ex(parts, "vfs", &v));
	cr_assert(json_object_object_get_ex(o, "blk", &blk));
	cr_assert(json_object_object_get_ex(blk, "disk", &v));
	cr_assert_str_eq(json_object_get_string(v), "disk7");
	cr_assert(json_object_object_get_ex(blk, "max_ns", &v));
	cr_assert_eq(json_object_get_uint64(v), 28000000);
	cr_assert(json_object_object_get_ex(blk, "flushes", &v));
	cr_assert_eq(json_object_get_uint64(v), 0);
	json_object_put(o);

	/* open and fsync have no position or size; a call with no request
	 * has no slowest one */
	pe.call.pos = NO_POS;
	pe.call.bytes = NO_POS;
	pe.call.blk_requests = 0;
	pe.call.blk_max_ns = 0;
	o = event_json(&ctx, &pe.call, sizeof(pe.call));
	cr_assert(json_object_object_get_ex(o, "offset", &v));
	cr_assert_null(v);
	cr_assert(json_object_object_get_ex(o, "bytes", &v));
	cr_assert_null(v);
	cr_assert(json_object_object_get_ex(o, "blk", &blk));
	cr_assert(json_object_object_get_ex(blk, "max_ns", &v));
	cr_assert_null(v);
	json_object_put(o);
}

Test(events, text_line)
{
	struct call_path_event pe;
	struct membuf m;
	const char *text;

	sample_call(&pe);
	event_text_header(membuf_open(&m), &ctx);
	event_text_line(m.f, &ctx, &pe.call, sizeof(pe));
	text = membuf_close(&m);
	cr_assert_not_null(strstr(text, "LAT(us)"), "%s", text);
	cr_assert_not_null(strstr(text, " 30000.000 "), "%s", text);
	cr_assert_not_null(strstr(text, "/var/lib/db/base.dat"), "%s", text);
	cr_assert_not_null(strstr(text, "[syscall 2%|io_wait 97%|blocked 0%|runqueue 1%]"), "%s",
			   text);
	cr_assert_not_null(strstr(text, "blk 1 req 4096 B slowest 28000.000 us on disk7"), "%s",
			   text);
	membuf_free(&m);

	/* An fsync's own flush: its empty PREFLUSH write and the flush. */
	pe.call.blk_requests = 2;
	pe.call.blk_flushes = 1;
	pe.call.blk_bytes = 0;
	event_text_line(membuf_open(&m), &ctx, &pe.call, sizeof(pe));
	text = membuf_close(&m);
	cr_assert_not_null(strstr(text, "blk 2 req (1 flush) 0 B slowest"), "%s", text);
	membuf_free(&m);
}

/* A read through dm-3 onto disk2: 5.4 ms of bio at dm-3, 0.3 of it disk2's. */
static void stacked_read(struct call_event *e)
{
	e->bio = (struct call_bio){ .call_ns = e->call_ns, .top_ns = 5400000, .top_bios = 1 };
	/* The lower bio ends first: its level comes first in the kernel's. */
	e->bio.lv[0] = (struct call_bio_level){ .dev = 2, .bios = 1, .ns = 300000 };
	e->bio.lv[1] =
	    (struct call_bio_level){ .dev = 3, .bios = 1, .ns = 5400000, .below_ns = 300000 };
}

static const struct plan syscall_and_bio = {
	.cells[LAYER_SYSCALL][FSOP_READ].src = METHOD_TP_BTF,
	.cells[LAYER_BIO][BLKOP_READ].src = METHOD_TP_BTF,
};

Test(events, bios_by_device_level)
{
	struct event_ctx with_bio = ctx;
	struct call_path_event pe;
	json_object *o, *bio, *devs, *d, *v;
	struct membuf m;
	const char *text;
	uint64_t own = 0;

	sample_call(&pe);
	stacked_read(&pe.call);
	with_bio.plan = &syscall_and_bio;
	o = event_json(&with_bio, &pe.call, sizeof(pe.call));
	cr_assert(json_object_object_get_ex(o, "bio", &bio));
	cr_assert(json_object_object_get_ex(bio, "ns", &v));
	cr_assert_eq(json_object_get_uint64(v), 5400000);
	cr_assert(json_object_object_get_ex(bio, "devices", &devs));
	cr_assert_eq(json_object_array_length(devs), 2);
	/* the top of the stack first; own times add up to the call's bio time */
	d = json_object_array_get_idx(devs, 0);
	cr_assert(json_object_object_get_ex(d, "device", &v));
	cr_assert_str_eq(json_object_get_string(v), "disk3");
	for (size_t i = 0; i < 2; i++) {
		json_object_object_get_ex(json_object_array_get_idx(devs, i), "own_ns", &v);
		own += json_object_get_uint64(v);
	}
	cr_assert_eq(own, 5400000);
	json_object_object_get_ex(d, "own_ns", &v);
	cr_assert_eq(json_object_get_uint64(v), 5100000);
	json_object_put(o);

	event_text_line(membuf_open(&m), &with_bio, &pe.call, sizeof(pe));
	text = membuf_close(&m);
	cr_assert_not_null(strstr(text, " bio 5400.000 us = disk3 5100.000 + disk2 300.000"), "%s",
			   text);
	membuf_free(&m);

	/* Without the bio layer: "bio" null, nothing in text. */
	o = event_json(&ctx, &pe.call, sizeof(pe.call));
	cr_assert(json_object_object_get_ex(o, "bio", &bio));
	cr_assert_null(bio);
	json_object_put(o);
	event_text_line(membuf_open(&m), &ctx, &pe.call, sizeof(pe));
	text = membuf_close(&m);
	cr_assert_null(strstr(text, " bio "), "%s", text);
	membuf_free(&m);
}

/* ---- the trace writer ---- */

static struct slice_event slice_ev(uint32_t tid, uint64_t call_ns, uint32_t what, uint64_t s,
				   uint64_t e)
{
	return (struct slice_event){ .kind = EV_SLICE,
				     .what = (uint8_t)what,
				     .op = FSOP_READ,
				     .tid = tid,
				     .call_ns = call_ns,
				     .start_ns = s,
				     .end_ns = e };
}

static struct request_event rq_ev(uint32_t tid, uint64_t call_ns, uint64_t s, uint64_t e)
{
	return (struct request_event){ .kind = EV_REQUEST,
				       .op = BLKOP_READ,
				       .tid = tid,
				       .pid = 10,
				       .dev = 3,
				       .call_ns = call_ns,
				       .start_ns = s,
				       .end_ns = e,
				       .bytes = 4096 };
}

static struct call_event call_ev(uint32_t tid, uint64_t s, uint64_t e)
{
	struct call_event c = { .kind = EV_CALL,
				.layer = LAYER_SYSCALL,
				.op = FSOP_READ,
				.pid = 10,
				.tid = tid,
				.call_ns = s,
				.end_ns = e,
				.pos = NO_POS,
				.bytes = NO_POS };

	memcpy(c.comm, "w", 2);
	return c;
}

/* The X events of a finished trace with this cat, and the flow count. */
static json_object *finish(struct membuf *m, struct trace_writer *t, uint64_t lost,
			   struct trace_totals *tt)
{
	json_object *root;

	cr_assert_eq(trace_close(t, lost, tt), 0);
	root = json_tokener_parse(membuf_close(m));
	cr_assert_not_null(root, "the trace is not JSON: %s", m->buf);
	return root;
}

static unsigned int count_ph(json_object *root, const char *ph, const char *cat)
{
	json_object *evs, *v;
	unsigned int n = 0;

	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs));
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		json_object_object_get_ex(e, "ph", &v);
		if (strcmp(json_object_get_string(v), ph))
			continue;
		if (cat && (!json_object_object_get_ex(e, "cat", &v) ||
			    strcmp(json_object_get_string(v), cat)))
			continue;
		n++;
	}
	return n;
}

Test(events, trace_keeps_slow_calls_with_what_they_hold)
{
	struct trace_writer *t;
	struct trace_totals tt;
	struct membuf m;
	json_object *root;

	/* slower_ns 1000: the first call (2000 ns) stays, the second (500) goes */
	t = trace_open_stream(membuf_open(&m), 1000, 1000, fake_disk);
	struct slice_event s1 = slice_ev(7, 100, LAYER_VFS, 200, 1900);
	struct slice_event w1 = slice_ev(7, 100, PART_IO_WAIT, 300, 1500);
	struct request_event r1 = rq_ev(7, 100, 400, 1400);
	struct call_event c1 = call_ev(7, 100, 2100);
	struct slice_event s2 = slice_ev(7, 3000, LAYER_VFS, 3100, 3400);
	struct request_event r2 = rq_ev(7, 3000, 3150, 3350);
	struct call_event c2 = call_ev(7, 3000, 3500);

	trace_slice(t, &s1);
	trace_slice(t, &w1);
	trace_request(t, &r1);
	trace_call(t, &c1, "a.dat");
	trace_slice(t, &s2);
	trace_request(t, &r2);
	trace_call(t, &c2, "a.dat");
	root = finish(&m, t, 5, &tt);
	cr_assert_eq(count_ph(root, "X", "syscall"), 1);
	cr_assert_eq(count_ph(root, "X", "vfs"), 1);
	cr_assert_eq(count_ph(root, "X", "offcpu"), 1);
	cr_assert_eq(count_ph(root, "X", "blk"), 1);
	cr_assert_eq(count_ph(root, "s", NULL), 1);
	cr_assert_eq(count_ph(root, "f", NULL), 1);
	cr_assert_eq(tt.calls, 1);
	cr_assert_eq(tt.orphaned, 0);
	json_object_put(root);
	membuf_free(&m);
}

Test(events, trace_follows_late_requests_and_counts_orphans)
{
	struct trace_writer *t;
	struct trace_totals tt;
	struct membuf m;
	json_object *root;

	t = trace_open_stream(membuf_open(&m), 1000, 0, fake_disk);
	struct call_event c1 = call_ev(7, 100, 2100);
	struct request_event late = rq_ev(7, 100, 2000, 2500); /* ends after its call */
	struct slice_event lost_call = slice_ev(7, 3000, LAYER_VFS, 3100, 3200);
	struct call_event c3 = call_ev(7, 5000, 6000); /* 3000's end was lost */
	struct slice_event never = slice_ev(8, 7000, LAYER_VFS, 7100, 7200);

	trace_call(t, &c1, NULL);
	trace_request(t, &late);
	trace_slice(t, &lost_call);
	trace_call(t, &c3, NULL);
	trace_slice(t, &never);
	root = finish(&m, t, 0, &tt);
	cr_assert_eq(count_ph(root, "X", "blk"), 1, "a late request follows its kept call");
	cr_assert_eq(count_ph(root, "X", "vfs"), 0);
	cr_assert_eq(tt.orphaned, 2, "one slice of a lost call, one of a call never seen");
	json_object_put(root);
	membuf_free(&m);
}

Test(events, trace_bound_and_lanes)
{
	struct trace_writer *t;
	struct trace_totals tt;
	struct membuf m;
	json_object *root, *other, *v;

	/* Three requests in flight at once on one disk need three lanes. */
	t = trace_open_stream(membuf_open(&m), 1000, 0, fake_disk);
	for (uint32_t tid = 1; tid <= 3; tid++) {
		struct request_event r = rq_ev(tid, 100 * tid, 100 * tid + 10, 1000);
		struct call_event c = call_ev(tid, 100 * tid, 1100);

		trace_request(t, &r);
		trace_call(t, &c, NULL);
	}
	root = finish(&m, t, 0, &tt);
	/* names: 1 process + 3 threads, the disk's process + 3 lanes */
	cr_assert_eq(count_ph(root, "M", NULL), 8);
	json_object_put(root);
	membuf_free(&m);

	/* At most 5 events: the rest are counted, and said in otherData. */
	t = trace_open_stream(membuf_open(&m), 5, 0, fake_disk);
	for (uint32_t i = 0; i < 10; i++) {
		struct call_event c = call_ev(1, 1000 * (i + 1), 1000 * (i + 1) + 10);

		trace_call(t, &c, NULL);
	}
	root = finish(&m, t, 3, &tt);
	cr_assert_eq(tt.written, 5);
	cr_assert_eq(tt.over_max, 10 + 2 - 5);
	cr_assert(json_object_object_get_ex(root, "otherData", &other));
	cr_assert(json_object_object_get_ex(other, "lost_trace_max", &v));
	cr_assert_eq(json_object_get_uint64(v), 7);
	cr_assert(json_object_object_get_ex(other, "lost_ring_buffer", &v));
	cr_assert_eq(json_object_get_uint64(v), 3);
	json_object_put(root);
	membuf_free(&m);
}

Test(events, text_line_stays_one_line)
{
	struct call_path_event pe;
	struct membuf m;
	const char *text;

	/* A process may name itself anything (prctl), a file may hold any byte
	 * but '/': a newline or an escape sequence must not break the line. */
	sample_call(&pe);
	memcpy(pe.call.comm, "evil\nname\x1b[2J", 14);
	strcpy(pe.path[0], "a\nb.dat");
	event_text_line(membuf_open(&m), &ctx, &pe.call, sizeof(pe));
	text = membuf_close(&m);
	cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1, "%s", text);
	cr_assert_null(strchr(text, '\x1b'), "%s", text);
	cr_assert_not_null(strstr(text, "evil\\nname\\x1b[2J"), "%s", text);
	cr_assert_not_null(strstr(text, "/a\\nb.dat"), "%s", text);
	membuf_free(&m);
}

/* The X slice of the trace with this cat and name, or NULL. */
static json_object *slice_named(json_object *root, const char *cat, const char *name)
{
	json_object *evs, *v;

	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs));
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (json_object_object_get_ex(e, "cat", &v) &&
		    !strcmp(json_object_get_string(v), cat) &&
		    json_object_object_get_ex(e, "name", &v) &&
		    !strcmp(json_object_get_string(v), name))
			return e;
	}
	return NULL;
}

static struct slice_event contention_ev(uint32_t tid, uint64_t call_ns, uint32_t kind,
					uint64_t addr, bool inode, uint64_t s, uint64_t e)
{
	struct slice_event ev = slice_ev(tid, call_ns, PART_LOCK, s, e);

	ev.op = (uint8_t)kind;
	ev.flags = SLF_CONTENTION | (inode ? SLF_LOCK_INODE : 0);
	ev.lock_addr = addr;
	return ev;
}

Test(events, trace_names_each_contention_by_its_lock)
{
	char path[] = "/tmp/iosb-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct trace_writer *t;
	struct trace_totals tt;
	struct membuf m;
	json_object *root, *s, *args, *v;

	cr_assert_not_null(f);
	fprintf(f, "ffffffff82a00040 D inode_hash_lock\n");
	fclose(f);
	t = trace_open_stream(membuf_open(&m), 1000, 0, fake_disk);
	trace_set_kallsyms(t, path);
	/* A write that waited on its file's inode rwsem (asleep inside it),
	 * then on a global spinlock; the call names its longest. */
	struct slice_event c1 =
	    contention_ev(7, 100, LOCK_RWSEM_WRITE, 0xffff888001000a8ULL, true, 200, 1200);
	struct slice_event w1 = slice_ev(7, 100, PART_LOCK, 300, 1100);
	struct slice_event c2 =
	    contention_ev(7, 100, LOCK_OTHER, 0xffffffff82a00040ULL, false, 1300, 1400);
	struct call_event call = call_ev(7, 100, 2000);

	memcpy(call.file, "f", 2);
	call.lock_addr = 0xffff888001000a8ULL;
	call.lock_max_ns = 1000;
	call.flags |= EVF_LOCK_INODE;
	trace_slice(t, &c1);
	trace_slice(t, &w1);
	trace_slice(t, &c2);
	trace_call(t, &call, "f");
	root = finish(&m, t, 0, &tt);
	unlink(path);
	cr_assert_eq(count_ph(root, "X", "lock"), 2);
	s = slice_named(root, "lock", "inode rwsem of f");
	cr_assert_not_null(s, "%s", m.buf);
	cr_assert(json_object_object_get_ex(s, "args", &args));
	cr_assert(json_object_object_get_ex(args, "kind", &v));
	cr_assert_str_eq(json_object_get_string(v), "rwsem_write");
	cr_assert(json_object_object_get_ex(s, "dur", &v));
	cr_assert_float_eq(json_object_get_double(v), 1.0, 1e-9);
	cr_assert_not_null(slice_named(root, "lock", "inode_hash_lock"), "%s", m.buf);
	/* The wait asleep inside the contention stays an off-CPU slice. */
	cr_assert_not_null(slice_named(root, "offcpu", "lock"), "%s", m.buf);
	/* The call's own slice names its longest contention, as its event. */
	s = slice_named(root, "syscall", "read");
	cr_assert(json_object_object_get_ex(s, "args", &args));
	cr_assert(json_object_object_get_ex(args, "lock", &v));
	cr_assert_str_eq(json_object_get_string(json_object_object_get(v, "name")),
			 "inode rwsem of f");
	cr_assert_eq(json_object_get_int64(json_object_object_get(v, "max_ns")), 1000);
	json_object_put(root);
	membuf_free(&m);
}

/* A call's slice in a trace carries its bios by device level. */
Test(events, trace_call_has_its_bios_by_device)
{
	struct call_event c = call_ev(7, 100, 5600000);
	struct trace_writer *t;
	struct trace_totals tt;
	json_object *root, *evs, *args = NULL, *bio, *devs, *v;
	struct membuf m;

	stacked_read(&c);
	t = trace_open_stream(membuf_open(&m), 1000, 0, fake_disk);
	trace_call(t, &c, "dm-3");
	root = finish(&m, t, 0, &tt);
	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs));
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (json_object_object_get_ex(e, "ph", &v) &&
		    !strcmp(json_object_get_string(v), "X"))
			json_object_object_get_ex(e, "args", &args);
	}
	cr_assert_not_null(args);
	cr_assert(json_object_object_get_ex(args, "bio", &bio));
	cr_assert(json_object_object_get_ex(bio, "devices", &devs));
	cr_assert_eq(json_object_array_length(devs), 2);
	json_object_object_get_ex(json_object_array_get_idx(devs, 1), "device", &v);
	cr_assert_str_eq(json_object_get_string(v), "disk2");
	json_object_object_get_ex(json_object_array_get_idx(devs, 1), "own_ns", &v);
	cr_assert_eq(json_object_get_uint64(v), 300000);
	json_object_put(root);
	membuf_free(&m);
}
