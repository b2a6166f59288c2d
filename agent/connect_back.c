/* SPDX-License-Identifier: MIT */
/* connect_back.c - the agent's --connect mode (connect_back.h). */
#include "connect_back.h"
#include "backauth.h"
#include "cd.h"
#include "fsutil.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECT_BACK_TIMEOUT_MS \
	60000                  /* each handshake line (a head starting 10,000 agents is busy) */
#define CONNECT_BACK_TRIES 4   /* connections closed before the head's answer */
#define CONNECT_BACK_PAUSE 250 /* ms before the second; doubled before each next */

/* Variable var copied into out (len bytes) and wiped from the environment,
 * so the probes and jobs this agent starts never see it. Returns 1 when it
 * was there, 0 when not, -1 when too long. */
static int take_env(const char *var, char *out, size_t len)
{
	char *s = getenv(var);
	int rc;

	out[0] = '\0';
	if (!s)
		return 0;
	rc = strlen(s) < len ? 1 : -1;
	if (rc > 0)
		snprintf(out, len, "%s", s);
	memset(s, 0, strlen(s));
	unsetenv(var);
	return rc;
}

/* The key this agent proves node name with: its node's own key
 * ($CLUSTERDOC_BACK_KEY, as local-connect gives each agent), else the one
 * derived from the run's secret ($CLUSTERDOC_BACK_SECRET, as srun gives
 * every task). Both are wiped from the environment. *own says which.
 * Returns 0 or -1. */
static int take_key(const char *name, char out[BACKAUTH_PROOF_HEX], int *own)
{
	char secret[256], key[256];
	int has_key = take_env(BACKAUTH_KEY_ENV, key, sizeof(key));
	int has_secret = take_env(BACKAUTH_SECRET_ENV, secret, sizeof(secret));
	int rc = -1;

	*own = has_key > 0;
	if (has_key > 0 && backauth_secret_ok(key) && strlen(key) < BACKAUTH_PROOF_HEX) {
		snprintf(out, BACKAUTH_PROOF_HEX, "%s", key);
		rc = 0;
	} else if (has_key == 0 && has_secret > 0) {
		rc = backauth_node_key(secret, name, out);
	}
	memset(key, 0, sizeof(key));
	memset(key, 0, sizeof(key));
	return rc;
}

/* The node's name as the head knows it: the launcher's word for it. */
static void node_name(char *out, size_t len)
{
	const char *s = getenv(BACKAUTH_NAME_ENV);

	if (!s || !*s)
		s = getenv("SLURMD_NODENAME");
	if (s && *s) {
		snprintf(out, len, "%s", s);
		return;
	}
	if (gethostname(out, len) < 0)
		snprintf(out, len, "unknown");
	out[len - 1] = '\0';
	out[strcspn(out, ".")] = '\0';
}

static int connect_to(const char *name, const char *hostport)
{
	char host[256];
	const char *port, *colon = strrchr(hostport, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -1, rc;

	if (!colon || colon == hostport || !colon[1]) {
		fprintf(stderr, "clusterdoc-agent: --connect wants HOST:PORT, not \"%s\"\n",
		        hostport);
		return -1;
	}
	port = colon + 1;
	if (hostport[0] == '[' && colon[-1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport - 2), hostport + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "clusterdoc-agent: %s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "clusterdoc-agent: %s: cannot connect back to the head at %s: %s\n",
		        name, hostport, strerror(errno));
	return fd;
}

/* One handshake line (without its newline) into line, read a byte at a
 * time so that nothing of the protocol after it is taken. */
static int read_line(int fd, char *line, size_t len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t got;

		if (poll(&p, 1, CONNECT_BACK_TIMEOUT_MS) <= 0)
			return -1;
		got = read(fd, line + n, 1);
		if (got <= 0)
			return -1;
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		if (++n >= len)
			return -1;
	}
}

int agent_connect_back(const char *hostport)
{
	char key[BACKAUTH_PROOF_HEX], name[BACKAUTH_NAME_MAX], nonce[BACKAUTH_NONCE_HEX];
	char line[BACKAUTH_LINE_MAX], out[BACKAUTH_LINE_MAX];
	struct backauth a;
	int fd, n, own;

	node_name(name, sizeof(name));
	if (take_key(name, key, &own) < 0) {
		fprintf(stderr,
		        "clusterdoc-agent: --connect needs the node's key in $%s or the run's "
		        "secret in $%s\n",
		        BACKAUTH_KEY_ENV, BACKAUTH_SECRET_ENV);
		return -1;
	}
	/* A head that closes before its answer may have given this connection
	 * up for a newer one (its queue of unproven connections full during a
	 * flood): try again, a few times, each with fresh nonces. */
	for (int try = 1;; try++) {
		cd_random_token(nonce, sizeof(nonce));
		n = backauth_agent_hello(&a, name, nonce, out, sizeof(out));
		if (n < 0) {
			fprintf(stderr,
			        "clusterdoc-agent: \"%s\" is not a node name the head can take\n",
			        name);
			memset(key, 0, sizeof(key));
			return -1;
		}
		fd = connect_to(name, hostport);
		if (fd < 0) {
			memset(key, 0, sizeof(key));
			return -1;
		}
		if (cd_write_all(fd, out, (size_t)n) == 0 && read_line(fd, line, sizeof(line)) == 0)
			break;
		close(fd);
		if (try == CONNECT_BACK_TRIES) {
			fprintf(stderr,
			        "clusterdoc-agent: %s: the head closed the handshake (%d tries)\n",
			        name, try);
			memset(key, 0, sizeof(key));
			return -1;
		}
		poll(NULL, 0, CONNECT_BACK_PAUSE << (try - 1));
	}
	n = backauth_agent_answer(&a, key, line, out, sizeof(out));
	if (n < 0) {
		/* Whoever listens there does not know the run's secret, or this
		 * agent's key is another node's. */
		if (own)
			fprintf(
			    stderr,
			    "clusterdoc-agent: %s: the head at %s did not prove node %s's key (a "
			    "head of another run, or this agent was given another node's key)\n",
			    name, hostport, name);
		else
			fprintf(
			    stderr,
			    "clusterdoc-agent: %s: the head at %s did not prove the run's secret\n",
			    name, hostport);
		goto fail;
	}
	if (cd_write_all(fd, out, (size_t)n) < 0)
		goto fail;
	memset(key, 0, sizeof(key));
	if (dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		fprintf(stderr, "clusterdoc-agent: dup2: %s\n", strerror(errno));
		goto fail;
	}
	close(fd);
	return 0;
fail:
	memset(key, 0, sizeof(key));
	close(fd);
	return -1;
}
