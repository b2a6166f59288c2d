/* SPDX-License-Identifier: MIT */
/* nccl_netlog.c - NCCL's network lines captured on the node (see
 * nccl_netlog.h). The expansion of NCCL_DEBUG_FILE and the file's handling
 * follow ncclDebugInit (NVIDIA/nccl src/debug.cc); the host name is
 * getHostName's (src/misc/utils.cc): gethostname cut at its first '.'. */
#include "collectives/nccl_netlog.h"
#include "cd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const names[3] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
enum { V_DEBUG, V_SUBSYS, V_FILE };

/* The file of the process, chosen at the first scope (NCCL keeps the one it
 * opened first). Only the thread serving requests touches it. */
static struct {
	int chosen;
	int fd;              /* the private file, or -1 */
	char fd_name[32];    /* "/proc/self/fd/N" */
	char user[PATH_MAX]; /* the user's NCCL_DEBUG_FILE, expanded, or "" */
	char why[CD_ERRLEN]; /* why there is no file, or "" */
} netlog_file = {.fd = -1};

int nccl_netlog_expand(const char *value, const char *host, long pid, char *out, size_t outlen)
{
	size_t used = 0;
	char one[32];

	for (const char *p = value; *p; p++) {
		const char *add = one;

		if (*p != '%') {
			snprintf(one, sizeof(one), "%c", *p);
		} else if (p[1] == '%') {
			add = "%";
			p++;
		} else if (p[1] == 'h') {
			add = host;
			p++;
		} else if (p[1] == 'p') {
			snprintf(one, sizeof(one), "%ld", pid);
			p++;
		} else {
			snprintf(one, sizeof(one), "%%%.1s", p + 1);
			p += p[1] != '\0';
		}
		if (used + strlen(add) >= outlen)
			return -1;
		memcpy(out + used, add, strlen(add));
		used += strlen(add);
	}
	if (used >= outlen)
		return -1;
	out[used] = '\0';
	return 0;
}

static void host_name(char *buf, size_t len)
{
	if (gethostname(buf, len) != 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* The private file: created in $TMPDIR (or /tmp) and unlinked at once. */
static void make_private(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir || !dir[0])
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/clusterdoc-nccl-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		snprintf(netlog_file.why, sizeof(netlog_file.why),
		         "no private file for NCCL's lines (mkostemp in %s: %s)", dir,
		         strerror(errno));
		return;
	}
	unlink(path);
	netlog_file.fd = fd;
	snprintf(netlog_file.fd_name, sizeof(netlog_file.fd_name), "/proc/self/fd/%d", fd);
}

static void choose_file(void)
{
	const char *user = getenv(names[V_FILE]);
	char host[256];

	netlog_file.chosen = 1;
	if (user && user[0] && strncmp(user, "/dev/", 5) != 0) {
		host_name(host, sizeof(host));
		if (nccl_netlog_expand(user, host, (long)getpid(), netlog_file.user,
		                       sizeof(netlog_file.user)) == 0)
			return;
		netlog_file.user[0] = '\0';
	}
	make_private();
}

/* NCCL_DEBUG_SUBSYS with INIT and NET (see nccl_netlog.h), into buf. */
static void subsys_value(const char *user, char *buf, size_t len)
{
	if (!user || !user[0] || user[0] == '^')
		snprintf(buf, len, "INIT,NET");
	else
		snprintf(buf, len, "%s,INIT,NET", user);
}

void nccl_netlog_begin(struct nccl_netlog_scope *s)
{
	const char *debug = getenv(names[V_DEBUG]);
	char subsys[512];

	memset(s, 0, sizeof(*s));
	if (!netlog_file.chosen)
		choose_file();
	if (!netlog_file.user[0] && netlog_file.fd < 0)
		return;
	for (int k = 0; k < 3; k++) {
		const char *v = getenv(names[k]);

		s->saved[k] = v ? cd_strdup(v) : NULL;
	}
	s->active = 1;
	if (!debug || (strcasecmp(debug, "INFO") != 0 && strcasecmp(debug, "TRACE") != 0))
		setenv(names[V_DEBUG], "INFO", 1);
	subsys_value(s->saved[V_SUBSYS], subsys, sizeof(subsys));
	setenv(names[V_SUBSYS], subsys, 1);
	/* the user's value stays as it was: NCCL expands it itself */
	if (!netlog_file.user[0])
		setenv(names[V_FILE], netlog_file.fd_name, 1);
}

