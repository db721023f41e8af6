// SPDX-License-Identifier: GPL-2.0
/*
 * floor: load BPF object files and attach every program in them, then wait
 * for Ctrl-C. A generic loader for the benchmark's empty programs
 * (bench/floor.bpf.c): it does no work of its own while attached.
 *
 *   floor [-v] OBJECT.bpf.o [OBJECT.bpf.o ...]
 *
 * A "tracepoint/CATEGORY/NAME" program whose tracepoint this kernel lacks
 * (sys_enter_open on arm64, say) is not loaded, with a note on stderr, as
 * iostackbreak skips it too. Any other failure is fatal.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#define MAX_OBJS 16
#define MAX_LINKS 256

static int verbose;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !verbose))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void on_signal(int sig)
{
	(void)sig;
}

static const char *tracefs(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, F_OK) == 0)
			return roots[i];
	}
	return NULL;
}

/* Does the tracepoint of a "tracepoint/CAT/NAME" section exist? Unknown: yes. */
static int tracepoint_exists(const char *sec)
{
	const char *root = tracefs(), *tp;
	char path[512];

	if (strncmp(sec, "tracepoint/", 11) || !root)
		return 1;
	tp = sec + 11;
	snprintf(path, sizeof(path), "%s/events/%s", root, tp);
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *objs[MAX_OBJS] = { 0 };
	struct bpf_link *links[MAX_LINKS];
	int nr_objs = 0, nr_links = 0, skipped = 0, err = 0, argi = 1;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;

	if (argi < argc && !strcmp(argv[argi], "-v")) {
		verbose = 1;
		argi++;
	}
	if (argi >= argc || argc - argi > MAX_OBJS) {
		fprintf(stderr, "usage: floor [-v] OBJECT.bpf.o [OBJECT.bpf.o ...] (at most %d)\n",
			MAX_OBJS);
		return 2;
	}
	libbpf_set_print(print_fn);

	/* Ctrl-C must wait until everything is attached and announced. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (; argi < argc; argi++) {
		struct bpf_object *obj = bpf_object__open_file(argv[argi], NULL);
		struct bpf_program *p;

		if (!obj) {
			err = -errno;
			fprintf(stderr, "floor: cannot open %s: %s\n", argv[argi], strerror(-err));
			goto out;
		}
		objs[nr_objs++] = obj;
		bpf_object__for_each_program(p, obj) {
			if (!tracepoint_exists(bpf_program__section_name(p))) {
				fprintf(stderr, "floor: no tracepoint for %s on this kernel: skipped\n",
					bpf_program__section_name(p));
				bpf_program__set_autoload(p, false);
				skipped++;
			}
		}
		err = bpf_object__load(obj);
		if (err) {
			fprintf(stderr, "floor: cannot load %s: %s\n", argv[argi], strerror(-err));
			goto out;
		}
		bpf_object__for_each_program(p, obj) {
			struct bpf_link *l;

			if (!bpf_program__autoload(p))
				continue;
			if (nr_links == MAX_LINKS) {
				err = -E2BIG;
				fprintf(stderr, "floor: more than %d programs\n", MAX_LINKS);
				goto out;
			}
			l = bpf_program__attach(p);
			if (!l) {
				err = -errno;
				fprintf(stderr, "floor: cannot attach %s (%s): %s\n",
					bpf_program__name(p), bpf_program__section_name(p),
					strerror(-err));
				goto out;
			}
			links[nr_links++] = l;
		}
	}

	fprintf(stderr, "floor: %d empty programs attached (%d skipped). Hit Ctrl-C to end.\n",
		nr_links, skipped);
	/* Atomically unblock and wait: a signal sent right after the line counts. */
	sigsuspend(&old);

out:
	while (nr_links > 0)
		bpf_link__destroy(links[--nr_links]);
	while (nr_objs > 0)
		bpf_object__close(objs[--nr_objs]);
	return err ? 1 : 0;
}
