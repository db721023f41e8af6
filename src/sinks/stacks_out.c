// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
#include "opt_stacks.h"
#include "stacks_out.h"
#include "verdict.h"

/* "fio", or "fio [4242]" with -P. */
static void who(const struct stack_report *r, const struct stack_entry *e, char *buf, size_t sz)
{
	if (r->per_process)
		snprintf(buf, sz, "%s [%" PRIu32 "]", e->comm, e->tgid);
	else
		snprintf(buf, sz, "%s", e->comm);
}

static void disk_of(const struct stack_report *r, uint32_t dev, char *buf, size_t sz)
{
	if (r->disk_name)
		r->disk_name(dev, buf, sz);
	else
		format_kdev(dev, buf, sz);
}

/* The name of an op of the report's kind. */
static const char *op_of(const struct stack_report *r, unsigned int op)
{
	return r->calls ? op_name(LAYER_SYSCALL, op) : op_name(LAYER_BLK, op);
}

/* "[io_wait]": a call's part, as the leaf of its stack. */
static void part_leaf(unsigned int part, char *buf, size_t sz)
{
	snprintf(buf, sz, "[%s]", part_name(part - 1));
}

/* "read: 300 requests, 1,228,800 bytes, 45,123 us" for each op it has
 * (calls: "read: 300 calls, 45,123 us"). */
static void text_weights(FILE *out, const struct stack_report *r, const struct stack_weights *w)
{
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		char req[32], bytes[32], t[32];

		if (!w->requests[op] && !w->bytes[op])
			continue;
		format_count(w->requests[op], req, sizeof(req));
		format_count(w->bytes[op], bytes, sizeof(bytes));
		format_count((w->time_ns[op] + unit_ns(r->unit) / 2) / unit_ns(r->unit), t,
			     sizeof(t));
		if (r->calls)
			fprintf(out, "        %s: %s calls, %s %s\n", op_of(r, op), req, t,
				unit_name(r->unit));
		else
			fprintf(out, "        %s: %s requests, %s bytes, %s %s %s time\n",
				op_of(r, op), req, bytes, t, unit_name(r->unit),
				r->queued ? "queued" : "device");
	}
}

static void text_frames(FILE *out, const struct stack_frame *f, unsigned int n, bool lost)
{
	if (lost)
		fprintf(out, "    [stack lost]\n");
	for (unsigned int i = 0; i < n; i++)
		fprintf(out, "    %s\n", f[i].name);
}

static void text_entry(FILE *out, const struct stack_report *r, const struct stack_entry *e)
{
	char name[64];

	if (e->part) {
		part_leaf(e->part, name, sizeof(name));
		fprintf(out, "    %s\n", name);
	}
	if (r->kernel && !r->calls)
		text_frames(out, e->kframes, e->nr_kframes, e->klost);
	if (r->kernel && r->user && !r->calls)
		fprintf(out, "    --\n");
	if (r->user)
		text_frames(out, e->uframes, e->nr_uframes, e->ulost);
	who(r, e, name, sizeof(name));
	fprintf(out, "        %s\n", name);
	text_weights(out, r, &e->w);
}

/* The stacks of one disk (-D), or of every disk (all_disks). */
static void text_group(FILE *out, const struct stack_report *r, uint32_t dev, bool all_disks)
{
	unsigned int shown = 0, more = 0;
	uint64_t more_weight = 0;
	char disk[64], w[32];

	if (!all_disks) {
		disk_of(r, dev, disk, sizeof(disk));
		fprintf(out, "disk %s\n", disk);
	}
	for (size_t i = 0; i < r->nr_entries; i++) {
		const struct stack_entry *e = &r->entries[i];

		if (!all_disks && e->dev != dev)
			continue;
		if (shown < r->top) {
			text_entry(out, r, e);
			fputc('\n', out);
			shown++;
		} else {
			more++;
			more_weight += e->weight;
		}
	}
	if (more) {
		format_count(more_weight, w, sizeof(w));
		fprintf(out, "    (%u more stacks, %s %s: --top shows more)\n\n", more, w,
			stack_weight_name(r->weight));
	}
}

