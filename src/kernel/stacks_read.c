// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ksym.h"
#include "stacks_read.h"
#include "symbolize.h"
#include "iostackbreak.skel.h"

struct stack_reader {
	const struct config *cfg;
	struct tracer *t;
	struct symbolizer *sym;
	struct ring_buffer *news; /* -U: processes to read the maps of */
	pthread_t thread;
	bool running;
	volatile bool stop;
};

static unsigned int read_ips(void *ctx, __s32 id, uint64_t ips[STACK_DEPTH]);

/*
 * A new key with a user stack: the process's maps, now, while it lives,
 * and again if they do not map every address of the stack.
 */
static int on_new_stack(void *ctx, void *data, size_t sz)
{
	struct stack_reader *s = ctx;
	struct stack_news news;
	uint64_t ips[STACK_DEPTH];
	unsigned int n;

	if (sz < sizeof(news))
		return 0;
	memcpy(&news, data, sizeof(news));
	n = read_ips(s, news.ustack, ips);
	sym_proc_cover(s->sym, (int)news.tgid, ips, n);
	return 0;
}

static void *news_loop(void *arg)
{
	struct stack_reader *s = arg;

	while (!s->stop)
		if (ring_buffer__poll(s->news, 100) < 0 && errno != EINTR)
			break;
	return NULL;
}

struct stack_reader *stack_reader_start(struct tracer *t, const struct config *cfg, char *err,
					size_t errsz)
{
	struct stack_reader *s = calloc(1, sizeof(*s));

	if (!s || !(s->sym = sym_new(NULL))) {
		free(s);
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	s->cfg = cfg;
	s->t = t;
	if (!cfg->ustack)
		return s;
	s->news = ring_buffer__new(bpf_map__fd(t->skel->maps.stack_proc_news), on_new_stack, s,
				   NULL);
	if (!s->news) {
		snprintf(err, errsz, "cannot read the ring buffer of new processes: %s",
			 strerror(errno));
		stack_reader_stop(s);
		return NULL;
	}
	/* The stop signals are blocked in every thread: the session's own. */
	if (pthread_create(&s->thread, NULL, news_loop, s)) {
		snprintf(err, errsz, "cannot start a thread: %s", strerror(errno));
		stack_reader_stop(s);
		return NULL;
	}
	s->running = true;
	return s;
}

void stack_reader_stop(struct stack_reader *s)
{
	if (!s)
		return;
	if (s->running) {
		s->stop = true;
		pthread_join(s->thread, NULL);
	}
	ring_buffer__free(s->news);
	sym_free(s->sym);
	free(s);
}

static unsigned int read_ips(void *ctx, __s32 id, uint64_t ips[STACK_DEPTH])
{
	struct stack_reader *s = ctx;
	unsigned int n = 0;

	memset(ips, 0, STACK_DEPTH * sizeof(ips[0]));
	if (bpf_map_lookup_elem(bpf_map__fd(s->t->skel->maps.stack_traces), &id, ips))
		return 0;
	while (n < STACK_DEPTH && ips[n])
		n++;
	return n;
}

static int kernel_name(void *ctx, uint64_t addr, char *buf, size_t sz)
{
	(void)ctx;
	return ksym_text_name(NULL, addr, buf, sz);
}

static int user_name(void *ctx, uint32_t tgid, uint64_t addr, bool return_addr,
		     struct stack_frame *f)
{
	struct stack_reader *s = ctx;
	struct sym_frame sf;
	int ret = sym_user(s->sym, (int)tgid, addr, return_addr, &sf);

	f->name = strdup(sf.name);
	f->module = sf.module[0] ? strdup(sf.module) : NULL;
	f->elf_addr = sf.elf_addr;
	return ret;
}

/* Every key of the counts map, with its counts. */
static int read_counts(struct stack_reader *s, struct stack_raw **out, size_t *n)
{
	int fd = bpf_map__fd(s->t->skel->maps.stack_counts);
	size_t cap = 256, nr = 0;
	struct stack_raw *raw = malloc(cap * sizeof(*raw)), *grown;
	struct stack_key key, next;
	void *prev = NULL;

	if (!raw)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (nr == cap) {
			grown = realloc(raw, 2 * cap * sizeof(*raw));
			if (!grown) {
				free(raw);
				return -ENOMEM;
			}
			raw = grown;
			cap *= 2;
		}
		raw[nr].key = key;
		if (bpf_map_lookup_elem(fd, &key, &raw[nr].counts))
			continue; /* gone since: never, the map only grows */
		nr++;
	}
	*out = raw;
	*n = nr;
	return 0;
}

int stack_reader_report(struct stack_reader *s, disk_namer disk_name, struct stack_report *out)
{
	int fd = bpf_map__fd(s->t->skel->maps.stack_losses);
	int ncpu = libbpf_num_possible_cpus();
	struct stack_source src = {
		.ctx = s,
		.ips = read_ips,
		.kname = kernel_name,
		.uname = user_name,
	};
	struct stack_raw *raw = NULL;
	uint64_t losses[NR_STACK_LOSSES] = {};
	size_t n = 0;
	int err;

	/* The run is over (one report, at the end): the last news, here. */
	if (s->running) {
		s->stop = true;
		pthread_join(s->thread, NULL);
		s->running = false;
	}
	if (s->news)
		ring_buffer__consume(s->news);
	err = read_counts(s, &raw, &n);
	if (err)
		return err;
	/* A process whose news was lost is read now, if it still lives. */
	for (size_t i = 0; s->cfg->ustack && i < n; i++)
		sym_proc_note(s->sym, (int)raw[i].key.tgid);
	err = stack_report_build(out, s->cfg, raw, n, &src);
	free(raw);
	if (err)
		return err;
	out->disk_name = disk_name;
	if (ncpu > 0) {
		uint64_t *v = calloc((size_t)ncpu, sizeof(*v));

		for (__u32 k = 0; v && k < NR_STACK_LOSSES; k++) {
			if (bpf_map_lookup_elem(fd, &k, v))
				continue;
			for (int c = 0; c < ncpu; c++)
				losses[k] += v[c];
		}
		free(v);
	}
	memcpy(out->losses, losses, sizeof(losses));
	out->procs_unread = sym_procs_unread(s->sym);
	return 0;
}
