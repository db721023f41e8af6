// SPDX-License-Identifier: GPL-2.0
/*
 * Buffered writeback charged to the task that dirtied the pages.
 *
 * A buffered write only dirties the page cache; a flusher kworker (or
 * whoever syncs) submits the disk write later. writeback_dirty_folio fires
 * in the dirtier's context where a folio goes from clean to dirty, at the
 * same place the kernel charges the task's /proc/PID/io write_bytes
 * (folio_account_dirtied): the folio is recorded with its dirtier. When a
 * write request completes, every page of every bio it holds (merged bios
 * included) is looked up, and its bytes go to that page's dirtier.
 *
 * Why every page, not the first of each bio: a request of 1 MiB holds 256
 * pages, and two processes writing the same file at neighbouring offsets
 * meet inside one request as soon as writeback joins their ranges. The
 * first page would give all of them to one. The walk stops a folio's
 * look-ups at its first page (the pages after it in the folio are its),
 * so large folios cost one look-up each.
 *
 * Why at completion: the request then holds every bio merged into it
 * since it started (a plug's back merges fire no event naming the
 * request), and block_rq_complete fires before the first bio ends, so its
 * pages are all still there. The bottom device of a dm or md stack writes
 * the pages of the bios above it (a dm clone shares its bio_vec), so the
 * request below carries the dirtier of the bio above.
 *
 * Owns the maps dirtied, wb_counts, wb_cells, wb_ages and wb_walks.
 * Included by iostackbreak.bpf.c after blk.bpf.c (see there).
 */

/* Knobs (wb_on: blk.bpf.c), set by user space between open and load. */
const volatile bool wb_all_dirtiers; /* no task filter: every dirtier is recorded */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_DIRTY_FOLIOS);
	__type(key, struct wb_page);
	__type(value, struct wb_dirtier);
} dirtied SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_WB_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
} wb_counts SEC(".maps");

/* Written-back requests for the traced dirtiers, per blk op. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_BLK_OPS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} wb_cells SEC(".maps");

/* Dirty age of written-back requests, all traced dirtiers together. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_WB_AGES);
	__type(key, __u32);
	__type(value, struct cell_hist);
} wb_ages SEC(".maps");

static __always_inline void wb_count(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&wb_counts, &what);

	if (v)
		*v += n;
}

/* Kernels name the number of pages of a large folio differently. */
struct folio___nr_pages { /* 6.14+ ("mm: rename _folio_nr_pages") */
	unsigned int _nr_pages;
} __attribute__((preserve_access_index));

struct folio___folio_nr_pages { /* 6.1 to 6.13 */
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

/* folio_nr_pages(): 1 unless the folio is large (PG_head in its flags). */
static __always_inline __u32 folio_pages(struct folio *folio)
{
	unsigned long flags = 0;

	/* flags is the folio's first word (memdesc_flags_t since 6.17). */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(((struct folio___nr_pages *)0)->_nr_pages))
		return BPF_CORE_READ((struct folio___nr_pages *)folio, _nr_pages);
	if (bpf_core_field_exists(((struct folio___folio_nr_pages *)0)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___folio_nr_pages *)folio, _folio_nr_pages);
	return 1;
}

/*
 * A folio went from clean to dirty in the current task: record it, when
 * the task (and, with --file, the file) is traced.
 */
static __always_inline int wb_dirtied(struct folio *folio, struct address_space *mapping)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct wb_page key = {};
	struct wb_dirtier v = {};

	if (!wb_on || !mapping || !task_wanted(id))
		return 0;
	if (nr_files && !inode_wanted(BPF_CORE_READ(mapping, host)))
		return 0;
	key.mapping = (__u64)mapping;
	key.index = BPF_CORE_READ(folio, index);
	v.first_ns = bpf_ktime_get_ns();
	v.tgid = id >> 32;
	v.pid = (__u32)id;
	v.nr_pages = folio_pages(folio);
	bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (per_cgroup) {
		v.cgid = bpf_get_current_cgroup_id();
		cgroup_path_note(v.cgid);
	}
	/* Dirty again before its last page was written (a partial write
	 * of a large folio): the new dirtying is the one its bytes go to. */
	wb_count(bpf_map_lookup_elem(&dirtied, &key) ? WBC_REDIRTIED : WBC_DIRTIED, 1);
	wb_count(WBC_DIRTIED_PAGES, v.nr_pages);
	bpf_map_update_elem(&dirtied, &key, &v, BPF_ANY);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int tb_dirty_folio(__u64 *ctx)
{
	return wb_dirtied((struct folio *)ctx[0], (struct address_space *)ctx[1]);
}

