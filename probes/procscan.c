/* SPDX-License-Identifier: MIT */
/*
 * procscan.c - the /proc parsers of `clusterdoc hang` (procscan.h): pure,
 * bounded, every field checked.
 */
#include "probes/procscan.h"
#include "cd.h"
#include "scan.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int procscan_stat_parse(const char *buf, size_t len, struct procscan_stat *st, char *err,
                        size_t errlen)
{
	const char *open = memchr(buf, '(', len), *close = NULL, *p, *end = buf + len, *w;
	uint64_t v[20];
	size_t n, clen;
	int field = 3; /* the state is field 3 of proc(5) */

	memset(st, 0, sizeof(*st));
	/* comm may hold ')' and spaces: it ends at the last ')' */
	for (const char *q = buf; q < end; q++) {
		if (*q == ')')
			close = q;
	}
	if (!open || !close || close < open)
		return cd_errf(err, errlen, CD_ERR_PARSE, "stat: no (comm)");
	p = buf;
	if (scan_uint(&p, open, 10, INT64_MAX, &v[0]) < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "stat: no pid");
	st->pid = (long)v[0];
	clen = (size_t)(close - open - 1);
	if (clen >= sizeof(st->comm))
		clen = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, clen);
	st->comm[clen] = '\0';
	p = close + 1;
	if (!scan_next_word(&p, end, &w, &n) || n != 1)
		return cd_errf(err, errlen, CD_ERR_PARSE, "stat: no state");
	st->state = w[0];
	/* fields 4..22: ppid ... starttime; pgrp and tty may be negative */
	while (field < 22 && scan_next_word(&p, end, &w, &n)) {
		const char *q = w;
		uint64_t x = 0;

		field++;
		if (*q == '-') {
			q++;
		} else if (scan_uint(&q, w + n, 10, UINT64_MAX, &x) < 0 || q != w + n) {
			return cd_errf(err, errlen, CD_ERR_PARSE, "stat: field %d is not a number",
			               field);
		}
		v[field - 4] = x;
	}
	if (field < 22)
		return cd_errf(err, errlen, CD_ERR_PARSE, "stat: %d fields, 22 expected", field);
	st->ppid = (long)v[0];
	st->utime = v[14 - 4];
	st->stime = v[15 - 4];
	st->num_threads = (long)v[20 - 4];
	st->starttime = v[22 - 4];
	return 0;
}

int procscan_syscall_parse(const char *buf, size_t len, struct procscan_syscall *sc, char *err,
                           size_t errlen)
{
	const char *p = buf, *end = buf + len, *w;
	size_t n;
	int i = 0;

	memset(sc, 0, sizeof(*sc));
	if (!scan_next_word(&p, end, &w, &n))
		return cd_errf(err, errlen, CD_ERR_PARSE, "syscall: empty");
	if (n == 7 && memcmp(w, "running", 7) == 0) {
		sc->kind = PROCSCAN_SYS_RUNNING;
		return 0;
	}
	if (n == 2 && memcmp(w, "-1", 2) == 0) {
		sc->kind = PROCSCAN_SYS_NONE;
		return 0;
	}
	{
		const char *q = w;
		uint64_t nr;

		if (scan_uint(&q, w + n, 10, 100000, &nr) < 0 || q != w + n)
			return cd_errf(err, errlen, CD_ERR_PARSE, "syscall: \"%.*s\" is no number",
			               (int)(n > 20 ? 20 : n), w);
		sc->nr = (long)nr;
	}
	/* the arguments, then SP and PC: all "0x..." */
	while (scan_next_word(&p, end, &w, &n)) {
		const char *q = w + 2;
		uint64_t x;

		if (n < 3 || w[0] != '0' || w[1] != 'x' ||
		    scan_uint(&q, w + n, 16, UINT64_MAX, &x) < 0 || q != w + n)
			return cd_errf(err, errlen, CD_ERR_PARSE, "syscall: argument %d is not hex",
			               i);
		if (i < 6)
			sc->arg[i] = x;
		i++;
	}
	if (i != 8)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "syscall: %d words after the number, 8 expected", i);
	sc->kind = PROCSCAN_SYS_CALL;
	return 0;
}

