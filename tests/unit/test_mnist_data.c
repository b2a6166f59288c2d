/* SPDX-License-Identifier: MIT */
/* test_mnist_data.c - the MNIST files on the head: the IDX parser, downloads
 * on the loop (against a small HTTP server on 127.0.0.1 in a thread), and the
 * dataset from a mirror, the cache or a local folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cd.h"
#include "fsutil.h"
#include "jobs/mnist_data.h"
#include "fetch.h"
#include "idx.h"
#include "loop.h"
#include "sha256.h"
#include "open_fds.h"

/* ---- IDX ---- */

/* An MNIST-shaped IDX file: n images of side x side (kind images) or n labels. */
static unsigned char *idx_make(enum idx_kind kind, uint32_t n, uint32_t side, size_t *len)
{
	size_t hdr = kind == IDX_IMAGES ? 16 : 8;
	size_t body = kind == IDX_IMAGES ? (size_t)n * side * side : n;
	unsigned char *p = calloc(1, hdr + body + 16);

	p[2] = IDX_TYPE_U8;
	p[3] = kind == IDX_IMAGES ? 3 : 1;
	for (int i = 0; i < 4; i++) {
		p[4 + i] = (unsigned char)(n >> (24 - 8 * i));
		if (kind == IDX_IMAGES)
			p[8 + i] = p[12 + i] = (unsigned char)(side >> (24 - 8 * i));
	}
	for (size_t i = 0; i < body; i++)
		p[hdr + i] = (unsigned char)(kind == IDX_LABELS ? i % 10 : i % 251);
	*len = hdr + body;
	return p;
}

static void idx_accepts_mnist_images(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 3, 28, &len);
	struct idx_info info;
	char err[CD_ERRLEN] = "";

	assert_int_equal(idx_parse_mnist(p, len, IDX_IMAGES, &info, err, sizeof(err)), 0);
	assert_int_equal(info.type, IDX_TYPE_U8);
	assert_int_equal(info.ndim, 3);
	assert_int_equal(info.count, 3);
	assert_int_equal(info.dims[1], 28);
	assert_int_equal(info.dims[2], 28);
	assert_int_equal(info.header_bytes, 16);
	assert_ptr_equal(info.data, p + 16);
	free(p);
}

static void idx_accepts_mnist_labels(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_LABELS, 25, 0, &len);
	struct idx_info info;
	char err[CD_ERRLEN] = "";

	assert_int_equal(idx_parse_mnist(p, len, IDX_LABELS, &info, err, sizeof(err)), 0);
	assert_int_equal(info.ndim, 1);
	assert_int_equal(info.count, 25);
	assert_int_equal(info.header_bytes, 8);
	assert_ptr_equal(info.data, p + 8);
	free(p);
}

/* Parse p as kind and expect CD_ERR_PARSE with want in the message. */
static void expect_idx_error(unsigned char *p, size_t len, enum idx_kind kind, const char *want)
{
	struct idx_info info;
	char err[CD_ERRLEN] = "";

	assert_int_equal(idx_parse_mnist(p, len, kind, &info, err, sizeof(err)), CD_ERR_PARSE);
	if (!strstr(err, want))
		fail_msg("message \"%s\" lacks \"%s\"", err, want);
	free(p);
}

static void idx_rejects_wrong_magic(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 1, 28, &len);

	p[0] = 0x1f, p[1] = 0x8b; /* a gzip file passed unopened */
	expect_idx_error(p, len, IDX_IMAGES,
	                 "not an IDX file: magic 0x1f8b0803, expected 0x00000803");
}

static void idx_rejects_wrong_type(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_LABELS, 4, 0, &len);

	p[2] = IDX_TYPE_F32;
	expect_idx_error(p, len, IDX_LABELS, "IDX element type 0x0d, expected 0x08 (uint8)");
}

static void idx_rejects_labels_parsed_as_images(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_LABELS, 4, 0, &len);

	expect_idx_error(p, len, IDX_IMAGES, "1 dimensions, expected 3 for MNIST images");
}

static void idx_rejects_27x28_images(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 2, 28, &len);

	p[11] = 27;
	expect_idx_error(p, len, IDX_IMAGES, "images of 27x28 pixels, expected 28x28");
}

static void idx_rejects_truncated_file(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 2, 28, &len);

	expect_idx_error(p, len - 1, IDX_IMAGES,
	                 "truncated: 1583 bytes, expected 1584 for 2 images");
}

static void idx_rejects_truncated_header(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 2, 28, &len);

	expect_idx_error(p, 10, IDX_IMAGES, "truncated: 10 bytes, expected at least 16");
}

static void idx_rejects_trailing_bytes(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_LABELS, 5, 0, &len);

	expect_idx_error(p, len + 3, IDX_LABELS, "3 trailing bytes after 5 labels");
}

static void idx_rejects_label_10_naming_its_index(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_LABELS, 5, 0, &len);

	p[8 + 3] = 10;
	expect_idx_error(p, len, IDX_LABELS, "label 10 at index 3 is not 0..9");
}

static void idx_hostile_count_does_not_overflow(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 1, 28, &len);
	unsigned char *q = idx_make(IDX_LABELS, 1, 0, &len);

	memset(p + 4, 0xff, 4); /* 4294967295 images of 784 bytes: 16 + 3367254359280 */
	expect_idx_error(p, 16 + 784, IDX_IMAGES, "expected 3367254359296 for 4294967295 images");
	memset(q + 4, 0xff, 4);
	expect_idx_error(q, 9, IDX_LABELS, "expected 4294967303 for 4294967295 labels");
}

