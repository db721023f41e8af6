// SPDX-License-Identifier: GPL-2.0
/*
 * The recording file (recording.h, docs/record.md). Every field has a fixed
 * width; the events are the kernel's own structs, fixed-width by design
 * (bpf/iostackbreak.h), so a record is the bytes the ring buffer held and
 * writing one costs a copy. Integers are in the writer's byte order, which
 * the header states: little-endian on the machines this runs on, and a
 * file of the other order is refused, never misread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "recording.h"
#include "version.h"

_Static_assert(sizeof(struct wb_snapshot) % sizeof(uint64_t) == 0, "wb_snapshot: u64 only");

/* The header's largest length read: a plan's texts are a few kB. */
#define REC_MAX_HEADER (1U << 20)

static void put(FILE *f, const void *p, size_t n)
{
	/* An absent string (no -d) is no bytes: fwrite() takes no NULL. */
	if (n)
		fwrite(p, 1, n, f);
}

static void put_u8(FILE *f, uint8_t v)
{
	put(f, &v, 1);
}

static void put_u32(FILE *f, uint32_t v)
{
	put(f, &v, 4);
}

static void put_u64(FILE *f, uint64_t v)
{
	put(f, &v, 8);
}

static void put_str(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;

	put_u32(f, n);
	put(f, s, n);
}

