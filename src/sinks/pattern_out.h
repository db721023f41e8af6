/* SPDX-License-Identifier: GPL-2.0 */
/* --pattern in the reports: the text section, the JSON objects and the
 * Prometheus counters of access patterns (src/report/pattern_report.h). */
#ifndef PATTERN_OUT_H
#define PATTERN_OUT_H

#include <stdio.h>
#include <json-c/json.h>
#include "report.h"

/* The text section: a row per level, op and key, the levels side by side
 * per op, then per level and op the gaps and sizes. Nothing without
 * --pattern. */
void pattern_text(FILE *out, const struct report *r);

/* JSON: the "pattern" object of a cell's accesses (h). */
json_object *pattern_json(const struct pattern_hist *h);

/* JSON: adds the "pattern" object to a cell's object o, when the cell has
 * a pattern in the report. */
void pattern_json_cell(json_object *o, const struct report *r, unsigned int layer, unsigned int op);

/* JSON: "patterns", an object per level, op and key, on root. */
void pattern_json_rows(json_object *root, const struct report *r);

/* Prometheus: the counters of accesses and bytes by level, op and pattern. */
void pattern_prom(FILE *out, const struct report *r);

#endif /* PATTERN_OUT_H */