static void idx_hostile_image_sides_are_rejected(void **state)
{
	size_t len;
	unsigned char *p = idx_make(IDX_IMAGES, 1, 28, &len);

	memset(p + 4, 0xff, 12); /* every dimension 0xffffffff */
	expect_idx_error(p, len, IDX_IMAGES, "images of 4294967295x4294967295 pixels");
}

/* ---- a small HTTP/1.1 server on 127.0.0.1 ---- */

enum route_kind {
	R_BODY,     /* 200 with body */
	R_FLAKY,    /* status for the first fail_times requests, then 200 with body */
	R_PARTIAL,  /* Content-Length 1000 more than the body, then close */
	R_REDIRECT, /* 302 to body */
	R_STALL,    /* read the request, send nothing until the client goes */
	R_FILES,    /* path prefix: the file of that name in directory body */
};

struct route {
	const char *path;
	enum route_kind kind;
	const char *body;
	int status, fail_times;
	int hits;
};

struct server {
	int lfd, stop[2], port;
	int stalled[16]; /* R_STALL connections, closed when the client goes */
	int nstalled;
	char last_request[4096];
	pthread_t thread;
	pthread_mutex_t mu;
	struct route *routes;
	size_t nroutes;
	int requests;
};

static const char *reason_phrase(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 302:
		return "Found";
	case 404:
		return "Not Found";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	default:
		return "Whatever";
	}
}

static void send_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		c += n;
		len -= (size_t)n;
	}
}

static void send_reply(int fd, int status, const char *extra, const void *body, size_t len,
                       size_t claimed)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
	                 status, reason_phrase(status), claimed, extra);

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

static void send_file(int fd, const char *dir, const char *name)
{
	char path[512];
	FILE *fp;
	char *body = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "rb");
	if (!fp) {
		send_reply(fd, 404, "", "no such file\n", 13, 13);
		return;
	}
	fseek(fp, 0, SEEK_END);
	len = (size_t)ftell(fp);
	rewind(fp);
	body = malloc(len + 1);
	len = fread(body, 1, len, fp);
	fclose(fp);
	send_reply(fd, 200, "Content-Type: application/octet-stream\r\n", body, len, len);
	free(body);
}

/* Answer one request on fd; returns 1 when fd is kept open (R_STALL). */
static int serve_conn(struct server *s, int fd)
{
	char req[4096] = "", path[1024] = "", extra[1200];
	size_t n = 0;
	struct route *r = NULL;
	int hit, kept;

	while (n < sizeof(req) - 1 && !strstr(req, "\r\n\r\n")) {
		ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);

		if (k <= 0)
			return 0;
		n += (size_t)k;
		req[n] = '\0';
	}
	if (sscanf(req, "GET %1023s HTTP/1.1", path) != 1)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->requests++;
	memcpy(s->last_request, req, sizeof(req));
	for (size_t i = 0; i < s->nroutes && !r; i++) {
		const struct route *c = &s->routes[i];

		size_t plen = strlen(c->path);

		/* A path ending in '/' matches every path under it. */
		if (c->path[plen - 1] == '/' ? !strncmp(path, c->path, plen)
		                             : !strcmp(path, c->path))
			r = &s->routes[i];
	}
	hit = r ? ++r->hits : 0;
	pthread_mutex_unlock(&s->mu);
	if (!r) {
		send_reply(fd, 404, "", "", 0, 0);
		return 0;
	}
	switch (r->kind) {
	case R_BODY:
		send_reply(fd, 200, "", r->body, strlen(r->body), strlen(r->body));
		break;
	case R_FLAKY:
		if (hit <= r->fail_times)
			send_reply(fd, r->status, "", "busy\n", 5, 5);
		else
			send_reply(fd, 200, "", r->body, strlen(r->body), strlen(r->body));
		break;
	case R_PARTIAL:
		send_reply(fd, 200, "", r->body, strlen(r->body), strlen(r->body) + 1000);
		break;
	case R_REDIRECT:
		snprintf(extra, sizeof(extra), "Location: %s\r\n", r->body);
		send_reply(fd, 302, extra, "", 0, 0);
		break;
	case R_STALL:
		pthread_mutex_lock(&s->mu);
		kept = s->nstalled < (int)CD_ARRAY_LEN(s->stalled);
		if (kept)
			s->stalled[s->nstalled++] = fd;
		pthread_mutex_unlock(&s->mu);
		return kept;
	case R_FILES:
		send_file(fd, r->body, path + strlen(r->path));
		break;
	}
	return 0;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct pollfd p[2 + CD_ARRAY_LEN(s->stalled)];
	char junk[256];

	for (;;) {
		int n = s->nstalled, fd;

		p[0] = (struct pollfd){.fd = s->stop[0], .events = POLLIN};
		p[1] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
		for (int i = 0; i < n; i++)
			p[2 + i] = (struct pollfd){.fd = s->stalled[i], .events = POLLIN};
		if (poll(p, (nfds_t)(2 + n), -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (int i = n - 1; i >= 0; i--) {
			if (p[2 + i].revents && read(s->stalled[i], junk, sizeof(junk)) <= 0) {
				pthread_mutex_lock(&s->mu);
				close(s->stalled[i]);
				s->stalled[i] = s->stalled[--s->nstalled];
				pthread_mutex_unlock(&s->mu);
			}
		}
		if (!(p[1].revents & POLLIN))
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0 || serve_conn(s, fd))
			continue;
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	for (int i = 0; i < s->nstalled; i++)
		close(s->stalled[i]);
	return NULL;
}

static struct server *server_start(struct route *routes, size_t nroutes)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);

	s->routes = routes;
	s->nroutes = nroutes;
	pthread_mutex_init(&s->mu, NULL);
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->lfd, 16), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pipe2(s->stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
	return s;
}