static const struct sysname {
	long nr;
	const char *name;
	int fd_arg;
} sysnames[] = {
#if defined(__x86_64__)
    {0, "read", 0},           {1, "write", 0},
    {7, "poll", -1},          {19, "readv", 0},
    {20, "writev", 0},        {23, "select", -1},
    {34, "pause", -1},        {35, "nanosleep", -1},
    {42, "connect", 0},       {43, "accept", 0},
    {44, "sendto", 0},        {45, "recvfrom", 0},
    {46, "sendmsg", 0},       {47, "recvmsg", 0},
    {61, "wait4", -1},        {128, "rt_sigtimedwait", -1},
    {202, "futex", -1},       {230, "clock_nanosleep", -1},
    {232, "epoll_wait", 0},   {247, "waitid", -1},
    {270, "pselect6", -1},    {271, "ppoll", -1},
    {281, "epoll_pwait", 0},  {288, "accept4", 0},
    {441, "epoll_pwait2", 0},
#elif defined(__aarch64__)
    {22, "epoll_pwait", 0},
    {63, "read", 0},
    {64, "write", 0},
    {65, "readv", 0},
    {66, "writev", 0},
    {72, "pselect6", -1},
    {73, "ppoll", -1},
    {95, "waitid", -1},
    {98, "futex", -1},
    {101, "nanosleep", -1},
    {115, "clock_nanosleep", -1},
    {137, "rt_sigtimedwait", -1},
    {202, "accept", 0},
    {203, "connect", 0},
    {206, "sendto", 0},
    {207, "recvfrom", 0},
    {211, "sendmsg", 0},
    {212, "recvmsg", 0},
    {242, "accept4", 0},
    {260, "wait4", -1},
    {441, "epoll_pwait2", 0},
#endif
    {-1, NULL, -1},
};

const char *procscan_syscall_name(long nr, int *fd_arg)
{
	if (fd_arg)
		*fd_arg = -1;
	for (size_t i = 0; sysnames[i].name; i++) {
		if (sysnames[i].nr == nr) {
			if (fd_arg)
				*fd_arg = sysnames[i].fd_arg;
			return sysnames[i].name;
		}
	}
	return NULL;
}

const char *procscan_syscall_class(const struct procscan_syscall *sc)
{
	static const struct {
		const char *name, *cls;
	} classes[] = {
	    {"nanosleep", "sleep"},
	    {"clock_nanosleep", "sleep"},
	    {"pause", "sleep"},
	    {"futex", "wait"},
	    {"poll", "wait"},
	    {"ppoll", "wait"},
	    {"epoll_wait", "wait"},
	    {"epoll_pwait", "wait"},
	    {"epoll_pwait2", "wait"},
	    {"read", "wait"},
	    {"readv", "wait"},
	    {"recvfrom", "wait"},
	    {"recvmsg", "wait"},
	    {"write", "wait"},
	    {"writev", "wait"},
	    {"sendto", "wait"},
	    {"sendmsg", "wait"},
	    {"accept", "wait"},
	    {"accept4", "wait"},
	    {"connect", "wait"},
	    {"wait4", "wait"},
	    {"waitid", "wait"},
	    {"rt_sigtimedwait", "wait"},
	};
	const char *name;

	if (sc->kind == PROCSCAN_SYS_RUNNING)
		return "running";
	if (sc->kind != PROCSCAN_SYS_CALL)
		return "other";
	name = procscan_syscall_name(sc->nr, NULL);
	if (!name)
		return "other";
	/* select(0, NULL, NULL, NULL, &tv): a sleep, as older Pythons' time.sleep */
	if ((strcmp(name, "select") == 0 || strcmp(name, "pselect6") == 0))
		return sc->arg[0] == 0 ? "sleep" : "wait";
	for (size_t i = 0; i < CD_ARRAY_LEN(classes); i++) {
		if (strcmp(classes[i].name, name) == 0)
			return classes[i].cls;
	}
	return "other";
}

const char *procscan_tcp_state_name(int state)
{
	static const char *const names[] = {
	    "?",         "ESTABLISHED", "SYN_SENT",   "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	    "TIME_WAIT", "CLOSE",       "CLOSE_WAIT", "LAST_ACK", "LISTEN",    "CLOSING",
	};

	return state > 0 && (size_t)state < CD_ARRAY_LEN(names) ? names[state] : "?";
}

