// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "event_fmt.h"
#include "layers.h"
#include "opts.h"
#include "trace.h"
#include "uring_parts.h"
#include "aio_parts.h"
#include "version.h"

/* Disks draw as processes of their own, beyond any real pid (pid_max is
 * at most 2^22), one thread (a lane) per request in flight at once. */
#define DISK_PID_BASE 1000000000
#define MAX_DISKS 64
#define MAX_LANES 64
#define LANE_MEMORY 8	      /* requests a lane remembers to avoid overlaps */
#define MAX_PENDING (1 << 20) /* slices and requests waiting for their call */
#define DECIDED_SLOTS 4096    /* the last call of each thread, by tid */

struct pending {
	bool is_request;
	union {
		struct slice_event slice;
		struct request_event rq;
	};
};

/* The last call of a thread whose fate is known: late requests follow it. */
struct decided {
	uint32_t tid, pid;
	uint64_t call_ns, end_ns;
	bool kept;
	char file[FILE_NAME_LEN]; /* its file's dentry name: names its inode lock */
};

struct lane {
	uint64_t start[LANE_MEMORY], end[LANE_MEMORY];
	unsigned int next;
	bool named;
};

struct disk_track {
	uint32_t dev;
	unsigned int nr_lanes;
	struct lane lanes[MAX_LANES];
};

struct trace_writer {
	FILE *out;
	bool own_out;
	unsigned long max;
	uint64_t slower_ns;
	disk_namer disk_name;
	bool any;
	struct trace_totals totals;
	struct pending *pending;
	size_t nr_pending, cap_pending;
	struct decided decided[DECIDED_SLOTS];
	uint64_t *named; /* (pid << 32 | tid) of threads given names; 0: free */
	size_t named_cap, nr_named;
	struct disk_track disks[MAX_DISKS];
	unsigned int nr_disks;
	uint64_t flow_id;
	uint64_t uring_id;    /* ids of io_uring requests' async slices */
	const char *kallsyms; /* names global locks; NULL: /proc/kallsyms */
};

static struct trace_writer *writer_new(FILE *out, unsigned long max, uint64_t slower_ns,
				       disk_namer disk_name)
{
	struct trace_writer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->out = out;
	t->max = max;
	t->slower_ns = slower_ns;
	t->disk_name = disk_name;
	fputs("{\"traceEvents\":[\n", out);
	return t;
}

struct trace_writer *trace_open_stream(FILE *out, unsigned long max_events, uint64_t slower_ns,
				       disk_namer disk_name)
{
	return writer_new(out, max_events, slower_ns, disk_name);
}

struct trace_writer *trace_open(const char *path, unsigned long max_events, uint64_t slower_ns,
				disk_namer disk_name, char *err, size_t errsz)
{
	FILE *out = fopen(path, "we");
	struct trace_writer *t;

	if (!out) {
		snprintf(err, errsz, "cannot write the trace to '%s': %s", path, strerror(errno));
		return NULL;
	}
	t = writer_new(out, max_events, slower_ns, disk_name);
	if (!t) {
		fclose(out);
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	t->own_out = true;
	return t;
}

/* Microseconds, to the nanosecond. */
static json_object *json_us(uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return json_object_new_double_s((double)ns / 1000.0, buf);
}

/* Writes one trace event (and frees it), unless --trace-max is reached. */
static void put(struct trace_writer *t, json_object *o)
{
	if (t->totals.written >= t->max) {
		t->totals.over_max++;
		json_object_put(o);
		return;
	}
	fputs(t->any ? ",\n" : "", t->out);
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE),
	      t->out);
	t->any = true;
	t->totals.written++;
	json_object_put(o);
}

static json_object *event(const char *ph, const char *name, const char *cat, uint32_t pid,
			  uint32_t tid)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ph", json_object_new_string(ph));
	json_object_object_add(o, "name", json_object_new_string(name));
	if (cat)
		json_object_object_add(o, "cat", json_object_new_string(cat));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	return o;
}

static void put_name(struct trace_writer *t, const char *what, uint32_t pid, uint32_t tid,
		     const char *name)
{
	json_object *o = event("M", what, NULL, pid, tid), *args = json_object_new_object();

	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(o, "args", args);
	put(t, o);
}

