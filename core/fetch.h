/* SPDX-License-Identifier: MIT */
/*
 * fetch.h - HTTP(S) downloads to files, on the event loop, with retries.
 *
 * A fetcher drives libcurl's multi interface from our loop (loop.h): curl's
 * sockets are loop watchers and its timeout is a loop timer, so nothing here
 * blocks and several downloads run at once. Each download goes to
 * dest_path + ".part." + its writer's tag (cd_writer_tag: host, pid, random;
 * truncated at every attempt, so two heads sharing a home never write one
 * file) and is renamed to dest_path only when complete and, if asked, its
 * MD5 matches.
 *
 * Only http:// and https:// are fetched, redirects included (at most 5
 * followed). Requests carry "User-Agent: clusterdoc[/<CD_VERSION>]". An HTTP
 * status >= 400 fails the attempt. Permanent failures (HTTP 4xx except 408
 * and 429, bad URLs, other protocols, too many redirects, TLS certificate
 * rejected, the size cap, local write errors) end the download at once;
 * transient ones (HTTP 5xx, 408, 429, name resolution, connection errors,
 * timeouts, stalls, a transfer that ends early, an MD5 mismatch) are retried
 * after a back-off that doubles each time, waited on a loop timer.
 *
 * Nothing is printed: the callbacks report.
 */
#ifndef CD_FETCH_H
#define CD_FETCH_H

#include <stddef.h>

struct loop;
struct fetcher;

#define FETCH_DEFAULT_RETRIES            3
#define FETCH_DEFAULT_BACKOFF_MS         1000
#define FETCH_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define FETCH_DEFAULT_STALL_TIMEOUT_MS   30000
#define FETCH_DEFAULT_MAX_BYTES          (1LL << 30)

/* Zero-initialise, then set what differs: a field left 0 gets its default. */
struct fetch_opts {
	const char *url;        /* http:// or https:// */
	const char *dest_path;  /* written to dest_path + ".part.TAG", renamed on success */
	int retries;            /* extra attempts after the first for transient failures;
	                           0 = FETCH_DEFAULT_RETRIES, < 0 = none */
	int backoff_ms;         /* first back-off, doubled each retry; 0 = default 1000 */
	int connect_timeout_ms; /* 0 = default 10000 */
	int stall_timeout_ms;   /* abort an attempt that moves < 1 byte/s for this long;
	                           0 = default 30000; curl counts whole seconds (rounded up) */
	const char *expect_md5; /* NULL, or 32 hex digits the file's MD5 must match */
	long long max_bytes;    /* cap on the body; 0 = FETCH_DEFAULT_MAX_BYTES (1 GiB) */
};

/*
 * Progress of one download: got bytes of total (-1 while unknown) in the
 * current attempt (got restarts at 0 when an attempt is retried). Called from
 * the loop, outside libcurl, when bytes have arrived since the last call.
 */
typedef void (*fetch_progress_cb)(void *arg, long long got, long long total);

/*
 * The end of one download, called exactly once per successful fetcher_get,
 * from a loop callback (never from inside fetcher_get). err is 0 (the file is
 * at dest_path; msg is "") or a negative cd_err, with msg naming the URL and
 * saying what happened and what to do:
 *   CD_ERR_NOTFOUND     HTTP 404 or 410, or the host name does not resolve
 *   CD_ERR_REFUSED      other HTTP errors; the connection was refused
 *   CD_ERR_TIMEOUT      connect timeout or stall
 *   CD_ERR_IO           the transfer broke or ended early; MD5 mismatch;
 *                       .part could not be written or renamed
 *   CD_ERR_TOOBIG       the body is larger than max_bytes
 *   CD_ERR_UNSUPPORTED  not http(s), also after a redirect
 *   CD_ERR_PARSE        a malformed URL
 *   CD_ERR_PROTO        too many redirects, or a reply curl could not read
 *   CD_ERR_HOSTKEY      the server's TLS certificate was rejected
 * e.g. "https://host/x.gz: HTTP 404 Not Found (no retry); check the URL" or
 * "...: MD5 d41d... but expected f68b... (attempt 4 of 4); the mirror served
 * a different or damaged file". On failure no .part file is left. msg is
 * valid only during the call. The callback may call fetcher_get and
 * fetcher_free (the latter cancels the other downloads).
 */
typedef void (*fetch_done_cb)(void *arg, int err, const char *msg);

/*
 * A fetcher on loop (borrowed; it must outlive the fetcher). The first call
 * runs curl_global_init once for the process: libcurl before 7.84 does not
 * make that thread-safe, so create the first fetcher before starting other
 * threads that use libcurl or OpenSSL. curl_global_cleanup is never called.
 * Returns NULL only when libcurl cannot initialise.
 */
struct fetcher *fetcher_new(struct loop *loop);

/*
 * Cancel every download in flight without calling its done_cb, remove their
 * .part files, and free the fetcher. Allowed inside the fetcher's own
 * callbacks. fetcher_free(NULL) is a no-op.
 */
void fetcher_free(struct fetcher *f);

/*
 * Start downloading o->url to o->dest_path. The strings in o are copied.
 * progress may be NULL; done must not be. Several downloads may run at once
 * (to different dest_paths). Returns 0, and done will be called once; or
 * CD_ERR_PARSE (NULL url or dest_path, expect_md5 not 32 hex digits) with
 * the reason in err (errlen bytes, may be NULL), and done is never called.
 */
int fetcher_get(struct fetcher *f, const struct fetch_opts *o, fetch_progress_cb progress,
                fetch_done_cb done, void *arg, char *err, size_t errlen);

#endif
