// SPDX-License-Identifier: GPL-2.0
/*
 * Exporter mode: one snapshot of the maps per scrape, reported as totals
 * since start. No interval differences and no reset: Prometheus counters
 * must never go down, and rate() or increase() over them gives whatever
 * interval a query asks for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h> /* before the headers shared with BPF */
#include "collect.h"
#include "disk.h"
#include "exporter.h"
#include "metrics.h"
#include "prom.h"
#include "report.h"
#include "take.h"
#include "version.h"

struct metrics {
	pthread_mutex_t lock; /* one report at a time: source and rep below */
	const struct config *cfg;
	struct exporter *http; /* listening from metrics_open(), serving later */
	struct report_source source;
	struct prom_meta meta;
	struct utsname uts;
	bool textfile_failing; /* said once, until a write succeeds */
	struct report rep;
};

struct metrics *metrics_open(const struct config *cfg, char *err, size_t errsz)
{
	struct metrics *m = calloc(1, sizeof(*m));
	struct stat st;

	if (!m) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->cfg = cfg;
	uname(&m->uts);
	m->meta.version = iosb_version;
	m->meta.kernel = m->uts.release;
	errno = 0;
	if (cfg->textfile && (stat(cfg->textfile, &st) || !S_ISDIR(st.st_mode) ||
			      access(cfg->textfile, W_OK | X_OK))) {
		snprintf(err, errsz,
			 "cannot write to %s: %s; give --textfile an existing directory we "
			 "may write to (node_exporter's --collector.textfile.directory)",
			 cfg->textfile, errno ? strerror(errno) : "not a directory");
		metrics_close(m);
		return NULL;
	}
	if (cfg->prometheus) {
		m->http =
		    exporter_listen(cfg->prom_addr, cfg->prom_port, cfg->prom_ipv6, err, errsz);
		if (!m->http) {
			metrics_close(m);
			return NULL;
		}
	}
	return m;
}

void metrics_close(struct metrics *m)
{
	if (!m)
		return;
	exporter_stop(m->http);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* The report of a snapshot: its totals since start, as they are. */
int metrics_render(void *ctx, FILE *out)
{
	struct metrics *m = ctx;
	int ret;

	/* The HTTP thread and the textfile timer may both be here. */
	pthread_mutex_lock(&m->lock);
	ret = report_take(&m->source, &m->rep, false);
	if (!ret) {
		if (report_prometheus(out, &m->rep, &m->meta))
			ret = -EIO;
		report_release(&m->rep);
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}

unsigned int metrics_interval(const struct metrics *m)
{
	if (!m->cfg->textfile)
		return 0;
	return m->cfg->interval ? m->cfg->interval : TEXTFILE_INTERVAL_S;
}

static int write_textfile(struct metrics *m, char *err, size_t errsz)
{
	return textfile_write(m->cfg->textfile, TEXTFILE_NAME, metrics_render, m, err, errsz);
}

int metrics_start(struct metrics *m, struct tracer *t, const struct plan *plan, char *err,
		  size_t errsz)
{
	const struct config *cfg = m->cfg;
	char url[128];

	report_source_start(&m->source, t, cfg, plan, 0);
	m->source.since_start = true;
	if (cfg->textfile && write_textfile(m, err, errsz))
		return -1;
	if (m->http && exporter_serve(m->http, metrics_render, m, cfg->verbose, err, errsz))
		return -1;
	report_skipped_text(stderr, plan);
	if (m->http)
		exporter_url(m->http, url, sizeof(url));
	if (m->http && cfg->textfile)
		fprintf(stderr, "Serving metrics at %s and writing %s/%s every %u s. ", url,
			cfg->textfile, TEXTFILE_NAME, metrics_interval(m));
	else if (m->http)
		fprintf(stderr, "Serving metrics at %s. ", url);
	else
		fprintf(stderr, "Writing %s/%s every %u s. ", cfg->textfile, TEXTFILE_NAME,
			metrics_interval(m));
	fprintf(stderr, "Hit Ctrl-C to end.\n");
	return 0;
}

void metrics_tick(struct metrics *m)
{
	char err[512];

	/* A full disk must not stop the HTTP side: say it once, and again
	 * once it is over. */
	if (write_textfile(m, err, sizeof(err))) {
		if (!m->textfile_failing)
			fprintf(stderr, "iostackbreak: %s; trying again every %u s\n", err,
				metrics_interval(m));
		m->textfile_failing = true;
	} else if (m->textfile_failing) {
		fprintf(stderr, "iostackbreak: writing %s/%s again\n", m->cfg->textfile,
			TEXTFILE_NAME);
		m->textfile_failing = false;
	}
}

int metrics_finish(struct metrics *m, char *err, size_t errsz)
{
	exporter_stop(m->http);
	m->http = NULL;
	/* The last counts, for as long as node_exporter keeps reading the
	 * file (its node_textfile_mtime_seconds tells how old they are). */
	return m->cfg->textfile ? write_textfile(m, err, errsz) : 0;
}
