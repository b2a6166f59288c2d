/* SPDX-License-Identifier: MIT */
/* fetch.c - downloads with libcurl's multi interface on our loop (see fetch.h). */
#include "fetch.h"
#include "cd.h"
#include "fsutil.h"
#include "loop.h"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef CD_VERSION
#define FETCH_USER_AGENT "clusterdoc/" CD_VERSION
#else
#define FETCH_USER_AGENT "clusterdoc"
#endif

#define FETCH_MAX_REDIRS     5L
#define FETCH_MAX_BACKOFF_MS (10 * 60 * 1000)
#define FETCH_PROTOCOLS      "http,https"

/* One fetcher_get: its options, and the attempt in progress. */
struct xfer {
	struct fetcher *f;
	struct xfer *next;
	char *url, *dest, *part;
	char md5[33]; /* expected, lowercase hex; "" = not checked */
	int attempts; /* allowed in all: retries + 1 */
	int attempt;  /* the current one, from 1 */
	int backoff_ms, connect_timeout_ms, stall_timeout_ms;
	long long max_bytes;
	fetch_progress_cb progress;
	fetch_done_cb done;
	void *arg;

	uint64_t timer; /* the start of the next attempt (first, or after back-off) */
	CURL *easy;     /* while an attempt runs */
	int fd;         /* the .part file, while an attempt runs */
	EVP_MD_CTX *md5ctx;
	long long got, reported;
	int write_errno, too_big;
	char status[128]; /* the last HTTP status line received */
	char curl_err[CURL_ERROR_SIZE];
};

struct fetcher {
	struct loop *loop;
	CURLM *multi;
	uint64_t timer; /* curl's timeout */
	struct xfer *xfers;
	int *fds; /* the sockets we watch for curl, to unwatch what it leaves */
	size_t nfds, capfds;
	int depth; /* our loop callbacks on the stack: user callbacks may free us */
	int dying; /* fetcher_free ran inside one of them */
};

/* What one failed attempt amounts to. */
struct verdict {
	int err;
	int retry;
	char what[256];
	const char *advice;
};

static const char advice_broke[] = "the connection broke; try again or use another mirror";