static void server_stop(struct server *s)
{
	assert_int_equal(write(s->stop[1], "x", 1), 1);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	close(s->stop[0]);
	close(s->stop[1]);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static int server_hits(struct server *s, const char *path)
{
	int n = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nroutes; i++)
		if (!strcmp(s->routes[i].path, path))
			n = s->routes[i].hits;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Wait (at most a second) until the server holds no stalled connection. */
static void server_wait_idle(struct server *s)
{
	for (int i = 0; i < 100; i++) {
		int n;

		pthread_mutex_lock(&s->mu);
		n = s->nstalled;
		pthread_mutex_unlock(&s->mu);
		if (!n)
			return;
		usleep(10000);
	}
}

static int server_requests(struct server *s)
{
	int n;

	pthread_mutex_lock(&s->mu);
	n = s->requests;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- fixture: a temporary folder, a server, a loop ---- */

struct fx {
	char dir[64];
	char buf[1024];  /* scratch */
	char *paths[64]; /* from fx_path, freed at teardown */
	int npaths;
	struct server *srv;
	struct loop *loop;
	struct fetcher *fetcher; /* for on_done_free */
	/* one download's outcome */
	int done_calls, err, progress_calls;
	long long last_got, last_total;
	char msg[CD_ERRLEN];
	/* one preparation's outcome */
	int ready_calls, file_progress[MNIST_NFILES];
	struct mnist_data *data;
	char ready_err[CD_ERRLEN];
};

static char big_body[100000];

static struct route fetch_routes[] = {
    {.path = "/ok", .kind = R_BODY, .body = "hello, clusterdoc\n"},
    {.path = "/big", .kind = R_BODY, .body = big_body},
    {.path = "/missing", .kind = R_FLAKY, .body = "", .status = 404, .fail_times = 1000},
    {.path = "/flaky",
     .kind = R_FLAKY,
     .body = "third time lucky\n",
     .status = 500,
     .fail_times = 2},
    {.path = "/busy", .kind = R_FLAKY, .body = "after a while\n", .status = 429, .fail_times = 1},
    {.path = "/partial", .kind = R_PARTIAL, .body = "only part of it"},
    {.path = "/redirect", .kind = R_REDIRECT, .body = "/ok"},
    {.path = "/to-file", .kind = R_REDIRECT, .body = "file:///etc/hostname"},
    {.path = "/stall", .kind = R_STALL, .body = ""},
    {.path = "/stuck/", .kind = R_STALL, .body = ""},
    {.path = "/mnist/", .kind = R_FILES}, /* body: the fixture's source folder */
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/test_mnist_data.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	for (size_t i = 0; i < CD_ARRAY_LEN(fetch_routes); i++)
		fetch_routes[i].hits = 0;
	for (size_t i = 0; i < sizeof(big_body) - 1; i++)
		big_body[i] = (char)('a' + i % 23);
	fx->srv = server_start(fetch_routes, CD_ARRAY_LEN(fetch_routes));
	fx->loop = loop_new();
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;

	server_stop(fx->srv);
	loop_free(fx->loop);
	mnist_data_free(fx->data);
	nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	for (int i = 0; i < fx->npaths; i++)
		free(fx->paths[i]);
	free(fx);
	return 0;
}

/* The server's URL for path, valid until the teardown. */
static const char *fx_url(struct fx *fx, const char *path)
{
	assert_true(fx->npaths < (int)CD_ARRAY_LEN(fx->paths));
	return fx->paths[fx->npaths++] = cd_asprintf("http://127.0.0.1:%d%s", fx->srv->port, path);
}

/* <dir>/name, valid until the teardown. */
static const char *fx_path(struct fx *fx, const char *name)
{
	assert_true(fx->npaths < (int)CD_ARRAY_LEN(fx->paths));
	return fx->paths[fx->npaths++] = cd_asprintf("%s/%s", fx->dir, name);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* How many part files of NAME there are: a download writes NAME.part.TAG,
 * the tag being its writer's (host, pid, random), so two heads sharing a
 * home never write one part file. */
static size_t parts_of(struct fx *fx, const char *name)
{
	char *pattern = cd_asprintf("%s/%s.part*", fx->dir, name);
	glob_t g;
	size_t n;

	memset(&g, 0, sizeof(g));
	n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
	globfree(&g);
	free(pattern);
	return n;
}

static void on_progress(void *arg, long long got, long long total)
{
	struct fx *fx = arg;

	fx->progress_calls++;
	fx->last_got = got;
	fx->last_total = total;
}

static void on_done(void *arg, int err, const char *msg)
{
	struct fx *fx = arg;

	fx->done_calls++;
	fx->err = err;
	snprintf(fx->msg, sizeof(fx->msg), "%s", msg);
}

/* Turn the loop until *flag is set or ms have passed. */
static void run_until(struct fx *fx, const int *flag, int ms)
{
	int64_t end = cd_now_ms() + ms;

	while (!*flag && cd_now_ms() < end)
		if (loop_run_once(fx->loop, 50) == 0)
			break;
}

/* Fetch path into <dir>/out with o's limits (fast ones when NULL); returns the fetcher's verdict.
 */
static int fetch_one(struct fx *fx, const char *path, struct fetch_opts *o)
{
	struct fetch_opts def = {.retries = 3, .backoff_ms = 10, .stall_timeout_ms = 1000};
	struct fetcher *f = fetcher_new(fx->loop);
	char err[CD_ERRLEN];

	if (!o)
		o = &def;
	o->url = fx_url(fx, path);
	o->dest_path = fx_path(fx, "out");
	assert_non_null(f);
	assert_int_equal(fetcher_get(f, o, on_progress, on_done, fx, err, sizeof(err)), 0);
	run_until(fx, &fx->done_calls, 8000);
	fetcher_free(f);
	assert_int_equal(fx->done_calls, 1);
	assert_int_equal(parts_of(fx, "out"), 0);
	return fx->err;
}

static void assert_contains(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("\"%s\" lacks \"%s\"", s, want);
}

static void assert_file_is(const char *path, const void *want, size_t len)
{
	FILE *fp = fopen(path, "rb");
	char *got = malloc(len + 2);
	size_t n;

	assert_non_null(fp);
	n = fread(got, 1, len + 1, fp);
	fclose(fp);
	assert_int_equal(n, len);
	assert_memory_equal(got, want, len);
	free(got);
}

static void md5_of(const void *p, size_t len, char hex[33])
{
	unsigned char d[16];
	unsigned int n;

	EVP_Digest(p, len, d, &n, EVP_md5(), NULL);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* ---- fetch ---- */

static void fetch_writes_the_body_and_reports_progress(void **state)
{
	struct fx *fx = *state;
	char md5[33];
	struct fetch_opts o = {.backoff_ms = 10, .expect_md5 = md5};

	md5_of(big_body, strlen(big_body), md5);
	assert_int_equal(fetch_one(fx, "/big", &o), 0);
	assert_string_equal(fx->msg, "");
	assert_file_is(fx_path(fx, "out"), big_body, strlen(big_body));
	assert_true(fx->progress_calls >= 1);
	assert_int_equal(fx->last_got, (long long)strlen(big_body));
	assert_int_equal(fx->last_total, (long long)strlen(big_body));
	assert_int_equal(server_hits(fx->srv, "/big"), 1);
	assert_non_null(strstr(fx->srv->last_request, "\r\nUser-Agent: clusterdoc"));
}

static void fetch_404_is_not_retried_and_names_the_url(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(fetch_one(fx, "/missing", NULL), CD_ERR_NOTFOUND);
	assert_int_equal(server_hits(fx->srv, "/missing"), 1);
	assert_contains(fx->msg, fx_url(fx, "/missing"));
	assert_contains(fx->msg, ": HTTP 404 Not Found (no retry); check the URL");
	assert_false(exists(fx_path(fx, "out")));
}

static void fetch_500_twice_then_200_succeeds_on_the_third_attempt(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(fetch_one(fx, "/flaky", NULL), 0);
	assert_int_equal(server_hits(fx->srv, "/flaky"), 3);
	assert_file_is(fx_path(fx, "out"), "third time lucky\n", 17);
}

static void fetch_429_is_retried(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(fetch_one(fx, "/busy", NULL), 0);
	assert_int_equal(server_hits(fx->srv, "/busy"), 2);
}

static void fetch_500_fails_after_every_attempt(void **state)
{
	struct fx *fx = *state;
	struct fetch_opts o = {.retries = 1, .backoff_ms = 10};

	assert_int_equal(fetch_one(fx, "/flaky", &o), CD_ERR_REFUSED);
	assert_int_equal(server_hits(fx->srv, "/flaky"), 2);
	assert_contains(fx->msg, "HTTP 500 Internal Server Error (attempt 2 of 2)");
}

static void fetch_partial_body_fails_after_retries_plus_one_attempts(void **state)
{
	struct fx *fx = *state;
	struct fetch_opts o = {.retries = 2, .backoff_ms = 10};

	assert_int_equal(fetch_one(fx, "/partial", &o), CD_ERR_IO);
	assert_int_equal(server_hits(fx->srv, "/partial"), 3);
	assert_contains(fx->msg, fx_url(fx, "/partial"));
	assert_contains(fx->msg, ": transfer ended after 15 of 1015 bytes (attempt 3 of 3); ");
	assert_false(exists(fx_path(fx, "out")));
}

static void fetch_follows_a_redirect(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(fetch_one(fx, "/redirect", NULL), 0);
	assert_int_equal(server_hits(fx->srv, "/ok"), 1);
	assert_file_is(fx_path(fx, "out"), "hello, clusterdoc\n", 18);
}

static void fetch_refuses_a_redirect_to_file_url(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(fetch_one(fx, "/to-file", NULL), CD_ERR_UNSUPPORTED);
	assert_int_equal(server_hits(fx->srv, "/to-file"), 1);
	assert_contains(fx->msg, "(no retry)");
	assert_false(exists(fx_path(fx, "out")));
}

static void fetch_refuses_a_file_url(void **state)
{
	struct fx *fx = *state;
	struct fetcher *f = fetcher_new(fx->loop);
	struct fetch_opts o = {.url = "file:///etc/hostname", .dest_path = fx_path(fx, "out")};
	char err[CD_ERRLEN];

	assert_int_equal(fetcher_get(f, &o, NULL, on_done, fx, err, sizeof(err)), 0);
	run_until(fx, &fx->done_calls, 2000);
	fetcher_free(f);
	assert_int_equal(fx->err, CD_ERR_UNSUPPORTED);
	assert_contains(fx->msg, "file:///etc/hostname: ");
	assert_contains(fx->msg, "(no retry); only http:// and https:// URLs");
	assert_false(exists(fx_path(fx, "out")));
	assert_int_equal(parts_of(fx, "out"), 0);
}

static void fetch_md5_mismatch_is_retried_then_names_both_md5s(void **state)
{
	struct fx *fx = *state;
	char got[33];
	struct fetch_opts o = {
	    .retries = 1, .backoff_ms = 10, .expect_md5 = "F68B3C2DCBEAAA9FBDD348BBDEB94873"};

	md5_of("hello, clusterdoc\n", 18, got);
	assert_int_equal(fetch_one(fx, "/ok", &o), CD_ERR_IO);
	assert_int_equal(server_hits(fx->srv, "/ok"), 2);
	snprintf(fx->buf, sizeof(fx->buf), "MD5 %s but expected f68b3c2dcbeaaa9fbdd348bbdeb94873",
	         got);
	assert_contains(fx->msg, fx->buf);
	assert_contains(fx->msg, "the mirror served a different or damaged file");
	assert_false(exists(fx_path(fx, "out")));
}

static void fetch_stall_fails_within_the_stall_timeout(void **state)
{
	struct fx *fx = *state;
	struct fetch_opts o = {.retries = -1, .stall_timeout_ms = 1000};
	int64_t t0 = cd_now_ms();

	assert_int_equal(fetch_one(fx, "/stall", &o), CD_ERR_TIMEOUT);
	assert_true(cd_now_ms() - t0 < 2500);
	assert_int_equal(server_hits(fx->srv, "/stall"), 1);
	assert_contains(fx->msg,
	                "stalled: less than 1 byte/s for 1 s after 0 bytes (attempt 1 of 1)");
}

static void fetch_connection_refused_is_retried(void **state)
{
	struct fx *fx = *state;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct fetcher *f = fetcher_new(fx->loop);
	struct fetch_opts o = {.retries = 1, .backoff_ms = 10, .dest_path = fx_path(fx, "out")};
	char url[64], err[CD_ERRLEN];

	/* A port nobody listens on: bound, never listened to. */
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", ntohs(a.sin_port));
	o.url = url;
	assert_int_equal(fetcher_get(f, &o, NULL, on_done, fx, err, sizeof(err)), 0);
	run_until(fx, &fx->done_calls, 5000);
	fetcher_free(f);
	close(s);
	assert_int_equal(fx->err, CD_ERR_REFUSED);
	assert_contains(fx->msg, url);
	assert_contains(fx->msg, "(attempt 2 of 2); check the network");
}

static void fetcher_get_rejects_a_malformed_md5(void **state)
{
	struct fx *fx = *state;
	struct fetcher *f = fetcher_new(fx->loop);
	struct fetch_opts o = {.url = "http://127.0.0.1:1/x",
	                       .dest_path = fx_path(fx, "out"),
	                       .expect_md5 = "not-an-md5"};
	char err[CD_ERRLEN];

	assert_int_equal(fetcher_get(f, &o, NULL, on_done, fx, err, sizeof(err)), CD_ERR_PARSE);
	assert_contains(err, "not 32 hex digits");
	assert_int_equal(loop_run_once(fx->loop, 10), 0);
	fetcher_free(f);
	assert_int_equal(fx->done_calls, 0);
}

static void fetcher_free_cancels_without_callback_and_removes_part(void **state)
{
	struct fx *fx = *state;
	int fds = count_open_fds();
	struct fetcher *f = fetcher_new(fx->loop);
	struct fetch_opts o = {.url = fx_url(fx, "/stall"), .dest_path = fx_path(fx, "out")};
	char err[CD_ERRLEN];
	int64_t end = cd_now_ms() + 3000;

	assert_int_equal(fetcher_get(f, &o, on_progress, on_done, fx, err, sizeof(err)), 0);
	while (server_hits(fx->srv, "/stall") == 0 && cd_now_ms() < end)
		loop_run_once(fx->loop, 20);
	assert_int_equal(server_hits(fx->srv, "/stall"), 1);
	assert_int_equal(parts_of(fx, "out"), 1);
	{
		char *mine = cd_asprintf("out.part.%s", cd_writer_tag());

		assert_true(exists(fx_path(fx, mine)));
		free(mine);
	}
	fetcher_free(f);
	assert_int_equal(parts_of(fx, "out"), 0);
	assert_int_equal(loop_run_once(fx->loop, 10), 0); /* nothing left on the loop */
	assert_int_equal(fx->done_calls, 0);
	server_wait_idle(fx->srv); /* its end of the connection counts too */
	assert_int_equal(count_open_fds(), fds);
}

/* done of the first download frees the fetcher while the second still runs. */
static void on_done_free(void *arg, int err, const char *msg)
{
	struct fx *fx = arg;

	on_done(arg, err, msg);
	fetcher_free(fx->fetcher);
	fx->fetcher = NULL;
}

static void fetcher_free_inside_done_cancels_the_others(void **state)
{
	struct fx *fx = *state;
	struct fetcher *f = fetcher_new(fx->loop);
	struct fetch_opts stall = {.url = fx_url(fx, "/stall"), .dest_path = fx_path(fx, "a")};
	struct fetch_opts missing = {.url = fx_url(fx, "/missing"), .dest_path = fx_path(fx, "b")};
	char err[CD_ERRLEN];

	fx->fetcher = f;
	assert_int_equal(fetcher_get(f, &stall, NULL, on_done, fx, err, sizeof(err)), 0);
	assert_int_equal(fetcher_get(f, &missing, NULL, on_done_free, fx, err, sizeof(err)), 0);
	run_until(fx, &fx->done_calls, 3000);
	assert_int_equal(fx->done_calls, 1);
	assert_int_equal(fx->err, CD_ERR_NOTFOUND);
	assert_null(fx->fetcher);
	assert_int_equal(loop_run_once(fx->loop, 10), 0);
	assert_int_equal(parts_of(fx, "a"), 0);
}

/* ---- the dataset ---- */

static void on_file_progress(void *arg, enum mnist_file f, long long got, long long total)
{
	struct fx *fx = arg;

	fx->file_progress[f]++;
}

static void on_ready(void *arg, struct mnist_data *data, const char *err)
{
	struct fx *fx = arg;

	fx->ready_calls++;
	mnist_data_free(fx->data);
	fx->data = data;
	snprintf(fx->ready_err, sizeof(fx->ready_err), "%s", err ? err : "");
}

/* <dir>/md5: the MD5 of each <dir>/src/<name>.gz, as md5sum writes it. */
static void fx_write_md5(struct fx *fx)
{
	static char gz[1 << 20];
	char name[128], md5[33];
	FILE *out = fopen(fx_path(fx, "md5"), "w"), *in;
	size_t n;

	assert_non_null(out);
	for (int f = 0; f < MNIST_NFILES; f++) {
		snprintf(name, sizeof(name), "src/%s.gz", mnist_file_name(f));
		in = fopen(fx_path(fx, name), "rb");
		assert_non_null(in);
		n = fread(gz, 1, sizeof(gz), in);
		fclose(in);
		md5_of(gz, n, md5);
		fprintf(out, "%s  %s.gz\n", md5, mnist_file_name(f));
	}
	fclose(out);
}

/* Synthetic .gz files in <dir>/src (served under /mnist/), the same raw in
 * <dir>/raw, and their MD5s in <dir>/md5. */
static void fx_dataset(struct fx *fx)
{
	char err[CD_ERRLEN];

	mkdir(fx_path(fx, "src"), 0700);
	mkdir(fx_path(fx, "raw"), 0700);
	assert_int_equal(
	    mnist_data_write_synthetic(fx_path(fx, "src"), 120, 30, 7, 1, err, sizeof(err)), 0);
	assert_int_equal(
	    mnist_data_write_synthetic(fx_path(fx, "raw"), 120, 30, 7, 0, err, sizeof(err)), 0);
	fetch_routes[CD_ARRAY_LEN(fetch_routes) - 1].body = fx_path(fx, "src");
	fx_write_md5(fx);
}

/* Prepare with o (the fixture's server, cache and md5 file filled in where NULL). */
static void prepare(struct fx *fx, struct mnist_data_opts *o)
{
	struct mnist_prep *p;
	char err[CD_ERRLEN], url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/mnist", fx->srv->port); /* no '/' */
	if (!o->url)
		o->url = url;
	if (!o->cache_dir && !o->data_dir)
		o->cache_dir = fx_path(fx, "cache/mnist");
	if (!o->md5_file)
		o->md5_file = fx_path(fx, "md5");
	o->backoff_ms = 10;
	fx->ready_calls = 0;
	memset(fx->file_progress, 0, sizeof(fx->file_progress));
	p = mnist_data_prepare(fx->loop, o, on_file_progress, on_ready, fx, err, sizeof(err));
	if (!p)
		fail_msg("mnist_data_prepare: %s", err);
	run_until(fx, &fx->ready_calls, 8000);
	mnist_prep_free(p);
	assert_int_equal(fx->ready_calls, 1);
	assert_int_equal(loop_run_once(fx->loop, 10), 0);
}

static void assert_dataset_is_the_synthetic_one(struct fx *fx)
{
	char name[128], hex[65], err[CD_ERRLEN];

	if (!fx->data)
		fail_msg("no data: %s", fx->ready_err);
	assert_int_equal(fx->data->ntrain, 120);
	assert_int_equal(fx->data->ntest, 30);
	for (int f = 0; f < MNIST_NFILES; f++) {
		snprintf(name, sizeof(name), "raw/%s", mnist_file_name(f));
		assert_int_equal(sha256_file_hex(fx_path(fx, name), hex, err, sizeof(err)), 0);
		assert_string_equal(fx->data->f[f].sha256, hex);
		assert_ptr_equal(fx->data->f[f].idx.data,
		                 fx->data->f[f].raw + fx->data->f[f].idx.header_bytes);
	}
}

static void prepare_downloads_then_reuses_the_cache(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {0};
	struct stat st;
	char name[128];

	fx_dataset(fx);
	prepare(fx, &o);
	assert_dataset_is_the_synthetic_one(fx);
	assert_int_equal(server_requests(fx->srv), 4);
	for (int f = 0; f < MNIST_NFILES; f++) {
		assert_true(fx->file_progress[f] >= 1);
		snprintf(name, sizeof(name), "cache/mnist/%s.gz", mnist_file_name(f));
		assert_int_equal(parts_of(fx, name), 0);
	}
	assert_int_equal(stat(fx_path(fx, "cache"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	o = (struct mnist_data_opts){0};
	prepare(fx, &o);
	assert_dataset_is_the_synthetic_one(fx);
	assert_int_equal(server_requests(fx->srv), 4); /* no new request */
	for (int f = 0; f < MNIST_NFILES; f++)
		assert_int_equal(fx->file_progress[f], 1); /* got == total, once */
}

static void prepare_downloads_a_damaged_cache_file_again(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {0};
	FILE *fp;

	fx_dataset(fx);
	prepare(fx, &o);
	fp = fopen(fx_path(fx, "cache/mnist/t10k-labels-idx1-ubyte.gz"), "w");
	fputs("damaged", fp);
	fclose(fp);
	o = (struct mnist_data_opts){0};
	prepare(fx, &o);
	assert_dataset_is_the_synthetic_one(fx);
	assert_int_equal(server_requests(fx->srv), 5);
}

static void prepare_with_a_wrong_md5_fails_naming_the_file(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {.retries = 1};
	FILE *fp;

	fx_dataset(fx);
	fp = fopen(fx_path(fx, "md5"), "a"); /* a later line overrides */
	fputs("00000000000000000000000000000000 *t10k-labels-idx1-ubyte.gz\n", fp);
	fclose(fp);
	prepare(fx, &o);
	assert_null(fx->data);
	assert_contains(fx->ready_err, "/mnist/t10k-labels-idx1-ubyte.gz: MD5 ");
	assert_contains(fx->ready_err, "but expected 00000000000000000000000000000000");
	assert_contains(fx->ready_err, "set --data-url to another mirror or --data-dir");
	assert_int_equal(parts_of(fx, "cache/mnist/t10k-labels-idx1-ubyte.gz"), 0);
	assert_false(exists(fx_path(fx, "cache/mnist/t10k-labels-idx1-ubyte.gz")));
}

static void prepare_with_a_truncated_gz_fails_naming_the_file(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {0};
	const char *gz;
	struct stat st;

	fx_dataset(fx);
	gz = fx_path(fx, "src/train-images-idx3-ubyte.gz");
	assert_int_equal(stat(gz, &st), 0);
	assert_int_equal(truncate(gz, st.st_size / 2), 0);
	fx_write_md5(fx); /* the mirror's sums describe the truncated file */
	prepare(fx, &o);
	assert_null(fx->data);
	assert_contains(fx->ready_err, "train-images-idx3-ubyte.gz: truncated or corrupt gzip");
}

static void prepare_from_a_data_dir_with_raw_files(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {.data_dir = fx_path(fx, "local")};
	char err[CD_ERRLEN];

	fx_dataset(fx);
	mkdir(fx_path(fx, "local"), 0700);
	mkdir(fx_path(fx, "local/MNIST"), 0700);
	mkdir(fx_path(fx, "local/MNIST/raw"), 0700);
	assert_int_equal(mnist_data_write_synthetic(fx_path(fx, "local/MNIST/raw"), 120, 30, 7, 0,
	                                            err, sizeof(err)),
	                 0);
	prepare(fx, &o);
	assert_dataset_is_the_synthetic_one(fx);
	assert_int_equal(server_requests(fx->srv), 0);
}

static void prepare_from_a_data_dir_missing_a_file_names_the_paths(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {.data_dir = fx_path(fx, "raw")};
	char want[600];

	fx_dataset(fx);
	assert_int_equal(unlink(fx_path(fx, "raw/t10k-images-idx3-ubyte")), 0);
	prepare(fx, &o);
	assert_null(fx->data);
	snprintf(want, sizeof(want),
	         "t10k-images-idx3-ubyte is missing: tried %s/t10k-images-idx3-ubyte, "
	         "%s/MNIST/raw/t10k-images-idx3-ubyte, %s/t10k-images-idx3-ubyte.gz, "
	         "%s/MNIST/raw/t10k-images-idx3-ubyte.gz",
	         o.data_dir, o.data_dir, o.data_dir, o.data_dir);
	assert_contains(fx->ready_err, want);
}

static void prepare_from_a_missing_mirror_says_what_to_do(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {.url = fx_url(fx, "/nothing/")};

	fx_dataset(fx);
	prepare(fx, &o);
	assert_null(fx->data);
	assert_contains(fx->ready_err, "/nothing/train-images-idx3-ubyte.gz: HTTP 404 Not Found");
	assert_contains(fx->ready_err, "--data-url");
	assert_true(server_requests(fx->srv) <= 4);
}

static void prep_free_cancels_the_downloads(void **state)
{
	struct fx *fx = *state;
	struct mnist_data_opts o = {.url = fx_url(fx, "/stuck/"),
	                            .cache_dir = fx_path(fx, "cache")};
	struct mnist_prep *p;
	char err[CD_ERRLEN], name[128];
	int64_t end = cd_now_ms() + 3000;

	p = mnist_data_prepare(fx->loop, &o, NULL, on_ready, fx, err, sizeof(err));
	assert_non_null(p);
	while (server_requests(fx->srv) < MNIST_NFILES && cd_now_ms() < end)
		loop_run_once(fx->loop, 20);
	assert_int_equal(server_requests(fx->srv), MNIST_NFILES);
	mnist_prep_free(p);
	assert_int_equal(loop_run_once(fx->loop, 10), 0); /* nothing left on the loop */
	assert_int_equal(fx->ready_calls, 0);
	for (int f = 0; f < MNIST_NFILES; f++) {
		snprintf(name, sizeof(name), "cache/%s.gz", mnist_file_name(f));
		assert_int_equal(parts_of(fx, name), 0);
	}
}

static void load_dir_reads_synthetic_gz_files(void **state)
{
	struct fx *fx = *state;
	char err[CD_ERRLEN];

	fx_dataset(fx);
	assert_int_equal(mnist_data_load_dir(fx_path(fx, "src"), &fx->data, err, sizeof(err)), 0);
	assert_dataset_is_the_synthetic_one(fx);
}

static void load_dir_rejects_labels_that_do_not_match_images(void **state)
{
	struct fx *fx = *state;
	struct mnist_data *d = NULL;
	char err[CD_ERRLEN];
	size_t len;
	unsigned char *labels = idx_make(IDX_LABELS, 29, 0, &len);
	FILE *fp;

	fx_dataset(fx);
	fp = fopen(fx_path(fx, "raw/t10k-labels-idx1-ubyte"), "wb");
	fwrite(labels, 1, len, fp);
	fclose(fp);
	free(labels);
	assert_int_equal(mnist_data_load_dir(fx_path(fx, "raw"), &d, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_null(d);
	assert_contains(err, "t10k-images-idx3-ubyte has 30 images but t10k-labels-idx1-ubyte "
	                     "has 29 labels");
}

static void load_dir_reads_gzip_files_of_several_members(void **state)
{
	struct fx *fx = *state;
	char err[CD_ERRLEN];
	size_t len;
	unsigned char *labels = idx_make(IDX_LABELS, 30, 0, &len);
	gzFile gz;

	fx_dataset(fx);
	assert_int_equal(unlink(fx_path(fx, "raw/t10k-labels-idx1-ubyte")), 0);
	/* gzip's "ab" mode appends a second member, as `cat a.gz b.gz` would. */
	gz = gzopen(fx_path(fx, "raw/t10k-labels-idx1-ubyte.gz"), "wb");
	gzwrite(gz, labels, 20);
	gzclose(gz);
	gz = gzopen(fx_path(fx, "raw/t10k-labels-idx1-ubyte.gz"), "ab");
	gzwrite(gz, labels + 20, (unsigned)len - 20);
	gzclose(gz);
	assert_int_equal(mnist_data_load_dir(fx_path(fx, "raw"), &fx->data, err, sizeof(err)), 0);
	assert_int_equal(fx->data->f[MNIST_TEST_LABELS].len, len);
	assert_memory_equal(fx->data->f[MNIST_TEST_LABELS].raw, labels, len);
	free(labels);
}

/* A nearest-centroid classifier learns the synthetic classes. */
static void synthetic_dataset_is_learnable(void **state)
{
	struct fx *fx = *state;
	char err[CD_ERRLEN];
	static double centroid[10][784];
	int count[10] = {0}, right = 0;
	const struct mnist_blob *img, *lab;

	fx_dataset(fx);
	assert_int_equal(mnist_data_load_dir(fx_path(fx, "raw"), &fx->data, err, sizeof(err)), 0);
	memset(centroid, 0, sizeof(centroid));
	img = &fx->data->f[MNIST_TRAIN_IMAGES];
	lab = &fx->data->f[MNIST_TRAIN_LABELS];
	for (size_t i = 0; i < fx->data->ntrain; i++) {
		count[lab->idx.data[i]]++;
		for (int k = 0; k < 784; k++)
			centroid[lab->idx.data[i]][k] += img->idx.data[i * 784 + k];
	}
	img = &fx->data->f[MNIST_TEST_IMAGES];
	lab = &fx->data->f[MNIST_TEST_LABELS];
	for (size_t i = 0; i < fx->data->ntest; i++) {
		double best = 1e300;
		int guess = -1;

		for (int c = 0; c < 10; c++) {
			double d = 0;

			for (int k = 0; count[c] && k < 784; k++) {
				double v = img->idx.data[i * 784 + k] - centroid[c][k] / count[c];

				d += v * v;
			}
			if (count[c] && d < best)
				best = d, guess = c;
		}
		right += guess == lab->idx.data[i];
	}
	assert_true(right >= 27); /* 90% of 30 */
}

int main(void)
{
	static const char *const proxies[] = {"http_proxy",  "https_proxy", "HTTP_PROXY",
	                                      "HTTPS_PROXY", "ALL_PROXY",   "all_proxy"};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(idx_accepts_mnist_images),
	    cmocka_unit_test(idx_accepts_mnist_labels),
	    cmocka_unit_test(idx_rejects_wrong_magic),
	    cmocka_unit_test(idx_rejects_wrong_type),
	    cmocka_unit_test(idx_rejects_labels_parsed_as_images),
	    cmocka_unit_test(idx_rejects_27x28_images),
	    cmocka_unit_test(idx_rejects_truncated_file),
	    cmocka_unit_test(idx_rejects_truncated_header),
	    cmocka_unit_test(idx_rejects_trailing_bytes),
	    cmocka_unit_test(idx_rejects_label_10_naming_its_index),
	    cmocka_unit_test(idx_hostile_count_does_not_overflow),
	    cmocka_unit_test(idx_hostile_image_sides_are_rejected),
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(fetch_writes_the_body_and_reports_progress),
	    FX(fetch_404_is_not_retried_and_names_the_url),
	    FX(fetch_500_twice_then_200_succeeds_on_the_third_attempt),
	    FX(fetch_429_is_retried),
	    FX(fetch_500_fails_after_every_attempt),
	    FX(fetch_partial_body_fails_after_retries_plus_one_attempts),
	    FX(fetch_follows_a_redirect),
	    FX(fetch_refuses_a_redirect_to_file_url),
	    FX(fetch_refuses_a_file_url),
	    FX(fetch_md5_mismatch_is_retried_then_names_both_md5s),
	    FX(fetch_stall_fails_within_the_stall_timeout),
	    FX(fetch_connection_refused_is_retried),
	    FX(fetcher_get_rejects_a_malformed_md5),
	    FX(fetcher_free_cancels_without_callback_and_removes_part),
	    FX(fetcher_free_inside_done_cancels_the_others),
	    FX(prepare_downloads_then_reuses_the_cache),
	    FX(prepare_downloads_a_damaged_cache_file_again),
	    FX(prepare_with_a_wrong_md5_fails_naming_the_file),
	    FX(prepare_with_a_truncated_gz_fails_naming_the_file),
	    FX(prepare_from_a_data_dir_with_raw_files),
	    FX(prepare_from_a_data_dir_missing_a_file_names_the_paths),
	    FX(prepare_from_a_missing_mirror_says_what_to_do),
	    FX(prep_free_cancels_the_downloads),
	    FX(load_dir_reads_synthetic_gz_files),
	    FX(load_dir_rejects_labels_that_do_not_match_images),
	    FX(load_dir_reads_gzip_files_of_several_members),
	    FX(synthetic_dataset_is_learnable),
#undef FX
	};

	/* Every request goes straight to 127.0.0.1. */
	for (size_t i = 0; i < CD_ARRAY_LEN(proxies); i++)
		unsetenv(proxies[i]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
