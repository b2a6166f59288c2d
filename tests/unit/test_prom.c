/* SPDX-License-Identifier: MIT */
/* test_prom.c - the Prometheus exposition: rendering, names, series, the
 * textfile (checked by promtool where installed) and the push to a
 * Pushgateway (a small HTTP server on 127.0.0.1 in a thread). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "buf.h"
#include "cd.h"
#include "fsutil.h"
#include "open_fds.h"
#include "prom.h"

#define PROMTOOL "/usr/bin/promtool"

/* Samples added interleaved across families and groups: node1, the run,
 * node2 in first-use order. */
static struct prom *small_set(void)
{
	struct prom *p = prom_new();

	assert_int_equal(prom_family(p, "cd_test_node_up", PROM_GAUGE, "Whether the node answered"),
	                 0);
	assert_int_equal(prom_family(p, "cd_test_errors_total", PROM_COUNTER, "Errors seen"), 0);
	assert_int_equal(prom_family(p, "cd_test_unused", PROM_GAUGE, "Never given a sample"), 0);
	assert_int_equal(
	    prom_family(p, "cd_test_duration_seconds", PROM_UNTYPED, "How long the run took"), 0);
	assert_int_equal(prom_add(p, "cd_test_node_up", "node1", 1, "node", "node1", NULL), 0);
	assert_int_equal(prom_add(p, "cd_test_errors_total", "node1", 3, "node", "node1", NULL), 0);
	assert_int_equal(prom_add(p, "cd_test_duration_seconds", NULL, 12.5, NULL), 0);
	assert_int_equal(prom_add(p, "cd_test_node_up", "node2", 0, "node", "node2", NULL), 0);
	assert_int_equal(
	    prom_add(p, "cd_test_errors_total", "node2", 0, "node", "node2", "kind", "ssh", NULL),
	    0);
	return p;
}

static const char small_set_text[] = "# HELP cd_test_node_up Whether the node answered\n"
                                     "# TYPE cd_test_node_up gauge\n"
                                     "cd_test_node_up{node=\"node1\"} 1\n"
                                     "cd_test_node_up{node=\"node2\"} 0\n"
                                     "# HELP cd_test_errors_total Errors seen\n"
                                     "# TYPE cd_test_errors_total counter\n"
                                     "cd_test_errors_total{node=\"node1\"} 3\n"
                                     "cd_test_errors_total{node=\"node2\",kind=\"ssh\"} 0\n"
                                     "# HELP cd_test_duration_seconds How long the run took\n"
                                     "# TYPE cd_test_duration_seconds untyped\n"
                                     "cd_test_duration_seconds 12.5\n";

/* Render into a new string (free it). */
static char *render_all(const struct prom *p)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	assert_int_equal(prom_render(p, &b), 0);
	s = strdup(b.data ? b.data : "");
	buf_fini(&b);
	return s;
}

static char *render_group(const struct prom *p, const char *group)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	assert_int_equal(prom_render_group(p, group, &b), 0);
	s = strdup(b.data ? b.data : "");
	buf_fini(&b);
	return s;
}

/* ---- rendering ---- */

static void families_render_in_declaration_order_with_their_samples_together(void **state)
{
	struct prom *p = small_set();
	char *text = render_all(p);

	assert_string_equal(text, small_set_text);
	assert_int_equal(prom_count(p), 5);
	free(text);
	prom_free(p);
}

static void label_values_escape_backslash_quote_and_newline(void **state)
{
	struct prom *p = prom_new();
	char *text;

	prom_family(p, "cd_test_info", PROM_GAUGE, "Labels");
	assert_int_equal(prom_add(p, "cd_test_info", NULL, 1, "path", "C:\\tmp", "say",
	                          "\"hi\"\nthere", "utf8", "n\xc5\x93ud", NULL),
	                 0);
	text = render_all(p);
	assert_string_equal(text, "# HELP cd_test_info Labels\n"
	                          "# TYPE cd_test_info gauge\n"
	                          "cd_test_info{path=\"C:\\\\tmp\",say=\"\\\"hi\\\"\\nthere\","
	                          "utf8=\"n\xc5\x93ud\"} 1\n");
	free(text);
	prom_free(p);
}