/* curl's results, other than HTTP errors: the cd_err, transient or not, and what to do. */
static const struct curl_class {
	CURLcode code;
	int err;
	int retry;
	const char *advice;
} curl_classes[] = {
    {CURLE_COULDNT_RESOLVE_HOST, CD_ERR_NOTFOUND, 1,
     "check the host name in the URL and the network's DNS"},
    {CURLE_COULDNT_RESOLVE_PROXY, CD_ERR_NOTFOUND, 1, "check the proxy settings (https_proxy)"},
    {CURLE_COULDNT_CONNECT, CD_ERR_REFUSED, 1, "check the network, the proxy settings and the URL"},
    {CURLE_OPERATION_TIMEDOUT, CD_ERR_TIMEOUT, 1,
     "the network or the server is too slow; try again or use a closer mirror"},
    {CURLE_PARTIAL_FILE, CD_ERR_IO, 1, advice_broke},
    {CURLE_GOT_NOTHING, CD_ERR_IO, 1, advice_broke},
    {CURLE_SEND_ERROR, CD_ERR_IO, 1, advice_broke},
    {CURLE_RECV_ERROR, CD_ERR_IO, 1, advice_broke},
    {CURLE_HTTP2, CD_ERR_IO, 1, advice_broke},
    {CURLE_HTTP2_STREAM, CD_ERR_IO, 1, advice_broke},
    {CURLE_SSL_CONNECT_ERROR, CD_ERR_IO, 1,
     "the TLS handshake failed; check the network and proxy"},
    {CURLE_UNSUPPORTED_PROTOCOL, CD_ERR_UNSUPPORTED, 0,
     "only http:// and https:// URLs (and redirects) are fetched"},
    {CURLE_URL_MALFORMAT, CD_ERR_PARSE, 0, "check the URL"},
    {CURLE_TOO_MANY_REDIRECTS, CD_ERR_PROTO, 0, "use the URL the redirects lead to"},
    {CURLE_WEIRD_SERVER_REPLY, CD_ERR_PROTO, 0, "the server does not speak HTTP; check the URL"},
    {CURLE_PEER_FAILED_VERIFICATION, CD_ERR_HOSTKEY, 0,
     "check the URL and the system's CA certificates"},
    {CURLE_FILESIZE_EXCEEDED, CD_ERR_TOOBIG, 0, "check the URL: this is not the expected file"},
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void fds_add(struct fetcher *f, int fd)
{
	for (size_t i = 0; i < f->nfds; i++)
		if (f->fds[i] == fd)
			return;
	if (f->nfds == f->capfds) {
		f->capfds = f->capfds ? 2 * f->capfds : 8;
		f->fds = cd_realloc(f->fds, f->capfds * sizeof(*f->fds));
	}
	f->fds[f->nfds++] = fd;
}

static void fds_del(struct fetcher *f, int fd)
{
	for (size_t i = 0; i < f->nfds; i++) {
		if (f->fds[i] == fd) {
			f->fds[i] = f->fds[--f->nfds];
			return;
		}
	}
}

static void fetcher_destroy(struct fetcher *f)
{
	loop_timer_cancel(f->loop, f->timer);
	/* Closing cached connections may still call on_curl_socket/timer. */
	curl_multi_cleanup(f->multi);
	loop_timer_cancel(f->loop, f->timer);
	for (size_t i = 0; i < f->nfds; i++)
		loop_unwatch(f->loop, f->fds[i]);
	free(f->fds);
	free(f);
}

static void fetcher_enter(struct fetcher *f)
{
	f->depth++;
}

static void fetcher_leave(struct fetcher *f)
{
	if (--f->depth == 0 && f->dying)
		fetcher_destroy(f);
}

/* Stop the current attempt, if any, and a pending start. */
static void xfer_stop(struct xfer *x)
{
	if (x->easy) {
		curl_multi_remove_handle(x->f->multi, x->easy);
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
	}
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	loop_timer_cancel(x->f->loop, x->timer);
	x->timer = 0;
}

static void xfer_free(struct xfer *x)
{
	xfer_stop(x);
	EVP_MD_CTX_free(x->md5ctx);
	free(x->url);
	free(x->dest);
	free(x->part);
	free(x);
}

static void xfer_unlink(struct xfer *x)
{
	for (struct xfer **pp = &x->f->xfers; *pp; pp = &(*pp)->next) {
		if (*pp == x) {
			*pp = x->next;
			return;
		}
	}
}

/* Report the end once, then forget the transfer. Runs only inside our loop
 * callbacks (depth > 0), so done may free the fetcher. */
static void xfer_finish(struct xfer *x, int err, const char *msg)
{
	xfer_unlink(x);
	xfer_stop(x);
	if (err)
		unlink(x->part);
	x->done(x->arg, err, msg);
	xfer_free(x);
}

static void xfer_fail(struct xfer *x, int err, const char *advice, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void xfer_fail(struct xfer *x, int err, const char *advice, const char *fmt, ...)
{
	char what[256], msg[CD_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s (no retry); %s", x->url, what, advice);
	xfer_finish(x, err, msg);
}

static size_t on_curl_write(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, off = 0;

	if (x->got + (long long)len > x->max_bytes) {
		x->too_big = 1;
		return 0;
	}
	while (off < len) {
		ssize_t w = write(x->fd, data + off, len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			x->write_errno = errno;
			return 0;
		}
		off += (size_t)w;
	}
	if (x->md5[0])
		EVP_DigestUpdate(x->md5ctx, data, len);
	x->got += (long long)len;
	return len;
}

/* Keep the last status line ("HTTP/1.1 404 Not Found"): curl's own message
 * for FAILONERROR drops the reason phrase. Redirects overwrite it. */
static size_t on_curl_header(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, k;

	if (len < 5 || memcmp(data, "HTTP/", 5) != 0)
		return len;
	k = len < sizeof(x->status) - 1 ? len : sizeof(x->status) - 1;
	while (k && (data[k - 1] == '\r' || data[k - 1] == '\n'))
		k--;
	for (size_t i = 0; i < k; i++) /* network bytes into a message: printable only */
		x->status[i] = isprint((unsigned char)data[i]) ? data[i] : '?';
	x->status[k] = '\0';
	return len;
}

/* The reason phrase of the status line, or "". */
static const char *status_reason(const char *line)
{
	const char *p = strchr(line, ' ');

	if (!p)
		return "";
	while (*p == ' ')
		p++;
	while (isdigit((unsigned char)*p))
		p++;
	while (*p == ' ')
		p++;
	return p;
}

static void classify_http(struct xfer *x, long status, struct verdict *v)
{
	const char *reason = status_reason(x->status);

	snprintf(v->what, sizeof(v->what), "HTTP %ld%s%s", status, *reason ? " " : "", reason);
	if (status == 404 || status == 410) {
		v->err = CD_ERR_NOTFOUND;
		v->advice = "check the URL";
	} else if (status == 408 || status == 429) {
		v->err = CD_ERR_REFUSED;
		v->retry = 1;
		v->advice = "the server is busy; try again later or use another mirror";
	} else if (status < 500) {
		v->err = CD_ERR_REFUSED;
		v->advice = "check the URL and whether the server needs credentials";
	} else {
		v->err = CD_ERR_REFUSED;
		v->retry = 1;
		v->advice = "the server is failing; try again later or use another mirror";
	}
}

/* Turn a failed attempt (rc != CURLE_OK) into a verdict. */
static void classify(struct xfer *x, CURLcode rc, struct verdict *v)
{
	const char *detail = x->curl_err[0] ? x->curl_err : curl_easy_strerror(rc);
	long status = 0;
	curl_off_t total = -1, connect_us = 0;

	v->err = CD_ERR_IO;
	v->retry = 0;
	v->advice = "check the URL";
	snprintf(v->what, sizeof(v->what), "%s", detail);
	if (rc == CURLE_HTTP_RETURNED_ERROR) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
		classify_http(x, status, v);
		return;
	}
	if (rc == CURLE_WRITE_ERROR && x->too_big) {
		v->err = CD_ERR_TOOBIG;
		v->advice = "check the URL: this is not the expected file";
		snprintf(v->what, sizeof(v->what), "more than %lld bytes", x->max_bytes);
		return;
	}
	if (rc == CURLE_WRITE_ERROR) {
		v->advice = "check the free space and permissions there";
		snprintf(v->what, sizeof(v->what), "cannot write %s: %s", x->part,
		         strerror(x->write_errno));
		return;
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(curl_classes); i++) {
		if (curl_classes[i].code == rc) {
			v->err = curl_classes[i].err;
			v->retry = curl_classes[i].retry;
			v->advice = curl_classes[i].advice;
			break;
		}
	}
	curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &total);
	if (rc == CURLE_PARTIAL_FILE && total >= 0)
		snprintf(v->what, sizeof(v->what), "transfer ended after %lld of %lld bytes",
		         x->got, (long long)total);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_us);
		if (connect_us > 0)
			snprintf(v->what, sizeof(v->what),
			         "stalled: less than 1 byte/s for %d s after %lld bytes",
			         (x->stall_timeout_ms + 999) / 1000, x->got);
		else
			snprintf(v->what, sizeof(v->what), "no connection within %d ms",
			         x->connect_timeout_ms);
	}
}

