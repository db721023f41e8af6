// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include "layers.h"
#include "sink.h"

int sink_write(struct sink *s, const struct report *r)
{
	const struct sink_ops *ops = s->ops;

	if (ops->report_begin)
		ops->report_begin(s, r);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++)
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++)
			if (r->plan->cells[layer][op].wanted && ops->cell)
				ops->cell(s, r, layer, op);
	if (ops->cells_end)
		ops->cells_end(s, r);
	if (r->split_layer >= 0 && ops->calls)
		ops->calls(s, r);
	if (r->breakdowns && ops->breakdown_rows)
		ops->breakdown_rows(s, r);
	if (r->stats && ops->stats)
		ops->stats(s, r);
	return ops->report_end ? ops->report_end(s, r) : 0;
}

int sink_close(struct sink *s)
{
	int ret = 0;

	if (s->ops && s->ops->close)
		ret = s->ops->close(s);
	s->ops = NULL;
	return ret;
}

struct sink *sinks_add(struct sinks *l)
{
	return l->nr < MAX_SINKS ? &l->v[l->nr++] : NULL;
}

int sinks_write(struct sinks *l, const struct report *r, const struct sink **failed)
{
	int saved = 0;

	*failed = NULL;
	for (unsigned int i = 0; i < l->nr; i++) {
		if (!l->v[i].ops || !sink_write(&l->v[i], r) || *failed)
			continue;
		*failed = &l->v[i];
		saved = errno;
	}
	errno = saved;
	return *failed ? -1 : 0;
}

int sinks_close(struct sinks *l, char *what, size_t sz)
{
	bool failed = false;
	int saved = 0;

	for (unsigned int i = 0; i < l->nr; i++) {
		/* Copied first: closing may free what `what` points into. */
		if (!failed && l->v[i].what)
			snprintf(what, sz, "%s", l->v[i].what);
		if (!l->v[i].ops || !sink_close(&l->v[i]) || failed)
			continue;
		failed = true;
		saved = errno;
	}
	l->nr = 0;
	errno = saved;
	return failed ? -1 : 0;
}
