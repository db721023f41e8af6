/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How metrics leave the process: an HTTP server answering GET /metrics
 * (libmicrohttpd, on a thread of its own) and textfiles for node_exporter,
 * written atomically. What the metrics say comes from a callback: this
 * module knows nothing of BPF, so tests reach it without root.
 */
#ifndef EXPORTER_H
#define EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes the whole exposition to out. Returns 0 or a negative errno. */
typedef int (*exposition_fn)(void *ctx, FILE *out);

struct exporter;

/*
 * Listens on addr:port (addr numeric; IPv6 when ipv6; port 0: any free
 * port, see exporter_port()). Nothing is answered before exporter_serve():
 * connections wait in the socket's backlog. Returns NULL with one line in
 * err: the cause and what to do (the port is in use, the address is not
 * one of this machine's, ...).
 */
struct exporter *exporter_listen(const char *addr, unsigned int port, bool ipv6, char *err,
				 size_t errsz);

/*
 * Serves GET and HEAD /metrics with fn's text, 404 for any other path, 405
 * for other methods, on a thread of the HTTP library: fn runs there, one
 * request at a time. verbose: the library's own messages on stderr.
 * Returns 0, or -1 with one line in err.
 */
int exporter_serve(struct exporter *e, exposition_fn fn, void *ctx, bool verbose, char *err,
		   size_t errsz);

unsigned int exporter_port(const struct exporter *e);

/* "http://127.0.0.1:9633/metrics", "http://[::1]:9633/metrics" */
void exporter_url(const struct exporter *e, char *buf, size_t sz);

/* Closes the listening socket and every connection, then frees e (NULL:
 * nothing). */
void exporter_stop(struct exporter *e);

/*
 * Writes dir/name with fn's text: first to dir/name.tmp, then renamed over
 * dir/name, so that a reader (node_exporter's textfile collector reads
 * *.prom) sees the previous file or the new one, never a part. The file is
 * readable by all (0644). Returns 0, or -1 with one line in err.
 */
int textfile_write(const char *dir, const char *name, exposition_fn fn, void *ctx, char *err,
		   size_t errsz);

#endif /* EXPORTER_H */