static void attempt_start(struct loop *loop, void *arg);

static void md5_hex(EVP_MD_CTX *ctx, char hex[33])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(ctx, d, &n);
	for (unsigned int i = 0; i < n && i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* An attempt completed with rc: rename, retry after a back-off, or fail. */
static void attempt_end(struct xfer *x, CURLcode rc)
{
	struct verdict v = {0};
	char msg[CD_ERRLEN], got_md5[33] = "";
	int64_t delay = x->backoff_ms;

	if (rc != CURLE_OK) {
		classify(x, rc, &v);
	} else if (close(x->fd) != 0) {
		x->fd = -1;
		xfer_fail(x, CD_ERR_IO, "check the free space there", "cannot write %s: %s",
		          x->part, strerror(errno));
		return;
	} else {
		x->fd = -1;
		if (x->md5[0])
			md5_hex(x->md5ctx, got_md5);
		if (x->md5[0] && strcmp(got_md5, x->md5) != 0) {
			v.err = CD_ERR_IO;
			v.retry = 1;
			v.advice = "the mirror served a different or damaged file";
			snprintf(v.what, sizeof(v.what), "MD5 %s but expected %s", got_md5, x->md5);
		}
	}
	xfer_stop(x);
	if (!v.err) {
		if (rename(x->part, x->dest) != 0) {
			xfer_fail(x, CD_ERR_IO, "check the permissions there",
			          "cannot rename %s to %s: %s", x->part, x->dest, strerror(errno));
			return;
		}
		xfer_finish(x, 0, "");
		return;
	}
	if (v.retry && x->attempt < x->attempts) {
		for (int i = 1; i < x->attempt && delay < FETCH_MAX_BACKOFF_MS; i++)
			delay *= 2;
		if (delay > FETCH_MAX_BACKOFF_MS)
			delay = FETCH_MAX_BACKOFF_MS;
		x->timer = loop_timer_add(x->f->loop, delay, attempt_start, x);
		return;
	}
	if (v.retry)
		snprintf(msg, sizeof(msg), "%s: %s (attempt %d of %d); %s", x->url, v.what,
		         x->attempt, x->attempts, v.advice);
	else
		snprintf(msg, sizeof(msg), "%s: %s (no retry); %s", x->url, v.what, v.advice);
	xfer_finish(x, v.err, msg);
}

static void attempt_setopts(struct xfer *x)
{
	CURL *e = x->easy;

	curl_easy_setopt(e, CURLOPT_URL, x->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)x);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_curl_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, (void *)x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_curl_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, (void *)x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, FETCH_MAX_REDIRS);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, FETCH_PROTOCOLS);
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, FETCH_PROTOCOLS);
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(e, CURLOPT_USERAGENT, FETCH_USER_AGENT);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)x->connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)((x->stall_timeout_ms + 999) / 1000));
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max_bytes);
}