/* Has (pid, tid) been named? Marks it so. Keys are never 0: pid 0 has no
 * I/O of ours. */
static bool named_before(struct trace_writer *t, uint64_t key)
{
	size_t i;

	if (t->nr_named * 2 >= t->named_cap) {
		size_t cap = t->named_cap ? t->named_cap * 2 : 1024;
		uint64_t *grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return true; /* no names rather than no trace */
		for (size_t j = 0; j < t->named_cap; j++) {
			if (!t->named[j])
				continue;
			for (i = t->named[j] % cap; grown[i]; i = (i + 1) % cap)
				;
			grown[i] = t->named[j];
		}
		free(t->named);
		t->named = grown;
		t->named_cap = cap;
	}
	for (i = key % t->named_cap; t->named[i]; i = (i + 1) % t->named_cap)
		if (t->named[i] == key)
			return true;
	t->named[i] = key;
	t->nr_named++;
	return false;
}

static void name_thread(struct trace_writer *t, uint32_t pid, uint32_t tid, const char *comm)
{
	if (!named_before(t, (uint64_t)pid << 32 | 0xffffffffu))
		put_name(t, "process_name", pid, pid, comm);
	if (!named_before(t, (uint64_t)pid << 32 | tid))
		put_name(t, "thread_name", pid, tid, comm);
}

void trace_set_kallsyms(struct trace_writer *t, const char *path)
{
	t->kallsyms = path;
}

/*
 * A contention: a slice named by its lock, as events name it ("inode rwsem
 * of FILE", a global lock's symbol, else its address), cat "lock", its kind
 * in args.
 */
static json_object *contention_slice(struct trace_writer *t, const struct decided *call,
				     const struct slice_event *s)
{
	char name[FILE_NAME_LEN + 64];
	json_object *o, *args;

	lock_label(t->kallsyms, s->lock_addr, s->flags & SLF_LOCK_INODE, call->file,
		   sizeof(call->file), name, sizeof(name));
	o = event("X", name, "lock", call->pid, s->tid);
	args = json_object_new_object();
	json_object_object_add(args, "kind", json_object_new_string(lock_kind_name(s->op)));
	json_object_object_add(o, "args", args);
	return o;
}

static void put_slice(struct trace_writer *t, const struct decided *call,
		      const struct slice_event *s)
{
	bool layer = s->what < NR_CALL_LAYERS;
	char name[48];
	json_object *o;

	if (s->flags & SLF_CONTENTION) {
		o = contention_slice(t, call, s);
	} else {
		if (layer)
			snprintf(name, sizeof(name), "%s %s", layer_name(s->what),
				 op_name(s->what, s->op));
		else
			snprintf(name, sizeof(name), "%s", part_name(s->what));
		o = event("X", name, layer ? layer_name(s->what) : "offcpu", call->pid, s->tid);
	}
	json_object_object_add(o, "ts", json_us(s->start_ns));
	json_object_object_add(o, "dur", json_us(s->end_ns - s->start_ns));
	put(t, o);
}

/* A lane of the request's disk where it overlaps no request remembered. */
static int disk_lane(struct trace_writer *t, const struct request_event *r, struct disk_track **dt)
{
	struct disk_track *d = NULL;

	for (unsigned int i = 0; i < t->nr_disks; i++)
		if (t->disks[i].dev == r->dev)
			d = &t->disks[i];
	if (!d) {
		if (t->nr_disks == MAX_DISKS)
			return -1;
		d = &t->disks[t->nr_disks++];
		d->dev = r->dev;
	}
	*dt = d;
	for (unsigned int l = 0; l < MAX_LANES; l++) {
		struct lane *ln = &d->lanes[l];
		bool free = true;

		if (l == d->nr_lanes)
			d->nr_lanes++;
		for (unsigned int k = 0; k < LANE_MEMORY && free; k++)
			if (ln->end[k] && r->start_ns < ln->end[k] && ln->start[k] < r->end_ns)
				free = false;
		if (!free)
			continue;
		ln->start[ln->next] = r->start_ns;
		ln->end[ln->next] = r->end_ns ? r->end_ns : 1;
		ln->next = (ln->next + 1) % LANE_MEMORY;
		return (int)l;
	}
	return -1;
}