SEC("raw_tp/writeback_dirty_folio")
int rt_dirty_folio(struct bpf_raw_tracepoint_args *ctx)
{
	return wb_dirtied((struct folio *)ctx->args[0], (struct address_space *)ctx->args[1]);
}

/* Dirtiers told apart in one request; more are counted (crowded). */
#define WB_SLOTS 4
/* Page steps per request: 16 MiB of 4 KiB pages, past any request's
 * size (max_sectors_kb); bytes past them are counted (cut). */
#define WB_MAX_STEPS 4096
#define WB_PAGE_SIZE 4096

struct wb_slot {
	__u64 bytes;
	__u64 first_ns; /* the earliest first dirtying of its pages */
	__u64 cgid;
	__u32 tgid;
	__u32 pad;
	char comm[COMM_LEN];
};

/* What blk_complete knows of a completed request, for wb_request_done. */
struct wb_rq {
	__u64 rq;
	__u64 origin_ns, issue_ns; /* its entry's (entry set) */
	__u32 tgid, dev;	   /* its entry's submitter and disk */
	__u32 cmd_flags, nr_bytes;
	int error;
	__u32 entry; /* set: an entry of a submitter not filtered out */
	__u32 has_v; /* set: an entry at all (its dev may be known) */
	__u32 pad;
};

/* What wb_charge_slot charges each dirtier of a request with. */
struct wb_charge {
	__u64 delta, now, origin, start;
	__u32 op, dev, submitter, flags;
	int error;
	__u32 any; /* set: a traced dirtier's bytes were charged */
};

/*
 * Where the walk of a request's pages is, between bpf_loop steps, with
 * the request and what its dirtiers are charged with. Per CPU, not on the
 * stack: the completion program, wb_request_done and a bpf_loop step are
 * three frames of one stack, which the verifier bounds at 512 bytes in
 * all. Debian's 6.1 and 6.12 count the global function's frame in it
 * (6.1 even where wb_on leaves the call dead), and refused the programs
 * with these on their frames ("combined stack size of 3 calls is 544").
 */
struct wb_walk {
	struct wb_rq q;		  /* the request (wb_request_of) */
	struct wb_charge c;	  /* what its dirtiers are charged with */
	struct breakdown_key bkey; /* a breakdown cell's key */
	/* From here, zeroed for each request. */
	__u64 bio;	/* the bio being walked; 0: done */
	__u64 folio;	/* the folio of the last page, */
	/* its dirtier's slot; -1: none known, -2: not page cache, -3: no slot */
	__s32 slot;
	__u32 idx;	/* bio_vec index in bio */
	__u32 done;	/* bytes of that bio_vec walked */
	__u32 left;	/* bytes of the bio left */
	__u64 unknown;	/* page cache bytes of no known dirtier */
	__u64 crowded;
	__u64 other; /* bytes not of the page cache */
	struct wb_page key; /* the folio's entry, */
	__u32 nr_pages;	    /* and its pages (0: none, or removed) */
	__u32 pad2;
	__u32 nr;	/* slots used */
	__u32 pad;
	struct wb_slot s[WB_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wb_walk);
} wb_walks SEC(".maps");

/* The slot of a dirtier in the walk, made if new; -3 when all are taken. */
static __always_inline int wb_slot_of(struct wb_walk *w, struct wb_dirtier *d)
{
	for (__u32 i = 0; i < WB_SLOTS; i++) {
		if (i >= w->nr)
			break;
		if (w->s[i].tgid == d->tgid && w->s[i].cgid == d->cgid) {
			if (d->first_ns < w->s[i].first_ns)
				w->s[i].first_ns = d->first_ns;
			return i;
		}
	}
	{
		__u32 n = w->nr;

		if (n >= WB_SLOTS)
			return -3;
		w->s[n].bytes = 0;
		w->s[n].first_ns = d->first_ns;
		w->s[n].cgid = d->cgid;
		w->s[n].tgid = d->tgid;
		__builtin_memcpy(w->s[n].comm, d->comm, COMM_LEN);
		w->nr = n + 1;
		return (int)n;
	}
}

/*
 * The dirtier of a folio met in the walk: looked up at the folio's first
 * page met; its entry is kept (w->key, w->nr_pages) for the rest of the
 * folio, and removed at its last page (wb_folio_page).
 */
