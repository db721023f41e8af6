/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values of options that take more than a word (opts.c's rows call
 * these): each sets its fields of cfg, or says in cfg->errmsg what is
 * wrong and what to do and returns EINVAL.
 */
#ifndef OPT_VALUES_H
#define OPT_VALUES_H

#include "opts.h"

/* Writes the message to cfg->errmsg (one printable line); returns EINVAL. */
int opt_fail(struct config *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A whole positive decimal number that fits an int, or -1. */
long opt_positive(const char *s);

/* -p PID[,PID...]: adds to cfg->pids. */
int opt_pid_list(struct config *cfg, const char *arg);

/* --slower: a duration with its unit (10ms, 250us, 1.5s, 800ns), or 0. */
int opt_duration_ns(struct config *cfg, const char *arg);

/* --prometheus [ADDR:]PORT: a numeric IPv4 address, or IPv6 in brackets. */
int opt_listen(struct config *cfg, const char *arg);

/* The values of the other options, one each (-m/-u: opt_unit). */
int opt_unit(struct config *cfg, enum unit unit);
int opt_comm(struct config *cfg, const char *arg);
int opt_cgroup(struct config *cfg, const char *arg);
int opt_disk(struct config *cfg, const char *arg);
int opt_ms(struct config *cfg, const char *arg);
int opt_us(struct config *cfg, const char *arg);
int opt_textfile(struct config *cfg, const char *arg);
int opt_output(struct config *cfg, const char *arg);
int opt_heatmap(struct config *cfg, const char *arg);
int opt_file(struct config *cfg, const char *arg);
int opt_trace(struct config *cfg, const char *arg);
int opt_record(struct config *cfg, const char *arg);
int opt_btf(struct config *cfg, const char *arg);

/* The checks against the other options (opt_checks.c), one per option. */
int opt_check_pid(struct config *cfg);
int opt_check_children(struct config *cfg);
int opt_check_no_parts(struct config *cfg);
int opt_check_no_children(struct config *cfg);
int opt_check_per_disk(struct config *cfg);
int opt_check_per_flags(struct config *cfg);
int opt_check_no_writeback(struct config *cfg);
int opt_check_cgroup_grace(struct config *cfg);
int opt_check_top(struct config *cfg);
int opt_check_max_keys(struct config *cfg);
int opt_check_duration(struct config *cfg);
int opt_check_disk(struct config *cfg);
int opt_check_queued(struct config *cfg);
int opt_check_full_path(struct config *cfg);
int opt_check_live(struct config *cfg);
int opt_check_output(struct config *cfg);
int opt_check_heatmap(struct config *cfg);
int opt_check_trace_max(struct config *cfg);
int opt_check_record(struct config *cfg);
int opt_check_replay(struct config *cfg);
int opt_check_ring(struct config *cfg);
int opt_check_file(struct config *cfg);
int opt_check_calls(struct config *cfg);
int opt_check_plan(struct config *cfg);
int opt_check_exporter(struct config *cfg);

#endif /* OPT_VALUES_H */
