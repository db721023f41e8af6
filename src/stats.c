// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "layers.h"
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

int stats_read(struct tracer *t, struct self_stats *out)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	memset(out, 0, sizeof(*out));
	bpf_object__for_each_program (prog, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog), layer;

		if (fd < 0)
			continue; /* not loaded: the plan did not need it */
		layer = layer_of_program(bpf_program__name(prog));
		if (layer < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		out->layers[layer].programs++;
		out->layers[layer].runs += info.run_cnt;
		out->layers[layer].run_time_ns += info.run_time_ns;
	}
	bpf_object__for_each_map (map, t->skel->obj) {
		int fd = bpf_map__fd(map);

		if (fd >= 0)
			out->map_bytes += fd_memlock(fd);
	}
	return 0;
}

void stats_diff(struct self_stats *out, const struct self_stats *cur, const struct self_stats *prev)
{
	*out = *cur;
	for (unsigned int l = 0; l < NR_LAYERS; l++) {
		out->layers[l].runs -= prev->layers[l].runs;
		out->layers[l].run_time_ns -= prev->layers[l].run_time_ns;
	}
}