/* "0100007F:1F90" (v4) or 32 hex digits ":PORT" (v6) -> "127.0.0.1:8080". */
static int tcp_addr(const char *w, size_t n, int ipv6, char *out, size_t outlen)
{
	size_t hexlen = ipv6 ? 32 : 8;
	unsigned char bytes[16];
	char text[INET6_ADDRSTRLEN];
	const char *p;
	uint64_t port;

	if (n < hexlen + 2 || w[hexlen] != ':')
		return -1;
	for (size_t word = 0; word < hexlen / 8; word++) {
		const char *q = w + word * 8;
		uint64_t x;
		uint32_t u;
		char tmp[9];

		memcpy(tmp, q, 8);
		tmp[8] = '\0';
		q = tmp;
		if (scan_uint(&q, tmp + 8, 16, UINT32_MAX, &x) < 0 || q != tmp + 8)
			return -1;
		/* the kernel prints each 32-bit word as it lies in memory */
		u = (uint32_t)x;
		memcpy(bytes + word * 4, &u, 4);
	}
	p = w + hexlen + 1;
	if (scan_uint(&p, w + n, 16, 65535, &port) < 0 || p != w + n)
		return -1;
	if (!inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes, text, sizeof(text)))
		return -1;
	/* a v4-mapped address reads as the v4 one, so both sides of a link match */
	if (ipv6 && strncmp(text, "::ffff:", 7) == 0 && strchr(text + 7, '.'))
		snprintf(out, outlen, "%s:%u", text + 7, (unsigned)port);
	else if (ipv6)
		snprintf(out, outlen, "[%s]:%u", text, (unsigned)port);
	else
		snprintf(out, outlen, "%s:%u", text, (unsigned)port);
	return 0;
}

/* One socket line: "sl: local rem st tx:rx tr:when retrnsmt uid timeout inode ...". */
static int tcp_line(const char *line, size_t len, int ipv6, struct procscan_tcp *t)
{
	const char *p = line, *end = line + len, *w[10];
	size_t n[10];
	const char *q, *colon;
	uint64_t x;

	for (int i = 0; i < 10; i++) {
		if (!scan_next_word(&p, end, &w[i], &n[i]))
			return -1;
	}
	if (tcp_addr(w[1], n[1], ipv6, t->local, sizeof(t->local)) < 0 ||
	    tcp_addr(w[2], n[2], ipv6, t->remote, sizeof(t->remote)) < 0)
		return -1;
	q = w[3];
	if (scan_uint(&q, w[3] + n[3], 16, 255, &x) < 0 || q != w[3] + n[3])
		return -1;
	t->state = (int)x;
	colon = memchr(w[4], ':', n[4]);
	if (!colon)
		return -1;
	q = w[4];
	if (scan_uint(&q, colon, 16, UINT64_MAX, &t->tx_queue) < 0 || q != colon)
		return -1;
	q = colon + 1;
	if (scan_uint(&q, w[4] + n[4], 16, UINT64_MAX, &t->rx_queue) < 0 || q != w[4] + n[4])
		return -1;
	colon = memchr(w[5], ':', n[5]);
	q = w[5];
	if (!colon || scan_uint(&q, colon, 16, 255, &x) < 0 || q != colon)
		return -1;
	t->timer = (int)x;
	q = w[6];
	if (scan_uint(&q, w[6] + n[6], 16, UINT64_MAX, &t->retransmits) < 0 || q != w[6] + n[6])
		return -1;
	q = w[8];
	if (scan_uint(&q, w[8] + n[8], 10, UINT64_MAX, &t->probes) < 0 || q != w[8] + n[8])
		return -1;
	q = w[9];
	if (scan_uint(&q, w[9] + n[9], 10, UINT64_MAX, &t->inode) < 0 || q != w[9] + n[9])
		return -1;
	return 0;
}

int procscan_tcp_parse(const char *buf, size_t len, int ipv6, struct procscan_tcp *out, size_t max,
                       size_t *n, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *line;
	size_t llen;
	int lineno = 0;

	*n = 0;
	while (scan_next_line(&p, end, &line, &llen)) {
		struct procscan_tcp t = {0};

		lineno++;
		scan_trim(&line, &llen);
		if (lineno == 1 || !llen) /* the header */
			continue;
		if (tcp_line(line, llen, ipv6, &t) < 0)
			return cd_errf(err, errlen, CD_ERR_PARSE, "tcp%s line %d: malformed",
			               ipv6 ? "6" : "", lineno);
		if (*n >= max)
			return cd_errf(err, errlen, CD_ERR_TOOBIG, "tcp%s: more than %zu sockets",
			               ipv6 ? "6" : "", max);
		out[(*n)++] = t;
	}
	return 0;
}

