/* SPDX-License-Identifier: MIT */
/*
 * fake_ibverbs_wire.c - the stand-in HCA's wire (fake_ibverbs.c says what
 * it stands in for): one TCP connection per RDMA WRITE to port 4791 of the
 * address the destination GID encodes, from the source GID's address; the
 * responder checks the QP and the memory region, places the bytes and
 * answers one byte (0: done, 1: remote access error). A responder that
 * answers nothing (no such QP, a dropped path) lets the requester's
 * retries run out, as on a fabric. And ibv_wc_status_str's words.
 */
#include "fake_ibverbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WIRE_MAGIC 0x464b49425731ull /* "FKIBW1" */
#define HDR_LEN    32

static int wire_fd = -1, wire_stop[2] = {-1, -1}, wire_users;
static pthread_t wire_thread;

int fake_wire_port(void)
{
	const char *p = getenv("FAKE_IBVERBS_PORT");

	return p && atoi(p) > 0 ? atoi(p) : 4791;
}

int64_t fake_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Move len bytes through fd (non-blocking) before deadline; 0, or -1. */
static int io_all(int fd, void *buf, size_t len, int sending, int64_t deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd, .events = sending ? POLLOUT : POLLIN};
		int64_t left = deadline - fake_now_us();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)(left / 1000) + 1) < 0)
			return -1;
		if (!pfd.revents)
			continue;
		n = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n == 0 && !sending)
			return -1;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* A responder: one WRITE. The header says which QP, where and how much. */
static void *respond(void *arg)
{
	int fd = (int)(intptr_t)arg;
	unsigned char hdr[HDR_LEN], ack = 1, sink[65536];
	int64_t deadline = fake_now_us() + 10000000;
	uint32_t qpn, rkey, len;
	uint64_t addr;
	struct fake_mr *mr = NULL;
	int ready = 0;

	if (io_all(fd, hdr, sizeof(hdr), 0, deadline) < 0 || get_be(hdr, 8) != WIRE_MAGIC)
		goto out;
	qpn = (uint32_t)get_be(hdr + 8, 4);
	addr = get_be(hdr + 12, 8);
	rkey = (uint32_t)get_be(hdr + 20, 4);
	len = (uint32_t)get_be(hdr + 24, 4);
	pthread_mutex_lock(&fake_lock);
	for (struct fake_qp *q = fake_qps; q; q = q->next) {
		if (q->qp.qp_num == qpn &&
		    (q->state == CD_IBV_QPS_RTR || q->state == CD_IBV_QPS_RTS))
			ready = 1;
	}
	for (struct fake_mr *m = fake_mrs; ready && m; m = m->next) {
		uint64_t lo = (uintptr_t)m->mr.addr;

		if (m->mr.rkey == rkey && !m->gone && (m->access & CD_IBV_ACCESS_REMOTE_WRITE) &&
		    addr >= lo && addr + len <= lo + m->mr.length) {
			mr = m;
			mr->busy++;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	if (!ready)
		goto out; /* no such QP here: the requester's retries run out */
	if (mr) {
		ack = io_all(fd, (void *)(uintptr_t)addr, len, 0, deadline) < 0 ? 2 : 0;
	} else {
		/* drain what the requester sends, then refuse: remote access error */
		for (uint32_t left = len; left && ack == 1;) {
			uint32_t n = left < sizeof(sink) ? left : (uint32_t)sizeof(sink);

			if (io_all(fd, sink, n, 0, deadline) < 0)
				ack = 2;
			left -= n;
		}
	}
	if (ack != 2)
		io_all(fd, &ack, 1, 1, deadline);
out:
	if (mr) {
		pthread_mutex_lock(&fake_lock);
		mr->busy--;
		pthread_cond_broadcast(&fake_mr_idle);
		pthread_mutex_unlock(&fake_lock);
	}
	close(fd);
	return NULL;
}

static void *serve_wire(void *arg)
{
	for (;;) {
		struct pollfd pfd[2] = {{.fd = wire_fd, .events = POLLIN},
		                        {.fd = wire_stop[0], .events = POLLIN}};
		pthread_t t;
		int fd;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!pfd[0].revents)
			continue;
		fd = accept4(wire_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, respond, (void *)(intptr_t)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
	return NULL;
}

/* The responder's port, opened by the first open context and closed with
 * the last. Called under fake_lock. A port already taken (another process of
 * this node holds it) leaves this one without a responder. */
void fake_wire_up(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)fake_wire_port())};
	int one = 1;

	if (wire_users++ > 0)
		return;
	wire_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (wire_fd < 0)
		return;
	setsockopt(wire_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(wire_fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(wire_fd, 64) < 0 ||
	    pipe2(wire_stop, O_CLOEXEC) < 0 ||
	    pthread_create(&wire_thread, NULL, serve_wire, NULL) != 0) {
		close(wire_fd);
		wire_fd = -1;
	}
}

void fake_wire_down(void)
{
	if (--wire_users > 0 || wire_fd < 0)
		return;
	if (write(wire_stop[1], "x", 1) == 1)
		pthread_join(wire_thread, NULL);
	close(wire_stop[0]);
	close(wire_stop[1]);
	close(wire_fd);
	wire_fd = -1;
}

/* The IPv4 address an IPv4-mapped GID encodes (::ffff:a.b.c.d). */
static int gid_ipv4(const union cd_ibv_gid *g, struct in_addr *out)
{
	static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(g->raw, prefix, sizeof(prefix)) != 0)
		return -1;
	memcpy(&out->s_addr, g->raw + 12, 4);
	return 0;
}

