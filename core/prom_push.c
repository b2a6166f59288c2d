/* SPDX-License-Identifier: MIT */
/*
 * prom_push.c - PUT a struct prom to a Pushgateway, one request per group
 * (see prom_push in prom.h). Blocking, with a deadline per request: it runs
 * after the command's loop has ended.
 */
#include "base64.h"
#include "buf.h"
#include "cd.h"
#include "prom.h"

#include <curl/curl.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef CD_VERSION
#define PROM_USER_AGENT "clusterdoc/" CD_VERSION
#else
#define PROM_USER_AGENT "clusterdoc"
#endif

#define PROM_MAX_TEXT   (64u << 20) /* one push body */
#define PROM_MAX_ANSWER 4096        /* what we keep of the gateway's answer */
#define PROM_MAX_REASON 200         /* of which the first line, in a message */
#define PROM_TIMEOUT_MS 10000
/* RFC 3986: what a path segment may hold unencoded */
#define UNRESERVED        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~-"
#define PROM_CONTENT_TYPE "Content-Type: text/plain; version=0.0.4"

/*
 * Append "/name/value" to a grouping-key path. The gateway reads the path
 * decoded, so a value that is empty or holds '/' cannot be a path segment:
 * it goes as "/name@base64/<URL-safe base64>". "." and ".." go that way too,
 * or curl and the gateway's router would fold them away as dot segments.
 */
static void path_append_pair(struct buf *url, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";

	buf_append_strs(url, "/", name, NULL);
	if (!*value || strchr(value, '/') || !strcmp(value, ".") || !strcmp(value, "..")) {
		size_t n = strlen(value);
		char *enc = cd_malloc(base64_encoded_size(n));

		base64_encode(value, n, enc);
		for (char *c = enc; *c; c++)
			*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
		/* base64 of "" is "", which would leave an empty segment. */
		buf_append_strs(url, "@base64/", *enc ? enc : "=", NULL);
		free(enc);
		return;
	}
	buf_append_str(url, "/");
	for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
		char pct[3] = {'%', hex[*c >> 4], hex[*c & 15]};

		if (strchr(UNRESERVED, *c))
			buf_append(url, c, 1);
		else
			buf_append(url, pct, 3);
	}
}

/* Keep the gateway's answer up to its cap, then stop the transfer: the
 * status is known by then, and only the first line is ever shown. */
static size_t on_answer(char *data, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t room = b->max - b->len, take = n < room ? n : room;

	buf_append(b, data, take);
	return take;
}

/* The first line of the gateway's answer, fit for a message. */
static void answer_reason(const struct buf *answer, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < answer->len && o + 1 < len && o < PROM_MAX_REASON; i++) {
		unsigned char c = (unsigned char)answer->data[i];

		if (c == '\n' || c == '\r')
			break;
		out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	out[o] = '\0';
}

static int push_failed(CURL *e, CURLcode cc, const char *url, long timeout_ms, const char *curl_err,
                       char *err, size_t errlen)
{
	long os_errno = 0;

	switch (cc) {
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
		if (os_errno && os_errno != ECONNREFUSED)
			return cd_errf(err, errlen, CD_ERR_REFUSED,
			               "pushgateway %s: cannot connect: %s; is the Pushgateway "
			               "running there? (--push URL)",
			               url, strerror((int)os_errno));
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "pushgateway %s: connection refused; is the Pushgateway running "
		               "there? (--push URL)",
		               url);
	case CURLE_OPERATION_TIMEDOUT:
		return cd_errf(err, errlen, CD_ERR_TIMEOUT,
		               "pushgateway %s: no answer within %ld ms; check the host, the port "
		               "and the network (--push URL)",
		               url, timeout_ms);
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return cd_errf(
		    err, errlen, CD_ERR_NOTFOUND,
		    "pushgateway %s: the host name does not resolve; check the --push URL", url);
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "pushgateway %s: %s; check the --push URL", url,
		               *curl_err ? curl_err : curl_easy_strerror(cc));
	case CURLE_PEER_FAILED_VERIFICATION:
		return cd_errf(err, errlen, CD_ERR_HOSTKEY,
		               "pushgateway %s: %s; check the URL and the system's CA certificates",
		               url, *curl_err ? curl_err : curl_easy_strerror(cc));
	default:
		return cd_errf(err, errlen, CD_ERR_IO, "pushgateway %s: %s", url,
		               *curl_err ? curl_err : curl_easy_strerror(cc));
	}
}

