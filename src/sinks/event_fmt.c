// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "event_fmt.h"
#include "layers.h"
#include "ksym.h"
#include "uring_parts.h"
#include "aio_parts.h"
#include "quote.h"

/* A kernel string of a fixed-size field: never trusted to end in NUL. */
static void copy_name(char *dst, size_t sz, const char *src, size_t srcsz)
{
	size_t n = strnlen(src, srcsz);

	if (n >= sz)
		n = sz - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

const char *event_file_label(const struct call_event *e, size_t size, char *buf, size_t sz)
{
	const struct call_path_event *pe = (const void *)e;
	char name[FILE_NAME_LEN];
	size_t used = 0;
	unsigned int depth;

	buf[0] = '\0';
	if (e->flags & EVF_NO_FILE)
		return NULL;
	copy_name(name, sizeof(name), e->file, sizeof(e->file));
	if (size < sizeof(*pe)) {
		snprintf(buf, sz, "%s", name);
		return NULL;
	}
	if (e->flags & EVF_PATH_NONE) {
		snprintf(buf, sz, "%s", name);
		return "no path: the file is not reached from a mount";
	}
	depth = e->path_depth < PATH_DEPTH ? e->path_depth : PATH_DEPTH;
	if (e->flags & EVF_PATH_CUT)
		used += (size_t)snprintf(buf + used, sz - used, "...");
	for (unsigned int i = depth; i > 0 && used < sz; i--) {
		char step[FILE_NAME_LEN];

		copy_name(step, sizeof(step), pe->path[i - 1], sizeof(pe->path[i - 1]));
		if (step[0]) /* "": a mount crossed */
			used += (size_t)snprintf(buf + used, sz - used, "/%s", step);
	}
	if (!used)
		snprintf(buf, sz, "/");
	return e->flags & EVF_PATH_CUT ? "path cut: deeper than the kernel walks" : NULL;
}

/* Is this part of the call shown: traced for its op, or it took time. An
 * io_uring request's parts are enum uring_part's, an aio request's enum
 * aio_part's. */
static bool part_shown(const struct event_ctx *c, const struct call_event *e, unsigned int p)
{
	if (e->layer == LAYER_IO_URING)
		return uring_part_shown(c->plan, p);
	if (e->layer == LAYER_AIO)
		return aio_part_shown(c->plan, p);
	return part_traced(c->plan, c->offcpu, e->op, p) || e->part_ns[p];
}

static bool event_parts(const struct event_ctx *c, const struct call_event *e)
{
	if (e->layer == LAYER_IO_URING)
		return c->plan && c->plan->uring_parts;
	if (e->layer == LAYER_AIO)
		return c->plan && c->plan->aio_parts;
	if (e->layer == LAYER_FAULT)
		return false; /* a fault is not split into parts */
	return c->parts;
}

static const char *event_part_name(const struct call_event *e, unsigned int p)
{
	if (e->layer == LAYER_AIO)
		return aio_part_name(p);
	return e->layer == LAYER_IO_URING ? uring_part_name(p) : part_name(p);
}

static uint64_t event_latency(const struct call_event *e)
{
	return e->end_ns - e->call_ns;
}

/* Does the event carry its bios by device (the bio layer traced under
 * calls of threads)? */
static bool event_bio(const struct event_ctx *c, const struct call_event *e)
{
	return c->plan && e->layer != LAYER_IO_URING && e->layer != LAYER_AIO &&
	       e->layer != LAYER_FAULT && c->plan->cells[LAYER_BIO][0].src != METHOD_NONE;
}

static uint64_t level_own_ns(const struct call_bio_level *l)
{
	return l->ns > l->below_ns ? l->ns - l->below_ns : 0;
}

/* The event's device levels in use, the longest (the top of a stack:
 * its bios hold those below) first. Returns how many. */
static unsigned int bio_levels(const struct call_event *e, const struct call_bio_level **out)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < MAX_CALL_BIO_LEVELS; i++) {
		const struct call_bio_level *l = &e->bio.lv[i];
		unsigned int j;

		if (!l->dev || !l->bios)
			continue;
		for (j = n++; j > 0 && out[j - 1]->ns < l->ns; j--)
			out[j] = out[j - 1];
		out[j] = l;
	}
	return n;
}

void event_text_header(FILE *out, const struct event_ctx *c)
{
	char lat[16];

	snprintf(lat, sizeof(lat), "LAT(%s)", unit_name(c->unit));
	fprintf(out, "%-15s %-16s %7s %7s %-5s %14s %10s %12s  %s\n", "TIME", "COMM", "PID", "TID",
		"OP", lat, "BYTES", "OFFSET", "FILE");
}

