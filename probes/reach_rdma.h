/* SPDX-License-Identifier: MIT */
/*
 * reach_rdma.h - the matrix's RDMA proof, agent side (reach.h, "the RDMA
 * proof"; the lines are rdma_pair.h's): one verbs context per `listen` and
 * per `connect` request (a struct rdma_side), one RC queue pair and memory
 * region per proven pair. The connector's half is a struct rdma_try, the
 * listener's a struct rdma_serve; both are driven by reach_connect.c and
 * reach_listen.c from their poll loops, so nothing here blocks on the
 * network: verbs calls that set up a QP return at once on every provider,
 * and the write's completion is polled (ibv_poll_cq never waits).
 * Include only from probes/reach*.c.
 */
#ifndef CD_PROBES_REACH_RDMA_H
#define CD_PROBES_REACH_RDMA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/rdma_pair.h"

/* The suffix of the CDREACH1 line that asks for the proof (before any
 * bulk suffix: "CDREACH1 <token> <node> rdma bulk <bytes>"). */
#define REACH_RDMA_SUFFIX " rdma"

/* What the head chose for one end: the HCA port and GID index NCCL would
 * use there ({"device", "port", "gid_index"}; gid_index -1 on InfiniBand). */
struct rdma_spec {
	char device[RDMA_DEV_MAX];
	int port;
	int gid_index;
};

/* Read a request's "rdma" object. 1 when present and well formed, 0 when
 * absent, -1 when malformed (msg says why). */
int reach_rdma_spec_read(json_t *req, struct rdma_spec *s, char *msg, size_t msglen);

/* Cut a trailing REACH_RDMA_SUFFIX off line (in place): 1 when it had one. */
int reach_cut_rdma_suffix(char *line);

/* A line being read: the bytes of it that came so far. */
struct rdma_linebuf {
	char buf[RDMA_LINE_MAX];
	size_t len;
};

/* Read one line from a non-blocking socket into lb without taking a byte
 * past its newline (what follows may be a bulk transfer); the bytes of an
 * incomplete line are taken and kept, so poll does not wake for them
 * again. 1: a line in lb->buf (newline cut, NUL-terminated, *len its
 * length; the next call starts a new one), 0: not complete yet, -1: the
 * peer closed, failed, or sent RDMA_LINE_MAX bytes without a newline. */
int reach_rdma_read_line(int fd, struct rdma_linebuf *lb, size_t *len);

/* Send a whole short line (MSG_DONTWAIT: a fresh line always fits the
 * socket's buffer). 0, or -1 when the peer went away. */
int reach_rdma_send_line(int fd, const char *line, size_t len);

/* --- one end's verbs context --------------------------------------------- */

struct rdma_side;

/* Load libibverbs (verbs_lib.h: checked in a child first), open spec's
 * device, check its port is ACTIVE and its GID at gid_index, and make a
 * protection domain and a completion queue of cqe entries. src_bytes > 0
 * (the connector): also a buffer of that many bytes holding token's
 * pattern, registered for the writes. NULL with the "not tested" words in
 * why on failure ("no libibverbs", "no RDMA device", "no ACTIVE port",
 * ...). */
struct rdma_side *rdma_side_open(const struct rdma_spec *spec, int cqe, size_t src_bytes,
                                 const char *token, char *why, size_t len);
void rdma_side_free(struct rdma_side *s);

/* --- the connector's half ------------------------------------------------- */

/* The connector's side for a `connect` request with wanted (> 0) targets
 * that ask for the proof: the request's "rdma" port, each write
 * "rdma_bytes" (1..RDMA_BYTES_MAX, default REACH_RDMA_BYTES). NULL with
 * why when the request names no port or the side does not open. */
#define REACH_RDMA_BYTES (1024 * 1024)
struct rdma_side *reach_rdma_connect_side(json_t *req, size_t wanted, const char *token, char *why,
                                          size_t len);

struct rdma_try;

/* A try toward one listener, on side s (NULL: not tested, why_not says
 * why). Free with rdma_try_free after the side's last poll. */
struct rdma_try *rdma_try_new(struct rdma_side *s, const char *why_not);
void rdma_try_free(struct rdma_try *t);

/* The try's first line ("CDRDMA1 write ...\n") into buf; its length, or 0
 * when the try already ended (its QP could not be made: failed). */
size_t rdma_try_hello(struct rdma_try *t, char *buf, size_t cap, int64_t now_us);

/* A line from the listener (newline cut). The reply to send, if any, goes
 * into reply (*rlen its length, 0 for none). */
void rdma_try_on_line(struct rdma_try *t, const char *line, size_t n, char *reply, size_t cap,
                      size_t *rlen);

/* Polls the side's completion queue (for every try of the side) and, when
 * this try's write completed, gives the line to send (*rlen, 0 for none). */
void rdma_try_poll(struct rdma_try *t, char *reply, size_t cap, size_t *rlen, int64_t now_us);

/* 1 while the try waits for its write's completion (poll it soon). */
int rdma_try_polling(const struct rdma_try *t);

/* 1 once the try has its result (the connection may go on to bulk). */
int rdma_try_done(const struct rdma_try *t);

/* Drive a try over the matrix connection fd: reach_rdma_start sends its
 * first line (1 when the exchange started, 0 when the try already ended);
 * reach_rdma_advance reads the listener's lines (revents: poll's, 0 for a
 * look at the completion queue only), sends the replies and polls the
 * write's completion. It returns 1 once the try has its result. */
int reach_rdma_start(struct rdma_try *t, int fd);
int reach_rdma_advance(struct rdma_try *t, int fd, short revents);

/* The attempt's deadline came first: failed, with what it waited for. */
void rdma_try_expire(struct rdma_try *t, int timeout_ms);

/* The try ends without its exchange, with result ("failed": the
 * connection broke during it; "not tested": it never started) and why. */
void rdma_try_stop(struct rdma_try *t, const char *result, const char *why);

/* The result fields on a connect row: "rdma" ("ok", "failed", "not
 * tested"), "rdma_why", "rdma_bytes", "rdma_ms", "rdma_local" and
 * "rdma_peer" ({"device", "port", "gid_index"}), "active_mtu". */
void rdma_try_json(const struct rdma_try *t, json_t *row);

/* --- the listener's half -------------------------------------------------- */

/* The listener's side for a `listen` request, kept for the listener's life
 * (*side; NULL with why when the request names no port or it does not
 * open). Returns the answer's "rdma": {"device", "port", "gid_index"}, or
 * {"not_tested": why}, or null when the request did not ask. */
json_t *reach_rdma_listen_side(json_t *req, const char *token, struct rdma_side **side, char *why,
                               size_t len);

struct rdma_serve;

/* Serving one connector on side s (NULL: answer "no <why_not>"). */
struct rdma_serve *rdma_serve_new(struct rdma_side *s, const char *why_not);
void rdma_serve_free(struct rdma_serve *p);

/* A line from the connector: the reply (*rlen, 0 for none). Returns 0
 * while the exchange goes on, 1 when it is over (the connection may go on
 * to bulk), -1 on a line that is not the exchange's (drop the peer). */
int rdma_serve_on_line(struct rdma_serve *p, const char *line, size_t n, const char *token,
                       char *reply, size_t cap, size_t *rlen);

/* Read the connector's lines from fd and answer them. 1 when the
 * exchange is over (bulk may follow), 0 while it goes on, -1 when the
 * peer broke it (close the connection). */
int reach_rdma_serve_turn(struct rdma_serve *p, int fd, const char *token);

#endif