static void put_request(struct trace_writer *t, const struct decided *call,
			const struct request_event *r)
{
	struct disk_track *d;
	int lane = disk_lane(t, r, &d);
	uint32_t dpid, dtid;
	uint64_t from;
	char disk[64], label[96];
	json_object *o, *args;

	if (lane < 0) {
		t->totals.over_max++; /* more disks or overlaps than tracks */
		return;
	}
	t->disk_name(r->dev, disk, sizeof(disk));
	/* A disk's lanes are the tids after its pid: no two tracks share one. */
	dpid = DISK_PID_BASE + (uint32_t)(d - t->disks) * MAX_LANES;
	dtid = dpid + (uint32_t)lane;
	if (!named_before(t, (uint64_t)dpid << 32 | 0xffffffffu)) {
		snprintf(label, sizeof(label), "disk %s", disk);
		put_name(t, "process_name", dpid, dpid, label);
	}
	if (!d->lanes[lane].named) {
		d->lanes[lane].named = true;
		snprintf(label, sizeof(label), "%s #%d", disk, lane);
		put_name(t, "thread_name", dpid, dtid, label);
	}
	snprintf(label, sizeof(label), "blk %s", op_name(LAYER_BLK, r->op));
	o = event("X", label, "blk", dpid, dtid);
	json_object_object_add(o, "ts", json_us(r->start_ns));
	json_object_object_add(o, "dur", json_us(r->end_ns - r->start_ns));
	args = json_object_new_object();
	json_object_object_add(args, "bytes", json_object_new_uint64(r->bytes));
	json_object_object_add(args, "disk", json_object_new_string(disk));
	json_object_object_add(args, "submitter_tid", json_object_new_int64(r->tid));
	json_object_object_add(args, "sector", json_object_new_uint64(r->sector));
	if (r->flags & (EVF_SEQ | EVF_RANDOM))
		json_object_object_add(args, "seq", json_object_new_boolean(!!(r->flags & EVF_SEQ)));
	if (r->error)
		json_object_object_add(args, "error", json_object_new_boolean(1));
	json_object_object_add(o, "args", args);
	put(t, o);
	/* The flow leaves the call where the request started (inside it). */
	from = r->start_ns;
	if (from < call->call_ns || from > call->end_ns)
		from = call->call_ns;
	t->flow_id++;
	o = event("s", "request", "blk", call->pid, r->tid);
	json_object_object_add(o, "id", json_object_new_uint64(t->flow_id));
	json_object_object_add(o, "ts", json_us(from));
	put(t, o);
	o = event("f", "request", "blk", dpid, dtid);
	json_object_object_add(o, "bp", json_object_new_string("e"));
	json_object_object_add(o, "id", json_object_new_uint64(t->flow_id));
	json_object_object_add(o, "ts", json_us(r->start_ns));
	put(t, o);
}

static uint32_t pending_tid(const struct pending *p)
{
	return p->is_request ? p->rq.tid : p->slice.tid;
}

static uint64_t pending_call(const struct pending *p)
{
	return p->is_request ? p->rq.call_ns : p->slice.call_ns;
}

static void put_pending(struct trace_writer *t, const struct decided *call, const struct pending *p)
{
	if (p->is_request)
		put_request(t, call, &p->rq);
	else
		put_slice(t, call, &p->slice);
}

/* Waits for its call; or, when the call is known already, follows it. */
static void hold(struct trace_writer *t, const struct pending *p)
{
	const struct decided *d = &t->decided[pending_tid(p) % DECIDED_SLOTS];

	if (d->tid == pending_tid(p) && d->call_ns == pending_call(p)) {
		if (d->kept)
			put_pending(t, d, p);
		return;
	}
	if (t->nr_pending == t->cap_pending) {
		size_t cap = t->cap_pending ? t->cap_pending * 2 : 256;
		struct pending *grown;

		if (cap > MAX_PENDING || !(grown = realloc(t->pending, cap * sizeof(*grown)))) {
			t->totals.orphaned++;
			return;
		}
		t->pending = grown;
		t->cap_pending = cap;
	}
	t->pending[t->nr_pending++] = *p;
}