/* The tail of a call's text line: its parts, its block I/O by request and
 * by level, its journal commit, pages, and the lock it waited longest for. */
static void event_text_details(FILE *out, const struct event_ctx *c, const struct call_event *e,
			       uint64_t lat)
{
	if (event_parts(c, e) && lat) {
		const char *sep = "";

		fprintf(out, " [");
		for (unsigned int p = 0; p < NR_PARTS; p++) {
			if (!part_shown(c, e, p))
				continue;
			fprintf(out, "%s%s %.0f%%", sep, event_part_name(e, p),
				100.0 * (double)e->part_ns[p] / (double)lat);
			sep = "|";
		}
		fprintf(out, "]");
	}
	if (e->blk_requests) {
		fprintf(out, " blk %u req", e->blk_requests);
		if (e->blk_flushes)
			fprintf(out, " (%u flush)", e->blk_flushes);
		fprintf(out, " %" PRIu64 " B", (uint64_t)e->blk_bytes);
		if (e->blk_max_ns) {
			char disk[64];

			c->disk_name(e->blk_max_dev, disk, sizeof(disk));
			fprintf(out, " slowest %.3f %s on %s", ns_to_unit(e->blk_max_ns, c->unit),
				unit_name(c->unit), disk);
		}
	}
	if (event_bio(c, e) && e->bio.top_bios) {
		const struct call_bio_level *lv[MAX_CALL_BIO_LEVELS];
		unsigned int n = bio_levels(e, lv);

		fprintf(out, " bio %.3f %s", ns_to_unit(e->bio.top_ns, c->unit),
			unit_name(c->unit));
		for (unsigned int i = 0; i < n; i++) {
			char dev[64];

			c->disk_name(lv[i]->dev, dev, sizeof(dev));
			fprintf(out, "%s%s %.3f", i ? " + " : " = ", dev,
				ns_to_unit(level_own_ns(lv[i]), c->unit));
		}
		if (e->bio.cut)
			fprintf(out, " (%u bios on more devices)", e->bio.cut);
	}
	if (e->journal_requests)
		fprintf(out,
			"; %u req (%u flush) %" PRIu64 " B by the journal commit it waited for",
			e->journal_requests, e->journal_flushes, (uint64_t)e->journal_bytes);
	if (e->cache_miss_pages && c->plan && c->plan->why[WHY_READAHEAD])
		fprintf(out, " cache miss %" PRIu64 " pages (%" PRIu64 " read ahead)",
			(uint64_t)e->cache_miss_pages, (uint64_t)e->readahead_pages);
	else if (e->cache_miss_pages)
		fprintf(out, " cache miss %" PRIu64 " pages", (uint64_t)e->cache_miss_pages);
	if (e->writeback_pages)
		fprintf(out, " writeback %" PRIu64 " pages", (uint64_t)e->writeback_pages);
	if (e->lock_addr) {
		char lock[4 * FILE_NAME_LEN + 64];

		event_lock_label(c, e, lock, sizeof(lock));
		printable_line(lock, sizeof(lock));
		fprintf(out, " lock %.3f %s on %s", ns_to_unit(e->lock_max_ns, c->unit),
			unit_name(c->unit), lock);
	}
}

int event_text_line(FILE *out, const struct event_ctx *c, const struct call_event *e, size_t size)
{
	/* Room for every byte of a name shown as \xNN. */
	char when[32], comm[4 * COMM_LEN + 1], file[4 * (PATH_DEPTH * FILE_NAME_LEN + 8)];
	char bytes[24] = "-", offset[24] = "-";
	uint64_t lat = event_latency(e), wall = e->end_ns + (uint64_t)c->mono_to_real_ns;
	time_t secs = (time_t)(wall / 1000000000);
	const char *note;
	struct tm tm;

	localtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%06" PRIu64,
		 (wall % 1000000000) / 1000);
	copy_name(comm, sizeof(comm), e->comm, sizeof(e->comm));
	if (e->bytes != NO_POS)
		snprintf(bytes, sizeof(bytes), "%" PRIu64, (uint64_t)e->bytes);
	if (e->pos != NO_POS)
		snprintf(offset, sizeof(offset), "%" PRIu64, (uint64_t)e->pos);
	note = event_file_label(e, size, file, sizeof(file));
	/* A process or file name may hold a newline or an escape sequence:
	 * the line stays one printable line. */
	printable_line(comm, sizeof(comm));
	printable_line(file, sizeof(file));
	fprintf(out, "%-15s %-16s %7u %7u %-5s %14.3f %10s %12s  %s", when, comm, e->pid, e->tid,
		op_name(e->layer, e->op), ns_to_unit(lat, c->unit), bytes, offset,
		file[0] ? file : "-");
	if (note)
		fprintf(out, " (%s)", note);
	if ((int64_t)e->ret < 0)
		fprintf(out, " ret %" PRId64, (int64_t)e->ret);
	if (e->layer == LAYER_IO_URING)
		fprintf(out, " io_uring opcode %u", e->opcode);
	if (e->layer == LAYER_AIO)
		fprintf(out, " iocb command %u", e->opcode);
	if (e->flags & (EVF_SEQ | EVF_RANDOM))
		fprintf(out, " %s", e->flags & EVF_SEQ ? "sequential" : "random");
	event_text_details(out, c, e, lat);
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}