/* Loop timer: the first attempt, or the next one after a back-off. */
static void attempt_start(struct loop *loop, void *arg)
{
	struct xfer *x = arg;
	struct fetcher *f = x->f;

	x->timer = 0;
	fetcher_enter(f);
	x->attempt++;
	x->got = 0;
	x->reported = 0;
	x->write_errno = 0;
	x->too_big = 0;
	x->status[0] = '\0';
	x->curl_err[0] = '\0';
	x->fd = open(x->part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (x->fd < 0) {
		xfer_fail(x, CD_ERR_IO, "check the free space and permissions there",
		          "cannot write %s: %s", x->part, strerror(errno));
		goto out;
	}
	if (x->md5[0] && !EVP_DigestInit_ex(x->md5ctx, EVP_md5(), NULL))
		cd_fatal("OpenSSL has no MD5");
	x->easy = curl_easy_init();
	if (!x->easy)
		cd_fatal("curl_easy_init: out of memory");
	attempt_setopts(x);
	if (curl_multi_add_handle(f->multi, x->easy) != CURLM_OK)
		cd_fatal("curl_multi_add_handle failed");
out:
	fetcher_leave(f);
}

/* After curl ran: report progress, then the attempts that ended. */
static void fetcher_after_curl(struct fetcher *f)
{
	struct xfer *x, *next;
	CURLMsg *m;
	int left;

	for (x = f->xfers; x && !f->dying; x = next) {
		curl_off_t total = -1;

		next = x->next;
		if (!x->easy || !x->progress || x->got == x->reported)
			continue;
		x->reported = x->got;
		curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &total);
		x->progress(x->arg, x->got, (long long)total);
	}
	while (!f->dying && (m = curl_multi_info_read(f->multi, &left))) {
		CURLcode rc = m->data.result;
		char *priv = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		attempt_end((struct xfer *)(void *)priv, rc);
	}
}

static void on_socket_ready(struct loop *loop, int fd, short revents, void *arg)
{
	struct fetcher *f = arg;
	int flags = 0, running;

	/* A hang-up still has to be read for curl to see the end of the stream. */
	if (revents & (POLLIN | POLLHUP))
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLNVAL))
		flags |= CURL_CSELECT_ERR;
	fetcher_enter(f);
	curl_multi_socket_action(f->multi, fd, flags, &running);
	fetcher_after_curl(f);
	fetcher_leave(f);
}