uint64_t procscan_socket_inode(const char *target, size_t len)
{
	const char *p;
	uint64_t ino;

	if (len < 10 || memcmp(target, "socket:[", 8) != 0 || target[len - 1] != ']')
		return 0;
	p = target + 8;
	if (scan_uint(&p, target + len - 1, 10, UINT64_MAX, &ino) < 0 || p != target + len - 1)
		return 0;
	return ino;
}

int procscan_environ_rank(const char *environ, size_t len, struct procscan_rank *r)
{
	static const struct {
		const char *name;
		size_t off, size;
	} vars[] = {
#define V(n, f) {n "=", offsetof(struct procscan_rank, f), sizeof(((struct procscan_rank *)0)->f)}
	    V("RANK", rank),
	    V("LOCAL_RANK", local_rank),
	    V("WORLD_SIZE", world_size),
	    V("GROUP_RANK", group_rank),
	    V("LOCAL_WORLD_SIZE", local_world_size),
	    V("NODE_RANK", node_rank),
	    V("NNODES", nnodes),
	    V("NPROC_PER_NODE", nproc_per_node),
	    V("OMPI_COMM_WORLD_RANK", ompi_rank),
	    V("OMPI_COMM_WORLD_SIZE", ompi_size),
	    V("MASTER_ADDR", master_addr),
	    V("MASTER_PORT", master_port),
	    V("TORCHELASTIC_RUN_ID", torchelastic_run_id),
	    V("CLUSTERDOC_RUN", clusterdoc_run),
	    V("PYTHONPATH", pythonpath),
	    V("NCCL_RAS_ADDR", nccl_ras_addr),
	    V("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", fr_pipe),
	    V("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", fr_temp),
	    V("TORCH_FR_DUMP_TEMP_FILE", fr_temp_new),
#undef V
	};
	const char *p = environ, *end = environ + len;

	memset(r, 0, sizeof(*r));
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);

		if (n > 13 && memcmp(p, "TORCHELASTIC_", 13) == 0)
			r->torchelastic = 1;
		for (size_t i = 0; i < CD_ARRAY_LEN(vars); i++) {
			size_t k = strlen(vars[i].name), vlen;

			if (n < k || memcmp(p, vars[i].name, k) != 0)
				continue;
			vlen = n - k;
			if (vlen >= vars[i].size)
				vlen = vars[i].size - 1;
			memcpy((char *)r + vars[i].off, p + k, vlen);
			((char *)r + vars[i].off)[vlen] = '\0';
		}
		p += n + 1;
	}
	if (r->fr_temp_new[0]) /* torch reads the newer name first */
		memcpy(r->fr_temp, r->fr_temp_new, sizeof(r->fr_temp));
	if (r->rank[0] || r->local_rank[0] || r->world_size[0] || r->ompi_rank[0] ||
	    (r->node_rank[0] && r->nnodes[0]))
		return 1;
	return r->torchelastic ? 2 : 0;
}

static long small_number(const char *s)
{
	const char *p = s;
	uint64_t v;

	if (!*s || scan_uint(&p, s + strlen(s), 10, 1 << 24, &v) < 0 || *p)
		return -1;
	return (long)v;
}

int procscan_rank_explicit(const struct procscan_rank *r)
{
	return small_number(r->rank) >= 0 || small_number(r->ompi_rank) >= 0;
}

long procscan_global_rank(const struct procscan_rank *r)
{
	long rank = small_number(r->rank), g, lws, lr, nr, per;

	if (rank >= 0)
		return rank;
	rank = small_number(r->ompi_rank);
	if (rank >= 0)
		return rank;
	g = small_number(r->group_rank);
	lws = small_number(r->local_world_size);
	lr = small_number(r->local_rank);
	if (g >= 0 && lws > 0 && lr >= 0)
		return g * lws + lr;
	/* a node's ranks are numbered after the nodes before it, each with
	 * NPROC_PER_NODE of them (clusterdoc run's plan, jobs/run_plan.c) */
	nr = small_number(r->node_rank);
	per = small_number(r->nproc_per_node);
	if (per <= 0)
		per = lws > 0 ? lws : 1;
	if (nr >= 0 && small_number(r->nnodes) > 0)
		return nr * per + (lr >= 0 ? lr : 0);
	return -1;
}