void stacks_text(FILE *out, const struct stack_report *r)
{
	char n[32], room[32];

	if (r->calls)
		fprintf(out, "\nCalls by user stack and part, heaviest first by %s (the %u heaviest):\n\n",
			r->weight == WEIGHT_TIME ? "time" : "calls", r->top);
	else
		fprintf(out,
			"\nBlock I/O by %s%s%s stack, heaviest first by %s%s (the %u heaviest%s):\n\n",
			r->kernel ? "kernel" : "", r->kernel && r->user ? " and " : "",
			r->user ? "user" : "", stack_weight_name(r->weight),
			r->weight == WEIGHT_TIME ? (r->queued ? " queued" : " on the device") : "",
			r->top, r->per_disk ? " per disk" : "");
	if (!r->nr_entries)
		fprintf(out, "    (none)\n\n");
	if (r->per_disk) {
		/* Disks in the order of their heaviest stack. */
		for (size_t i = 0; i < r->nr_entries; i++) {
			bool seen = false;

			for (size_t j = 0; j < i && !seen; j++)
				seen = r->entries[j].dev == r->entries[i].dev;
			if (!seen)
				text_group(out, r, r->entries[i].dev, false);
		}
	} else {
		text_group(out, r, 0, true);
	}
	format_count(r->keys, n, sizeof(n));
	format_count(r->max_keys, room, sizeof(room));
	fprintf(out, "(stacks: %s keys of room for %s", n, room);
	if (r->losses[STACK_LOSS_KEYS]) {
		format_count(r->losses[STACK_LOSS_KEYS], n, sizeof(n));
		format_count(r->losses[STACK_LOSS_KEY_BYTES], room, sizeof(room));
		fprintf(out, "; %s requests (%s bytes) LOST with no room for their key: "
			     "--max-stacks",
			n, room);
	}
	if (r->losses[STACK_LOSS_TRACES])
		fprintf(out, "; %" PRIu64 " stacks lost (the stack map was full)",
			r->losses[STACK_LOSS_TRACES]);
	fprintf(out, "; %" PRIu64 " frames [unknown]", r->unresolved);
	if (r->procs_unread)
		fprintf(out, "; %u processes gone before their maps were read",
			r->procs_unread);
	if (r->unw.unwound || r->losses[STACK_LOSS_SNAPS])
		fprintf(out, "; user stacks unwound: %" PRIu64 ", %" PRIu64 " [truncated], %" PRIu64
			     " [no unwind info], %" PRIu64 " [unwind failed], %" PRIu64
			     " LOST with no room in the ring buffer",
			r->unw.unwound, r->unw.truncated, r->unw.no_cfi, r->unw.failed,
			r->losses[STACK_LOSS_SNAPS]);
	fprintf(out, ")\n");
}

static json_object *frames_json(const struct stack_frame *f, unsigned int n, bool user)
{
	json_object *a = json_object_new_array();
	char hex[32];

	for (unsigned int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(f[i].name));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, f[i].addr);
		json_object_object_add(o, "addr", json_object_new_string(hex));
		json_object_object_add(o, "resolved", json_object_new_boolean(f[i].resolved));
		if (user && f[i].module) {
			json_object_object_add(o, "module", json_object_new_string(f[i].module));
			snprintf(hex, sizeof(hex), "0x%" PRIx64, f[i].elf_addr);
			json_object_object_add(o, "elf_addr", json_object_new_string(hex));
		}
		json_object_array_add(a, o);
	}
	return a;
}