static void invalid_utf8_in_a_label_value_becomes_a_question_mark(void **state)
{
	struct prom *p = prom_new();
	char *text;

	prom_family(p, "cd_test_info", PROM_GAUGE, "Labels");
	assert_int_equal(prom_add(p, "cd_test_info", NULL, 1, "v", "a\xff\xc0\xafz", NULL), 0);
	text = render_all(p);
	assert_non_null(strstr(text, "cd_test_info{v=\"a???z\"} 1\n"));
	free(text);
	prom_free(p);
}

static void help_escapes_backslash_and_newline_but_not_quotes(void **state)
{
	struct prom *p = prom_new();
	char *text;

	prom_family(p, "cd_test_up", PROM_GAUGE, "1 when \"up\",\nelse 0 (see C:\\doc)");
	prom_add(p, "cd_test_up", NULL, 1, NULL);
	text = render_all(p);
	assert_string_equal(text, "# HELP cd_test_up 1 when \"up\",\\nelse 0 (see C:\\\\doc)\n"
	                          "# TYPE cd_test_up gauge\n"
	                          "cd_test_up 1\n");
	free(text);
	prom_free(p);
}

static void a_family_without_help_has_no_help_line(void **state)
{
	struct prom *p = prom_new();
	char *text;

	prom_family(p, "cd_test_up", PROM_GAUGE, NULL);
	prom_add(p, "cd_test_up", NULL, 1, NULL);
	text = render_all(p);
	assert_string_equal(text, "# TYPE cd_test_up gauge\ncd_test_up 1\n");
	free(text);
	prom_free(p);
}

/* The value as rendered for one sample. */
static void expect_rendered(double v, const char *want)
{
	struct prom *p = prom_new();
	char *text, line[128];

	prom_family(p, "cd_test_value", PROM_GAUGE, NULL);
	assert_int_equal(prom_add(p, "cd_test_value", NULL, v, NULL), 0);
	text = render_all(p);
	snprintf(line, sizeof(line), "# TYPE cd_test_value gauge\ncd_test_value %s\n", want);
	assert_string_equal(text, line);
	free(text);
	prom_free(p);
}

static void values_render_in_their_shortest_exact_form(void **state)
{
	expect_rendered(1, "1");
	expect_rendered(0, "0");
	expect_rendered(0.5, "0.5");
	expect_rendered(1e9, "1e+09");
	expect_rendered(0.1, "0.1");
	expect_rendered(123456789, "123456789");
	expect_rendered(1.5e-06, "1.5e-06");
	expect_rendered(-2.25, "-2.25");
	expect_rendered(1.0 / 3, "0.3333333333333333");
	expect_rendered(0.1 + 0.2, "0.30000000000000004");
	expect_rendered(NAN, "NaN");
	expect_rendered(INFINITY, "+Inf");
	expect_rendered(-INFINITY, "-Inf");
}

/* ---- names and series ---- */

static void invalid_metric_names_are_refused(void **state)
{
	struct prom *p = prom_new();

	assert_int_equal(prom_family(p, "", PROM_GAUGE, "x"), CD_ERR_PARSE);
	assert_int_equal(prom_family(p, "1up", PROM_GAUGE, "x"), CD_ERR_PARSE);
	assert_int_equal(prom_family(p, "node-up", PROM_GAUGE, "x"), CD_ERR_PARSE);
	assert_int_equal(prom_family(p, "node up", PROM_GAUGE, "x"), CD_ERR_PARSE);
	assert_int_equal(prom_family(p, "n\xc3\xa9", PROM_GAUGE, "x"), CD_ERR_PARSE);
	assert_int_equal(prom_family(p, "_rule:node_up:sum", PROM_GAUGE, "x"), 0);
	assert_int_equal(prom_family(p, ":up9", PROM_GAUGE, "x"), 0);
	prom_free(p);
}