/* Connect from the source GID's address to the destination's, then the
 * header, the bytes and the responder's answer, all within the budget. */
int fake_wire_write(struct fake_qp *q, const struct job *j, int64_t deadline)
{
	struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
	union cd_ibv_gid sgid;
	unsigned char hdr[HDR_LEN] = {0}, ack = 0xff;
	int fd, status = CD_IBV_WC_RETRY_EXC_ERR;

	if (!q->is_global || gid_ipv4(&q->dgid, &dst.sin_addr) < 0)
		return status;
	dst.sin_port = htons((uint16_t)fake_wire_port());
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return CD_IBV_WC_GENERAL_ERR;
	if (ibv_query_gid(q->qp.context, q->port, q->sgid_index, &sgid) == 0 &&
	    gid_ipv4(&sgid, &src.sin_addr) == 0)
		bind(fd, (struct sockaddr *)&src, sizeof(src)); /* best effort, as a route would */
	put_be(hdr, WIRE_MAGIC, 8);
	put_be(hdr + 8, q->dest_qpn, 4);
	put_be(hdr + 12, j->remote_addr, 8);
	put_be(hdr + 20, j->rkey, 4);
	put_be(hdr + 24, j->length, 4);
	if ((connect(fd, (struct sockaddr *)&dst, sizeof(dst)) == 0 || errno == EINPROGRESS) &&
	    io_all(fd, hdr, sizeof(hdr), 1, deadline) == 0 &&
	    io_all(fd, (void *)(uintptr_t)j->local_addr, j->length, 1, deadline) == 0 &&
	    io_all(fd, &ack, 1, 0, deadline) == 0)
		status = ack == 0 ? CD_IBV_WC_SUCCESS : CD_IBV_WC_REM_ACCESS_ERR;
	close(fd);
	if (status == CD_IBV_WC_RETRY_EXC_ERR) {
		/* the HCA retries until its budget is spent */
		while (fake_now_us() < deadline)
			usleep(1000);
	}
	return status;
}

/* -------------------------------------------------------------- words */

const char *ibv_wc_status_str(int status)
{
	if (status < 0 || status >= CD_IBV_WC_STATUS_COUNT)
		return "unknown";
	return cd_ibv_wc_status_words[status];
}