void nccl_netlog_end(struct nccl_netlog_scope *s)
{
	if (!s->active)
		return;
	for (int k = 0; k < 3; k++) {
		if (s->saved[k])
			setenv(names[k], s->saved[k], 1);
		else
			unsetenv(names[k]);
		free(s->saved[k]);
		s->saved[k] = NULL;
	}
	s->active = 0;
}

/* Whether line (n bytes) is one nccl_ib_parse_log reads. */
static int about_network(const char *line, size_t n)
{
	static const char *const marks[] = {"NET/", "Using network ", "libibverbs"};

	for (size_t k = 0; k < CD_ARRAY_LEN(marks); k++) {
		if (memmem(line, n, marks[k], strlen(marks[k])))
			return 1;
	}
	return 0;
}

static int already(json_t *lines, const char *s, size_t n)
{
	size_t k;
	json_t *v;

	json_array_foreach(lines, k, v)
	{
		if (json_string_length(v) == n && memcmp(json_string_value(v), s, n) == 0)
			return 1;
	}
	return 0;
}

size_t nccl_netlog_pick(const char *buf, size_t len, json_t *lines)
{
	static const char tag[] = " NCCL INFO ";
	size_t i = 0, dropped = 0;
	json_t *v;

	while (i < len) {
		const char *line = buf + i, *end = memchr(line, '\n', len - i), *t;
		size_t n = end ? (size_t)(end - line) : len - i;

		i += n + 1;
		if (n && line[n - 1] == '\r')
			n--;
		if (!about_network(line, n))
			continue;
		if ((t = memmem(line, n, tag, sizeof(tag) - 1))) {
			n -= (size_t)(t + 1 - line);
			line = t + 1;
		}
		if (already(lines, line, n))
			continue;
		/* too long, too many, or not UTF-8 (JSON cannot carry it) */
		if (n > NCCL_NETLOG_LINE_MAX || json_array_size(lines) >= NCCL_NETLOG_LINES_MAX ||
		    memchr(line, '\0', n) || !(v = json_stringn(line, n))) {
			dropped++;
			continue;
		}
		json_array_append_new(lines, v);
	}
	return dropped;
}

/* Up to NCCL_NETLOG_READ_MAX bytes from the start of the file into buf. */
static ssize_t read_log(char *buf, char *err, size_t errlen)
{
	int fd = netlog_file.fd, own = 0;
	size_t got = 0;
	ssize_t n;

	if (netlog_file.user[0]) {
		fd = open(netlog_file.user, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return cd_errf(err, errlen, CD_ERR_IO, "NCCL_DEBUG_FILE %s: %s",
			               netlog_file.user, strerror(errno));
		own = 1;
	}
	while (got < NCCL_NETLOG_READ_MAX &&
	       (n = pread(fd, buf + got, NCCL_NETLOG_READ_MAX - got, (off_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cd_errf(err, errlen, CD_ERR_IO, "reading NCCL's lines: %s",
			        strerror(errno));
			got = 0;
			break;
		}
		got += (size_t)n;
	}
	if (own)
		close(fd);
	return err[0] ? CD_ERR_IO : (ssize_t)got;
}

json_t *nccl_netlog_read(void)
{
	char err[CD_ERRLEN] = "";
	json_t *lines, *out;
	size_t dropped;
	ssize_t len;
	char *buf;

	if (!netlog_file.chosen)
		return NULL;
	if (netlog_file.why[0])
		return json_pack("{ss}", "error", netlog_file.why);
	buf = cd_malloc(NCCL_NETLOG_READ_MAX);
	len = read_log(buf, err, sizeof(err));
	if (len < 0) {
		free(buf);
		return json_pack("{ss}", "error", err);
	}
	lines = json_array();
	dropped = nccl_netlog_pick(buf, (size_t)len, lines);
	free(buf);
	out = json_pack("{soss}", "lines", lines, "file",
	                netlog_file.user[0] ? netlog_file.user : "private");
	if (dropped)
		json_object_set_new(out, "dropped", json_integer((json_int_t)dropped));
	return out;
}
