/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording file of --record (docs/record.md), written as the events
 * come and read by iostackbreak report FILE: a header (the kernel, the tool,
 * the options, the plan), then one record per event as the kernel sent it,
 * each with its length first, then a trailer with what the run lost and
 * counted apart from events. A file cut short reads up to its last whole
 * record.
 */
#ifndef RECORDING_H
#define RECORDING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "report.h"
#include "planner.h"

#define REC_MAGIC "IOSBREC\n"
#define REC_MAGIC_LEN 8
#define REC_VERSION 1
/* Written in the writer's byte order: a reader of the other order sees
 * 0x04030201 and refuses the file rather than misread it. */
#define REC_ORDER 0x01020304U
/* The trailer's body: its type, three sizes, six u64, then the arrays. */
#define REC_TRAILER_BODY                                                                           \
	(4 + 3 * 4 + 6 * 8 + 8 * NR_DROP_REASONS + 8 * NR_LAYERS * NR_OPS * NR_FD_KINDS +          \
	 sizeof(struct wb_snapshot))
/* A record's body at most: an event with its path, or the trailer. */
#define REC_EVENT_BODY (4 + sizeof(struct call_path_event))
#define REC_MAX_BODY (REC_TRAILER_BODY > REC_EVENT_BODY ? REC_TRAILER_BODY : REC_EVENT_BODY)

enum rec_type {
	REC_EVENT = 1,	 /* an event as the ring buffer held it */
	REC_TRAILER = 2, /* the last record: what was lost, counted apart */
};

/* What the report needs of the run beside the events: its plan and the
 * options that decided what the kernel counted. */
struct rec_header {
	uint32_t version;
	int64_t mono_to_real_ns; /* event times to wall-clock */
	struct plan plan;	 /* what attached: cells, why texts, flags */
	bool all_fds, offcpu, queued;
	char disk[64]; /* -d; "" none */
	char kernel[128], tool[128];
	char *options; /* the command line, as text */
	char *plan_text; /* --plan's table of the run */
};

/* What the run counted apart from the events (the final report's). */
struct rec_trailer {
	uint64_t events;      /* records written before it */
	uint64_t kernel_lost; /* events the ring buffer had no room for */
	uint64_t drops[NR_DROP_REASONS];
	uint64_t left_out[NR_LAYERS][NR_OPS][NR_FD_KINDS];
	struct wb_snapshot wb;
	int64_t wall_sec, wall_nsec; /* when the final report was taken */
	double interval_s;	     /* the time it covered */
	bool have_report;	     /* 0: the run ended before its report */
};

/*
 * --ring=SECONDS: the records kept in memory, oldest first, those that
 * ended more than `window_ns` before the newest dropped, and the file
 * written only when asked (rec_ring_dump()). cap bounds the memory: past
 * it the oldest go too, counted in overflowed.
 */
struct rec_ring {
	uint64_t window_ns;
	uint8_t *buf;
	size_t head, tail, cap; /* records in buf[head, tail) */
	uint64_t newest_ns;	/* the latest end of an event kept */
	uint64_t overflowed;	/* records dropped for room, not for age */
	uint8_t *header;	/* the file's header, written at each dump */
	size_t header_len;
};

/* Writing (the session's --record). */
struct rec_writer {
	FILE *f;
	const char *path;
	uint64_t events, bytes;
	struct rec_trailer tr;
	int err; /* errno of the first failed write; 0: none */
	struct rec_ring *ring; /* --ring; NULL: every event to the file */
};

/* Creates the file (truncated); 0, or -1 with one line in err. */
int rec_create(struct rec_writer *w, const char *path, char *err, size_t errsz);

/* --ring: events kept in memory for seconds, up to cap_bytes; the file
 * is written by rec_ring_dump(). 0, or -1 with errno. */
int rec_ring_start(struct rec_writer *w, unsigned int seconds, size_t cap_bytes);

/* --ring: the file (truncated) with the events of the window kept now. 0,
 * or -1 with errno. events: how many it holds. */
int rec_ring_dump(struct rec_writer *w, uint64_t *events);

/* The header, once tracing: what attached, how times map to wall-clock. */
int rec_write_header(struct rec_writer *w, const struct config *cfg, const struct plan *plan,
		     int64_t mono_to_real_ns);

/* One event as the kernel sent it. */
void rec_write_event(struct rec_writer *w, const void *data, size_t size);

/* The final report's totals that are not events, for the trailer. */
void rec_note_report(struct rec_writer *w, const struct report *r);

/* The trailer, then close. 0, or -1 with errno (every write checked). */
int rec_close(struct rec_writer *w, uint64_t kernel_lost);

/* Reading (iostackbreak report FILE, and the fuzzer). */
struct rec_reader {
	FILE *f;
	struct rec_header h;
	struct rec_trailer tr;
	bool have_trailer; /* the file ended with its trailer */
	bool truncated;	   /* it ended inside a record, or without a trailer */
	uint64_t records;
	/* A record's body at byte 4, so that its event starts 8-aligned. */
	uint64_t body[(REC_MAX_BODY + 8) / 8];
};

/* Reads the header. 0, or -1 with one line in err (bad magic, a newer
 * version, another byte order, a header cut short). */
int rec_open(struct rec_reader *r, FILE *f, char *err, size_t errsz);

/*
 * The next event into *data, *size (valid until the next call). 1: an
 * event; 0: the end (the trailer read, or the file cut short: truncated
 * says which); -1: a corrupt record, with one line in err.
 */
int rec_next(struct rec_reader *r, const void **data, size_t *size, char *err, size_t errsz);

void rec_reader_free(struct rec_reader *r);

#endif /* RECORDING_H */
