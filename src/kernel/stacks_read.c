// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ksym.h"
#include "stacks_read.h"
#include "symbolize.h"
#include "iostackbreak.skel.h"

/*
 * DWARF: the stacks user space unwound, each once (ids from UNWOUND_ID up,
 * beside the kernel's), and the counts by key, summed here as the kernel
 * sums the frame-pointer ones; both bounded by --max-stacks.
 */
#define UNWOUND_ID (1 << 30)

struct unwound {
	uint64_t *ips;
	unsigned int n;
	uint64_t hash;
};

struct unwound_key {
	struct stack_raw raw;
	uint64_t hash;
	bool used;
};

/* Block requests whose copies were unwound, until their completion adds
 * their time: by copy number, the older overwritten (a completion the
 * kernel never showed). */
#define PENDING 65536

struct pending {
	__u32 seq;
	struct stack_counts *counts;
};

struct stack_reader {
	const struct config *cfg;
	struct tracer *t;
	struct symbolizer *sym;
	struct ring_buffer *news; /* -U: processes to read the maps of; copies */
	pthread_t thread;
	bool running;
	volatile bool stop;
	/* DWARF: the stacks, by id - UNWOUND_ID; their index, open addressed. */
	struct unwound *stacks;
	unsigned int nr_stacks, max_stacks;
	unsigned int *stack_index; /* 1 + the stack's place; 0: free */
	struct unwound_key *keys;  /* open addressed, 2 * max_stacks slots */
	unsigned int nr_keys, key_slots;
	struct pending *pending; /* blk: PENDING of them */
	uint64_t losses[NR_STACK_LOSSES]; /* keys with no room, as the kernel's */
	struct stack_unwinding unw;
	/* The stack read_ips gave last was unwound here: its last address
	 * may be an end mark (SYM_MARK), not an address of the process. */
	bool last_unwound;
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

static uint64_t hash_bytes(const void *data, size_t len, uint64_t h)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The id of the unwound stack ips, kept if new; STACK_LOST with no room. */
static __s32 unwound_id(struct stack_reader *s, const uint64_t *ips, unsigned int n)
{
	uint64_t h = hash_bytes(ips, n * sizeof(*ips), 0xcbf29ce484222325ULL);
	unsigned int slots = 2 * s->max_stacks, i = (unsigned int)(h % slots);
	struct unwound *u;

	for (; s->stack_index[i]; i = (i + 1) % slots) {
		u = &s->stacks[s->stack_index[i] - 1];
		if (u->hash == h && u->n == n && !memcmp(u->ips, ips, n * sizeof(*ips)))
			return (__s32)(UNWOUND_ID + s->stack_index[i] - 1);
	}
	if (s->nr_stacks == s->max_stacks)
		return STACK_LOST;
	u = &s->stacks[s->nr_stacks];
	u->ips = malloc(n * sizeof(*ips));
	if (!u->ips)
		return STACK_LOST;
	memcpy(u->ips, ips, n * sizeof(*ips));
	u->n = n;
	u->hash = h;
	s->stack_index[i] = ++s->nr_stacks;
	return (__s32)(UNWOUND_ID + s->nr_stacks - 1);
}

/* The counts of key, made if new; NULL with no room (--max-stacks). */
static struct stack_counts *unwound_counts(struct stack_reader *s, const struct stack_key *key)
{
	uint64_t h = hash_bytes(key, sizeof(*key), 0xcbf29ce484222325ULL);
	unsigned int i = (unsigned int)(h % s->key_slots);