int rec_create(struct rec_writer *w, const char *path, char *err, size_t errsz)
{
	memset(w, 0, sizeof(*w));
	w->path = path;
	w->f = fopen(path, "we");
	if (!w->f) {
		snprintf(err, errsz, "cannot create the recording %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void note_error(struct rec_writer *w)
{
	if (!w->err && ferror(w->f))
		w->err = errno ? errno : EIO;
}

/* The plan as the reports read it: per cell, then the flags. */
static void put_plan(FILE *f, const struct plan *plan)
{
	put_u32(f, NR_LAYERS);
	put_u32(f, NR_OPS);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int op = 0; op < NR_OPS; op++) {
			const struct cell_plan *cp = &plan->cells[l][op];

			put_u8(f, cp->wanted);
			put_u8(f, (uint8_t)cp->src);
			put_str(f, cp->why);
		}
	put_u32(f, (uint32_t)plan->root_layer);
	put_u32(f, (uint32_t)plan->split_layer);
	put_u32(f, plan->quiet_layers);
	put_u8(f, plan->uring_parts);
	put_u8(f, plan->uring_blk);
	put_u8(f, plan->uring_iowq_run);
	put_u8(f, plan->aio_worker);
	put_u8(f, plan->aio_parts);
	put_u8(f, plan->aio_blk);
	put_u8(f, plan->journal_blk);
	put_u8(f, plan->wb);
	put_u8(f, plan->blk_stamped);
	put_u32(f, NR_WHYS);
	for (unsigned int i = 0; i < NR_WHYS; i++)
		put_u8(f, plan->why[i]);
}

/* The header's bytes to the file, or with --ring kept for each dump. */
static int keep_header(struct rec_writer *w, const char *body, size_t len)
{
	size_t n = REC_MAGIC_LEN + 12 + len;
	uint8_t *h = malloc(n);
	uint32_t v[3] = { REC_VERSION, REC_ORDER, (uint32_t)len };

	if (!h)
		return -1;
	memcpy(h, REC_MAGIC, REC_MAGIC_LEN);
	memcpy(h + REC_MAGIC_LEN, v, sizeof(v));
	memcpy(h + REC_MAGIC_LEN + 12, body, len);
	w->bytes = n;
	if (w->ring) {
		w->ring->header = h;
		w->ring->header_len = n;
		return 0;
	}
	put(w->f, h, n);
	free(h);
	note_error(w);
	return w->err ? -1 : 0;
}

int rec_write_header(struct rec_writer *w, const struct config *cfg, const struct plan *plan,
		     int64_t mono_to_real_ns)
{
	char *body = NULL, *opts = NULL, *ptext = NULL, tool[128];
	size_t len = 0, olen = 0, plen = 0;
	FILE *m = open_memstream(&body, &len);
	FILE *o = open_memstream(&opts, &olen);
	FILE *p = open_memstream(&ptext, &plen);
	struct utsname u;
	int ret = -1;

	if (!m || !o || !p)
		goto out;
	for (int i = 0; i < cfg->argc; i++)
		fprintf(o, "%s%s", i ? " " : "", cfg->argv[i]);
	fclose(o);
	o = NULL;
	plan_print(plan, p);
	fclose(p);
	p = NULL;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	snprintf(tool, sizeof(tool), "iostackbreak %s %s", iosb_version, iosb_commit);
	put_u32(m, sizeof(struct call_event));
	put_u32(m, sizeof(struct call_path_event));
	put_u32(m, sizeof(struct slice_event));
	put_u32(m, sizeof(struct request_event));
	put_u64(m, (uint64_t)mono_to_real_ns);
	put_u8(m, cfg->all_fds);
	put_u8(m, cfg->offcpu);
	put_u8(m, cfg->queued);
	put_str(m, cfg->disk);
	put_str(m, u.release);
	put_str(m, tool);
	put_str(m, opts);
	put_str(m, ptext);
	put_plan(m, plan);
	ret = fclose(m);
	m = NULL;
	if (ret)
		goto out;
	ret = -1;
	ret = keep_header(w, body, len);
out:
	if (m)
		fclose(m);
	if (o)
		fclose(o);
	if (p)
		fclose(p);
	free(body);
	free(opts);
	free(ptext);
	if (ret && !w->err)
		w->err = ENOMEM;
	return ret;
}

/* A kept record: when its event ended, then the record as in the file. */
struct ring_entry {
	uint64_t end_ns;
	uint32_t len, type;
};

static void ring_free(struct rec_writer *w)
{
	if (w->ring) {
		free(w->ring->buf);
		free(w->ring->header);
		free(w->ring);
		w->ring = NULL;
	}
}

int rec_ring_start(struct rec_writer *w, unsigned int seconds, size_t cap_bytes)
{
	struct rec_ring *r = calloc(1, sizeof(*r));

	if (!r || !(r->buf = malloc(cap_bytes))) {
		free(r);
		errno = ENOMEM;
		return -1;
	}
	r->window_ns = seconds * 1000000000ULL;
	r->cap = cap_bytes;
	w->ring = r;
	return 0;
}

/* When the event ended: every kind has an end time of its own. */
static uint64_t event_end_ns(const void *data)
{
	const uint8_t *kind = data;

	switch (kind[0]) {
	case EV_CALL:
		return ((const struct call_event *)data)->end_ns;
	case EV_SLICE:
		return ((const struct slice_event *)data)->end_ns;
	case EV_REQUEST:
		return ((const struct request_event *)data)->end_ns;
	}
	return 0;
}

static struct ring_entry *ring_at(const struct rec_ring *r, size_t off)
{
	return (struct ring_entry *)(r->buf + off);
}

static size_t ring_entry_size(const struct ring_entry *e)
{
	/* 8-aligned, so that the next entry's header is too. */
	return (sizeof(*e) + e->len - 4 + 7) & ~(size_t)7;
}

/* Keeps one event: the old ones out first, by age, then for room. */
static void ring_keep(struct rec_ring *r, const void *data, size_t size)
{
	struct ring_entry e = { event_end_ns(data), (uint32_t)(size + 4), REC_EVENT };
	size_t need = ring_entry_size(&e);

	if (e.end_ns > r->newest_ns)
		r->newest_ns = e.end_ns;
	while (r->head < r->tail && ring_at(r, r->head)->end_ns + r->window_ns < r->newest_ns)
		r->head += ring_entry_size(ring_at(r, r->head));
	if (r->tail + need > r->cap) {
		memmove(r->buf, r->buf + r->head, r->tail - r->head);
		r->tail -= r->head;
		r->head = 0;
	}
	while (r->tail + need > r->cap && r->head < r->tail) {
		r->head += ring_entry_size(ring_at(r, r->head));
		r->overflowed++;
		memmove(r->buf, r->buf + r->head, r->tail - r->head);
		r->tail -= r->head;
		r->head = 0;
	}
	if (r->tail + need > r->cap)
		return;
	memcpy(r->buf + r->tail, &e, sizeof(e));
	memcpy(r->buf + r->tail + sizeof(e), data, size);
	r->tail += need;
}

void rec_write_event(struct rec_writer *w, const void *data, size_t size)
{
	if (w->err || size + 4 > REC_EVENT_BODY)
		return;
	if (w->ring) {
		ring_keep(w->ring, data, size);
		return;
	}
	put_u32(w->f, (uint32_t)(size + 4));
	put_u32(w->f, REC_EVENT);
	put(w->f, data, size);
	w->events++;
	w->bytes += size + 8;
	note_error(w);
}

void rec_note_report(struct rec_writer *w, const struct report *r)
{
	struct rec_trailer *t = &w->tr;

	memcpy(t->drops, r->drops, sizeof(t->drops));
	memcpy(t->left_out, r->left_out, sizeof(t->left_out));
	t->wb = r->wb;
	t->wall_sec = r->wall.tv_sec;
	t->wall_nsec = r->wall.tv_nsec;
	t->interval_s = r->interval_s;
	t->have_report = true;
}

static void write_trailer(struct rec_writer *w)
{
	struct rec_trailer *t = &w->tr;
	uint64_t bits;
	size_t n = REC_TRAILER_BODY;

	_Static_assert(REC_TRAILER_BODY == 4 + 3 * 4 + 6 * 8 + sizeof(t->drops) +
						 sizeof(t->left_out) + sizeof(t->wb),
		       "REC_TRAILER_BODY: the trailer's fields");
	t->events = w->events;
	put_u32(w->f, (uint32_t)n);
	put_u32(w->f, REC_TRAILER);
	put_u32(w->f, NR_DROP_REASONS);
	put_u32(w->f, NR_LAYERS * NR_OPS * NR_FD_KINDS);
	put_u32(w->f, sizeof(t->wb));
	put_u64(w->f, t->events);
	put_u64(w->f, t->kernel_lost);
	put_u64(w->f, t->have_report);
	put_u64(w->f, (uint64_t)t->wall_sec);
	put_u64(w->f, (uint64_t)t->wall_nsec);
	memcpy(&bits, &t->interval_s, sizeof(bits));
	put_u64(w->f, bits);
	put(w->f, t->drops, sizeof(t->drops));
	put(w->f, t->left_out, sizeof(t->left_out));
	put(w->f, &t->wb, sizeof(t->wb));
	w->bytes += n + 4;
	note_error(w);
}

int rec_ring_dump(struct rec_writer *w, uint64_t *events)
{
	struct rec_ring *r = w->ring;
	struct rec_trailer keep = w->tr;
	struct timespec now;
	uint64_t now_ns;

	*events = 0;
	if (!r || !r->header || w->err)
		return w->err ? (errno = w->err, -1) : 0;
	if (fflush(w->f) || ftruncate(fileno(w->f), 0)) {
		w->err = errno ? errno : EIO;
		return -1;
	}
	rewind(w->f);
	/* The last seconds are up to now (the events' clock, CLOCK_MONOTONIC),
	 * whether events came lately or not. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	while (r->head < r->tail && ring_at(r, r->head)->end_ns + r->window_ns < now_ns)
		r->head += ring_entry_size(ring_at(r, r->head));
	put(w->f, r->header, r->header_len);
	w->bytes = r->header_len;
	w->events = 0;
	for (size_t off = r->head; off < r->tail; off += ring_entry_size(ring_at(r, off))) {
		const struct ring_entry *e = ring_at(r, off);

		put(w->f, &e->len, 4);
		put(w->f, &e->type, 4);
		put(w->f, e + 1, e->len - 4);
		w->events++;
		w->bytes += e->len + 4;
	}
	/* A window has no report of its own: no totals, no drops known. */
	memset(&w->tr, 0, sizeof(w->tr));
	write_trailer(w);
	w->tr = keep;
	*events = w->events;
	if (fflush(w->f) && !w->err)
		w->err = errno ? errno : EIO;
	errno = w->err;
	return w->err ? -1 : 0;
}

int rec_close(struct rec_writer *w, uint64_t kernel_lost)
{
	uint64_t dumped;
	int ret;

	if (!w->f)
		return 0;
	/* No header: the run stopped before tracing, there is nothing to keep. */
	if (!w->bytes) {
		fclose(w->f);
		w->f = NULL;
		unlink(w->path);
		ring_free(w);
		return 0;
	}
	if (w->ring) {
		rec_ring_dump(w, &dumped); /* the last window, at the end */
	} else {
		w->tr.kernel_lost = kernel_lost;
		write_trailer(w);
	}
	ret = fclose(w->f);
	w->f = NULL;
	ring_free(w);
	if (ret && !w->err)
		w->err = errno ? errno : EIO;
	errno = w->err;
	return w->err ? -1 : 0;
}

/* Reading: a cursor over the header's bytes, every read bounded. */
struct cursor {
	const uint8_t *p, *end;
	bool short_read;
};

static void get(struct cursor *c, void *dst, size_t n)
{
	if (c->short_read || (size_t)(c->end - c->p) < n) {
		c->short_read = true;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, c->p, n);
	c->p += n;
}

static uint8_t get_u8(struct cursor *c)
{
	uint8_t v;

	get(c, &v, 1);
	return v;
}

static uint32_t get_u32(struct cursor *c)
{
	uint32_t v;

	get(c, &v, 4);
	return v;
}

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v;

	get(c, &v, 8);
	return v;
}

/* A string into buf (cut to fit, NUL-terminated). */
static void get_str(struct cursor *c, char *buf, size_t sz)
{
	uint32_t n = get_u32(c);
	size_t keep;

	if (c->short_read || (size_t)(c->end - c->p) < n) {
		c->short_read = true;
		buf[0] = '\0';
		return;
	}
	keep = n < sz - 1 ? n : sz - 1;
	memcpy(buf, c->p, keep);
	buf[keep] = '\0';
	c->p += n;
}

/* A string of any length, allocated; NULL when cut short or no memory. */
static char *get_str_dup(struct cursor *c)
{
	uint32_t n = get_u32(c);
	char *s;

	if (c->short_read || (size_t)(c->end - c->p) < n) {
		c->short_read = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, c->p, n);
		s[n] = '\0';
	}
	c->p += n;
	return s;
}