static void on_timeout(struct loop *loop, void *arg)
{
	struct fetcher *f = arg;
	int running;

	f->timer = 0;
	fetcher_enter(f);
	curl_multi_socket_action(f->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	fetcher_after_curl(f);
	fetcher_leave(f);
}

/* CURLMOPT_SOCKETFUNCTION: curl says which events it wants on a socket. */
static int on_curl_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct fetcher *f = userp;
	short events = 0;

	if (what & CURL_POLL_IN)
		events |= POLLIN;
	if (what & CURL_POLL_OUT)
		events |= POLLOUT;
	if (what == CURL_POLL_REMOVE || !events) {
		loop_unwatch(f->loop, s);
		fds_del(f, s);
		return 0;
	}
	loop_watch(f->loop, s, events, on_socket_ready, f);
	fds_add(f, s);
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: one timeout for the whole multi handle; -1 = none. */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct fetcher *f = userp;

	loop_timer_cancel(f->loop, f->timer);
	f->timer = 0;
	if (timeout_ms >= 0)
		f->timer = loop_timer_add(f->loop, timeout_ms, on_timeout, f);
	return 0;
}

struct fetcher *fetcher_new(struct loop *loop)
{
	struct fetcher *f;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return NULL;
	f = cd_calloc(1, sizeof(*f));
	f->loop = loop;
	f->multi = curl_multi_init();
	if (!f->multi) {
		free(f);
		return NULL;
	}
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETDATA, (void *)f);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERDATA, (void *)f);
	return f;
}

void fetcher_free(struct fetcher *f)
{
	struct xfer *x;

	if (!f || f->dying)
		return;
	while ((x = f->xfers)) {
		f->xfers = x->next;
		xfer_stop(x);
		unlink(x->part);
		xfer_free(x);
	}
	if (f->depth) {
		f->dying = 1; /* fetcher_leave frees it when the stack unwinds */
		return;
	}
	fetcher_destroy(f);
}

static int md5_normalise(const char *in, char out[33])
{
	size_t i;

	for (i = 0; i < 32 && isxdigit((unsigned char)in[i]); i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
	return i == 32 && in[32] == '\0' ? 0 : -1;
}

int fetcher_get(struct fetcher *f, const struct fetch_opts *o, fetch_progress_cb progress,
                fetch_done_cb done, void *arg, char *err, size_t errlen)
{
	struct xfer *x;
	char md5[33] = "";

	if (!done)
		cd_fatal("fetcher_get: no done callback");
	if (!o->url || !o->dest_path)
		return cd_errf(err, errlen, CD_ERR_PARSE, "fetch: no %s given",
		               o->url ? "destination path" : "URL");
	if (o->expect_md5 && md5_normalise(o->expect_md5, md5) != 0)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%s: expected MD5 \"%.40s\" is not 32 hex digits", o->url,
		               o->expect_md5);
	x = cd_calloc(1, sizeof(*x));
	x->f = f;
	x->fd = -1;
	x->url = cd_strdup(o->url);
	x->dest = cd_strdup(o->dest_path);
	x->part = cd_asprintf("%s.part.%s", o->dest_path, cd_writer_tag());
	memcpy(x->md5, md5, sizeof(md5));
	if (md5[0] && !(x->md5ctx = EVP_MD_CTX_new()))
		cd_fatal("EVP_MD_CTX_new: out of memory");
	x->attempts = 1 + (o->retries < 0 ? 0 : o->retries ? o->retries : FETCH_DEFAULT_RETRIES);
	x->backoff_ms = o->backoff_ms > 0 ? o->backoff_ms : FETCH_DEFAULT_BACKOFF_MS;
	x->connect_timeout_ms =
	    o->connect_timeout_ms > 0 ? o->connect_timeout_ms : FETCH_DEFAULT_CONNECT_TIMEOUT_MS;
	x->stall_timeout_ms =
	    o->stall_timeout_ms > 0 ? o->stall_timeout_ms : FETCH_DEFAULT_STALL_TIMEOUT_MS;
	x->max_bytes = o->max_bytes > 0 ? o->max_bytes : FETCH_DEFAULT_MAX_BYTES;
	x->progress = progress;
	x->done = done;
	x->arg = arg;
	x->next = f->xfers;
	f->xfers = x;
	/* Even the first attempt starts from the loop, so done never runs
	 * inside fetcher_get. */
	x->timer = loop_timer_add(f->loop, 0, attempt_start, x);
	return 0;
}