void trace_slice(struct trace_writer *t, const struct slice_event *e)
{
	struct pending p = { .is_request = false, .slice = *e };

	hold(t, &p);
}

void trace_request(struct trace_writer *t, const struct request_event *e)
{
	struct pending p = { .is_request = true, .rq = *e };

	hold(t, &p);
}

/* The args of a call's or a request's slice: what it did, with what result. */
static json_object *call_args(const struct call_event *e, const char *file, uint64_t lat)
{
	json_object *args = json_object_new_object();

	json_object_object_add(args, "file", file && *file ? json_object_new_string(file) : NULL);
	if (e->pos != NO_POS)
		json_object_object_add(args, "offset", json_object_new_uint64(e->pos));
	if (e->bytes != NO_POS)
		json_object_object_add(args, "bytes", json_object_new_uint64(e->bytes));
	json_object_object_add(args, "ret", json_object_new_int64(e->ret));
	json_object_object_add(args, "latency_ns", json_object_new_uint64(lat));
	return args;
}

/* The parts of a request's event (io_uring, aio), by name. io-wq-queued,
 * worker-queued and worker: only where they were measured, or took time. */
static json_object *request_parts(const struct call_event *e)
{
	json_object *parts = json_object_new_object();

	for (unsigned int p = 0; p < NR_URING_PARTS && e->layer == LAYER_IO_URING; p++)
		if (p != URING_PART_IOWQ_QUEUED || e->part_ns[p])
			json_object_object_add(parts, uring_part_name(p),
					       json_object_new_uint64(e->part_ns[p]));
	for (unsigned int p = 0; p < NR_AIO_PARTS && e->layer == LAYER_AIO; p++)
		if (p == AIO_PART_SUBMIT || p == AIO_PART_ASYNC || e->part_ns[p])
			json_object_object_add(parts, aio_part_name(p),
					       json_object_new_uint64(e->part_ns[p]));
	return parts;
}

/*
 * An io_uring or aio request: an async slice (ph "b"/"e", cat its layer, an
 * id of its own) of its submitter's thread, not an X slice: requests of one
 * thread overlap (a ring or an aio context holds many in flight) and X
 * slices of a thread must nest. Perfetto draws them on async tracks under
 * the process, named "io_uring read", "aio write" and so on. Nothing waits
 * for them (no slices of theirs).
 */
static void trace_uring(struct trace_writer *t, const struct call_event *e, const char *file)
{
	uint64_t lat = e->end_ns - e->call_ns;
	const char *cat = layer_name(e->layer);
	char comm[COMM_LEN + 1], name[32];
	json_object *o, *args;

	if (lat < t->slower_ns)
		return;
	memcpy(comm, e->comm, COMM_LEN);
	comm[COMM_LEN] = '\0';
	name_thread(t, e->pid, e->tid, comm);
	snprintf(name, sizeof(name), "%s %s", cat, op_name(e->layer, e->op));
	t->uring_id++;
	o = event("b", name, cat, e->pid, e->tid);
	json_object_object_add(o, "id", json_object_new_uint64(t->uring_id));
	json_object_object_add(o, "ts", json_us(e->call_ns));
	args = call_args(e, file, lat);
	json_object_object_add(args, "opcode", json_object_new_int64(e->opcode));
	json_object_object_add(args, "blk_requests", json_object_new_uint64(e->blk_requests));
	json_object_object_add(args, "blk_bytes", json_object_new_uint64(e->blk_bytes));
	if (e->layer == LAYER_AIO)
		json_object_object_add(args, "blk_flushes", json_object_new_uint64(e->blk_flushes));
	json_object_object_add(args, "parts_ns", request_parts(e));
	json_object_object_add(o, "args", args);
	put(t, o);
	o = event("e", name, cat, e->pid, e->tid);
	json_object_object_add(o, "id", json_object_new_uint64(t->uring_id));
	json_object_object_add(o, "ts", json_us(e->end_ns));
	put(t, o);
	t->totals.calls++;
}

