/* SPDX-License-Identifier: MIT */
/*
 * copy_ring.c - the path's own ceiling for a ring allreduce, for
 * tests/bench/allreduce_vs_gloo.sh: one process per node, each with one TCP
 * connection to its right neighbour and one from its left, moving what a
 * ring allreduce of SIZE bytes moves per rank, 2(N-1) x SIZE/N bytes, out to
 * the right while the same comes in from the left, with no reduction and no
 * dependency between steps: only the kernel's copies and the TCP path.
 *
 *   copy_ring RANK N RIGHT_IP PORT SIZES [ITERS [WARMUP]]
 *
 * Every rank listens on PORT (all addresses) and connects to RIGHT_IP:PORT
 * (retried for 20 s while the neighbour starts). Per size: WARMUP rounds,
 * a one-byte token around the ring (every rank has started), ITERS rounds
 * back to back; the time per round is the elapsed time / ITERS as rank 0
 * sees it, the round ending when its bytes are both out and in. Rank 0
 * prints "bytes time_us" per size, like the other tools of the bench, so
 * busbw = bytes / time x 2(N-1)/N is the ring's ceiling on this path.
 *
 * A benchmark helper: it exits on any error with a message, and every wait
 * is bounded (poll with 20 s, then it gives up).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS   20000
#define PIECE_MAX (512 * 1024)

static void die(const char *what)
{
	fprintf(stderr, "copy_ring: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int listen_on(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0)
		die("bind/listen");
	return fd;
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	double give_up = now_s() + WAIT_MS / 1000.0;
	int one = 1;

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "copy_ring: bad address %s\n", ip);
		exit(2);
	}
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			die("socket");
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		if (now_s() > give_up)
			die("connect");
		usleep(50 * 1000);
	}
}

static void wait_fds(struct pollfd *p, nfds_t n)
{
	int rc = poll(p, n, WAIT_MS);

	if (rc == 0) {
		fprintf(stderr, "copy_ring: no progress for %d ms\n", WAIT_MS);
		exit(1);
	}
	if (rc < 0 && errno != EINTR)
		die("poll");
}

/* Moves up to `want` bytes of buf (cycled from *pos) through fd until the
 * socket would block; 0 when the peer closed. */
static int pump(int fd, int out, char *buf, size_t buflen, size_t *pos, size_t want)
{
	while (*pos < want) {
		size_t off = *pos % buflen, len = want - *pos;
		ssize_t n;

		if (len > buflen - off)
			len = buflen - off;
		n = out ? send(fd, buf + off, len, MSG_DONTWAIT | MSG_NOSIGNAL)
		        : recv(fd, buf + off, len, MSG_DONTWAIT);
		if (n == 0 && !out)
			return 0;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				continue;
			die(out ? "send" : "recv");
		}
		*pos += (size_t)n;
		if ((size_t)n < len)
			return 1; /* the socket is full (or dry): poll before the next */
	}
	return 1;
}

/* Sends `bytes` to out while receiving as many from in, as fast as the
 * sockets take them. */
static void round_trip(int out, int in, char *sbuf, char *rbuf, size_t buflen, size_t bytes)
{
	size_t sent = 0, got = 0;

	for (;;) {
		struct pollfd p[2] = {{.fd = out, .events = POLLOUT}, {.fd = in, .events = POLLIN}};

		pump(out, 1, sbuf, buflen, &sent, bytes);
		if (!pump(in, 0, rbuf, buflen, &got, bytes)) {
			fprintf(stderr, "copy_ring: the left neighbour closed\n");
			exit(1);
		}
		if (sent == bytes && got == bytes)
			return;
		p[0].fd = sent < bytes ? out : -1;
		p[1].fd = got < bytes ? in : -1;
		wait_fds(p, 2);
	}
}

/* A one-byte token from rank 0 around the ring and back: every rank is in. */
static void token(int rank, int out, int in)
{
	char b = 't';

	if (rank == 0 && send(out, &b, 1, MSG_NOSIGNAL) != 1)
		die("send token");
	for (;;) {
		struct pollfd p = {.fd = in, .events = POLLIN};
		ssize_t n;

		wait_fds(&p, 1);
		n = recv(in, &b, 1, MSG_DONTWAIT);
		if (n == 1)
			break;
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			die("recv token");
	}
	if (rank != 0 && send(out, &b, 1, MSG_NOSIGNAL) != 1)
		die("send token");
}

int main(int argc, char **argv)
{
	int rank, n, port, iters, warmup, lfd, out, in;
	char *sizes, *tok, *save = NULL, *sbuf, *rbuf;

	if (argc < 6) {
		fprintf(stderr, "usage: copy_ring RANK N RIGHT_IP PORT SIZES [ITERS [WARMUP]]\n");
		return 2;
	}
	rank = atoi(argv[1]);
	n = atoi(argv[2]);
	port = atoi(argv[4]);
	iters = argc > 6 ? atoi(argv[6]) : 20;
	warmup = argc > 7 ? atoi(argv[7]) : 5;
	if (n < 2 || rank < 0 || rank >= n || iters < 1) {
		fprintf(stderr, "copy_ring: bad arguments\n");
		return 2;
	}
	lfd = listen_on(port);
	out = connect_to(argv[3], port);
	in = accept(lfd, NULL, NULL);
	if (in < 0)
		die("accept");
	close(lfd);
	sbuf = calloc(1, PIECE_MAX);
	rbuf = calloc(1, PIECE_MAX);
	if (!sbuf || !rbuf)
		die("calloc");
	sizes = strdup(argv[5]);
	for (tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t size = strtoull(tok, NULL, 10);
		size_t bytes = 2 * (size_t)(n - 1) * ((size + (size_t)n - 1) / (size_t)n);
		double t0;

		for (int i = 0; i < warmup; i++)
			round_trip(out, in, sbuf, rbuf, PIECE_MAX, bytes);
		token(rank, out, in);
		t0 = now_s();
		for (int i = 0; i < iters; i++)
			round_trip(out, in, sbuf, rbuf, PIECE_MAX, bytes);
		if (rank == 0) {
			printf("%zu %.1f\n", size, (now_s() - t0) / iters * 1e6);
			fflush(stdout);
		}
	}
	free(sizes);
	free(sbuf);
	free(rbuf);
	close(out);
	close(in);
	return 0;
}
