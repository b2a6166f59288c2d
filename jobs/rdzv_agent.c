/* SPDX-License-Identifier: MIT */
/*
 * rdzv_agent.c - the rendezvous state of this node's job (rdzv_agent.h):
 * /proc read once per request, one optional connect, nothing changed.
 */
#include "jobs/rdzv_agent.h"
#include "cd.h"
#include "jobs/run_agent.h"
#include "job.h"
#include "job_process.h"
#include "probes/reach.h"
#include "proto.h"
#include "scan.h"
#include "sockaddr.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENVIRON_CAP       (1 << 20)
#define TCP_CAP           (16 << 20)
#define STATE_ESTABLISHED 1
#define STATE_SYN_SENT    2
#define STATE_LISTEN      10

int rdzv_agent_endpoint(const char *addr, int port, char *out, size_t len)
{
	unsigned char bytes[16];
	char text[64];

	if (inet_pton(AF_INET, addr, bytes) == 1) {
		inet_ntop(AF_INET, bytes, text, sizeof(text));
		snprintf(out, len, "%s:%d", text, port);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, bytes) == 1) {
		inet_ntop(AF_INET6, bytes, text, sizeof(text));
		/* procscan reads a v4-mapped address as the v4 one */
		if (strncmp(text, "::ffff:", 7) == 0 && strchr(text + 7, '.'))
			snprintf(out, len, "%s:%d", text + 7, port);
		else
			snprintf(out, len, "[%s]:%d", text, port);
		return 0;
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int has_inode(const uint64_t *inodes, size_t ni, uint64_t ino)
{
	return ino && ni && bsearch(&ino, inodes, ni, sizeof(*inodes), cmp_u64) != NULL;
}

/* 1 when a "host:port" text ends in exactly ":port". */
static int on_port(const char *endpoint, int port)
{
	const char *colon = strrchr(endpoint, ':');

	return colon && atoi(colon + 1) == port && colon[1] >= '0' && colon[1] <= '9';
}

void rdzv_agent_classify(const struct procscan_tcp *t, size_t nt, const uint64_t *inodes, size_t ni,
                         const char *endpoint, int port, struct rdzv_sockets *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nt; i++) {
		if (!has_inode(inodes, ni, t[i].inode))
			continue;
		if (t[i].state == STATE_LISTEN && on_port(t[i].local, port))
			out->listening = 1;
		else if (t[i].state == STATE_ESTABLISHED && strcmp(t[i].remote, endpoint) == 0)
			out->established++;
		else if (t[i].state == STATE_SYN_SENT && strcmp(t[i].remote, endpoint) == 0)
			out->connecting++;
	}
}

/* The session of pid (the sixth field of /proc/PID/stat), or -1. */
static long session_of(long pid)
{
	char path[64], *data = NULL, err[CD_ERRLEN];
	const char *close;
	size_t len = 0;
	long sid = -1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (scan_read_file(path, 4096, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return -1;
	close = strrchr(data, ')');
	if (!close || sscanf(close + 1, " %*c %*d %*d %ld", &sid) != 1)
		sid = -1;
	free(data);
	return sid;
}

static int belongs(long pid, long session, const char *run)
{
	char path[64], *env = NULL, err[CD_ERRLEN];
	size_t len = 0;
	int yes;

	if (session > 0 && session_of(pid) == session)
		return 1;
	if (!run)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	if (scan_read_file(path, ENVIRON_CAP, SCAN_FILE_TO_EOF, &env, &len, err, sizeof(err)) < 0)
		return 0;
	yes = run_agent_environ_has(env, len, run);
	free(env);
	return yes;
}

struct inodes_walk {
	uint64_t *inodes;
	size_t *ni;
};

static int on_inode_fd(long fd, const char *target, size_t len, void *arg)
{
	struct inodes_walk *w = arg;
	uint64_t ino = procscan_socket_inode(target, len);

	(void)fd;
	if (!ino)
		return 0;
	if (*w->ni >= RDZV_AGENT_MAX_INODES)
		return -1;
	w->inodes[(*w->ni)++] = ino;
	return 0;
}

/* Append the socket inodes of pid's fds; -1 past the cap. */
static int add_inodes(long pid, uint64_t *inodes, size_t *ni)
{
	struct inodes_walk w = {inodes, ni};

	return procscan_fds(pid, 0, on_inode_fd, &w);
}

/* The job's processes and their socket inodes (sorted). -1 past a cap. */
static int job_sockets(const char *run, int *nprocs, uint64_t *inodes, size_t *ni)
{
	long session = (long)job_process_session();
	uid_t me = getuid();
	DIR *d = opendir("/proc");
	struct dirent *e;
	int rc = 0;

	*nprocs = 0;
	*ni = 0;
	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		char path[300];
		struct stat st;
		long pid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = atol(e->d_name);
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0 || st.st_uid != me || pid == (long)getpid() ||
		    !belongs(pid, session, run))
			continue;
		(*nprocs)++;
		rc = add_inodes(pid, inodes, ni);
	}
	closedir(d);
	qsort(inodes, *ni, sizeof(*inodes), cmp_u64);
	return rc;
}

