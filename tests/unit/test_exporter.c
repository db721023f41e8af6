// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP server and the textfile writer, with a stand-in for the
 * metrics: real sockets on 127.0.0.1 (no root needed), requests written
 * by hand so that nothing between us and the server interprets them.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "exporter.h"
#include "prom.h"

#define BODY "# HELP x y\n# TYPE x gauge\nx 1\n"

static int fake_calls;

static int fake_metrics(void *ctx, FILE *out)
{
	(void)ctx;
	fake_calls++;
	fputs(BODY, out);
	return 0;
}

static int failing_metrics(void *ctx, FILE *out)
{
	(void)ctx;
	fputs("half a scrape", out);
	return -EIO;
}

/* The whole answer to one raw request, "" if the connection failed. */
static char *http(unsigned int port, const char *request)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	buf[0] = '\0';
	cr_assert_geq(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return buf;
	}
	cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

/* listen and serve, as exporter mode does, on any free port */
static struct exporter *start_on(const char *addr, unsigned int port, bool ipv6, exposition_fn fn,
				 char *err, size_t errsz)
{
	struct exporter *e = exporter_listen(addr, port, ipv6, err, errsz);

	if (e && exporter_serve(e, fn, NULL, false, err, errsz)) {
		exporter_stop(e);
		return NULL;
	}
	return e;
}

static struct exporter *start(exposition_fn fn)
{
	char err[256] = "";
	struct exporter *e = start_on("127.0.0.1", 0, false, fn, err, sizeof(err));

	cr_assert_not_null(e, "exporter: %s", err);
	cr_assert_gt(exporter_port(e), 0);
	return e;
}

Test(exporter, serves_metrics)
{
	struct exporter *e = start(fake_metrics);
	char url[128], want[128];
	char *r;

	fake_calls = 0;
	r = http(exporter_port(e), "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
	cr_assert(!strncmp(r, "HTTP/1.1 200", 12), "%s", r);
	cr_assert_not_null(strstr(r, "Content-Type: " PROM_CONTENT_TYPE "\r\n"), "%s", r);
	cr_assert_not_null(strstr(r, "\r\n\r\n" BODY), "%s", r);
	cr_assert_eq(fake_calls, 1, "one snapshot per scrape");
	/* HEAD: the headers only. */
	r = http(exporter_port(e), "HEAD /metrics HTTP/1.0\r\n\r\n");
	cr_assert(!strncmp(r, "HTTP/1.0 200", 12) || !strncmp(r, "HTTP/1.1 200", 12), "%s", r);
	cr_assert_null(strstr(r, "x 1"), "HEAD answered with a body: %s", r);
	exporter_url(e, url, sizeof(url));
	snprintf(want, sizeof(want), "http://127.0.0.1:%u/metrics", exporter_port(e));
	cr_assert_str_eq(url, want);
	exporter_stop(e);
}

Test(exporter, other_paths_and_methods)
{
	static const struct {
		const char *request;
		const char *status;
	} rows[] = {
		{ "GET / HTTP/1.0\r\n\r\n", " 404 " },
		{ "GET /metrics/ HTTP/1.0\r\n\r\n", " 404 " },
		{ "GET /metricsx HTTP/1.0\r\n\r\n", " 404 " },
		{ "GET /favicon.ico HTTP/1.0\r\n\r\n", " 404 " },
		{ "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", " 405 " },
		{ "DELETE /metrics HTTP/1.0\r\n\r\n", " 405 " },
		{ "GET /metrics?name=x HTTP/1.0\r\n\r\n", " 200 " },
	};
	struct exporter *e = start(fake_metrics);

	fake_calls = 0;
	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		char *r = http(exporter_port(e), rows[i].request);

		cr_assert_not_null(strstr(r, rows[i].status), "%s: %s", rows[i].request, r);
	}
	cr_assert_eq(fake_calls, 1, "only the request for /metrics took a snapshot");
	cr_assert_not_null(
	    strstr(http(exporter_port(e), "PUT /metrics HTTP/1.0\r\n\r\n"), "Allow: GET, HEAD"));
	exporter_stop(e);
}

Test(exporter, a_failed_snapshot_is_a_500_not_half_a_scrape)
{
	struct exporter *e = start(failing_metrics);
	char *r = http(exporter_port(e), "GET /metrics HTTP/1.0\r\n\r\n");

	cr_assert_not_null(strstr(r, " 500 "), "%s", r);
	cr_assert_null(strstr(r, "half a scrape"), "%s", r);
	exporter_stop(e);
}