static int get_plan(struct cursor *c, struct plan *plan, char *err, size_t errsz)
{
	uint32_t layers = get_u32(c), ops = get_u32(c), whys;

	if (layers != NR_LAYERS || ops != NR_OPS) {
		snprintf(err, errsz, "its table of layers (%u x %u) is another build's", layers,
			 ops);
		return -1;
	}
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int op = 0; op < NR_OPS; op++) {
			struct cell_plan *cp = &plan->cells[l][op];
			uint8_t src;

			cp->wanted = get_u8(c);
			src = get_u8(c);
			cp->src = src < NR_METHODS ? (enum attach_method)src : METHOD_NONE;
			get_str(c, cp->why, sizeof(cp->why));
		}
	plan->root_layer = (int)get_u32(c);
	plan->split_layer = (int)get_u32(c);
	if (plan->root_layer < -1 || plan->root_layer >= NR_LAYERS)
		plan->root_layer = -1;
	if (plan->split_layer < -1 || plan->split_layer >= NR_LAYERS)
		plan->split_layer = -1;
	plan->quiet_layers = get_u32(c);
	plan->uring_parts = get_u8(c);
	plan->uring_blk = get_u8(c);
	plan->uring_iowq_run = get_u8(c);
	plan->aio_worker = get_u8(c);
	plan->aio_parts = get_u8(c);
	plan->aio_blk = get_u8(c);
	plan->journal_blk = get_u8(c);
	plan->wb = get_u8(c);
	plan->blk_stamped = get_u8(c);
	whys = get_u32(c);
	if (whys != NR_WHYS) {
		snprintf(err, errsz, "its table of waits (%u) is another build's", whys);
		return -1;
	}
	for (unsigned int i = 0; i < NR_WHYS; i++)
		plan->why[i] = get_u8(c);
	return 0;
}

