/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One line per slow call (--slower): the text and JSON forms of a call
 * event from the kernel. Pure: no BPF, so the unit tests feed it events.
 */
#ifndef EVENT_FMT_H
#define EVENT_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "opts.h"
#include "report.h"

struct event_ctx {
	enum unit unit;		 /* text: the unit of times */
	const struct plan *plan; /* which layers' self times are parts, per op */
	bool parts;		 /* calls are split into parts */
	bool offcpu;		 /* with io_wait, blocked, runqueue */
	int64_t mono_to_real_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	disk_namer disk_name;
	const char *kallsyms; /* where lock names come from; NULL: /proc/kallsyms */
};

/*
 * The lock at addr, into buf: "inode rwsem of FILE" when inode (FILE: the
 * dentry name of the call's file, a field of filesz bytes), a global lock's
 * symbol from kallsyms (NULL: /proc/kallsyms), or its address. Empty: addr 0.
 */
void lock_label(const char *kallsyms, uint64_t addr, bool inode, const char *file, size_t filesz,
		char *buf, size_t sz);

/* The lock of the call's longest contention, into buf, as lock_label. */
void event_lock_label(const struct event_ctx *c, const struct call_event *e, char *buf,
		      size_t sz);

/*
 * The file a call names, into buf: its dentry's name, or with --full-path
 * (an event of size >= sizeof(struct call_path_event)) its path from the
 * root, ".../" first when deeper than the kernel walks. Empty: no file.
 * Returns a note when the path could not be had, else NULL.
 */
const char *event_file_label(const struct call_event *e, size_t size, char *buf, size_t sz);

/* The column header of the text lines. */
void event_text_header(FILE *out, const struct event_ctx *c);

/* One text line for the call. Returns 0, or -1 when the output failed. */
int event_text_line(FILE *out, const struct event_ctx *c, const struct call_event *e, size_t size);

/*
 * The call's bios by device level, {"bios", "ns", "devices": [{"device",
 * "bios", "ns", "below_ns", "own_ns"}...], "cut"}, the longest level first.
 */
json_object *call_bio_json(const struct call_event *e, disk_namer disk_name);

/* The JSON object of the call ({"event": "io", ...}); the caller puts it. */
json_object *event_json(const struct event_ctx *c, const struct call_event *e, size_t size);

#endif /* EVENT_FMT_H */