	for (; s->keys[i].used; i = (i + 1) % s->key_slots)
		if (s->keys[i].hash == h && !memcmp(&s->keys[i].raw.key, key, sizeof(*key)))
			return &s->keys[i].raw.counts;
	if (s->nr_keys == s->key_slots / 2)
		return NULL;
	s->nr_keys++;
	s->keys[i].used = true;
	s->keys[i].hash = h;
	s->keys[i].raw.key = *key;
	return &s->keys[i].raw.counts;
}

/*
 * A copy of a user stack (ustack_snaps): unwound, its stack kept once, and
 * its weights added under its key, as the kernel adds a frame-pointer
 * stack's. In auto, a process's first copy also decides its walk.
 */
static int on_snap(void *ctx, void *data, size_t sz)
{
	struct stack_reader *s = ctx;
	const struct ustack_head *h = data;
	const uint8_t *stack = (const uint8_t *)data + sizeof(*h);
	uint64_t ips[STACK_DEPTH];
	struct sym_regs regs;
	struct stack_key key;
	struct stack_counts *c;
	struct timespec t0, t1;
	bool fresh, fp = false;
	unsigned int n;
	__u32 mode;

	if (sz == sizeof(struct ustack_done)) {
		const struct ustack_done *d = data;
		struct pending *p = s->pending ? &s->pending[d->seq % PENDING] : NULL;

		if (p && p->seq == d->seq && p->counts) {
			p->counts->time_ns += d->ns;
			p->counts->timed++;
			p->seq = 0;
		}
		return 0;
	}
	if (sz < sizeof(*h) || sz < sizeof(*h) + h->size)
		return 0;
	key = h->key;
	/* auto: a process with frame pointers is walked by them from now on
	 * by the kernel, and this copy by them here, so that its stacks are
	 * the same before and after. */
	if (s->cfg->ustack_mode == USTACK_AUTO) {
		fp = sym_proc_has_fp(s->sym, (int)key.tgid, &fresh);
		mode = USTACK_FP;
		if (fp && fresh)
			bpf_map_update_elem(bpf_map__fd(s->t->skel->maps.ustack_modes), &key.tgid,
					    &mode, BPF_ANY);
	}
	regs = (struct sym_regs){ h->regs[0], h->regs[1], h->regs[2], h->regs[3] };
	s->unw.copied_bytes += h->size;
	if (fp) {
		n = sym_walk_fp(&regs, stack, h->size, h->size >= h->asked, ips, STACK_DEPTH);
		s->unw.fp_walked++;
	} else {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		n = sym_unwind(s->sym, (int)key.tgid, &regs, stack, h->size, h->size >= h->asked,
			       ips, STACK_DEPTH);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s->unw.unwound++;
		s->unw.unwind_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
					       (t1.tv_nsec - t0.tv_nsec));
	}
	if (n && (ips[n - 1] & SYM_MARK)) {
		if (ips[n - 1] & SYM_MARK_NO_CFI)
			s->unw.no_cfi++;
		else if (ips[n - 1] & SYM_MARK_FAILED)
			s->unw.failed++;
		else
			s->unw.truncated++;
	}
	key.ustack = n ? unwound_id(s, ips, n) : STACK_NONE;
	if (key.ustack == STACK_LOST)
		s->losses[STACK_LOSS_TRACES]++;
	/* A call's times by part, each its own key as the kernel makes them. */
	for (unsigned int p = 0; p < USTACK_NS; p++) {
		bool call = s->cfg->call_stacks;

		if (call ? !h->ns[p] : p > 0)
			continue;
		key.part = call ? p : h->key.part;
		c = unwound_counts(s, &key);
		if (!c) {
			s->losses[STACK_LOSS_KEYS] += h->requests;
			s->losses[STACK_LOSS_KEY_BYTES] += h->bytes;
			continue;
		}
		c->requests += h->requests;
		c->bytes += h->bytes;
		if (call) {
			c->time_ns += h->ns[p];
			c->timed++;
		} else if (s->pending && h->requests) {
			/* A request (not a merged bio's bytes): its time follows. */
			s->pending[h->seq % PENDING] = (struct pending){ h->seq, c };
		}
	}
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
	if (s->news && cfg->ustack_mode != USTACK_FP) {
		s->max_stacks = cfg->max_stacks ? cfg->max_stacks : DEFAULT_MAX_STACKS;
		s->key_slots = 2 * s->max_stacks;
		s->stacks = calloc(s->max_stacks, sizeof(*s->stacks));
		s->stack_index = calloc(2 * (size_t)s->max_stacks, sizeof(*s->stack_index));
		s->keys = calloc(s->key_slots, sizeof(*s->keys));
		if (!cfg->call_stacks)
			s->pending = calloc(PENDING, sizeof(*s->pending));
		if (!s->stacks || !s->stack_index || !s->keys || (!cfg->call_stacks && !s->pending) ||
		    ring_buffer__add(s->news, bpf_map__fd(t->skel->maps.ustack_snaps), on_snap, s)) {
			snprintf(err, errsz, "cannot read the ring buffer of user stacks: %s",
				 strerror(errno ? errno : ENOMEM));
			stack_reader_stop(s);
			return NULL;
		}
	}
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
	for (unsigned int i = 0; i < s->nr_stacks; i++)
		free(s->stacks[i].ips);
	free(s->stacks);
	free(s->stack_index);
	free(s->keys);
	free(s->pending);
	free(s);
}

static unsigned int read_ips(void *ctx, __s32 id, uint64_t ips[STACK_DEPTH])
{
	struct stack_reader *s = ctx;
	unsigned int n = 0;

	memset(ips, 0, STACK_DEPTH * sizeof(ips[0]));
	s->last_unwound = id >= UNWOUND_ID;
	if (id >= UNWOUND_ID) {
		const struct unwound *u = &s->stacks[id - UNWOUND_ID];

		if ((unsigned int)(id - UNWOUND_ID) >= s->nr_stacks)
			return 0;
		memcpy(ips, u->ips, u->n * sizeof(ips[0]));
		return u->n;
	}
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
	int ret = s->last_unwound && (addr & SYM_MARK)
			  ? sym_mark_name(s->sym, (int)tgid, addr, &sf)
			  : sym_user(s->sym, (int)tgid, addr, return_addr, &sf);

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
	/* The unwound stacks' keys after the kernel's. */
	if (s->nr_keys) {
		grown = realloc(raw, (nr + s->nr_keys) * sizeof(*raw));
		if (!grown) {
			free(raw);
			return -ENOMEM;
		}
		raw = grown;
		for (unsigned int i = 0; i < s->key_slots; i++)
			if (s->keys[i].used)
				raw[nr++] = s->keys[i].raw;
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
	for (__u32 k = 0; k < NR_STACK_LOSSES; k++)
		losses[k] += s->losses[k];
	memcpy(out->losses, losses, sizeof(losses));
	out->unw = s->unw;
	out->procs_unread = sym_procs_unread(s->sym);
	return 0;
}
