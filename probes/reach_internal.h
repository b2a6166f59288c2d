/* SPDX-License-Identifier: MIT */
/*
 * reach_internal.h - what the listener (reach_listen.c) and the connector
 * (reach_connect.c) share, all defined in reach.c. Not a public interface:
 * include it only from probes/reach*.c.
 */
#ifndef CD_PROBES_REACH_INTERNAL_H
#define CD_PROBES_REACH_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define REACH_LINE_MAX  256 /* a CDREACH1 line, newline included */
#define REACH_TOKEN_MIN 16  /* hex characters */
#define REACH_TOKEN_MAX 64

/* The monotonic clock in µs. */
int64_t reach_now_us(void);

/* poll()'s timeout in ms for a deadline in µs, rounded up: rounding down
 * would wake before the deadline and spin with a timeout of 0. */
int reach_poll_ms_until(int64_t deadline, int64_t now);

/* Lift the soft limit on open files to the hard one, once per process; best
 * effort. */
void reach_raise_fd_limit_once(void);

/* The token and node every request carries (*token borrowed from req); 0, or
 * -1 with a message in msg when either is missing or malformed. */
int reach_read_token_and_node(json_t *req, const char **token, long long *node, char *msg,
                              size_t msglen);

/* Split a CDREACH1 line (its newline already cut; modified in place) into
 * token and node: exactly "CDREACH1 <token> <decimal node>". 0 when it is
 * one, -1 otherwise. */
int reach_parse_line(char *line, const char **token, long long *node);

/* The bulk proof (reach.h): a connector line may end in " bulk <bytes>",
 * asking the listener, after its answer line, to send that many bytes and
 * read as many. REACH_BULK_MAX caps what a line may ask for; every transfer
 * goes through REACH_BULK_CHUNK-byte buffers, one per thread, never one per
 * connection. */
#define REACH_BULK_SUFFIX " bulk "
#define REACH_BULK_MAX    (4 * 1024 * 1024)
#define REACH_BULK_CHUNK  65536

/* Cut a trailing " bulk <bytes>" off a line (in place). Returns the bytes
 * asked for (1..REACH_BULK_MAX), 0 when the line has no such suffix, -1 when
 * the suffix is malformed or out of range. */
long reach_cut_bulk_suffix(char *line);

/* One turn of a bulk transfer on a non-blocking socket, after poll() said
 * revents: send from buf what the socket takes of *to_send bytes, read into
 * buf (cap bytes) what came of *to_recv, counting both down. 1 when both are
 * 0, 0 while more is to come, -1 when the peer closed (*err 0) or the socket
 * failed (*err the errno). */
int reach_bulk_turn(int fd, short revents, char *buf, size_t cap, size_t *to_send, size_t *to_recv,
                    int *err);

/* Who holds a fixed port that could not be bound (see reach_listen). */
enum reach_holder {
	REACH_HOLDER_UNKNOWN,   /* not a clusterdoc listener, or no answer in time */
	REACH_HOLDER_GONE,      /* nobody listens on loopback now: try the bind again */
	REACH_HOLDER_OTHER_RUN, /* another run's listener (REACH_OTHER_RUN_LINE) */
	REACH_HOLDER_THIS_RUN,  /* this run's own listener for another node name */
};
#define REACH_HOLDER_WAIT_MS 2000

/* Asks the listener on port (127.0.0.1, then ::1) who it is, sending
 * "CDREACH1 who <token>"; waits until deadline (reach_now_us) at most: one
 * listen request gives all its ports REACH_HOLDER_WAIT_MS together. */
enum reach_holder reach_port_holder(const char *token, int port, int64_t deadline);

/* The path-MTU probe (reach_pmtu.c): a UDP datagram of a given size, Don't
 * Fragment, echoed whole by the listener's UDP socket on the TCP
 * listener's port. Its payload starts "CDREACH1 pmtu <token> <size>\n";
 * a size is the IP packet's, headers included, as an MTU counts it. */
#define REACH_PMTU_PREFIX    REACH_MAGIC " pmtu "
#define REACH_PMTU_PER_ROUND 7

/* The datagram parser of both halves: "CDREACH1 pmtu <token> <size>\n"
 * and padding. Does buf (n bytes, not NUL-terminated) start with this
 * token? The size it claims (1..65535), or 0. */
long reach_pmtu_probe_size(const char *buf, size_t n, const char *token);

/* A UDP socket bound to addr that echoes probes (IP_PMTUDISC_PROBE, so the
 * echo too leaves at its size or not at all); the fd or -errno. */
int reach_pmtu_open_echo(const struct sockaddr *addr, socklen_t len);

/* Echo what fd holds: datagrams that carry token, whole; anything else is
 * dropped. buf (cap bytes) is scratch. Never blocks. */
void reach_pmtu_echo(int fd, const char *token, char *buf, size_t cap);

/* One connector's search (reach_pmtu.c says how). */
struct reach_pmtu {
	int fd; /* -1 once done */
	int family;
	int max; /* the route's MTU: the largest size tried */
	int lo;  /* the largest size echoed; 0: none */
	int hi;  /* the smallest size not echoed above lo; max + 1: none */
	int done;
	int rounds; /* rounds sent */
	int nsizes; /* this round's sizes */
	int sizes[REACH_PMTU_PER_ROUND + 1];
	unsigned char answered[REACH_PMTU_PER_ROUND + 1];
	int64_t wait_us;   /* a round's wait for its echoes */
	int64_t round_end; /* µs */
	int64_t deadline;  /* µs: the search ends here with what it has */
};

/* Opens the probe's socket toward addr (the listener's address and port).
 * 0, or -errno (then done is unset and fd -1: do not step it). */
int reach_pmtu_start(struct reach_pmtu *p, const struct sockaddr *addr, socklen_t len,
                     int64_t wait_us, int64_t deadline);

/* Advance the search at `now`: the first round, a round whose wait is over,
 * the deadline. buf (cap bytes, at least the largest MTU) is scratch for
 * the datagrams. 1 when the search is done (lo is the answer), 0 while it
 * waits: poll fd for POLLIN until reach_pmtu_wake. */
int reach_pmtu_step(struct reach_pmtu *p, const char *token, char *buf, size_t cap, int64_t now);

/* fd is readable: take the echoes, then step. Same return as step. */
int reach_pmtu_read(struct reach_pmtu *p, const char *token, char *buf, size_t cap, int64_t now);

/* When the search must look again without an echo (µs). */
int64_t reach_pmtu_wake(const struct reach_pmtu *p);

/* Ends a search early (the attempt's deadline came first); closes fd. */
void reach_pmtu_abort(struct reach_pmtu *p);

#endif