static void a_family_declared_twice_is_refused(void **state)
{
	struct prom *p = prom_new();

	assert_int_equal(prom_family(p, "cd_test_up", PROM_GAUGE, "x"), 0);
	assert_int_equal(prom_family(p, "cd_test_up", PROM_COUNTER, "y"), CD_ERR_PARSE);
	prom_free(p);
}

static void invalid_label_names_are_refused_and_nothing_is_added(void **state)
{
	struct prom *p = prom_new();

	prom_family(p, "cd_test_up", PROM_GAUGE, "x");
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "__name", "a", NULL), CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "9node", "a", NULL), CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "no-de", "a", NULL), CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "a:b", "a", NULL), CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "", "a", NULL), CD_ERR_PARSE);
	assert_int_equal(prom_count(p), 0);
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "_node", "a", NULL), 0);
	assert_int_equal(prom_count(p), 1);
	prom_free(p);
}

static void a_label_given_twice_is_refused(void **state)
{
	struct prom *p = prom_new();

	prom_family(p, "cd_test_up", PROM_GAUGE, "x");
	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, "node", "a", "node", "b", NULL),
	                 CD_ERR_PARSE);
	assert_int_equal(prom_count(p), 0);
	prom_free(p);
}

static void the_same_series_twice_is_refused_whatever_the_label_order(void **state)
{
	struct prom *p = prom_new();
	char *text;

	prom_family(p, "cd_test_up", PROM_GAUGE, "x");
	assert_int_equal(prom_add(p, "cd_test_up", "a", 1, "node", "a", "peer", "b", NULL), 0);
	assert_int_equal(prom_add(p, "cd_test_up", "a", 2, "node", "a", "peer", "b", NULL),
	                 CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", "b", 3, "peer", "b", "node", "a", NULL),
	                 CD_ERR_PARSE);
	/* An empty value is no label at all, for Prometheus. */
	assert_int_equal(prom_add(p, "cd_test_up", "a", 4, "node", "a", "peer", "b", "x", "", NULL),
	                 CD_ERR_PARSE);
	assert_int_equal(prom_add(p, "cd_test_up", "b", 5, "node", "b", "peer", "a", NULL), 0);
	assert_int_equal(prom_count(p), 2);
	text = render_all(p);
	assert_string_equal(text, "# HELP cd_test_up x\n# TYPE cd_test_up gauge\n"
	                          "cd_test_up{node=\"a\",peer=\"b\"} 1\n"
	                          "cd_test_up{node=\"b\",peer=\"a\"} 5\n");
	free(text);
	prom_free(p);
}

static void a_sample_of_an_undeclared_family_is_not_found(void **state)
{
	struct prom *p = prom_new();

	assert_int_equal(prom_add(p, "cd_test_up", NULL, 1, NULL), CD_ERR_NOTFOUND);
	assert_int_equal(prom_count(p), 0);
	prom_free(p);
}

/* ---- groups ---- */

static void render_group_keeps_one_group_and_drops_empty_families(void **state)
{
	struct prom *p = small_set();
	char *node2 = render_group(p, "node2"), *run = render_group(p, NULL),
	     *none = render_group(p, "node9");

	assert_string_equal(node2, "# HELP cd_test_node_up Whether the node answered\n"
	                           "# TYPE cd_test_node_up gauge\n"
	                           "cd_test_node_up{node=\"node2\"} 0\n"
	                           "# HELP cd_test_errors_total Errors seen\n"
	                           "# TYPE cd_test_errors_total counter\n"
	                           "cd_test_errors_total{node=\"node2\",kind=\"ssh\"} 0\n");
	assert_string_equal(run, "# HELP cd_test_duration_seconds How long the run took\n"
	                         "# TYPE cd_test_duration_seconds untyped\n"
	                         "cd_test_duration_seconds 12.5\n");
	assert_string_equal(none, "");
	free(node2);
	free(run);
	free(none);
	prom_free(p);
}

