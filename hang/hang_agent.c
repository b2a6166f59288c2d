/* SPDX-License-Identifier: MIT */
/*
 * hang_agent.c - one sample of the job's processes on this node for
 * `clusterdoc hang` (hang_agent.h): /proc read, nothing changed. The
 * hang-ready dump signal is the one exception, sent only when asked.
 */
#include "hang/hang_agent.h"
#include "hang/hang_agent_internal.h"
#include "cd.h"
#include "probes/procscan.h"
#include "proto.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ENVIRON_CAP (1 << 20)
#define SMALL_CAP   8192
#define TCP_CAP     (4 << 20)
#define TCP_MAX     8192
#define CMDLINE_CAP 512
#define MAX_FDS     4096

static int read_stat(const char *path, struct procscan_stat *st)
{
	char *data = NULL, err[CD_ERRLEN];
	size_t len = 0;
	int rc;

	if (scan_read_file(path, SMALL_CAP, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return -1;
	rc = procscan_stat_parse(data, len, st, err, sizeof(err));
	free(data);
	return rc;
}

/* 1 when pid is the agent or one of its ancestors. */
static int is_self_line(long pid)
{
	long p = (long)getpid();

	for (int depth = 0; p > 1 && depth < 64; depth++) {
		struct procscan_stat st;
		char path[64];

		if (p == pid)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		if (read_stat(path, &st) < 0)
			return 0;
		p = st.ppid;
	}
	return 0;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	snprintf(buf, len, "%s", pw ? pw->pw_name : "");
	if (!buf[0])
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/* The TCP table of pid's network namespace (tcp and tcp6), new; NULL when
 * it cannot be read. */
static struct procscan_tcp *read_tcp(long pid, size_t *n)
{
	struct procscan_tcp *t = cd_calloc(TCP_MAX, sizeof(*t));
	static const char *const files[] = {"tcp", "tcp6"};

	*n = 0;
	for (int v6 = 0; v6 < 2; v6++) {
		char path[64], *data = NULL, err[CD_ERRLEN];
		size_t len = 0, got = 0;

		snprintf(path, sizeof(path), "/proc/%ld/net/%s", pid, files[v6]);
		if (scan_read_file(path, TCP_CAP, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) <
		    0)
			continue;
		/* a cap reached keeps what was read: the job's sockets come first rarely,
		 * but a partial table still names most links */
		procscan_tcp_parse(data, len, v6, t + *n, TCP_MAX - *n, &got, err, sizeof(err));
		*n += got;
		free(data);
	}
	return t;
}

static const struct procscan_tcp *tcp_find(const struct procscan_tcp *t, size_t n, uint64_t ino)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i].inode == ino && ino)
			return &t[i];
	}
	return NULL;
}

static json_t *socket_json(long fd, const struct procscan_tcp *s)
{
	return json_pack("{sIsssssssIsIsIsIsI}", "fd", (json_int_t)fd, "local", s->local, "remote",
	                 s->remote, "state", procscan_tcp_state_name(s->state), "tx_queue",
	                 (json_int_t)s->tx_queue, "rx_queue", (json_int_t)s->rx_queue, "timer",
	                 (json_int_t)s->timer, "retransmits", (json_int_t)s->retransmits,
	                 "zero_window_probes", (json_int_t)s->probes);
}

struct sockets_walk {
	const struct procscan_tcp *t;
	size_t nt;
	long blocked_fd;
	json_t *out, **blocked;
};

static int on_socket_fd(long fd, const char *target, size_t len, void *arg)
{
	struct sockets_walk *w = arg;
	const struct procscan_tcp *s = tcp_find(w->t, w->nt, procscan_socket_inode(target, len));

	if (!s || s->state == 10) /* LISTEN: no peer */
		return 0;
	if (fd == w->blocked_fd) {
		json_decref(*w->blocked);
		*w->blocked = socket_json(fd, s);
	}
	if (json_array_size(w->out) < HANG_AGENT_MAX_SOCKETS)
		json_array_append_new(w->out, socket_json(fd, s));
	return 0;
}