/* One PUT of body to url on e. 0, or a negative cd_err with err set. */
static int push_one(CURL *e, const char *url, const struct buf *body, long timeout_ms, char *err,
                    size_t errlen)
{
	char curl_err[CURL_ERROR_SIZE] = "", reason[PROM_MAX_REASON + 1];
	struct buf answer;
	long status = 0;
	CURLcode cc;
	int rc = 0;

	buf_init(&answer, PROM_MAX_ANSWER);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, body->data ? body->data : "");
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, (void *)&answer);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, curl_err);
	cc = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	if (cc == CURLE_WRITE_ERROR && answer.len == answer.max && status)
		cc = CURLE_OK;
	if (cc != CURLE_OK) {
		rc = push_failed(e, cc, url, timeout_ms, curl_err, err, errlen);
		goto out;
	}
	answer_reason(&answer, reason, sizeof(reason));
	/* Redirects are not followed (a PUT body is not replayed safely), so a
	 * 3xx did not push anything either. */
	if (status >= 300 && status < 400)
		rc = cd_errf(err, errlen, CD_ERR_REFUSED,
		             "pushgateway %s: HTTP %ld, a redirect; give the URL it points to "
		             "(--push URL)",
		             url, status);
	else if (status >= 400 || status < 200)
		rc = cd_errf(err, errlen, CD_ERR_REFUSED, "pushgateway %s: HTTP %ld%s%s", url,
		             status, *reason ? ": " : "", reason);
out:
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, NULL);
	buf_fini(&answer);
	return rc;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int prom_push(const struct prom *p, const struct prom_push_opts *o, char *err, size_t errlen)
{
	long timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : PROM_TIMEOUT_MS;
	struct curl_slist *headers = NULL;
	struct buf base, url, body;
	size_t baselen;
	CURL *e = NULL;
	int rc = 0, pushed = 0;

	buf_init(&base, SIZE_MAX / 2);
	buf_init(&url, SIZE_MAX / 2);
	buf_init(&body, PROM_MAX_TEXT);
	if (!o->url || (strncasecmp(o->url, "http://", 7) && strncasecmp(o->url, "https://", 8))) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE,
		             "pushgateway %s: not an http:// or https:// URL; give one such as "
		             "http://host:9091 (--push URL)",
		             o->url ? o->url : "(none)");
		goto out;
	}
	if (!o->job || (o->label && (!prom_label_name_valid(o->label) || !strcmp(o->label, "job") ||
	                             !strcmp(o->label, "instance")))) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "pushgateway %s: %s", o->url,
		             !o->job ? "no job name" : "the grouping label is not a label name");
		goto out;
	}
	if (!prom_group_count(p))
		goto out;
	baselen = strlen(o->url);
	while (baselen > 0 && o->url[baselen - 1] == '/')
		baselen--;
	buf_append(&base, o->url, baselen);
	buf_append_strs(&base, "/metrics", NULL);
	path_append_pair(&base, "job", o->job);

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK || !(e = curl_easy_init())) {
		rc = cd_errf(err, errlen, CD_ERR_IO, "pushgateway %s: libcurl does not initialise",
		             o->url);
		goto out;
	}
	headers = curl_slist_append(headers, PROM_CONTENT_TYPE);
	/* No "Expect: 100-continue": it costs a round trip (or a second's wait
	 * on a server that ignores it) for every large group. */
	headers = curl_slist_append(headers, "Expect:");
	if (!headers)
		cd_fatal("out of memory");
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, PROM_USER_AGENT);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	for (size_t i = 0; i < prom_group_count(p); i++) {
		const char *group = prom_group_name(p, i);
		/* the head is also a node: its group carries the run's samples */
		int merged = 0;

		for (size_t k = 0; k < prom_group_count(p); k++)
			merged |= o->run_instance && prom_group_name(p, k) &&
			          !strcmp(prom_group_name(p, k), o->run_instance);
		if (!group && merged)
			continue;

		buf_reset(&url);
		buf_append(&url, base.data, base.len);
		path_append_pair(&url, "instance",
		                 group             ? group
		                 : o->run_instance ? o->run_instance
		                                   : "");
		if (o->label)
			path_append_pair(&url, o->label, o->value ? o->value : "");
		buf_reset(&body);
		if ((merged && group && !strcmp(group, o->run_instance)
		         ? prom_render_with_run(p, group, &body)
		         : prom_render_group(p, group, &body)) < 0) {
			rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
			             "pushgateway %s: more than %u bytes of metrics", url.data,
			             PROM_MAX_TEXT);
			goto out;
		}
		rc = push_one(e, url.data, &body, timeout_ms, err, errlen);
		if (rc < 0)
			goto out;
		pushed++;
	}
	rc = pushed;
out:
	curl_easy_cleanup(e);
	curl_slist_free_all(headers);
	buf_fini(&base);
	buf_fini(&url);
	buf_fini(&body);
	return rc;
}