static __always_inline void wb_folio_seen(struct wb_walk *w, struct folio *folio)
{
	struct address_space *mapping = BPF_CORE_READ(folio, mapping);
	struct wb_dirtier *d;

	w->folio = (__u64)folio;
	w->nr_pages = 0;
	/* Anonymous or movable pages (direct I/O from user memory, swap)
	 * have a flag in the low bits; no mapping: not page cache. */
	if (!mapping || ((__u64)mapping & 3)) {
		w->slot = -2;
		return;
	}
	w->key.mapping = (__u64)mapping;
	w->key.index = BPF_CORE_READ(folio, index);
	d = bpf_map_lookup_elem(&dirtied, &w->key);
	if (!d) {
		w->slot = -1;
		return;
	}
	w->slot = wb_slot_of(w, d);
	w->nr_pages = d->nr_pages;
}

/* The walk is at page in_folio of its folio: past the last, the folio is
 * written and its entry goes (a folio split between two requests goes
 * with the second). */
static __always_inline void wb_folio_page(struct wb_walk *w, __u64 in_folio)
{
	if (!w->nr_pages || in_folio + 1 < w->nr_pages)
		return;
	w->nr_pages = 0;
	if (!bpf_map_delete_elem(&dirtied, &w->key))
		wb_count(WBC_FREED, 1);
}

/*
 * One page (or the piece of it in the bio) of the request: a bpf_loop
 * step. The walk is too big for the stack bpf_loop's context must be on
 * (6.1), so each step finds it in its per-CPU map; the context is the key
 * (used, so that the compiler keeps the signature the verifier checks).
 */
static long wb_walk_step(__u32 i, __u32 *key)
{
	__u64 off, page, head, psz = bpf_core_type_size(struct page);
	struct wb_walk *w;
	struct bio_vec bv;
	struct bio *bio;
	__u32 chunk;
	__s32 slot;

	w = bpf_map_lookup_elem(&wb_walks, key);
	if (!w)
		return 1;
	bio = (struct bio *)w->bio;
	if (!bio)
		return 1;
	if (!w->left) {
		bio = BPF_CORE_READ(bio, bi_next);
		w->bio = (__u64)bio;
		if (!bio)
			return 1;
		w->idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
		w->done = BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
		w->left = BPF_CORE_READ(bio, bi_iter.bi_size);
		return 0;
	}
	if (bpf_probe_read_kernel(&bv, sizeof(bv), BPF_CORE_READ(bio, bi_io_vec) + w->idx))
		return 1;
	if (w->done >= bv.bv_len) { /* an empty bio_vec: the next */
		w->idx++;
		w->done = 0;
		return 0;
	}
	off = bv.bv_offset + w->done;
	/* A multi-page bio_vec: pages follow in the memory map. */
	page = (__u64)bv.bv_page + off / WB_PAGE_SIZE * psz;
	chunk = WB_PAGE_SIZE - off % WB_PAGE_SIZE;
	if (chunk > bv.bv_len - w->done)
		chunk = bv.bv_len - w->done;
	if (chunk > w->left)
		chunk = w->left;
	/* The page's folio: compound_head is the head page + 1 for a tail. */
	head = BPF_CORE_READ((struct page *)page, compound_head);
	head = (head & 1) ? head - 1 : page;
	if (head != w->folio)
		wb_folio_seen(w, (struct folio *)head);
	/* A copy the verifier sees bounded (a reload of the map value's
	 * field would not be). */
	slot = w->slot;
	asm volatile("" : "+r"(slot));
	if (slot >= 0 && slot < WB_SLOTS)
		w->s[slot].bytes += chunk;
	else if (slot == -1)
		w->unknown += chunk;
	else if (slot == -3)
		w->crowded += chunk;
	else
		w->other += chunk;
	/* The page's last byte written: its folio may be done. */
	if ((off + chunk) % WB_PAGE_SIZE == 0)
		wb_folio_page(w, psz ? (page - head) / psz : 0);
	w->done += chunk;
	w->left -= chunk;
	if (w->done >= bv.bv_len) {
		w->idx++;
		w->done = 0;
	}
	return 0;
}

/* A time into one of writeback's histograms, inline (wb_charge_slot). */
static __always_inline void wb_hist_add(void *map, __u32 idx, __u64 delta)
{
	struct cell_hist *c = bpf_map_lookup_elem(map, &idx);

	if (c)
		cell_hist_add(c, delta, HIST_BUCKET_OF_DELTA, true);
}

