// SPDX-License-Identifier: GPL-2.0
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

void sink_close(struct sink *s)
{
	if (s->ops && s->ops->close)
		s->ops->close(s);
	s->ops = NULL;
}