static void render_past_the_buffer_cap_is_too_big(void **state)
{
	struct prom *p = small_set();
	struct buf b;

	buf_init(&b, 64);
	assert_int_equal(prom_render(p, &b), CD_ERR_TOOBIG);
	buf_fini(&b);
	prom_free(p);
}

/* ---- the textfile ---- */

struct tmpdir {
	char path[64];
};

static void tmpdir_make(struct tmpdir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/test_prom.XXXXXX");
	assert_non_null(mkdtemp(d->path));
}

/* The names in d, sorted and joined by spaces, into out. */
static void tmpdir_list(const struct tmpdir *d, char *out, size_t len)
{
	struct dirent **names;
	int n = scandir(d->path, &names, NULL, alphasort);

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, names[i]->d_name, len - strlen(out) - 1);
		}
		free(names[i]);
	}
	free(names);
}

static void tmpdir_remove(struct tmpdir *d)
{
	struct dirent **names;
	int n = scandir(d->path, &names, NULL, alphasort);
	char path[512];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->path, names[i]->d_name);
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			unlink(path);
		free(names[i]);
	}
	free(names);
	rmdir(d->path);
}

static char *slurp(const char *path)
{
	unsigned char *data;
	size_t len;
	char err[CD_ERRLEN];

	assert_int_equal(cd_read_file(path, 1 << 20, &data, &len, err, sizeof(err)), 0);
	return (char *)data;
}

static void write_file_replaces_the_file_with_mode_0644_and_leaves_no_temporary(void **state)
{
	struct prom *p = small_set();
	struct tmpdir d;
	char path[128], err[CD_ERRLEN], names[256], *text;
	struct stat st;
	mode_t old = umask(077);

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/node.prom", d.path);
	assert_int_equal(cd_write_file_atomic(path, "old\n", 4, 0600, err, sizeof(err)), 0);
	assert_int_equal(prom_write_file(p, path, err, sizeof(err)), 0);
	umask(old);
	text = slurp(path);
	assert_string_equal(text, small_set_text);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	tmpdir_list(&d, names, sizeof(names));
	assert_string_equal(names, "node.prom");
	free(text);
	tmpdir_remove(&d);
	prom_free(p);
}

static void write_file_into_a_missing_directory_is_an_io_error_naming_the_path(void **state)
{
	struct prom *p = small_set();
	struct tmpdir d;
	char path[128], want[256], err[CD_ERRLEN], names[256];

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/missing/node.prom", d.path);
	assert_int_equal(prom_write_file(p, path, err, sizeof(err)), CD_ERR_IO);
	snprintf(want, sizeof(want), "cannot write %s: No such file or directory", path);
	assert_string_equal(err, want);
	tmpdir_list(&d, names, sizeof(names));
	assert_string_equal(names, "");
	tmpdir_remove(&d);
	prom_free(p);
}

static void write_file_over_a_stale_temporary_succeeds(void **state)
{
	struct tmpdir d;
	char path[128], stale[160], err[CD_ERRLEN], names[256], *text;
	int fd;

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/node.prom", d.path);
	snprintf(stale, sizeof(stale), "%s/.node.prom.tmp.%s", d.path, cd_writer_tag());
	fd = open(stale, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cd_write_file_atomic(path, "x 1\n", 4, 0644, err, sizeof(err)), 0);
	text = slurp(path);
	assert_string_equal(text, "x 1\n");
	tmpdir_list(&d, names, sizeof(names));
	assert_string_equal(names, "node.prom");
	free(text);
	tmpdir_remove(&d);
}