json_object *stacks_json(const struct stack_report *r)
{
	json_object *root = json_object_new_object(), *entries = json_object_new_array();
	json_object *lost = json_object_new_object();

	json_object_object_add(root, "weight",
			       json_object_new_string(stack_weight_name(r->weight)));
	json_object_object_add(root, "of", json_object_new_string(r->calls ? "calls" : "requests"));
	json_object_object_add(root, "kernel", json_object_new_boolean(r->kernel && !r->calls));
	json_object_object_add(root, "user", json_object_new_boolean(r->user));
	for (size_t i = 0; i < r->nr_entries; i++) {
		const struct stack_entry *e = &r->entries[i];
		json_object *o = json_object_new_object(), *ops = json_object_new_object();
		char disk[64];

		json_object_object_add(o, "comm", json_object_new_string(e->comm));
		if (r->per_process)
			json_object_object_add(o, "pid", json_object_new_int64(e->tgid));
		if (r->per_disk) {
			disk_of(r, e->dev, disk, sizeof(disk));
			json_object_object_add(o, "disk", json_object_new_string(disk));
		}
		if (r->kernel && !r->calls)
			json_object_object_add(o, "kernel_frames",
					       frames_json(e->kframes, e->nr_kframes, false));
		if (r->user)
			json_object_object_add(o, "user_frames",
					       frames_json(e->uframes, e->nr_uframes, true));
		if (e->klost || e->ulost)
			json_object_object_add(o, "stack_lost", json_object_new_boolean(true));
		if (e->part)
			json_object_object_add(o, "part", json_object_new_string(part_name(e->part - 1)));
		json_object_object_add(o, "weight", json_object_new_uint64(e->weight));
		for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
			json_object *w;

			if (!e->w.requests[op] && !e->w.bytes[op])
				continue;
			w = json_object_new_object();
			json_object_object_add(w, "requests",
					       json_object_new_uint64(e->w.requests[op]));
			json_object_object_add(w, "bytes", json_object_new_uint64(e->w.bytes[op]));
			json_object_object_add(w, "time_ns",
					       json_object_new_uint64(e->w.time_ns[op]));
			json_object_object_add(w, "timed", json_object_new_uint64(e->w.timed[op]));
			json_object_object_add(ops, op_of(r, op), w);
		}
		json_object_object_add(o, "ops", ops);
		json_object_array_add(entries, o);
	}
	json_object_object_add(root, "stacks", entries);
	json_object_object_add(root, "keys", json_object_new_uint64(r->keys));
	json_object_object_add(root, "max_keys", json_object_new_uint64(r->max_keys));
	json_object_object_add(lost, "requests",
			       json_object_new_uint64(r->losses[STACK_LOSS_KEYS]));
	json_object_object_add(lost, "bytes",
			       json_object_new_uint64(r->losses[STACK_LOSS_KEY_BYTES]));
	json_object_object_add(lost, "stacks",
			       json_object_new_uint64(r->losses[STACK_LOSS_TRACES]));
	json_object_object_add(lost, "processes_untold",
			       json_object_new_uint64(r->losses[STACK_LOSS_PROCS]));
	json_object_object_add(lost, "stack_copies",
			       json_object_new_uint64(r->losses[STACK_LOSS_SNAPS]));
	json_object_object_add(root, "lost", lost);
	json_object_object_add(root, "unresolved_frames", json_object_new_uint64(r->unresolved));
	if (r->unw.unwound || r->unw.fp_walked || r->losses[STACK_LOSS_SNAPS]) {
		json_object *u = json_object_new_object();

		json_object_object_add(u, "stacks", json_object_new_uint64(r->unw.unwound));
		json_object_object_add(u, "walked_by_frame_pointers",
				       json_object_new_uint64(r->unw.fp_walked));
		json_object_object_add(u, "truncated", json_object_new_uint64(r->unw.truncated));
		json_object_object_add(u, "no_unwind_info", json_object_new_uint64(r->unw.no_cfi));
		json_object_object_add(u, "failed", json_object_new_uint64(r->unw.failed));
		json_object_object_add(u, "bytes_copied",
				       json_object_new_uint64(r->unw.copied_bytes));
		json_object_object_add(u, "unwind_ns", json_object_new_uint64(r->unw.unwind_ns));
		json_object_object_add(root, "unwinding", u);
	}
	json_object_object_add(root, "processes_unread", json_object_new_uint64(r->procs_unread));
	return root;
}

/* A frame as folded lines hold it: no ';' (the separator) nor newline. */
static void folded_frame(FILE *out, const char *name)
{
	fputc(';', out);
	for (const char *c = name; *c; c++)
		fputc(*c == ';' || *c == '\n' ? '_' : *c, out);
}

int stacks_folded(FILE *out, const struct stack_report *r)
{
	bool both = r->kernel && r->user;

	for (size_t i = 0; i < r->nr_entries; i++) {
		const struct stack_entry *e = &r->entries[i];
		char name[64];

		if (!e->weight)
			continue;
		who(r, e, name, sizeof(name));
		for (char *c = name; *c; c++)
			if (*c == ';')
				*c = '_';
		fputs(name, out);
		if (e->ulost)
			folded_frame(out, "[stack lost]");
		for (unsigned int f = e->nr_uframes; f > 0; f--)
			folded_frame(out, e->uframes[f - 1].name);
		if (e->klost)
			folded_frame(out, both ? "[stack lost]_[k]" : "[stack lost]");
		for (unsigned int f = e->nr_kframes; f > 0; f--) {
			char k[300];

			/* With user frames too, kernel frames say so, as perf
			 * script's folded output marks them for flamegraph.pl. */
			snprintf(k, sizeof(k), "%s%s", e->kframes[f - 1].name, both ? "_[k]" : "");
			folded_frame(out, k);
		}
		if (e->part) {
			char leaf[64];

			part_leaf(e->part, leaf, sizeof(leaf));
			folded_frame(out, leaf);
		}
		if (r->per_disk && !r->calls) {
			char disk[64], leaf[80];

			disk_of(r, e->dev, disk, sizeof(disk));
			snprintf(leaf, sizeof(leaf), "[%s]", disk);
			folded_frame(out, leaf);
		}
		fprintf(out, " %" PRIu64 "\n", e->weight);
	}
	return fflush(out) || ferror(out) ? -1 : 0;
}
