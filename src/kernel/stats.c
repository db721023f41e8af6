// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stats.h"
#include "iostackbreak.skel.h"

int stats_enable(char *err, size_t errsz)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		snprintf(err, errsz,
			 "cannot turn on BPF run-time statistics (%s): --stats "
			 "needs Linux 5.8 or later",
			 strerror(errno));
	return fd;
}

static uint64_t fd_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Adds one program's run count and time to its layer. */
static int add_prog(struct layer_cost *cost, struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = prog ? bpf_program__fd(prog) : -1;

	if (fd < 0)
		return 0; /* not loaded: the plan did not need it */
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	cost->programs++;
	cost->runs += info.run_cnt;
	cost->run_time_ns += info.run_time_ns;
	cost->recursion_misses += info.recursion_misses;
	return 0;
}

int stats_read(struct tracer *t, struct self_stats *out)
{
	struct bpf_map *map;
	int err;

	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < t->progs.n; i++) {
		const struct prog_ref *r = &t->progs.refs[i];
		struct layer_cost *cost =
		    r->layer < NR_LAYERS ? &out->layers[r->layer] : &out->other;

		err = add_prog(cost, r->entry);
		if (!err)
			err = add_prog(cost, r->exit);
		if (err)
			return err;
	}
	bpf_object__for_each_map (map, t->skel->obj) {
		int fd = bpf_map__fd(map);

		if (fd >= 0)
			out->map_bytes += fd_memlock(fd);
	}
	return 0;
}