int rec_open(struct rec_reader *r, FILE *f, char *err, size_t errsz)
{
	uint8_t head[REC_MAGIC_LEN + 12];
	uint32_t version, order, len, sizes[4];
	uint8_t *body = NULL;
	struct cursor c;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->f = f;
	if (fread(head, 1, sizeof(head), f) != sizeof(head)) {
		snprintf(err, errsz, "not a recording of iostackbreak --record: too short for "
				     "its header");
		return -1;
	}
	if (memcmp(head, REC_MAGIC, REC_MAGIC_LEN)) {
		snprintf(err, errsz, "not a recording of iostackbreak --record (no magic)");
		return -1;
	}
	memcpy(&version, head + REC_MAGIC_LEN, 4);
	memcpy(&order, head + REC_MAGIC_LEN + 4, 4);
	memcpy(&len, head + REC_MAGIC_LEN + 8, 4);
	if (order != REC_ORDER) {
		snprintf(err, errsz, "a recording from a machine of the other byte order: read "
				     "it where it was made");
		return -1;
	}
	if (version > REC_VERSION) {
		snprintf(err, errsz, "a recording of version %u, newer than this iostackbreak "
				     "reads (%u): read it with a newer iostackbreak",
			 version, REC_VERSION);
		return -1;
	}
	if (version != REC_VERSION) {
		snprintf(err, errsz, "a recording of version %u, which this iostackbreak does "
				     "not read", version);
		return -1;
	}
	if (len > REC_MAX_HEADER) {
		snprintf(err, errsz, "corrupt recording: a header of %u bytes", len);
		return -1;
	}
	body = malloc(len ? len : 1);
	if (!body) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if (fread(body, 1, len, f) != len) {
		snprintf(err, errsz, "truncated recording: it ends inside its header");
		goto out;
	}
	c = (struct cursor){ body, body + len, false };
	r->h.version = version;
	for (int i = 0; i < 4; i++)
		sizes[i] = get_u32(&c);
	if (sizes[0] != sizeof(struct call_event) || sizes[1] != sizeof(struct call_path_event) ||
	    sizes[2] != sizeof(struct slice_event) || sizes[3] != sizeof(struct request_event)) {
		snprintf(err, errsz, "a recording of another build of iostackbreak (its events' "
				     "sizes differ): read it with the iostackbreak that made it");
		goto out;
	}
	r->h.mono_to_real_ns = (int64_t)get_u64(&c);
	r->h.all_fds = get_u8(&c);
	r->h.offcpu = get_u8(&c);
	r->h.queued = get_u8(&c);
	get_str(&c, r->h.disk, sizeof(r->h.disk));
	get_str(&c, r->h.kernel, sizeof(r->h.kernel));
	get_str(&c, r->h.tool, sizeof(r->h.tool));
	r->h.options = get_str_dup(&c);
	r->h.plan_text = get_str_dup(&c);
	if (!c.short_read && get_plan(&c, &r->h.plan, err, errsz))
		goto out;
	if (c.short_read) {
		snprintf(err, errsz, "corrupt recording: its header is shorter than its fields");
		goto out;
	}
	ret = 0;
out:
	free(body);
	if (ret)
		rec_reader_free(r);
	return ret;
}