/* Run promtool check metrics on text; its verdict and output into out. */
static int promtool_check(const char *text, char *out, size_t len)
{
	struct tmpdir d;
	char path[128], cmd[256];
	FILE *fp;
	size_t n;
	int status;

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/m.prom", d.path);
	assert_int_equal(cd_write_file_atomic(path, text, strlen(text), 0644, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), PROMTOOL " check metrics <%s 2>&1", path);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	n = fread(out, 1, len - 1, fp);
	out[n] = '\0';
	status = pclose(fp);
	tmpdir_remove(&d);
	return status;
}

static void the_exposition_passes_promtool_check_metrics(void **state)
{
	struct prom *p;
	char *text, out[4096];

	if (access(PROMTOOL, X_OK) != 0)
		skip();
	p = small_set();
	prom_family(p, "cd_test_link_bandwidth_bytes_per_second", PROM_GAUGE,
	            "Measured \"bandwidth\",\nper link (C:\\x)");
	prom_add(p, "cd_test_link_bandwidth_bytes_per_second", "node1", 1.5e9, "node", "node1",
	         "peer", "a\\b\"c\nd", NULL);
	prom_add(p, "cd_test_link_bandwidth_bytes_per_second", "node1", NAN, "node", "node1",
	         "peer", "n\xc5\x93ud", NULL);
	prom_add(p, "cd_test_link_bandwidth_bytes_per_second", "node1", INFINITY, "node", "node1",
	         "peer", "inf", NULL);
	prom_add(p, "cd_test_link_bandwidth_bytes_per_second", "node1", -INFINITY, "node", "node1",
	         "peer", "-inf", NULL);
	text = render_all(p);
	assert_int_equal(promtool_check(text, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	free(text);
	prom_free(p);
}

static void promtool_check_can_fail(void **state)
{
	char out[4096];

	if (access(PROMTOOL, X_OK) != 0)
		skip();
	/* The check above would pass on anything if promtool never complained. */
	assert_int_not_equal(promtool_check("# TYPE x counter\nx{a=\"\\q\"} 1\n", out, sizeof(out)),
	                     0);
}

/* ---- a Pushgateway stand-in on 127.0.0.1 ---- */

struct request {
	char method[16], path[512], ctype[128], body[4096];
};

struct server {
	int lfd, stop[2], port;
	int status;         /* the answer to every request */
	const char *answer; /* and its body */
	struct request reqs[8];
	int nreqs;
	pthread_t thread;
};

/* The value of header name (with its ':') in the request head req. */
static void header_value(const char *req, const char *name, char *out, size_t len)
{
	const char *h = strcasestr(req, name);
	size_t n = 0;

	out[0] = '\0';
	if (!h)
		return;
	for (h += strlen(name); *h == ' '; h++)
		;
	while (h[n] && h[n] != '\r' && n + 1 < len)
		n++;
	memcpy(out, h, n);
	out[n] = '\0';
}

static void serve_one(struct server *s, int fd)
{
	char req[8192] = "", head[256], clen[32];
	struct request *r = &s->reqs[s->nreqs < 8 ? s->nreqs : 7];
	struct timeval tv = {.tv_sec = 2};
	size_t n = 0, want;
	char *end = NULL;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n < sizeof(req) - 1 && !(end = strstr(req, "\r\n\r\n"))) {
		ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);

		if (k <= 0)
			return;
		n += (size_t)k;
		req[n] = '\0';
	}
	if (!end)
		return;
	header_value(req, "\r\nContent-Length:", clen, sizeof(clen));
	want = (size_t)(end + 4 - req) + strtoul(clen, NULL, 10);
	while (n < want && n < sizeof(req) - 1) {
		ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);

		if (k <= 0)
			return;
		n += (size_t)k;
	}
	req[n] = '\0';
	memset(r, 0, sizeof(*r));
	sscanf(req, "%15s %511s", r->method, r->path);
	header_value(req, "\r\nContent-Type:", r->ctype, sizeof(r->ctype));
	snprintf(r->body, sizeof(r->body), "%s", end + 4);
	s->nreqs++;
	snprintf(head, sizeof(head),
	         "HTTP/1.1 %d Whatever\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
	         s->status, strlen(s->answer));
	/* No cmocka assertions here: they cannot fail from this thread. */
	if (write(fd, head, strlen(head)) > 0 && *s->answer)
		(void)!write(fd, s->answer, strlen(s->answer));
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->stop[0], .events = POLLIN},
		                      {.fd = s->lfd, .events = POLLIN}};
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (!(p[1].revents & POLLIN))
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		serve_one(s, fd);
		close(fd);
	}
	return NULL;
}

