// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opt_values.h"
#include "quote.h"

int opt_fail(struct config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cfg->errmsg, sizeof(cfg->errmsg), fmt, ap);
	va_end(ap);
	printable_line(cfg->errmsg, sizeof(cfg->errmsg));
	return EINVAL;
}

long opt_positive(const char *s)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return -1;
	return v;
}

int opt_pid_list(struct config *cfg, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		char word[24];
		long v = -1;

		if (len && len < sizeof(word)) {
			memcpy(word, p, len);
			word[len] = '\0';
			v = opt_positive(word);
		}
		if (v < 0)
			return opt_fail(cfg,
					"invalid PID '%.*s' in -p %s: give positive process "
					"ids, separated by commas",
					(int)len, p, arg);
		if (cfg->nr_pids == sizeof(cfg->pids) / sizeof(cfg->pids[0]))
			return opt_fail(cfg, "too many PIDs in -p %s: at most %d", arg,
					MAX_PID_FILTER);
		cfg->pids[cfg->nr_pids++] = (int)v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * --slower: a duration with its unit (10ms, 250us, 1.5s, 800ns), or 0. A
 * bare number other than 0 is refused: 10 could mean any unit.
 */
int opt_duration_ns(struct config *cfg, const char *arg)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	errno = 0;
	if (!*arg || *arg == '-' || *arg == '+' || isspace((unsigned char)*arg))
		goto bad;
	v = strtod(arg, &end);
	if (errno || end == arg || v < 0 || v != v)
		goto bad;
	if (!*end && v == 0) {
		cfg->slower_ns = 0;
		cfg->slower = true;
		return 0;
	}
	for (unsigned int i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].ns > 1e18)
			goto bad;
		cfg->slower_ns = (unsigned long long)(v * units[i].ns + 0.5);
		cfg->slower = true;
		return 0;
	}
bad:
	return opt_fail(cfg,
			"invalid --slower '%s': give a duration with its unit (ns, us, ms, s), "
			"e.g. 10ms or 250us, or 0 for every call",
			arg);
}

int opt_listen(struct config *cfg, const char *arg)
{
	const char *addr = arg, *port = arg, *colon = strrchr(arg, ':');
	unsigned char bin[16];
	size_t len = 0;
	long v;

	snprintf(cfg->prom_addr, sizeof(cfg->prom_addr), "127.0.0.1");
	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');

		if (!end || end[1] != ':')
			return opt_fail(cfg,
					"invalid --prometheus '%s': write an IPv6 address as "
					"[ADDR]:PORT, e.g. [::1]:9633",
					arg);
		cfg->prom_ipv6 = true;
		addr = arg + 1;
		len = (size_t)(end - addr);
		port = end + 2;
	} else if (colon) {
		if (strchr(arg, ':') != colon)
			return opt_fail(cfg,
					"invalid --prometheus '%s': put an IPv6 address in "
					"brackets, e.g. [::1]:9633",
					arg);
		len = (size_t)(colon - arg);
		port = colon + 1;
	}
	if (port != arg) {
		if (len >= sizeof(cfg->prom_addr))
			len = sizeof(cfg->prom_addr) - 1;
		memcpy(cfg->prom_addr, addr, len);
		cfg->prom_addr[len] = '\0';
		if (inet_pton(cfg->prom_ipv6 ? AF_INET6 : AF_INET, cfg->prom_addr, bin) != 1)
			return opt_fail(cfg,
					"invalid address '%s' in --prometheus: give a numeric "
					"address such as 127.0.0.1, 0.0.0.0, [::1] or [::]",
					cfg->prom_addr);
	}
	v = opt_positive(port);
	if (v < 0 || v > 65535)
		return opt_fail(cfg,
				"invalid port '%s' in --prometheus: give a number from 1 to "
				"65535, e.g. --prometheus=9633",
				port);
	cfg->prom_port = (unsigned int)v;
	cfg->prometheus = true;
	return 0;
}

int opt_comm(struct config *cfg, const char *arg)
{
	if (!*arg || strlen(arg) >= 16)
		return opt_fail(cfg,
				"invalid name '%s' for -c: give a process name of 1 "
				"to 15 characters, as in /proc/PID/comm",
				arg);
	cfg->comm = arg;
	return 0;
}

int opt_cgroup(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --cgroup: give a cgroup v2 directory, e.g. "
				     "/sys/fs/cgroup/system.slice");
	cfg->cgroup = arg;
	return 0;
}

int opt_disk(struct config *cfg, const char *arg)
{
	if (!*arg || strchr(arg, '/'))
		return opt_fail(cfg,
				"invalid disk '%s': give a name from /sys/block, "
				"e.g. nvme0n1 or sda",
				arg);
	cfg->disk = arg;
	return 0;
}

int opt_unit(struct config *cfg, enum unit unit)
{
	if (cfg->unit_given)
		return opt_fail(cfg, "-m and -u exclude each other: pick one unit");
	cfg->unit = unit;
	cfg->unit_given = true;
	return 0;
}

int opt_ms(struct config *cfg, const char *arg)
{
	(void)arg;
	return opt_unit(cfg, UNIT_MS);
}

int opt_us(struct config *cfg, const char *arg)
{
	(void)arg;
	return opt_unit(cfg, UNIT_US);
}

int opt_heatmap(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --heatmap: give the SVG file to write, e.g. "
				     "--heatmap=io.svg");
	cfg->heatmap = arg;
	return 0;
}

int opt_output(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty -o: give the file the reports go to");
	cfg->output = arg;
	return 0;
}

int opt_textfile(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --textfile: give the directory node_exporter's "
				     "textfile collector reads");
	cfg->textfile = arg;
	return 0;
}

int opt_file(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --file: give the path of a file to trace");
	if (cfg->nr_files == MAX_FILES)
		return opt_fail(cfg, "too many --file (at '%s'): at most %d", arg, MAX_FILES);
	cfg->files[cfg->nr_files++] = arg;
	return 0;
}

/* Only the path: its contents are read (and refused) when the kernel is
 * probed (src/plan/probe.c). */
int opt_btf(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --btf: give a BTF file of this kernel, e.g. one "
				     "from BTFHub");
	cfg->btf = arg;
	return 0;
}

int opt_trace(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --trace: give the file to write the timeline to");
	cfg->trace = arg;
	return 0;
}

int opt_record(struct config *cfg, const char *arg)
{
	if (!*arg)
		return opt_fail(cfg, "empty --record: give the file to write the recording to");
	cfg->record = arg;
	return 0;
}