/*
 * The request's bytes of slot i's dirtier (a bpf_loop step: verified once,
 * where an unrolled loop of the slots made the completion program too
 * complex for the verifier next to -G and the parts of calls).
 */
static long wb_charge_slot(__u32 i, __u32 *key)
{
	struct wb_walk *w = bpf_map_lookup_elem(&wb_walks, key);
	struct wb_charge *c;
	struct cell_hist *h;
	struct wb_slot *s;
	__u32 op;

	if (!w || i >= WB_SLOTS || i >= w->nr)
		return 1;
	c = &w->c;
	op = c->op;
	s = &w->s[i];
	if (!s->bytes)
		return 0;
	if (s->tgid == c->submitter) {
		wb_count(WBC_SELF_BYTES, s->bytes);
		return 0;
	}
	c->any = 1;
	wb_count(WBC_BYTES, s->bytes);
	if (!c->start) {
		count_drop(DROP_RQ_UNSTAMPED);
		return 0;
	}
	if (per_process || per_disk || per_cgroup || per_flags) {
		struct breakdown_key *k = &w->bkey;

		k->cell_idx = CELL_INDEX(LAYER_BLK, op);
		k->tgid = per_process ? s->tgid : 0;
		k->dev = c->dev;
		k->flags = c->flags;
		k->cgid = per_cgroup ? s->cgid : 0;
		record_breakdown_io(k, per_process ? s->comm : NULL, c->delta, s->bytes, c->error);
		if (!c->error) {
			k->flags = 0;
			k->cell_idx = WB_AGE_SUBMIT_INDEX;
			record_breakdown(k, per_process ? s->comm : NULL,
					 c->origin > s->first_ns ? c->origin - s->first_ns : 0);
			k->cell_idx = WB_AGE_DONE_INDEX;
			record_breakdown(k, per_process ? s->comm : NULL,
					 c->now > s->first_ns ? c->now - s->first_ns : 0);
		}
	}
	if (!c->error) {
		/* Inline, not hist_add_to(): a global call from this
		 * bpf_loop step would add a frame to the stack above. */
		wb_hist_add(&wb_cells, op, c->delta);
		wb_hist_add(&wb_ages, WB_AGE_SUBMIT,
			    c->origin > s->first_ns ? c->origin - s->first_ns : 0);
		wb_hist_add(&wb_ages, WB_AGE_DONE, c->now > s->first_ns ? c->now - s->first_ns : 0);
	}
	h = bpf_map_lookup_elem(&wb_cells, &op);
	if (h) {
		if (c->error) {
			h->errors++;
			h->error_sum_ns += c->delta;
		}
		h->bytes += s->bytes;
	}
	return 0;
}

/*
 * A write request completed (blk.bpf.c: blk_complete, which put it in
 * this CPU's walk: wb_request_of; q->entry unset when its submitter was
 * filtered out at its start). Its pages' bytes go
 * to their dirtiers: requests a dirtier submitted itself stay its own
 * ("submitted"), the others count for it as written back, beside their
 * submitter's.
 *
 * A global function, so the verifier checks it once, on its own: inlined
 * into the completion programs, its paths (the walk, four dirtier slots,
 * three breakdown cells each) multiplied with theirs, and tb_rq_complete
 * went past the verifier's 1,000,000 instructions (E2BIG; on 6.18,
 * -T blk -P in text: "processed 1000001 insns, max_states_per_insn 96,
 * total_states 66919"). Its request is a number here (probe reads only).
 */