long procscan_world_size(const struct procscan_rank *r)
{
	long w = small_number(r->world_size), n, per;

	if (w > 0)
		return w;
	w = small_number(r->ompi_size);
	if (w > 0)
		return w;
	n = small_number(r->nnodes);
	per = small_number(r->nproc_per_node);
	if (n > 0)
		return n * (per > 0 ? per : 1);
	return -1;
}

/* The last path component of an argument. */
static const char *base_name(const char *arg, size_t n, size_t *blen)
{
	const char *slash = memrchr(arg, '/', n);

	if (!slash) {
		*blen = n;
		return arg;
	}
	*blen = n - (size_t)(slash + 1 - arg);
	return slash + 1;
}

static int word_is(const char *w, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

enum procscan_launcher procscan_cmdline_launcher(const char *cmdline, size_t len)
{
	static const char *const mpi[] = {"mpirun", "mpiexec", "orterun", "prterun"};
	static const char *const modules[] = {"torch.distributed.run", "torch.distributed.launch"};
	static const char *const shims[] = {"torch.distributed.run import main",
	                                    "torch.distributed.launch import main"};
	const char *p = cmdline, *end = cmdline + len, *opt = NULL;
	size_t optn = 0;

	for (int argi = 0; p < end; argi++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p), bn;
		const char *b = base_name(p, n, &bn);

		if (argi == 0) {
			if (word_is(b, bn, "torchrun"))
				return PROCSCAN_TORCHRUN;
			for (size_t i = 0; i < CD_ARRAY_LEN(mpi); i++)
				if (word_is(b, bn, mpi[i]))
					return PROCSCAN_MPIRUN;
		} else if (opt && word_is(opt, optn, "-m")) {
			for (size_t i = 0; i < CD_ARRAY_LEN(modules); i++)
				if (word_is(p, n, modules[i]))
					return PROCSCAN_TORCHRUN;
			return PROCSCAN_NOT_LAUNCHER;
		} else if (opt && word_is(opt, optn, "-c")) {
			for (size_t i = 0; i < CD_ARRAY_LEN(shims); i++)
				if (memmem(p, n, shims[i], strlen(shims[i])))
					return PROCSCAN_TORCHRUN;
			return PROCSCAN_NOT_LAUNCHER;
		} else if (n && p[0] != '-') {
			/* the interpreter's script: python3 /usr/bin/torchrun ... */
			return word_is(b, bn, "torchrun") ? PROCSCAN_TORCHRUN
			                                  : PROCSCAN_NOT_LAUNCHER;
		}
		opt = p;
		optn = n;
		p += n + 1;
	}
	return PROCSCAN_NOT_LAUNCHER;
}

const char *procscan_launcher_name(enum procscan_launcher l)
{
	return l == PROCSCAN_TORCHRUN ? "torchrun" : l == PROCSCAN_MPIRUN ? "mpirun" : "";
}

int procscan_status_sigcgt(const char *buf, size_t len, uint64_t *mask, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *line;
	size_t n;

	while (scan_next_line(&p, end, &line, &n)) {
		const char *q, *e;
		uint64_t v;

		if (n < 7 || memcmp(line, "SigCgt:", 7) != 0)
			continue;
		q = line + 7;
		e = line + n;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q == e || e - q > 16 || scan_uint(&q, e, 16, UINT64_MAX, &v) < 0 || q != e)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "status: SigCgt \"%.*s\" is not a mask",
			               (int)(n > 40 ? 40 : n), line);
		*mask = v;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "status: no SigCgt line");
}

int procscan_sig_caught(uint64_t mask, int signo)
{
	return signo >= 1 && signo <= 64 && ((mask >> (signo - 1)) & 1);
}

int procscan_fds(long pid, size_t max,
                 int (*fn)(long fd, const char *target, size_t len, void *arg), void *arg)
{
	char dir[64], path[320], target[256];
	struct dirent *e;
	size_t seen = 0;
	int rc = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
	if (!(d = opendir(dir)))
		return 0;
	while (!rc && (!max || seen < max) && (e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		seen++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		rc = fn(atol(e->d_name), target, (size_t)n, arg);
	}
	closedir(d);
	return rc;
}