/* This network namespace's TCP sockets (tcp, then tcp6): 0 or a cd_err. */
static int read_tcp(struct procscan_tcp *t, size_t *nt, char *msg, size_t msglen)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};

	*nt = 0;
	for (int v6 = 0; v6 < 2; v6++) {
		char *data = NULL, err[CD_ERRLEN];
		size_t len = 0, got = 0;
		int rc;

		if (scan_read_file(files[v6], TCP_CAP, SCAN_FILE_TO_EOF, &data, &len, err,
		                   sizeof(err)) < 0) {
			if (v6) /* no IPv6 on this node */
				continue;
			snprintf(msg, msglen, "%s", err);
			return CD_ERR_IO;
		}
		rc = procscan_tcp_parse(data, len, v6, t + *nt, RDZV_AGENT_TCP_MAX - *nt, &got, err,
		                        sizeof(err));
		free(data);
		if (rc < 0) {
			snprintf(msg, msglen, "%s: %s", files[v6], err);
			return rc;
		}
		*nt += got;
	}
	return 0;
}

/* One plain TCP connect to addr:port within timeout_ms. */
static json_t *connect_test(const char *addr, int port, int timeout_ms)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	int64_t t0 = cd_now_ms(), left;
	int fd, err = 0;
	const char *result;
	json_t *out;

	if (cd_sockaddr_from_text(addr, 0, port, &sa, &salen) != 0)
		return json_pack("{sssssI}", "result", "error", "errno_name", "EINVAL", "ms",
		                 (json_int_t)0);
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
	} else if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		err = errno == EINPROGRESS ? ETIMEDOUT : errno;
		while (err == ETIMEDOUT && (left = timeout_ms - (cd_now_ms() - t0)) > 0) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int r = poll(&p, 1, (int)left);
			socklen_t el = sizeof(err);

			if (r < 0 && errno == EINTR)
				continue;
			if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				err = errno;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	switch (err) {
	case 0:
		result = "connected";
		break;
	case ECONNREFUSED:
		result = "refused";
		break;
	case ETIMEDOUT:
		result = "timeout";
		break;
	case EHOSTUNREACH:
		result = "no-route";
		break;
	case ENETUNREACH:
		result = "net-unreachable";
		break;
	default:
		result = "error";
	}
	out = json_pack("{sssI}", "result", result, "ms", (json_int_t)(cd_now_ms() - t0));
	if (err)
		json_object_set_new(out, "errno_name", json_string(reach_errno_name(err)));
	return out;
}

json_t *rdzv_agent_state(json_t *req, const char **code, char *msg, size_t msglen)
{
	const char *addr = json_string_value(json_object_get(req, "addr"));
	const char *run = json_string_value(json_object_get(req, "run"));
	long long port = 0, test_ms = 0;
	char endpoint[PROCSCAN_ADDR];
	uint64_t *inodes = NULL;
	struct procscan_tcp *t = NULL;
	struct rdzv_sockets s;
	size_t ni = 0, nt = 0;
	int nprocs = 0;
	json_t *result = NULL;

	if (!addr || !json_is_integer(json_object_get(req, "port")) ||
	    proto_field_int(req, "port", 1, 65535, &port) < 0 ||
	    proto_field_int(req, "test_ms", 0, RDZV_AGENT_TEST_MAX_MS, &test_ms) < 0 ||
	    (run && (!*run || strlen(run) > 64)) ||
	    rdzv_agent_endpoint(addr, (int)port, endpoint, sizeof(endpoint)) < 0)
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"addr\" (an IP address) and \"port\" (1..65535) are "
		                          "required; \"test_ms\" is 0..%d, \"run\" a run id",
		                          RDZV_AGENT_TEST_MAX_MS);
	inodes = cd_calloc(RDZV_AGENT_MAX_INODES, sizeof(*inodes));
	t = cd_calloc(RDZV_AGENT_TCP_MAX, sizeof(*t));
	if (job_sockets(run, &nprocs, inodes, &ni) < 0) {
		proto_handler_fail(code, "too-big", msg, msglen,
		                   "the job holds more than %d sockets", RDZV_AGENT_MAX_INODES);
		goto out;
	}
	switch (read_tcp(t, &nt, msg, msglen)) {
	case 0:
		break;
	case CD_ERR_TOOBIG:
		*code = "too-big";
		goto out;
	default:
		*code = "io";
		goto out;
	}
	rdzv_agent_classify(t, nt, inodes, ni, endpoint, (int)port, &s);
	result = json_pack("{sisisisb}", "processes", nprocs, "established", s.established,
	                   "connecting", s.connecting, "listening", s.listening);
	json_object_set_new(result, "test",
	                    test_ms > 0 ? connect_test(addr, (int)port, (int)test_ms)
	                                : json_null());
out:
	free(inodes);
	free(t);
	return result;
}