/* The TCP connections among pid's fds; *blocked the one of blocked_fd. */
static json_t *read_sockets(long pid, const struct procscan_tcp *t, size_t nt, long blocked_fd,
                            json_t **blocked)
{
	struct sockets_walk w = {t, nt, blocked_fd, json_array(), blocked};

	*blocked = json_null();
	procscan_fds(pid, MAX_FDS, on_socket_fd, &w);
	return w.out;
}

static long clk_tck(void)
{
	long clk = sysconf(_SC_CLK_TCK);

	return clk > 0 ? clk : 100;
}

static json_t *read_thread(long pid, long tid, long *fd_out)
{
	char path[128], wchan[128], sysline[256], err[CD_ERRLEN];
	struct procscan_stat st;
	struct procscan_syscall sc;
	const char *name = NULL, *cls = "other";
	int fd_arg = -1;
	long fd = -1;
	json_t *t;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", pid, tid);
	if (read_stat(path, &st) < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/wchan", pid, tid);
	scan_read_flat(path, SMALL_CAP, wchan, sizeof(wchan));
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/syscall", pid, tid);
	scan_read_flat(path, SMALL_CAP, sysline, sizeof(sysline));
	if (sysline[0] &&
	    procscan_syscall_parse(sysline, strlen(sysline), &sc, err, sizeof(err)) == 0) {
		cls = procscan_syscall_class(&sc);
		if (sc.kind == PROCSCAN_SYS_RUNNING)
			name = "running";
		else if (sc.kind == PROCSCAN_SYS_CALL)
			name = procscan_syscall_name(sc.nr, &fd_arg);
		if (fd_arg >= 0 && sc.arg[fd_arg] < 1u << 20)
			fd = (long)sc.arg[fd_arg];
	}
	if (st.state == 'R')
		cls = "running";
	t = json_pack("{sIssss#sssssI}", "tid", (json_int_t)tid, "comm", st.comm, "state",
	              &st.state, 1, "wchan", wchan, "class", cls, "cpu_ms",
	              (json_int_t)((st.utime + st.stime) * 1000 / (uint64_t)clk_tck()));
	if (name)
		json_object_set_new(t, "syscall", json_string(name));
	else if (sysline[0] && sc.kind == PROCSCAN_SYS_CALL)
		json_object_set_new(t, "syscall", json_sprintf("#%ld", sc.nr));
	else
		json_object_set_new(t, "syscall", json_null());
	json_object_set_new(t, "fd", fd >= 0 ? json_integer(fd) : json_null());
	*fd_out = fd;
	return t;
}

static json_t *read_threads(long pid, json_t **main_thread, long *main_fd)
{
	json_t *out = json_array();
	char dir[64];
	DIR *d;
	struct dirent *e;

	*main_thread = NULL;
	*main_fd = -1;
	snprintf(dir, sizeof(dir), "/proc/%ld/task", pid);
	d = opendir(dir);
	if (!d)
		return out;
	while ((e = readdir(d))) {
		long fd;
		json_t *t;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (atol(e->d_name) != pid && json_array_size(out) >= HANG_AGENT_MAX_THREADS)
			continue;
		t = read_thread(pid, atol(e->d_name), &fd);
		if (!t)
			continue;
		if (atol(e->d_name) == pid) {
			*main_thread = json_incref(t);
			*main_fd = fd;
		}
		json_array_append_new(out, t);
	}
	closedir(d);
	return out;
}

/* rchar and wchar of /proc/PID/io (bytes passed to read/write calls). */
static void read_io(long pid, json_t *p)
{
	char path[64], *data = NULL, err[CD_ERRLEN];
	const char *cur, *end, *line;
	size_t len = 0, n;

	snprintf(path, sizeof(path), "/proc/%ld/io", pid);
	if (scan_read_file(path, SMALL_CAP, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return;
	cur = data;
	end = data + len;
	while (scan_next_line(&cur, end, &line, &n)) {
		const char *q;
		uint64_t v;

		if (n > 7 && (memcmp(line, "rchar: ", 7) == 0 || memcmp(line, "wchar: ", 7) == 0)) {
			q = line + 7;
			if (scan_uint(&q, line + n, 10, UINT64_MAX, &v) == 0)
				json_object_set_new(p, line[0] == 'r' ? "rchar" : "wchar",
				                    json_integer((json_int_t)v));
		}
	}
	free(data);
}

/* 1 when pid is in the network namespace self_ns names ("net:[N]"): the
 * nodes of one host that share a process table (containers, test nodes in
 * namespaces) each see only their own job this way. 1 when unknown. */
static int same_netns(long pid, const char *self_ns)
{
	char path[64], ns[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
	n = readlink(path, ns, sizeof(ns) - 1);
	if (n <= 0 || !self_ns[0])
		return 1;
	ns[n] = '\0';
	return strcmp(ns, self_ns) == 0;
}

/* A process of another user that looks like a torch job's. */
static int looks_like_torch(const char *comm, const char *cmdline)
{
	return strcmp(comm, "pt_main_thread") == 0 || strcmp(comm, "pt_elastic") == 0 ||
	       strstr(cmdline, "torchrun") || strstr(cmdline, "torch.distributed");
}

static json_t *env_json(const struct procscan_rank *r)
{
	json_t *e = json_pack("{ssssssssssssss}", "RANK", r->rank, "LOCAL_RANK", r->local_rank,
	                      "WORLD_SIZE", r->world_size, "GROUP_RANK", r->group_rank,
	                      "LOCAL_WORLD_SIZE", r->local_world_size, "TORCHELASTIC_RUN_ID",
	                      r->torchelastic_run_id, "CLUSTERDOC_RUN", r->clusterdoc_run);

	json_object_update_new(e, json_pack("{ssssssssssssss}", "NODE_RANK", r->node_rank, "NNODES",
	                                    r->nnodes, "NPROC_PER_NODE", r->nproc_per_node,
	                                    "OMPI_COMM_WORLD_RANK", r->ompi_rank,
	                                    "OMPI_COMM_WORLD_SIZE", r->ompi_size, "MASTER_ADDR",
	                                    r->master_addr, "MASTER_PORT", r->master_port));
	return e;
}

/* The command line as the kernel keeps it (NUL-separated), for
 * procscan_cmdline_launcher. */
static enum procscan_launcher read_launcher(long pid)
{
	char path[64], *data = NULL, err[CD_ERRLEN];
	size_t len = 0;
	enum procscan_launcher l;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	if (scan_read_file(path, 1 << 20, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return PROCSCAN_NOT_LAUNCHER;
	l = procscan_cmdline_launcher(data, len);
	free(data);
	return l;
}

/* One process of the job: everything but the stacks. launcher: what its
 * command line says it is (a launcher is never a rank). */
static json_t *read_process(long pid, const struct procscan_stat *st, const struct procscan_rank *r,
                            int kind, enum procscan_launcher launcher)
{
	char path[64], cmdline[CMDLINE_CAP];
	struct procscan_tcp *t;
	size_t nt;
	long main_fd;
	json_t *p, *threads, *main_thread, *blocked;
	long clk = clk_tck();
	int is_rank = kind == 1 && launcher == PROCSCAN_NOT_LAUNCHER;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	scan_read_flat(path, SMALL_CAP, cmdline, sizeof(cmdline));
	p = json_pack("{sIsIsssssssIsoss#sI}", "pid", (json_int_t)pid, "ppid", (json_int_t)st->ppid,
	              "comm", st->comm, "cmdline", cmdline, "role", is_rank ? "rank" : "launcher",
	              "rank", (json_int_t)(is_rank ? procscan_global_rank(r) : -1), "env",
	              env_json(r), "state", &st->state, 1, "cpu_ms",
	              (json_int_t)((st->utime + st->stime) * 1000 / (uint64_t)clk));
	json_object_set_new(p, "world_size", json_integer(procscan_world_size(r)));
	json_object_set_new(p, "launcher",
	                    is_rank ? json_null()
	                    : launcher != PROCSCAN_NOT_LAUNCHER
	                        ? json_string(procscan_launcher_name(launcher))
	                        : json_string("torchrun")); /* TORCHELASTIC_* only */
	json_object_set_new(p, "_explicit", json_boolean(procscan_rank_explicit(r)));
	read_io(pid, p);
	threads = read_threads(pid, &main_thread, &main_fd);
	json_object_set_new(p, "threads", threads);
	json_object_set_new(p, "main", main_thread ? main_thread : json_null());
	t = read_tcp(pid, &nt);
	json_object_set_new(p, "sockets", read_sockets(pid, t, nt, main_fd, &blocked));
	json_object_set_new(p, "blocked_socket", blocked);
	free(t);
	json_object_set_new(p, "stacks", json_null());
	json_object_set_new(p, "stacks_how", json_string("none"));
	json_object_set_new(p, "stacks_note", json_string(""));
	return p;
}

/* A process taken for a rank by its node's variables alone (NODE_RANK,
 * WORLD_SIZE: what `clusterdoc run` gives the command it starts) whose
 * child names its own rank (RANK, OMPI_COMM_WORLD_RANK) starts ranks: it is
 * their launcher, whatever its command line (a wrapper of torchrun or
 * mpirun, torch.distributed.launch, a script that spawns its ranks). */
static void mark_launchers(json_t *procs)
{
	size_t i, j;
	json_t *p, *q;

	json_array_foreach(procs, i, p)
	{
		if (strcmp(json_string_value(json_object_get(p, "role")), "rank") != 0 ||
		    json_is_true(json_object_get(p, "_explicit")))
			continue;
		json_array_foreach(procs, j, q)
		{
			if (i != j &&
			    json_integer_value(json_object_get(q, "ppid")) ==
			        json_integer_value(json_object_get(p, "pid")) &&
			    json_is_true(json_object_get(q, "_explicit"))) {
				json_object_set_new(p, "role", json_string("launcher"));
				json_object_set_new(p, "rank", json_integer(-1));
				json_object_set(p, "launcher", json_object_get(p, "comm"));
				break;
			}
		}
	}
}

/* DataLoader workers and other children of a rank carry its RANK. */
static void mark_children(json_t *procs)
{
	size_t i, j;
	json_t *p, *q;

	json_array_foreach(procs, i, p)
	{
		json_array_foreach(procs, j, q)
		{
			if (i != j &&
			    json_integer_value(json_object_get(p, "ppid")) ==
			        json_integer_value(json_object_get(q, "pid")) &&
			    !strcmp(json_string_value(json_object_get(q, "role")), "rank") &&
			    json_integer_value(json_object_get(p, "rank")) ==
			        json_integer_value(json_object_get(q, "rank")))
				json_object_set_new(p, "role", json_string("child"));
		}
	}
}

json_t *hang_agent_sample(json_t *req, const char **code, char *msg, size_t msglen)
{
	const char *run = json_string_value(json_object_get(req, "run"));
	int stacks = json_is_true(json_object_get(req, "stacks"));
	long long wait_ms = 1000;
	json_t *procs = json_array(), *denied = json_array(), *out, *nccl;
	char host[256] = "", me_name[64], pyspy[512];
	uid_t me = getuid();
	DIR *d;
	struct dirent *e;
	int truncated = 0, vanished = 0, other_netns = 0,
	    have_pyspy = hang_agent_find_pyspy(pyspy, sizeof(pyspy));
	char self_ns[64] = "";
	ssize_t nsl = readlink("/proc/self/ns/net", self_ns, sizeof(self_ns) - 1);

	if (run && (!*run || strlen(run) > 64)) {
		*code = "bad_request";
		snprintf(msg, msglen, "\"run\" must be a run id");
		goto fail;
	}
	if (json_object_get(req, "stack_wait_ms") &&
	    proto_field_int(req, "stack_wait_ms", 0, 5000, &wait_ms) < 0) {
		*code = "bad_request";
		snprintf(msg, msglen, "\"stack_wait_ms\" must be 0..5000");
		goto fail;
	}
	self_ns[nsl > 0 ? nsl : 0] = '\0';
	d = opendir("/proc");
	if (!d) {
		*code = "io";
		snprintf(msg, msglen, "cannot read /proc: %s", strerror(errno));
		goto fail;
	}
	while ((e = readdir(d))) {
		char path[64], *env = NULL, err[CD_ERRLEN];
		struct procscan_stat st;
		struct procscan_rank r;
		struct stat sb;
		size_t len = 0;
		long pid;
		int kind, rc;
		enum procscan_launcher launcher = PROCSCAN_NOT_LAUNCHER;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = atol(e->d_name);
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &sb) < 0 || is_self_line(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_stat(path, &st) < 0)
			continue;
		if (me != 0 && sb.st_uid != me) {
			char cmdline[CMDLINE_CAP], uname[64];

			snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
			scan_read_flat(path, SMALL_CAP, cmdline, sizeof(cmdline));
			if (!looks_like_torch(st.comm, cmdline) ||
			    json_array_size(denied) >= HANG_AGENT_MAX_DENIED)
				continue;
			user_name(sb.st_uid, uname, sizeof(uname));
			json_array_append_new(denied,
			                      json_pack("{sIsIssssssss}", "pid", (json_int_t)pid,
			                                "uid", (json_int_t)sb.st_uid, "user", uname,
			                                "comm", st.comm, "cmdline", cmdline, "need",
			                                "its environment and fds are readable only "
			                                "by its owner: inspect as "
			                                "that user (-l USER) or as root"));
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		rc = scan_read_file(path, ENVIRON_CAP, SCAN_FILE_TO_EOF, &env, &len, err,
		                    sizeof(err));
		if (rc < 0)
			continue;
		kind = procscan_environ_rank(env, len, &r);
		free(env);
		if (kind)
			launcher = read_launcher(pid);
		if (!kind || (run && strcmp(r.clusterdoc_run, run) != 0))
			continue;
		if (!same_netns(pid, self_ns)) {
			other_netns++;
			continue;
		}
		if (json_array_size(procs) >= HANG_AGENT_MAX_PROCS) {
			truncated = 1;
			continue;
		}
		{
			json_t *p = read_process(pid, &st, &r, kind, launcher);
			char again[64];

			/* gone while it was read: its threads and fds may be half there */
			snprintf(again, sizeof(again), "/proc/%ld/stat", pid);
			if (access(again, R_OK) < 0) {
				json_decref(p);
				vanished++;
				continue;
			}
			json_object_set_new(p, "_pythonpath", json_string(r.pythonpath));
			json_object_set_new(p, "_ras_addr", json_string(r.nccl_ras_addr));
			json_object_set_new(p, "_fr_pipe", json_string(r.fr_pipe));
			json_object_set_new(p, "_fr_temp", json_string(r.fr_temp));
			json_array_append_new(procs, p);
		}
	}
	closedir(d);
	mark_launchers(procs);
	mark_children(procs);
	if (stacks)
		hang_agent_collect_stacks(procs, have_pyspy ? pyspy : NULL, (int)wait_ms);
	nccl = json_object();
	hang_agent_gpus(nccl, procs);
	hang_agent_nccl(nccl, procs, json_is_true(json_object_get(req, "flight_recorder")));
	{
		size_t i;
		json_t *p;

		json_array_foreach(procs, i, p)
		{
			json_object_del(p, "_pythonpath");
			json_object_del(p, "_ras_addr");
			json_object_del(p, "_fr_pipe");
			json_object_del(p, "_fr_temp");
			json_object_del(p, "_explicit");
		}
	}
	gethostname(host, sizeof(host) - 1);
	out = json_pack("{sssssIsIsoso}", "host", host, "user",
	                user_name(me, me_name, sizeof(me_name)), "uid", (json_int_t)me, "clk_tck",
	                (json_int_t)sysconf(_SC_CLK_TCK), "processes", procs, "denied", denied);
	json_object_set_new(
	    out, "searched",
	    run ? json_sprintf("processes with CLUSTERDOC_RUN=%s in their environment", run)
	        : json_sprintf("processes of %s with RANK, LOCAL_RANK, WORLD_SIZE, "
	                       "NODE_RANK and NNODES, OMPI_COMM_WORLD_RANK or "
	                       "TORCHELASTIC_* in their environment",
	                       me == 0 ? "every user" : me_name));
	json_object_set_new(out, "pyspy", have_pyspy ? json_string(pyspy) : json_null());
	json_object_set_new(out, "truncated", json_boolean(truncated));
	json_object_set_new(out, "vanished", json_integer(vanished));
	json_object_set_new(out, "other_netns", json_integer(other_netns));
	json_object_update(out, nccl);
	json_decref(nccl);
	return out;
fail:
	json_decref(procs);
	json_decref(denied);
	return NULL;
}