static void start_fails(const char *addr, unsigned int port, bool ipv6, const char *needle)
{
	char err[512] = "";
	struct exporter *e = start_on(addr, port, ipv6, fake_metrics, err, sizeof(err));

	cr_assert_null(e, "%s:%u started", addr, port);
	cr_assert_not_null(strstr(err, needle), "%s:%u: '%s' not in: %s", addr, port, needle, err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

Test(exporter, one_line_errors)
{
	struct exporter *e = start(fake_metrics);
	char port[16];

	snprintf(port, sizeof(port), "%u", exporter_port(e));
	start_fails("127.0.0.1", exporter_port(e), false, "the port is in use");
	start_fails("127.0.0.1", exporter_port(e), false, port);
	/* TEST-NET-1 (RFC 5737) is nobody's address: bind() fails, nothing
	 * is sent anywhere. */
	start_fails("192.0.2.1", 9633, false, "192.0.2.1 is not an address of this machine");
	start_fails("not-an-address", 9633, false, "invalid address 'not-an-address'");
	exporter_stop(e);
}

Test(exporter, ipv6_loopback)
{
	char err[256] = "", url[128], want[128];
	struct exporter *e;

	e = start_on("::1", 0, true, fake_metrics, err, sizeof(err));
	/*
	 * A machine without ::1 skips this test, but CI (CI set, as .ci/run
	 * sets it) runs every test: there a skip is a set-up failure, as in
	 * tests/integration/run.py.
	 */
	if (!e && strstr(err, "not an address")) {
		cr_assert_null(getenv("CI"), "CI runs every test, and there is no IPv6 loopback: %s",
			       err);
		cr_skip_test("no IPv6 loopback here: %s", err);
	}
	cr_assert_not_null(e, "%s", err);
	exporter_url(e, url, sizeof(url));
	snprintf(want, sizeof(want), "http://[::1]:%u/metrics", exporter_port(e));
	cr_assert_str_eq(url, want);
	exporter_stop(e);
}

static unsigned int open_fds(void)
{
	unsigned int n = 0;
	DIR *d = opendir("/proc/self/fd");

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Stopping closes the listening socket: the port is free again, and
 * nothing is left open. */
Test(exporter, stop_releases_the_port_and_descriptors)
{
	unsigned int before = open_fds(), port;
	struct exporter *e = start(fake_metrics);
	char err[256] = "";

	port = exporter_port(e);
	cr_assert_not_null(strstr(http(port, "GET /metrics HTTP/1.0\r\n\r\n"), " 200 "));
	exporter_stop(e);
	cr_assert_eq(open_fds(), before, "descriptors left open after stop");
	e = start_on("127.0.0.1", port, false, fake_metrics, err, sizeof(err));
	cr_assert_not_null(e, "port %u not free again: %s", port, err);
	exporter_stop(e);
	exporter_stop(NULL);
}

/* Exporter mode binds before loading BPF, and may stop before serving. */
Test(exporter, listen_then_stop_without_serving)
{
	unsigned int before = open_fds();
	char err[256] = "";
	struct exporter *e = exporter_listen("127.0.0.1", 0, false, err, sizeof(err));

	cr_assert_not_null(e, "%s", err);
	start_fails("127.0.0.1", exporter_port(e), false, "the port is in use");
	exporter_stop(e);
	cr_assert_eq(open_fds(), before, "the listening socket was left open");
}

/* ---- Textfiles ---- */

static char *temp_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/iostackbreak-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static unsigned int dir_entries(const char *dir)
{
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

Test(exporter, textfile_is_replaced_whole)
{
	char *dir = temp_dir(), path[128], err[512] = "";
	struct stat st;
	char *text;

	snprintf(path, sizeof(path), "%s/t.prom", dir);
	umask(077);
	cr_assert_eq(textfile_write(dir, "t.prom", fake_metrics, NULL, err, sizeof(err)), 0, "%s",
		     err);
	umask(022);
	text = unit_read_file(path);
	cr_assert_str_eq(text, BODY);
	free(text);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644, "mode %o: node_exporter may run as another user",
		     st.st_mode & 0777);
	cr_assert_eq(dir_entries(dir), 1, "a temporary file was left behind");
	/* A failed write leaves the previous file as it was. */
	cr_assert_eq(textfile_write(dir, "t.prom", failing_metrics, NULL, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, path), "%s", err);
	text = unit_read_file(path);
	cr_assert_str_eq(text, BODY, "a failed write changed the file");
	free(text);
	cr_assert_eq(dir_entries(dir), 1, "a temporary file was left behind");
	unlink(path);
	rmdir(dir);
}

Test(exporter, textfile_into_a_missing_directory)
{
	char err[512] = "";

	cr_assert_eq(
	    textfile_write("/nonexistent/dir", "t.prom", fake_metrics, NULL, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "/nonexistent/dir/t.prom"), "%s", err);
	cr_assert_not_null(strstr(err, "No such file or directory"), "%s", err);
	cr_assert_not_null(strstr(err, "existing directory"), "no remedy: %s", err);
}