__noinline int wb_request_done(void)
{
	__u32 data_len, cmd_flags, nr_bytes, zero = 0, op, dev = 0;
	__u64 now, start, origin, walked;
	struct request *rq;
	struct wb_walk *w;
	struct wb_rq *q;
	struct bio *bio;

	w = bpf_map_lookup_elem(&wb_walks, &zero);
	if (!w)
		return 0;
	q = &w->q;
	rq = (struct request *)q->rq;
	cmd_flags = q->cmd_flags;
	nr_bytes = q->nr_bytes;
	data_len = BPF_CORE_READ(rq, __data_len);
	op = rq_op(cmd_flags);
	/* Partial completions: the request goes on (its walk with the last,
	 * whose bios are those left). */
	if (op != BLKOP_WRITE || !data_len || nr_bytes < data_len)
		return 0;
	/* -d: that disk's requests only (rq_dev costs reads: filtered first). */
	if (filter_dev) {
		dev = q->has_v && q->dev ? q->dev : rq_dev(rq, false);
		if (dev != targ_dev)
			return 0;
	}
	bio = BPF_CORE_READ(rq, bio);
	if (!bio)
		return 0;
	__builtin_memset(&w->bio, 0, sizeof(*w) - __builtin_offsetof(struct wb_walk, bio));
	w->bio = (__u64)bio;
	w->idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	w->done = BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	w->left = BPF_CORE_READ(bio, bi_iter.bi_size);
	w->slot = -2;
	bpf_loop(WB_MAX_STEPS, wb_walk_step, &zero, 0);

	walked = w->unknown + w->crowded + w->other;
	for (__u32 i = 0; i < WB_SLOTS; i++)
		if (i < w->nr)
			walked += w->s[i].bytes;
	if (w->bio && w->left) /* stopped with pages left */
		wb_count(WBC_CUT_BYTES, data_len > walked ? data_len - walked : 0);
	if (w->crowded)
		wb_count(WBC_CROWDED_BYTES, w->crowded);
	if (w->other)
		wb_count(WBC_OTHER_BYTES, w->other);

	/* The request's times: its entry's, else the kernel's stamps. */
	now = bpf_ktime_get_ns();
	w->c.submitter = 0;
	if (q->entry) {
		w->c.submitter = q->tgid;
		origin = q->origin_ns ?: q->issue_ns;
		start = blk_queued ? q->origin_ns : q->issue_ns;
	} else {
		origin = rq_start_ns(rq);
		start = blk_queued ? origin : rq_io_start_ns(rq, false);
	}
	if (per_disk && !dev)
		dev = q->has_v && q->dev ? q->dev : rq_dev(rq, false);
	if (!per_disk)
		dev = 0;
	w->c.now = now;
	w->c.start = start;
	w->c.origin = origin ?: start;
	w->c.delta = start && now > start ? now - start : 0;
	w->c.op = op;
	w->c.dev = dev;
	w->c.error = q->error;
	w->c.flags = (per_flags ? rq_flags(cmd_flags) : 0) | RQ_FLAG_WRITEBACK;
	w->c.any = 0;

	if (w->unknown) {
		wb_count(WBC_UNKNOWN_REQUESTS, 1);
		wb_count(WBC_UNKNOWN_BYTES, w->unknown);
		/* Without a task filter, -P and -G show them under their own key. */
		if (wb_all_dirtiers && start && (per_process || per_cgroup)) {
			/* No name: user space names the key "(unknown)". */
			w->bkey.cell_idx = CELL_INDEX(LAYER_BLK, op);
			w->bkey.tgid = per_process ? WB_UNKNOWN_TGID : 0;
			w->bkey.dev = dev;
			w->bkey.flags = RQ_FLAG_WRITEBACK;
			w->bkey.cgid = 0;
			record_breakdown_io(&w->bkey, NULL, w->c.delta, w->unknown, w->c.error);
		}
	}
	bpf_loop(WB_SLOTS, wb_charge_slot, &zero, 0);
	if (w->c.any)
		wb_count(WBC_REQUESTS, 1);
	return 0;
}

/* blk_complete's side: what wb_request_done needs, copied off the entry
 * and the request pointer into this CPU's walk, as a global function can
 * be given neither. */
static __always_inline void wb_request_of(struct request *rq, struct rq_start *v,
					  __u32 cmd_flags, int error, __u32 nr_bytes)
{
	__u32 zero = 0;
	struct wb_walk *w = bpf_map_lookup_elem(&wb_walks, &zero);
	struct wb_rq *q;

	if (!w)
		return;
	q = &w->q;
	__builtin_memset(q, 0, sizeof(*q));
	q->cmd_flags = cmd_flags;
	q->nr_bytes = nr_bytes;
	q->error = error;
	/* The pointer as a number: the copy is a scalar to the verifier. */
	bpf_probe_read_kernel(&q->rq, sizeof(q->rq), &rq);
	if (v) {
		q->has_v = 1;
		q->dev = v->dev;
		if (!v->excluded) {
			q->entry = 1;
			q->tgid = v->tgid;
			q->origin_ns = v->origin_ns;
			q->issue_ns = v->issue_ns;
		}
	}
	wb_request_done();
}
