/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the trace of `-v` and `-vv`: each SSH step, each agent request
 * and its timing, per node, for the day a node does not answer. Library code
 * says what happens through trace_node; only the front end decides where it
 * goes (a sink it installs: the CLI writes stderr, the TUI installs none), so
 * that nothing is formatted when nobody listens.
 *
 * What may be traced: host names, addresses, ports, key file paths and
 * public-key fingerprints, auth method names, request types and ids, codes
 * and timings. Never: passwords, the run's secret or a node's key for the
 * connect-back handshake, the bootstrap's token, a remote command line (it
 * carries the token), key material or message bodies.
 */
#ifndef CD_TRACE_H
#define CD_TRACE_H

#define TRACE_STEPS 1 /* -v: SSH steps, the node's states, requests and replies */
#define TRACE_ALL   2 /* -vv: also keepalives, progress and message sizes */

/* Receives one finished line, without a newline ("node1 +12ms: connect to
 * 10.0.0.1 port 22"). */
typedef void (*trace_sink_fn)(const char *line, void *arg);

/* Trace up to level (0: off) into sink; the elapsed times count from here. */
void trace_init(int level, trace_sink_fn sink, void *arg);

/* Whether lines of this level are wanted (cheap: check it before building
 * an expensive detail). */
int trace_on(int level);

/* One line about node (the host as the user gave it; NULL: the run), when
 * level is wanted: "NODE +MSms: TEXT". Lines over 512 bytes are cut. */
void trace_node(int level, const char *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