void lock_label(const char *kallsyms, uint64_t addr, bool inode, const char *file, size_t filesz,
		char *buf, size_t sz)
{
	char name[FILE_NAME_LEN + 1];

	buf[0] = '\0';
	if (!addr)
		return;
	if (inode) {
		copy_name(name, sizeof(name), file,
			  filesz < FILE_NAME_LEN ? filesz : FILE_NAME_LEN);
		snprintf(buf, sz, "inode rwsem of %s", name[0] ? name : "its file");
		return;
	}
	ksym_data_name(kallsyms, addr, buf, sz);
}

void event_lock_label(const struct event_ctx *c, const struct call_event *e, char *buf, size_t sz)
{
	lock_label(c->kallsyms, e->lock_addr, e->flags & EVF_LOCK_INODE, e->file, sizeof(e->file),
		   buf, sz);
}

/* A figure of the call where the plan counts it, else null (not 0). */
static json_object *counted(const struct event_ctx *c, enum why w, uint64_t v)
{
	return c->plan && c->plan->why[w] ? json_object_new_uint64(v) : NULL;
}

json_object *call_bio_json(const struct call_event *e, disk_namer disk_name)
{
	const struct call_bio_level *lv[MAX_CALL_BIO_LEVELS];
	unsigned int n = bio_levels(e, lv);
	json_object *o = json_object_new_object(), *devs = json_object_new_array();

	json_object_object_add(o, "bios", json_object_new_uint64(e->bio.top_bios));
	json_object_object_add(o, "ns", json_object_new_uint64(e->bio.top_ns));
	for (unsigned int i = 0; i < n; i++) {
		json_object *d = json_object_new_object();
		char dev[64];

		disk_name(lv[i]->dev, dev, sizeof(dev));
		json_object_object_add(d, "device", json_object_new_string(dev));
		json_object_object_add(d, "bios", json_object_new_uint64(lv[i]->bios));
		json_object_object_add(d, "ns", json_object_new_uint64(lv[i]->ns));
		json_object_object_add(d, "below_ns", json_object_new_uint64(lv[i]->below_ns));
		json_object_object_add(d, "own_ns", json_object_new_uint64(level_own_ns(lv[i])));
		json_object_array_add(devs, d);
	}
	json_object_object_add(o, "devices", devs);
	json_object_object_add(o, "cut", json_object_new_uint64(e->bio.cut));
	return o;
}

/* The journal commits the call waited for, its pages, its lock part by kind. */
static void event_why_json(json_object *o, const struct event_ctx *c, const struct call_event *e)
{
	json_object *journal = NULL, *kinds = NULL;

	if (c->plan && c->plan->journal_blk) {
		journal = json_object_new_object();
		json_object_object_add(journal, "requests",
				       json_object_new_uint64(e->journal_requests));
		json_object_object_add(journal, "flushes",
				       json_object_new_uint64(e->journal_flushes));
		json_object_object_add(journal, "bytes", json_object_new_uint64(e->journal_bytes));
	}
	json_object_object_add(o, "journal_blk", journal);
	json_object_object_add(o, "cache_miss_pages", counted(c, WHY_CACHE, e->cache_miss_pages));
	json_object_object_add(o, "readahead_pages", counted(c, WHY_READAHEAD, e->readahead_pages));
	json_object_object_add(o, "writeback_pages", counted(c, WHY_WRITEBACK, e->writeback_pages));
	if (e->lock_addr) {
		json_object *lock = json_object_new_object();
		char name[FILE_NAME_LEN + 64];

		event_lock_label(c, e, name, sizeof(name));
		json_object_object_add(lock, "name", json_object_new_string(name));
		json_object_object_add(lock, "max_ns", json_object_new_uint64(e->lock_max_ns));
		json_object_object_add(o, "lock", lock);
	} else {
		json_object_object_add(o, "lock", NULL);
	}
	if (c->parts && part_traced(c->plan, c->offcpu, e->op, PART_LOCK)) {
		kinds = json_object_new_object();
		for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
			json_object_object_add(kinds, lock_kind_name(k),
					       json_object_new_uint64(e->lock_ns[k]));
	}
	json_object_object_add(o, "lock_ns_by_kind", kinds);
}

