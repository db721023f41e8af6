// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP side of exporter mode, on libmicrohttpd. We make the listening
 * socket ourselves and hand it over: bind()'s errno is then ours to turn
 * into one clear line (a port in use, an address this machine does not
 * have), where the library would only say that it failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <microhttpd.h>
#include "exporter.h"
#include "prom.h"

#define METRICS_PATH "/metrics"
#define LISTEN_BACKLOG 128
/* Scrapers open a connection or two each; a bound on what a flood costs. */
#define CONNECTION_LIMIT 256
#define IDLE_TIMEOUT_S 30

struct exporter {
	struct MHD_Daemon *daemon;
	exposition_fn fn;
	void *ctx;
	bool verbose;
	bool ipv6;
	int fd; /* listening; the daemon's once it serves */
	char addr[64];
	unsigned int port;
};

static void http_log(void *cls, const char *fmt, va_list ap)
{
	const struct exporter *e = cls;

	if (!e->verbose)
		return;
	fputs("iostackbreak: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	return reply(conn, status, (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT,
		     "text/plain; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct exporter *e = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	(void)version;
	(void)upload_data;
	(void)req_cls;
	/* A body (there should be none) is read and dropped. */
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "iostackbreak serves GET " METRICS_PATH " only\n");
	if (strcmp(url, METRICS_PATH))
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: iostackbreak serves " METRICS_PATH "\n");
	/*
	 * Scrapes are built on the server's thread, in its own malloc arena,
	 * which glibc trims only at its top: the free pages that earlier
	 * scrapes left inside it would stay resident, and RSS would creep up
	 * to a plateau a few MiB higher. Give them back first.
	 */
	malloc_trim(0);
	f = open_memstream(&body, &len);
	if (!f)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "iostackbreak: out of memory\n");
	ret = e->fn(e->ctx, f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(body);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "iostackbreak: cannot read the tracer's maps\n");
	}
	return reply(conn, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE, PROM_CONTENT_TYPE);
}

static void format_endpoint(char *buf, size_t sz, const char *addr, unsigned int port, bool ipv6)
{
	snprintf(buf, sz, ipv6 ? "[%s]:%u" : "%s:%u", addr, port);
}

/* A bound, listening, non-blocking TCP socket, or -1 with err. */
static int listen_on(const char *addr, unsigned int port, bool ipv6, char *err, size_t errsz)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = ipv6 ? sizeof(*in6) : sizeof(*in4);
	char where[96];
	int fd, one = 1, ok;

	memset(&ss, 0, sizeof(ss));
	format_endpoint(where, sizeof(where), addr, port, ipv6);
	if (ipv6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		ok = inet_pton(AF_INET6, addr, &in6->sin6_addr);
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		ok = inet_pton(AF_INET, addr, &in4->sin_addr);
	}
	if (ok != 1) {
		snprintf(err, errsz,
			 "invalid address '%s' for --prometheus: give a numeric address such "
			 "as 127.0.0.1, 0.0.0.0, [::1] or [::]",
			 addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "cannot open a socket for %s: %s", where, strerror(errno));
		return -1;
	}
	/* A restart right after a stop must not wait for old connections to
	 * time out (TIME_WAIT); on Linux this never lets two servers share a
	 * port. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, LISTEN_BACKLOG)) {
		int e = errno;

		close(fd);
		if (e == EADDRINUSE)
			snprintf(err, errsz,
				 "cannot listen on %s: the port is in use by another program "
				 "(ss -ltnp 'sport = %u' names it): stop it, or choose another "
				 "port with --prometheus=[ADDR:]PORT",
				 where, port);
		else if (e == EADDRNOTAVAIL)
			snprintf(err, errsz,
				 "cannot listen on %s: %s is not an address of this machine: "
				 "give one it has (ip -brief address), 127.0.0.1, or 0.0.0.0 "
				 "for every interface",
				 where, addr);
		else if (e == EACCES)
			snprintf(err, errsz,
				 "cannot listen on %s: %s: ports below 1024 need root or "
				 "CAP_NET_BIND_SERVICE; choose a port from 1024 up",
				 where, strerror(e));
		else
			snprintf(err, errsz, "cannot listen on %s: %s", where, strerror(e));
		return -1;
	}
	return fd;
}

struct exporter *exporter_listen(const char *addr, unsigned int port, bool ipv6, char *err,
				 size_t errsz)
{
	struct exporter *e = calloc(1, sizeof(*e));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (!e) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	e->fd = listen_on(addr, port, ipv6, err, errsz);
	if (e->fd < 0) {
		free(e);
		return NULL;
	}
	e->ipv6 = ipv6;
	snprintf(e->addr, sizeof(e->addr), "%s", addr);
	e->port = port;
	if (!getsockname(e->fd, (struct sockaddr *)&ss, &sl))
		e->port = ntohs(ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				     : ((struct sockaddr_in *)&ss)->sin_port);
	return e;
}

int exporter_serve(struct exporter *e, exposition_fn fn, void *ctx, bool verbose, char *err,
		   size_t errsz)
{
	char where[96];

	e->fn = fn;
	e->ctx = ctx;
	e->verbose = verbose;

	/* One internal thread serves every connection in turn (epoll where
	 * there is one): a scrape takes a few milliseconds, and taking turns
	 * keeps at most one snapshot of the maps in memory at a time. */
	e->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
				     NULL, on_request, e, MHD_OPTION_EXTERNAL_LOGGER, http_log, e,
				     MHD_OPTION_LISTEN_SOCKET, e->fd, MHD_OPTION_CONNECTION_LIMIT,
				     (unsigned int)CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned int)IDLE_TIMEOUT_S, MHD_OPTION_END);
	if (!e->daemon) {
		format_endpoint(where, sizeof(where), e->addr, e->port, e->ipv6);
		snprintf(err, errsz,
			 "cannot start the HTTP server on %s (libmicrohttpd refused; -v "
			 "shows its messages)",
			 where);
		/* The library may have closed it already: leaking one
		 * descriptor on the way out beats closing one twice. */
		e->fd = -1;
		return -1;
	}
	return 0;
}

unsigned int exporter_port(const struct exporter *e)
{
	return e->port;
}

void exporter_url(const struct exporter *e, char *buf, size_t sz)
{
	char where[96];

	format_endpoint(where, sizeof(where), e->addr, e->port, e->ipv6);
	snprintf(buf, sz, "http://%s" METRICS_PATH, where);
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	if (e->daemon)
		MHD_stop_daemon(e->daemon); /* closes the listening socket too */
	else if (e->fd >= 0)
		close(e->fd);
	free(e);
}

int textfile_write(const char *dir, const char *name, exposition_fn fn, void *ctx, char *err,
		   size_t errsz)
{
	char path[4096], tmp[4096 + 8];
	FILE *f;
	int fd, ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		snprintf(err, errsz, "--textfile: the directory name is too long");
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(err, errsz,
			 "cannot write %s: %s; give --textfile an existing directory we may "
			 "write to (node_exporter's --collector.textfile.directory)",
			 tmp, strerror(errno));
		return -1;
	}
	/* Whatever the umask: node_exporter usually runs as another user. */
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, errsz, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	ret = fn(ctx, f);
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errsz, "cannot write %s: %s", path, strerror(-ret));
		unlink(tmp);
		return -1;
	}
	return 0;
}