static int read_trailer(struct rec_reader *r, size_t n, char *err, size_t errsz)
{
	struct rec_trailer *t = &r->tr;
	const uint8_t *b = (const uint8_t *)r->body + 4;
	struct cursor c = { b + 4, b + n, false };
	uint64_t bits;

	if (get_u32(&c) != NR_DROP_REASONS ||
	    get_u32(&c) != NR_LAYERS * NR_OPS * NR_FD_KINDS || get_u32(&c) != sizeof(t->wb)) {
		snprintf(err, errsz, "corrupt recording: its trailer is another build's");
		return -1;
	}
	t->events = get_u64(&c);
	t->kernel_lost = get_u64(&c);
	t->have_report = get_u64(&c) != 0;
	t->wall_sec = (int64_t)get_u64(&c);
	t->wall_nsec = (int64_t)get_u64(&c);
	bits = get_u64(&c);
	memcpy(&t->interval_s, &bits, sizeof(bits));
	get(&c, t->drops, sizeof(t->drops));
	get(&c, t->left_out, sizeof(t->left_out));
	get(&c, &t->wb, sizeof(t->wb));
	if (c.short_read || c.p != c.end) {
		snprintf(err, errsz, "corrupt recording: a trailer of %zu bytes", n);
		return -1;
	}
	if (t->events != r->records) {
		snprintf(err, errsz,
			 "corrupt recording: its trailer counts %llu events, the file holds %llu",
			 (unsigned long long)t->events, (unsigned long long)r->records);
		return -1;
	}
	if (t->wall_nsec < 0 || t->wall_nsec >= 1000000000 || !(t->interval_s >= 0)) {
		snprintf(err, errsz, "corrupt recording: its trailer's times are out of range");
		return -1;
	}
	r->have_trailer = true;
	return 0;
}