json_object *event_json(const struct event_ctx *c, const struct call_event *e, size_t size)
{
	json_object *o = json_object_new_object(), *blk;
	char when[64], comm[COMM_LEN + 1], file[PATH_DEPTH * FILE_NAME_LEN + 8];
	uint64_t wall = e->end_ns + (uint64_t)c->mono_to_real_ns;
	struct timespec ts = { (time_t)(wall / 1000000000), (long)(wall % 1000000000) };
	const char *note;
	struct tm tm;
	char base[32];

	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when, sizeof(when), "%s.%06uZ", base, (unsigned int)(ts.tv_nsec / 1000) % 1000000);
	copy_name(comm, sizeof(comm), e->comm, sizeof(e->comm));
	note = event_file_label(e, size, file, sizeof(file));
	json_object_object_add(o, "event", json_object_new_string("io"));
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "pid", json_object_new_int64(e->pid));
	json_object_object_add(o, "tid", json_object_new_int64(e->tid));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	json_object_object_add(o, "op", json_object_new_string(op_name(e->layer, e->op)));
	json_object_object_add(o, "layer", json_object_new_string(layer_name(e->layer)));
	json_object_object_add(o, "latency_ns", json_object_new_uint64(event_latency(e)));
	json_object_object_add(o, "file", file[0] ? json_object_new_string(file) : NULL);
	if (note)
		json_object_object_add(o, "path_note", json_object_new_string(note));
	json_object_object_add(o, "offset",
			       e->pos != NO_POS ? json_object_new_uint64(e->pos) : NULL);
	json_object_object_add(o, "bytes",
			       e->bytes != NO_POS ? json_object_new_uint64(e->bytes) : NULL);
	json_object_object_add(o, "ret", json_object_new_int64(e->ret));
	/* --pattern: was it sequential (only where judged: a read or write) */
	if (e->flags & (EVF_SEQ | EVF_RANDOM))
		json_object_object_add(o, "seq", json_object_new_boolean(!!(e->flags & EVF_SEQ)));
	if (e->layer == LAYER_IO_URING || e->layer == LAYER_AIO)
		json_object_object_add(o, "opcode", json_object_new_int64(e->opcode));
	if (event_parts(c, e)) {
		json_object *parts = json_object_new_object();

		for (unsigned int p = 0; p < NR_PARTS; p++)
			if (part_shown(c, e, p))
				json_object_object_add(parts, event_part_name(e, p),
						       json_object_new_uint64(e->part_ns[p]));
		json_object_object_add(o, "parts", parts);
	} else {
		json_object_object_add(o, "parts", NULL);
	}
	blk = json_object_new_object();
	json_object_object_add(blk, "requests", json_object_new_uint64(e->blk_requests));
	json_object_object_add(blk, "flushes", json_object_new_uint64(e->blk_flushes));
	json_object_object_add(blk, "bytes", json_object_new_uint64(e->blk_bytes));
	if (e->blk_max_ns) {
		char disk[64];

		c->disk_name(e->blk_max_dev, disk, sizeof(disk));
		json_object_object_add(blk, "max_ns", json_object_new_uint64(e->blk_max_ns));
		json_object_object_add(blk, "disk", json_object_new_string(disk));
	} else {
		json_object_object_add(blk, "max_ns", NULL);
		json_object_object_add(blk, "disk", NULL);
	}
	json_object_object_add(o, "blk", blk);
	json_object_object_add(o, "bio", event_bio(c, e) ? call_bio_json(e, c->disk_name) : NULL);
	event_why_json(o, c, e);
	json_object_object_add(o, "inode", e->ino ? json_object_new_uint64(e->ino) : NULL);
	return o;
}