/* A socket on 127.0.0.1, an ephemeral port; listening when backlog >= 0. */
static int local_socket(int backlog, int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (backlog >= 0)
		assert_int_equal(listen(fd, backlog), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void server_start(struct server *s, int status, const char *answer)
{
	memset(s, 0, sizeof(*s));
	s->status = status;
	s->answer = answer;
	s->lfd = local_socket(16, &s->port);
	assert_int_equal(pipe2(s->stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

/* Stop the server; its requests can be read after. */
static void server_stop(struct server *s)
{
	assert_int_equal(write(s->stop[1], "x", 1), 1);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	close(s->stop[0]);
	close(s->stop[1]);
}

static void push_puts_each_group_in_first_use_order(void **state)
{
	struct prom *p = small_set();
	struct server s;
	char url[128], want[256], err[CD_ERRLEN] = "";
	const char *groups[] = {"node1", NULL, "node2"};
	const char *instances[] = {"node1", "head", "node2"};
	int fds = count_open_fds(), rc;

	server_start(&s, 200, "");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d//", s.port);
	rc = prom_push(p,
	               &(struct prom_push_opts){.url = url,
	                                        .job = "clusterdoc",
	                                        .run_instance = "head",
	                                        .label = "command",
	                                        .value = "check"},
	               err, sizeof(err));
	server_stop(&s);
	assert_string_equal(err, "");
	assert_int_equal(rc, 3);
	assert_int_equal(s.nreqs, 3);
	for (int i = 0; i < 3; i++) {
		char *body = render_group(p, groups[i]);

		snprintf(want, sizeof(want), "/metrics/job/clusterdoc/instance/%s/command/check",
		         instances[i]);
		assert_string_equal(s.reqs[i].method, "PUT");
		assert_string_equal(s.reqs[i].path, want);
		assert_string_equal(s.reqs[i].ctype, "text/plain; version=0.0.4");
		assert_string_equal(s.reqs[i].body, body);
		free(body);
	}
	assert_int_equal(count_open_fds(), fds);
	prom_free(p);
}

/* The head is also node2: one PUT to node2's key holds node2's and the run's
 * samples; two would replace each other. */
static void push_merges_the_run_into_the_node_the_head_is(void **state)
{
	struct prom *p = small_set();
	struct server s;
	char url[128], err[CD_ERRLEN] = "";
	int rc;

	server_start(&s, 200, "");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	rc = prom_push(p, &(struct prom_push_opts){.url = url, .job = "j", .run_instance = "node2"},
	               err, sizeof(err));
	server_stop(&s);
	assert_string_equal(err, "");
	assert_int_equal(rc, 2);
	assert_int_equal(s.nreqs, 2);
	assert_string_equal(s.reqs[0].path, "/metrics/job/j/instance/node1");
	assert_string_equal(s.reqs[1].path, "/metrics/job/j/instance/node2");
	assert_string_equal(s.reqs[1].body,
	                    "# HELP cd_test_node_up Whether the node answered\n"
	                    "# TYPE cd_test_node_up gauge\n"
	                    "cd_test_node_up{node=\"node2\"} 0\n"
	                    "# HELP cd_test_errors_total Errors seen\n"
	                    "# TYPE cd_test_errors_total counter\n"
	                    "cd_test_errors_total{node=\"node2\",kind=\"ssh\"} 0\n"
	                    "# HELP cd_test_duration_seconds How long the run took\n"
	                    "# TYPE cd_test_duration_seconds untyped\n"
	                    "cd_test_duration_seconds 12.5\n");
	prom_free(p);
}

static void push_path_values_with_a_slash_or_empty_go_as_url_safe_base64(void **state)
{
	struct prom *p = prom_new();
	struct server s;
	char url[128], err[CD_ERRLEN] = "";

	prom_family(p, "cd_test_up", PROM_GAUGE, "x");
	prom_add(p, "cd_test_up", "/>?", 1, NULL);
	prom_add(p, "cd_test_up", NULL, 1, "node", "head", NULL);
	prom_add(p, "cd_test_up", "node 1:a", 1, "node", "node 1:a", NULL);
	server_start(&s, 200, "");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	assert_int_equal(prom_push(p,
	                           &(struct prom_push_opts){.url = url,
	                                                    .job = "cd/x",
	                                                    .run_instance = "",
	                                                    .label = "dev",
	                                                    .value = "n/>a?"},
	                           err, sizeof(err)),
	                 3);
	server_stop(&s);
	assert_int_equal(s.nreqs, 3);
	assert_string_equal(s.reqs[0].path, "/metrics/job@base64/Y2QveA==/instance@base64/Lz4_"
	                                    "/dev@base64/bi8-YT8=");
	assert_string_equal(s.reqs[1].path,
	                    "/metrics/job@base64/Y2QveA==/instance@base64/=/dev@base64/bi8-YT8=");
	assert_string_equal(s.reqs[2].path, "/metrics/job@base64/Y2QveA==/instance/node%201%3Aa"
	                                    "/dev@base64/bi8-YT8=");
	prom_free(p);
}

static void push_http_400_is_refused_with_the_status_and_first_line(void **state)
{
	struct prom *p = small_set();
	struct server s;
	char url[128], want[256], err[CD_ERRLEN] = "";

	server_start(&s, 400, "bad metrics\nmore");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	assert_int_equal(prom_push(p, &(struct prom_push_opts){.url = url, .job = "clusterdoc"},
	                           err, sizeof(err)),
	                 CD_ERR_REFUSED);
	server_stop(&s);
	assert_int_equal(s.nreqs, 1);
	snprintf(want, sizeof(want),
	         "pushgateway http://127.0.0.1:%d/metrics/job/clusterdoc/instance/node1: HTTP 400: "
	         "bad metrics",
	         s.port);
	assert_string_equal(err, want);
	prom_free(p);
}

static void push_to_a_closed_port_is_refused(void **state)
{
	struct prom *p = small_set();
	char url[128], want[256], err[CD_ERRLEN] = "";
	int port, fd = local_socket(-1, &port); /* bound, not listening: nobody else gets it */

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(prom_push(p, &(struct prom_push_opts){.url = url, .job = "clusterdoc"},
	                           err, sizeof(err)),
	                 CD_ERR_REFUSED);
	snprintf(
	    want, sizeof(want),
	    "pushgateway http://127.0.0.1:%d/metrics/job/clusterdoc/instance/node1: connection "
	    "refused; is the Pushgateway running there? (--push URL)",
	    port);
	assert_string_equal(err, want);
	close(fd);
	prom_free(p);
}

static void push_to_a_server_that_never_answers_times_out(void **state)
{
	struct prom *p = small_set();
	char url[128], want[256], err[CD_ERRLEN] = "";
	int port, fd = local_socket(4, &port); /* the kernel accepts; nobody answers */
	int64_t t0 = cd_now_ms(), took;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(
	    prom_push(p,
	              &(struct prom_push_opts){.url = url, .job = "clusterdoc", .timeout_ms = 300},
	              err, sizeof(err)),
	    CD_ERR_TIMEOUT);
	took = cd_now_ms() - t0;
	assert_true(took >= 250 && took < 2000);
	snprintf(want, sizeof(want),
	         "pushgateway http://127.0.0.1:%d/metrics/job/clusterdoc/instance/node1: no answer "
	         "within 300 ms",
	         port);
	assert_memory_equal(err, want, strlen(want));
	close(fd);
	prom_free(p);
}

static void push_to_a_non_http_url_is_a_parse_error_without_a_request(void **state)
{
	struct prom *p = small_set();
	struct server s;
	char url[128], err[CD_ERRLEN] = "";

	server_start(&s, 200, "");
	snprintf(url, sizeof(url), "ftp://127.0.0.1:%d", s.port);
	assert_int_equal(prom_push(p, &(struct prom_push_opts){.url = url, .job = "clusterdoc"},
	                           err, sizeof(err)),
	                 CD_ERR_PARSE);
	server_stop(&s);
	assert_int_equal(s.nreqs, 0);
	assert_non_null(strstr(err, url));
	assert_non_null(strstr(err, "not an http:// or https:// URL"));
	prom_free(p);
}

static void push_of_nothing_sends_nothing(void **state)
{
	struct prom *p = prom_new();
	struct server s;
	char url[128], err[CD_ERRLEN] = "";

	prom_family(p, "cd_test_up", PROM_GAUGE, "x");
	server_start(&s, 200, "");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	assert_int_equal(prom_push(p, &(struct prom_push_opts){.url = url, .job = "clusterdoc"},
	                           err, sizeof(err)),
	                 0);
	server_stop(&s);
	assert_int_equal(s.nreqs, 0);
	prom_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(families_render_in_declaration_order_with_their_samples_together),
	    cmocka_unit_test(label_values_escape_backslash_quote_and_newline),
	    cmocka_unit_test(invalid_utf8_in_a_label_value_becomes_a_question_mark),
	    cmocka_unit_test(help_escapes_backslash_and_newline_but_not_quotes),
	    cmocka_unit_test(a_family_without_help_has_no_help_line),
	    cmocka_unit_test(values_render_in_their_shortest_exact_form),
	    cmocka_unit_test(invalid_metric_names_are_refused),
	    cmocka_unit_test(a_family_declared_twice_is_refused),
	    cmocka_unit_test(invalid_label_names_are_refused_and_nothing_is_added),
	    cmocka_unit_test(a_label_given_twice_is_refused),
	    cmocka_unit_test(the_same_series_twice_is_refused_whatever_the_label_order),
	    cmocka_unit_test(a_sample_of_an_undeclared_family_is_not_found),
	    cmocka_unit_test(render_group_keeps_one_group_and_drops_empty_families),
	    cmocka_unit_test(render_past_the_buffer_cap_is_too_big),
	    cmocka_unit_test(write_file_replaces_the_file_with_mode_0644_and_leaves_no_temporary),
	    cmocka_unit_test(write_file_into_a_missing_directory_is_an_io_error_naming_the_path),
	    cmocka_unit_test(write_file_over_a_stale_temporary_succeeds),
	    cmocka_unit_test(the_exposition_passes_promtool_check_metrics),
	    cmocka_unit_test(promtool_check_can_fail),
	    cmocka_unit_test(push_puts_each_group_in_first_use_order),
	    cmocka_unit_test(push_merges_the_run_into_the_node_the_head_is),
	    cmocka_unit_test(push_path_values_with_a_slash_or_empty_go_as_url_safe_base64),
	    cmocka_unit_test(push_http_400_is_refused_with_the_status_and_first_line),
	    cmocka_unit_test(push_to_a_closed_port_is_refused),
	    cmocka_unit_test(push_to_a_server_that_never_answers_times_out),
	    cmocka_unit_test(push_to_a_non_http_url_is_a_parse_error_without_a_request),
	    cmocka_unit_test(push_of_nothing_sends_nothing),
	};

	/* Every request here goes to 127.0.0.1, never through a proxy. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