/* Is an event's size the one of its kind? */
static bool event_whole(const uint8_t *e, size_t size)
{
	switch (e[0]) {
	case EV_CALL:
		return size == sizeof(struct call_event) || size == sizeof(struct call_path_event);
	case EV_SLICE:
		return size == sizeof(struct slice_event);
	case EV_REQUEST:
		return size == sizeof(struct request_event);
	}
	return false;
}

int rec_next(struct rec_reader *r, const void **data, size_t *size, char *err, size_t errsz)
{
	uint8_t *b = (uint8_t *)r->body + 4;
	uint32_t len, type;
	size_t got;

	if (r->have_trailer || r->truncated)
		return 0;
	got = fread(&len, 1, 4, r->f);
	if (got != 4) {
		/* At a record's boundary or not, the trailer is missing. */
		r->truncated = true;
		return 0;
	}
	if (len < 4 || len > REC_MAX_BODY) {
		snprintf(err, errsz, "corrupt recording: a record of %u bytes after %llu records",
			 len, (unsigned long long)r->records);
		return -1;
	}
	if (fread(b, 1, len, r->f) != len) {
		r->truncated = true;
		return 0;
	}
	memcpy(&type, b, 4);
	if (type == REC_TRAILER) {
		if (read_trailer(r, len, err, errsz))
			return -1;
		if (fgetc(r->f) != EOF) {
			snprintf(err, errsz, "corrupt recording: data after its trailer");
			return -1;
		}
		return 0;
	}
	if (type != REC_EVENT || !event_whole(b + 4, len - 4)) {
		snprintf(err, errsz, "corrupt recording: record %llu is of no known kind or size",
			 (unsigned long long)r->records + 1);
		return -1;
	}
	r->records++;
	*data = b + 4;
	*size = len - 4;
	return 1;
}

void rec_reader_free(struct rec_reader *r)
{
	free(r->h.options);
	free(r->h.plan_text);
	r->h.options = NULL;
	r->h.plan_text = NULL;
}