/* The lock of the call's longest contention, as its event has it. */
static void call_lock_args(struct trace_writer *t, json_object *args, const struct call_event *e)
{
	json_object *lock;
	char name[FILE_NAME_LEN + 64];

	if (!e->lock_addr)
		return;
	lock = json_object_new_object();
	lock_label(t->kallsyms, e->lock_addr, e->flags & EVF_LOCK_INODE, e->file, sizeof(e->file),
		   name, sizeof(name));
	json_object_object_add(lock, "name", json_object_new_string(name));
	json_object_object_add(lock, "max_ns", json_object_new_uint64(e->lock_max_ns));
	json_object_object_add(args, "lock", lock);
}

void trace_call(struct trace_writer *t, const struct call_event *e, const char *file)
{
	uint64_t lat = e->end_ns - e->call_ns;
	struct decided *d = &t->decided[e->tid % DECIDED_SLOTS];
	char comm[COMM_LEN + 1];
	json_object *o, *args;

	/* A major fault too: it may come inside a call of its thread (a
	 * read() into a mapped buffer), which an X slice could cross. */
	if (e->layer == LAYER_IO_URING || e->layer == LAYER_AIO || e->layer == LAYER_FAULT) {
		trace_uring(t, e, file);
		return;
	}
	*d = (struct decided){ .tid = e->tid,
			       .pid = e->pid,
			       .call_ns = e->call_ns,
			       .end_ns = e->end_ns,
			       .kept = lat >= t->slower_ns };
	memcpy(d->file, e->file, sizeof(d->file));
	if (d->kept) {
		memcpy(comm, e->comm, COMM_LEN);
		comm[COMM_LEN] = '\0';
		name_thread(t, e->pid, e->tid, comm);
		o = event("X", op_name(e->layer, e->op), layer_name(e->layer), e->pid, e->tid);
		json_object_object_add(o, "ts", json_us(e->call_ns));
		json_object_object_add(o, "dur", json_us(lat));
		args = call_args(e, file, lat);
		json_object_object_add(args, "blk_requests",
				       json_object_new_uint64(e->blk_requests));
		/* With the bio layer: its bios by device level. */
		if (e->bio.top_bios)
			json_object_object_add(args, "bio", call_bio_json(e, t->disk_name));
		call_lock_args(t, args, e);
		json_object_object_add(o, "args", args);
		put(t, o);
		t->totals.calls++;
	}
	/* This call's slices and requests follow it; older ones of the thread
	 * belonged to calls whose end was never seen (lost events). */
	for (size_t i = 0; i < t->nr_pending;) {
		struct pending *p = &t->pending[i];

		if (pending_tid(p) != e->tid || pending_call(p) > e->call_ns) {
			i++;
			continue;
		}
		if (pending_call(p) == e->call_ns) {
			if (d->kept)
				put_pending(t, d, p);
		} else {
			t->totals.orphaned++;
		}
		t->pending[i] = t->pending[--t->nr_pending];
	}
}

int trace_close(struct trace_writer *t, uint64_t kernel_lost, struct trace_totals *totals)
{
	json_object *other = json_object_new_object();
	char tool[64];
	int ret;

	t->totals.orphaned += t->nr_pending;
	snprintf(tool, sizeof(tool), "iostackbreak %s", iosb_version);
	json_object_object_add(other, "tool", json_object_new_string(tool));
	json_object_object_add(other, "clock", json_object_new_string("CLOCK_MONOTONIC"));
	json_object_object_add(other, "calls", json_object_new_uint64(t->totals.calls));
	json_object_object_add(other, "trace_max", json_object_new_uint64(t->max));
	json_object_object_add(other, "lost_trace_max", json_object_new_uint64(t->totals.over_max));
	json_object_object_add(other, "lost_ring_buffer", json_object_new_uint64(kernel_lost));
	json_object_object_add(other, "orphaned", json_object_new_uint64(t->totals.orphaned));
	fprintf(t->out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":%s}\n",
		json_object_to_json_string_ext(other, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(other);
	ret = fflush(t->out) || ferror(t->out) ? -1 : 0;
	if (t->own_out && fclose(t->out))
		ret = -1;
	if (totals)
		*totals = t->totals;
	free(t->pending);
	free(t->named);
	free(t);
	return ret;
}
