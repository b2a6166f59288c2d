/* SPDX-License-Identifier: MIT */
/*
 * reach.c - the reachability matrix, agent side (see reach.h): the helpers
 * its two halves use: the clock, errno names, the open-files limit, request
 * fields and the CDREACH1 line, and asking who holds a port in use.
 *
 * The two halves share no state, only the wire format:
 * - the listener (reach_listen.c): reach_listen opens the sockets in the
 *   request's thread, then hands them to one server thread that polls them,
 *   accepts peers and answers their CDREACH1 line;
 * - the connector (reach_connect.c): reach_connect runs in the request's
 *   thread, every target a non-blocking socket in one poll() loop, each with
 *   its own deadline.
 */
#include "probes/reach.h"
#include "probes/reach_internal.h"
#include "proto.h"
#include "cd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int64_t reach_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* poll()'s timeout for a deadline, rounded up: rounding down would wake
 * before the deadline and spin with a timeout of 0 until it passes. */
int reach_poll_ms_until(int64_t deadline, int64_t now)
{
	int64_t ms;

	if (deadline <= now)
		return 0;
	ms = (deadline - now + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

#define ERRNO_NAME(e) \
	{             \
		e, #e \
	}
static const struct {
	int err;
	const char *name;
} errno_names[] = {
    ERRNO_NAME(ECONNREFUSED), ERRNO_NAME(ETIMEDOUT),   ERRNO_NAME(EHOSTUNREACH),
    ERRNO_NAME(ENETUNREACH),  ERRNO_NAME(EINVAL),      ERRNO_NAME(EACCES),
    ERRNO_NAME(EPERM),        ERRNO_NAME(EADDRINUSE),  ERRNO_NAME(EADDRNOTAVAIL),
    ERRNO_NAME(EAFNOSUPPORT), ERRNO_NAME(ECONNRESET),  ERRNO_NAME(ENOBUFS),
    ERRNO_NAME(EMFILE),       ERRNO_NAME(ENFILE),      ERRNO_NAME(EPIPE),
    ERRNO_NAME(EINTR),        ERRNO_NAME(EAGAIN),      ERRNO_NAME(ENODEV),
    ERRNO_NAME(ENOMEM),       ERRNO_NAME(ENETDOWN),    ERRNO_NAME(EHOSTDOWN),
    ERRNO_NAME(ECONNABORTED), ERRNO_NAME(ENOTCONN),    ERRNO_NAME(EPROTO),
    ERRNO_NAME(ENOPROTOOPT),  ERRNO_NAME(EOPNOTSUPP),  ERRNO_NAME(EPROTONOSUPPORT),
    ERRNO_NAME(ENETRESET),    ERRNO_NAME(EINPROGRESS), ERRNO_NAME(EALREADY),
};

const char *reach_errno_name(int err)
{
	static _Thread_local char other[24];

	for (size_t i = 0; i < CD_ARRAY_LEN(errno_names); i++) {
		if (errno_names[i].err == err)
			return errno_names[i].name;
	}
	snprintf(other, sizeof(other), "E%d", err);
	return other;
}

/* Many sockets at once: lift the soft limit on open files to the hard one.
 * Best effort; runs once per process. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void reach_raise_fd_limit_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, raise_fd_limit);
}

static int token_is_valid(const char *token)
{
	size_t len = strlen(token);

	if (len < REACH_TOKEN_MIN || len > REACH_TOKEN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = token[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return 0;
	}
	return 1;
}

/* The token and node every request carries; a message in msg when either is
 * missing or malformed. */
int reach_read_token_and_node(json_t *req, const char **token, long long *node, char *msg,
                              size_t msglen)
{
	json_t *t = json_object_get(req, "token"), *n = json_object_get(req, "node");

	if (!json_is_string(t) || !token_is_valid(json_string_value(t))) {
		snprintf(msg, msglen, "\"token\" must be a string of %d to %d hex characters",
		         REACH_TOKEN_MIN, REACH_TOKEN_MAX);
		return -1;
	}
	if (!json_is_integer(n) || json_integer_value(n) < 0) {
		snprintf(msg, msglen, "\"node\" must be a non-negative integer");
		return -1;
	}
	*token = json_string_value(t);
	*node = json_integer_value(n);
	return 0;
}

/* An optional integer field in [lo, hi]; *out keeps its default when the
 * field is absent. */
/* Splits a CDREACH1 line (its newline already cut) into token and node:
 * exactly "CDREACH1 <token> <decimal node>", nothing else. 0 when it is one. */
int reach_parse_line(char *line, const char **token, long long *node)
{
	static const char magic[] = REACH_MAGIC " ";
	char *tok, *num, *end;

	if (strncmp(line, magic, sizeof(magic) - 1) != 0)
		return -1;
	tok = line + sizeof(magic) - 1;
	num = strchr(tok, ' ');
	if (!num || num == tok)
		return -1;
	*num++ = '\0';
	if (*num < '0' || *num > '9' || strlen(num) > 18)
		return -1;
	*node = strtoll(num, &end, 10);
	if (*end != '\0')
		return -1;
	*token = tok;
	return 0;
}

long reach_cut_bulk_suffix(char *line)
{
	char *at = strstr(line, REACH_BULK_SUFFIX), *num, *end;
	long bytes;

	if (!at)
		return 0;
	num = at + sizeof(REACH_BULK_SUFFIX) - 1;
	if (*num < '0' || *num > '9' || strlen(num) > 9)
		return -1;
	bytes = strtol(num, &end, 10);
	if (*end != '\0' || bytes < 1 || bytes > REACH_BULK_MAX)
		return -1;
	*at = '\0';
	return bytes;
}

int reach_bulk_turn(int fd, short revents, char *buf, size_t cap, size_t *to_send, size_t *to_recv,
                    int *err)
{
	ssize_t n;

	*err = 0;
	if ((revents & POLLOUT) && *to_send) {
		n = send(fd, buf, *to_send < cap ? *to_send : cap, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			*err = errno;
			return -1;
		}
		if (n > 0)
			*to_send -= (size_t)n;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = recv(fd, buf, cap, MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			*err = errno;
			return -1;
		}
		if (n > 0)
			*to_recv -= (size_t)n < *to_recv ? (size_t)n : *to_recv;
	}
	return *to_send == 0 && *to_recv == 0;
}

/* --- who holds a port ---------------------------------------------------------- */

/* One loopback address: connect, send line, read one line until deadline. 1
 * when connected (answer holds what came, "" for nothing), 0 when refused
 * or unreachable, -1 on another error. */
static int ask_holder(const struct sockaddr *addr, socklen_t addrlen, const char *line,
                      int64_t deadline, char *answer, size_t cap)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	size_t got = 0, sent = 0, len = strlen(line);
	int connected = 0, rc = -1;

	answer[0] = '\0';
	if (fd < 0)
		return errno == EAFNOSUPPORT ? 0 : -1;
	if (connect(fd, addr, addrlen) < 0 && errno != EINPROGRESS) {
		rc = errno == ECONNREFUSED || errno == EADDRNOTAVAIL || errno == ENETUNREACH ? 0
		                                                                             : -1;
		goto out;
	}
	for (;;) {
		int64_t now = reach_now_us();
		struct pollfd pfd = {.fd = fd,
		                     .events = connected && sent == len ? POLLIN : POLLOUT};
		ssize_t n;

		if (now >= deadline || poll(&pfd, 1, reach_poll_ms_until(deadline, now)) == 0) {
			rc = connected;
			goto out;
		}
		if (!connected) {
			int err = 0;
			socklen_t elen = sizeof(err);

			getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
			if (err) {
				rc = err == ECONNREFUSED ? 0 : -1;
				goto out;
			}
			connected = 1;
			rc = 1;
		}
		if (sent < len) {
			n = send(fd, line + sent, len - sent, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				goto out;
			sent += n > 0 ? (size_t)n : 0;
			continue;
		}
		n = recv(fd, answer + got, cap - 1 - got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			goto out;
		got += (size_t)n;
		answer[got] = '\0';
		if (memchr(answer, '\n', got) || got == cap - 1)
			goto out;
	}
out:
	close(fd);
	return rc;
}

enum reach_holder reach_port_holder(const char *token, int port, int64_t deadline)
{
	struct sockaddr_in lo4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct sockaddr_in6 lo6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	char line[REACH_LINE_MAX], answer[REACH_LINE_MAX], *newline;
	int rc;

	lo4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lo6.sin6_addr = in6addr_loopback;
	snprintf(line, sizeof(line), REACH_WHO_PREFIX "%s\n", token);
	rc = ask_holder((struct sockaddr *)&lo4, sizeof(lo4), line, deadline, answer,
	                sizeof(answer));
	if (rc == 0)
		rc = ask_holder((struct sockaddr *)&lo6, sizeof(lo6), line, deadline, answer,
		                sizeof(answer));
	if (rc == 0)
		return REACH_HOLDER_GONE;
	newline = strchr(answer, '\n');
	if (rc < 0 || !newline)
		return REACH_HOLDER_UNKNOWN;
	*newline = '\0';
	if (strcmp(answer, REACH_OTHER_RUN_LINE) == 0)
		return REACH_HOLDER_OTHER_RUN;
	if (strcmp(answer, REACH_THIS_RUN_LINE) == 0)
		return REACH_HOLDER_THIS_RUN;
	return REACH_HOLDER_UNKNOWN;
}
