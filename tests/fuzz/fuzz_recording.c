// SPDX-License-Identifier: GPL-2.0
/*
 * The reader of recordings (iostackbreak report FILE) fed any bytes, as a
 * file: a header cut anywhere or lying about its lengths, records of any
 * length, kind and content, a trailer or none. It must refuse with one
 * line or read to the end; each event it gives must be whole, of its
 * kind's size; a trailer must agree with the records before it; and the
 * events, counted again into a report (-P -D), must make JSON that parses.
 */
#include <json-c/json.h>
#include "fuzz.h"
#include "rec_count.h"
#include "recording.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void name_disk(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, "d%u", dev % 7);
}

/* The report of the events read, as JSON: it must parse. */
static void check_report(struct rec_reader *rd, struct rec_count *rc, const struct config *cfg)
{
	struct sinks sinks = {};
	const struct sink *failed;
	struct report r;
	char *text = NULL, what[64];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	json_object *o;

	FUZZ_CHECK(out, "open_memstream");
	rec_count_finish(rc, &rd->tr);
	FUZZ_CHECK(!sink_json_open(sinks_add(&sinks), out), "sink");
	FUZZ_CHECK(!report_build(&r, cfg, &rd->h.plan, &rc->snap, NULL, rd->tr.interval_s,
				 name_disk),
		   "report_build");
	sinks_write(&sinks, &r, &failed);
	report_release(&r);
	sinks_close(&sinks, what, sizeof(what));
	fclose(out);
	o = json_tokener_parse(text);
	FUZZ_CHECK(o && json_object_is_type(o, json_type_object), "report JSON: %.200s", text);
	json_object_put(o);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec_reader rd;
	struct config cfg = { .json = true, .per_process = true, .per_disk = true,
			      .unit = UNIT_NS };
	FILE *f = fmemopen((void *)data, size, "rb");
	struct rec_count rc;
	char err[512] = "";
	const void *ev;
	size_t evsz;
	int n;

	if (!f)
		return 0;
	rec_count_init(&rc, &cfg);
	if (rec_open(&rd, f, err, sizeof(err))) {
		FUZZ_CHECK(err[0] && !strchr(err, '\n'), "one line: %s", err);
		fclose(f);
		return 0;
	}
	while ((n = rec_next(&rd, &ev, &evsz, err, sizeof(err))) > 0) {
		const uint8_t *kind = ev;

		FUZZ_CHECK((kind[0] == EV_CALL && (evsz == sizeof(struct call_event) ||
						   evsz == sizeof(struct call_path_event))) ||
				   (kind[0] == EV_SLICE && evsz == sizeof(struct slice_event)) ||
				   (kind[0] == EV_REQUEST && evsz == sizeof(struct request_event)),
			   "event of kind %u and %zu bytes", kind[0], evsz);
		FUZZ_CHECK(((uintptr_t)ev & 7) == 0, "event not 8-aligned");
		rec_count_event(&rc, ev, evsz);
	}
	if (n < 0)
		FUZZ_CHECK(err[0] && !strchr(err, '\n'), "one line: %s", err);
	else
		FUZZ_CHECK(rd.have_trailer != rd.truncated, "trailer %d, truncated %d",
			   rd.have_trailer, rd.truncated);
	if (rd.have_trailer)
		FUZZ_CHECK(rd.tr.events == rd.records, "trailer %llu, records %llu",
			   (unsigned long long)rd.tr.events, (unsigned long long)rd.records);
	if (n == 0 && !rc.err)
		check_report(&rd, &rc, &cfg);
	rec_count_free(&rc);
	rec_reader_free(&rd);
	fclose(f);
	return 0;
}
