/* SPDX-License-Identifier: MIT */
/*
 * agent.c - clusterdoc-agent: runs on every node, started over SSH (or
 * fork/exec for localhost), and answers the head's requests on stdin/stdout
 * (docs/protocol.md). Its only dynamic dependency is libc.
 *
 * Requests are served one at a time, in order. Each request type is one
 * entry of `handlers`; adding a request means adding a row there.
 */
#include "cd.h"
#include "buf.h"
#include "elfnote.h"
#include "filerecv.h"
#include "fixers/nodefile.h"
#include "fixers/noderun.h"
#include "job.h"
#include "job_process.h"
#include "proto.h"
#include "sha256.h"
#include "collectives/bench_agent.h"
#include "collectives/gpuburn_agent.h"
#include "jobs/mnist_agent.h"
#include "jobs/rdzv_agent.h"
#include "jobs/run_agent.h"
#include "jobs/run_trust.h"
#include "jobs/runsync.h"
#include "probes/ascend_agent.h"
#include "probes/dcgm_agent.h"
#include "probes/facts.h"
#include "hang/hang_agent.h"
#include "probes/netprobe.h"
#include "probes/peerssh.h"
#include "probes/reach.h"
#include "agent/connect_back.h"
#include "child.h"

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define AGENT_VERSION "0.1.0"

/* The head's keepalive (hello's "keepalive_ms"): silence past this many
 * intervals means the head is not running, even without an EOF: stopped
 * (kill -STOP, a suspended laptop), cut off by a partition, or killed with
 * its TCP connection open. The first two may come back, so the agent then
 * waits hello's "head_grace_ms" more before it ends (docs/protocol.md). */
#define SILENCE_INTERVALS 6
#define SILENCE_MIN_MS    1000
#define STDIN_QUEUE_MAX   (2 * PROTO_MAX_LINE)
#define STDIN_POLL_MS     250
/* The longest hold the head may ask for (a person answering a question, a
 * head suspended with Ctrl-Z). */
#define KEEPALIVE_HOLD_MAX_MS (60 * 60 * 1000)
/* The longest grace a head may ask for in hello (a silent head's job runs
 * on that long). */
#define HEAD_GRACE_MAX_MS (24 * 60 * 60 * 1000)

/*
 * stdin is read by its own thread, so that silence is seen while a long
 * request (bench_run, a ring of minutes) keeps the serving thread busy. The
 * thread moves bytes into `q`; serve takes them from there. When the head
 * asked for keepalives and nothing came for silence_ms plus the head's grace,
 * the thread ends the agent at once: the programs it runs are killed, their
 * groups whole (child_kill_all), _exit closes every ring socket and
 * listener, and the jobs' reapers (PR_SET_PDEATHSIG) kill what they run. An
 * EOF ends the agent at once, grace or not: the head is gone for sure.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct buf q;
	int eof; /* EOF or a read error: nothing more will come */
	int fd;
	int64_t last_heard;
	atomic_int silence_ms;   /* 0: the head sends no keepalives; never exit on silence */
	atomic_int grace_ms;     /* hello's head_grace_ms: more silence allowed after silence_ms */
	atomic_llong hold_until; /* cd_now_ms() before which silence is allowed (a hold) */
} in_rd = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void silence_exit(int64_t quiet_ms)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "clusterdoc-agent: nothing from the head for %lld ms (keepalives every "
	                 "%d ms stopped; %d ms of grace for a stopped head ran out): exiting\n",
	                 (long long)quiet_ms, atomic_load(&in_rd.silence_ms) / SILENCE_INTERVALS,
	                 atomic_load(&in_rd.grace_ms));

	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing more to tell anyone */
	}
	filerecv_remove_parts(); /* a put the head never finished */
	child_kill_all();        /* dcgmi, Python probes: their groups die with the agent */
	_exit(3);
}

static void *stdin_reader(void *arg)
{
	char chunk[65536];

	(void)arg;
	for (;;) {
		struct pollfd p = {.fd = in_rd.fd, .events = POLLIN};
		int silence = atomic_load(&in_rd.silence_ms);
		int64_t bound = (int64_t)silence + atomic_load(&in_rd.grace_ms);
		int64_t now = cd_now_ms();
		ssize_t n;

		pthread_mutex_lock(&in_rd.mu);
		if (silence > 0 && now - in_rd.last_heard > bound &&
		    now >= atomic_load(&in_rd.hold_until))
			silence_exit(now - in_rd.last_heard);
		if (in_rd.q.len + sizeof(chunk) > in_rd.q.max) {
			/* bytes wait to be served: the head is not silent */
			in_rd.last_heard = now;
			pthread_cond_wait(&in_rd.cv, &in_rd.mu);
			pthread_mutex_unlock(&in_rd.mu);
			continue;
		}
		pthread_mutex_unlock(&in_rd.mu);
		if (poll(&p, 1, STDIN_POLL_MS) <= 0)
			continue;
		do
			n = read(in_rd.fd, chunk, sizeof(chunk));
		while (n < 0 && errno == EINTR);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		pthread_mutex_lock(&in_rd.mu);
		if (n > 0) {
			buf_append(&in_rd.q, chunk, (size_t)n); /* room was checked */
			in_rd.last_heard = cd_now_ms();
		} else {
			in_rd.eof = 1;
		}
		pthread_cond_broadcast(&in_rd.cv);
		pthread_mutex_unlock(&in_rd.mu);
		if (n <= 0)
			return NULL;
	}
}

static int stdin_reader_start(int fd)
{
	pthread_t t;

	buf_init(&in_rd.q, STDIN_QUEUE_MAX);
	in_rd.fd = fd;
	in_rd.last_heard = cd_now_ms();
	if (pthread_create(&t, NULL, stdin_reader, NULL) != 0)
		return -1;
	pthread_detach(t);
	return 0;
}

/* What buf_read_fd answers, from the reader's queue: waits for bytes.
 * > 0 moved into in, 0 at EOF or after a read error (the head is gone
 * either way), CD_ERR_TOOBIG when in is full. */
static ssize_t stdin_take(struct buf *in)
{
	ssize_t n;
	size_t room;

	if (in->len >= in->max)
		return CD_ERR_TOOBIG;
	pthread_mutex_lock(&in_rd.mu);
	while (!in_rd.q.len && !in_rd.eof)
		pthread_cond_wait(&in_rd.cv, &in_rd.mu);
	room = in->max - in->len;
	n = (ssize_t)(in_rd.q.len < room ? in_rd.q.len : room);
	if (n > 0) {
		buf_append(in, in_rd.q.data, (size_t)n);
		buf_consume(&in_rd.q, (size_t)n);
		pthread_cond_broadcast(&in_rd.cv);
	}
	pthread_mutex_unlock(&in_rd.mu);
	return n;
}

struct agent {
	int said_hello;  /* no request but hello is served before a good hello */
	int one_request; /* --one-request: only the rows marked as_root */
	int quit;
	/* where responses go, for the progress of the request being served */
	struct buf *out;
	int out_fd;
	long long serving; /* the id of that request */
	int out_broken;    /* a write to out_fd failed: send nothing more */
};

/* A handler returns the result object (new reference), or NULL with a code
 * and message set for an error response. */
typedef json_t *(*agent_handler)(struct agent *a, json_t *req, const char **code, char *msg,
                                 size_t msglen);

/* The GNU build id of the running executable, read from its own PT_NOTE
 * in memory (no file is read): what hello reports so that the head can tell
 * the cached copy is the build it expects without hashing it. */
static int note_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	const int big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);

		if (ph->p_type == PT_NOTE && elfnote_build_id(p, ph->p_memsz, big, arg))
			break;
	}
	return 1; /* the first object is the executable itself */
}

/* hello's "head_grace_ms": how long past silence_ms a silent head (stopped
 * or cut off, not gone: that is an EOF) keeps its jobs running. Capped at
 * HEAD_GRACE_MAX_MS; the result says what the agent took. */
static void hello_grace(json_t *req, json_t *r)
{
	json_t *v = json_object_get(req, "head_grace_ms");
	long long g = json_is_integer(v) ? json_integer_value(v) : 0;

	if (g < 0)
		g = 0;
	if (g > HEAD_GRACE_MAX_MS)
		g = HEAD_GRACE_MAX_MS;
	atomic_store(&in_rd.grace_ms, (int)g);
	json_object_set_new(r, "head_grace_ms", json_integer(g));
}

/*
 * hello: the protocol check, and who this agent is. "build_id" is always
 * there (cheap); "sha256" of the file only when the head asks ("verify":
 * true), for an agent built without a build id. Hashing our own 1 MB file
 * on every start would put a few milliseconds on every warm run.
 */
static json_t *handle_hello(struct agent *a, json_t *req, const char **code, char *msg,
                            size_t msglen)
{
	json_t *want = json_object_get(req, "protocol"), *v;
	char hex[SHA256_HEX_LEN] = "", build_id[ELF_BUILD_ID_HEX] = "", host[256] = "";
	struct utsname u;
	json_t *r;

	if (!json_is_integer(want) || json_integer_value(want) != PROTO_VERSION) {
		*code = "protocol-mismatch";
		snprintf(msg, msglen, "this agent speaks protocol %d; the head asked for %s",
		         PROTO_VERSION, json_is_integer(want) ? "another version" : "no version");
		return NULL;
	}
	dl_iterate_phdr(note_cb, build_id);
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	a->said_hello = 1;
	r = json_pack("{sisssssssssI}", "protocol", PROTO_VERSION, "agent_version", AGENT_VERSION,
	              "build_id", build_id, "arch", u.machine, "hostname", host, "pid",
	              (json_int_t)getpid());
	if (json_is_integer(v = json_object_get(req, "keepalive_ms")) &&
	    json_integer_value(v) > 0 && json_integer_value(v) <= 3600000) {
		int k = (int)json_integer_value(v);

		atomic_store(&in_rd.silence_ms, k * SILENCE_INTERVALS > SILENCE_MIN_MS
		                                    ? k * SILENCE_INTERVALS
		                                    : SILENCE_MIN_MS);
		json_object_set_new(r, "keepalive_ms", json_integer(k));
		json_object_set_new(r, "silence_ms", json_integer(atomic_load(&in_rd.silence_ms)));
		hello_grace(req, r);
	}
	if (json_is_true(json_object_get(req, "verify"))) {
		if (sha256_file_hex("/proc/self/exe", hex, msg, msglen) < 0)
			snprintf(hex, sizeof(hex), "unknown");
		json_object_set_new(r, "sha256", json_string(hex));
	}
	return r;
}

static json_t *handle_facts(struct agent *a, json_t *req, const char **code, char *msg,
                            size_t msglen)
{
	struct facts_opts o;
	json_t *v;

	facts_opts_init(&o);
	if (json_is_integer(v = json_object_get(req, "python_timeout_ms")))
		o.python_timeout_ms = (int)json_integer_value(v);
	if (json_is_boolean(v = json_object_get(req, "no_cache")))
		o.no_cache = json_is_true(v);
	if (json_is_string(v = json_object_get(req, "python")))
		o.python = json_string_value(v);
	return facts_collect(&o);
}

static json_t *handle_netprobe(struct agent *a, json_t *req, const char **code, char *msg,
                               size_t msglen)
{
	struct netprobe_opts o;

	netprobe_opts_init(&o);
	o.no_firewall = json_is_true(json_object_get(req, "no_firewall"));
	return netprobe_collect(&o);
}

static json_t *handle_route(struct agent *a, json_t *req, const char **code, char *msg,
                            size_t msglen)
{
	json_t *routes = netprobe_routes(json_object_get(req, "pairs"), msg, msglen);

	if (!routes) {
		*code = "bad-request";
		return NULL;
	}
	return json_pack("{so}", "routes", routes);
}

static json_t *handle_exit(struct agent *a, json_t *req, const char **code, char *msg,
                           size_t msglen)
{
	a->quit = 1;
	return json_object();
}

/* A request that needs nothing of the agent's own state. */
typedef json_t *(*plain_handler)(json_t *req, const char **code, char *msg, size_t msglen);

static const struct {
	const char *type;
	agent_handler handle; /* one of the two is set */
	plain_handler plain;
	int as_root; /* served by --one-request, the agent's re-execution under sudo */
} handlers[] = {
    {.type = "hello", .handle = handle_hello},
    {.type = "facts", .handle = handle_facts},
    {.type = "netprobe", .handle = handle_netprobe},
    {.type = "route", .handle = handle_route},
    {.type = "listen", .plain = reach_listen},
    {.type = "connect", .plain = reach_connect},
    {.type = "unlisten", .plain = reach_unlisten},
    {.type = "bench_caps", .plain = bench_caps},
    {.type = "bench_listen", .plain = bench_listen},
    {.type = "bench_nccl_id", .plain = bench_nccl_id},
    {.type = "bench_run", .plain = bench_run},
    {.type = "file_stat", .plain = filerecv_stat},
    {.type = "file_put", .plain = filerecv_put},
    {.type = "file_commit", .plain = filerecv_commit},
    {.type = "proc_start", .plain = job_process_start},
    {.type = "mnist_start", .plain = mnist_agent_start},
    {.type = "run_orphans", .plain = run_agent_orphans},
    {.type = "rdzv_state", .plain = rdzv_agent_state},
    {.type = "hang_sample", .plain = hang_agent_sample},
    {.type = "gpu_burn", .plain = gpuburn_agent_run},
    {.type = "dcgm_diag", .plain = dcgm_agent_diag},
    {.type = "ascend_probe", .plain = ascend_agent_probe},
    {.type = "ascend_netdetect", .plain = ascend_agent_netdetect},
    {.type = "sync_missing", .plain = runsync_agent_missing},
    {.type = "sync_tree", .plain = runsync_agent_tree},
    {.type = "dir_trust", .plain = run_trust_agent_check},
    {.type = "job_poll", .plain = job_poll},
    {.type = "job_stop", .plain = job_stop},
    {.type = "whoami", .plain = nodefile_whoami},
    {.type = "file_read", .plain = nodefile_read, .as_root = 1},
    {.type = "file_write", .plain = nodefile_write, .as_root = 1},
    {.type = "run", .plain = noderun_run, .as_root = 1},
    {.type = "peer_ssh", .plain = peerssh_agent_run},
    {.type = "exit", .handle = handle_exit},
};

/* Write all of out to fd (blocking: stdout is the SSH channel). */
static int flush_out(struct buf *out, int fd)
{
	while (out->len) {
		ssize_t n = write(fd, out->data, out->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf_consume(out, (size_t)n);
	}
	return 0;
}

/* The progress emitter (proto.h) of a request that asked for progress:
 * each line goes out at once, as the handler is still running. */
static void emit_progress(json_t *progress_take, void *arg)
{
	struct agent *a = arg;
	json_t *msg = proto_progress(a->serving, progress_take);
	char err[CD_ERRLEN];

	if (!a->out_broken && proto_write(a->out, msg, err, sizeof(err)) == 0 &&
	    flush_out(a->out, a->out_fd) < 0)
		a->out_broken = 1;
	json_decref(msg);
}

/* Call handler row i for req, with the progress emitter installed when the
 * request asked for progress (never under --one-request: it has no head). */
static json_t *call_handler(struct agent *a, size_t i, json_t *req, const char **code, char *msg,
                            size_t msglen)
{
	json_t *result;

	if (a->out && !a->one_request && json_is_true(json_object_get(req, "progress"))) {
		a->serving = json_integer_value(json_object_get(req, "id"));
		proto_progress_install(emit_progress, a);
	}
	result = handlers[i].plain ? handlers[i].plain(req, code, msg, msglen)
	                           : handlers[i].handle(a, req, code, msg, msglen);
	proto_progress_install(NULL, NULL);
	return result;
}

static json_t *dispatch(struct agent *a, json_t *req)
{
	long long id = json_integer_value(json_object_get(req, "id"));
	const char *type = json_string_value(json_object_get(req, "type"));
	const char *code = "failed";
	char msg[CD_ERRLEN] = "";
	json_t *result;

	if (!type)
		return proto_fail(id, "bad-request", "request without a \"type\"");
	for (size_t i = 0; i < CD_ARRAY_LEN(handlers); i++) {
		if (strcmp(handlers[i].type, type) != 0)
			continue;
		if (!a->said_hello && handlers[i].handle != handle_hello)
			return proto_fail(id, "no-hello", "the first request must be hello");
		if (a->one_request && !handlers[i].as_root)
			return proto_fail(
			    id, "bad-request",
			    "--one-request serves only file_read, file_write and run");
		/* Already under sudo: asking for it again could only loop. */
		if (a->one_request)
			json_object_del(req, "sudo");
		result = call_handler(a, i, req, &code, msg, sizeof(msg));
		return result ? proto_ok(id, result) : proto_fail(id, code, msg);
	}
	snprintf(msg, sizeof(msg), "unknown request type \"%.64s\"", type);
	return proto_fail(id, "unknown-type", msg);
}

/* {"type": "keepalive"}: the head is alive. No response (docs/protocol.md).
 * "hold_ms": the head may be silent that long (it waits for its user); an
 * ordinary keepalive ends the hold. */
static int is_keepalive(json_t *req)
{
	const char *type = json_string_value(json_object_get(req, "type"));
	json_t *hold = json_object_get(req, "hold_ms");
	long long ms = json_is_integer(hold) ? json_integer_value(hold) : 0;

	if (!type || strcmp(type, "keepalive") != 0)
		return 0;
	if (ms < 0 || ms > KEEPALIVE_HOLD_MAX_MS)
		ms = ms < 0 ? 0 : KEEPALIVE_HOLD_MAX_MS;
	atomic_store(&in_rd.hold_until, ms ? (long long)cd_now_ms() + ms : 0);
	return 1;
}

static int serve(int in_fd, int out_fd)
{
	struct agent a = {0};
	struct buf in, out;
	char err[CD_ERRLEN];
	json_t *req, *resp;
	int rc = 0;

	buf_init(&in, PROTO_MAX_LINE);
	buf_init(&out, 4 * PROTO_MAX_LINE);
	a.out = &out;
	a.out_fd = out_fd;
	if (stdin_reader_start(in_fd) < 0) {
		fprintf(stderr, "clusterdoc-agent: cannot start the stdin reader\n");
		rc = 1;
		a.quit = 1;
	}
	while (!a.quit) {
		int got = proto_next(&in, &req, err, sizeof(err));

		if (got == CD_ERR_TOOBIG) {
			fprintf(stderr, "clusterdoc-agent: %s from the head\n", err);
			rc = 1;
			break;
		}
		if (got < 0) {
			/* A malformed line gets an error response with id 0: the
			 * head cannot know which request it was meant to be. */
			resp = proto_fail(0, "bad-request", err);
		} else if (got == 1 && is_keepalive(req)) {
			json_decref(req); /* heard (the reader noted it); never answered */
			continue;
		} else if (got == 1) {
			resp = dispatch(&a, req);
			json_decref(req);
		} else {
			ssize_t n = stdin_take(&in);

			if (n == 0)
				break; /* the head closed our stdin: done */
			if (n < 0 && n != CD_ERR_AGAIN && n != CD_ERR_TOOBIG) {
				rc = 1;
				break;
			}
			continue;
		}
		if (proto_write(&out, resp, err, sizeof(err)) < 0) {
			json_decref(resp);
			resp = proto_fail(0, "too-big", err);
			proto_write(&out, resp, err, sizeof(err));
		}
		json_decref(resp);
		if (a.out_broken || flush_out(&out, out_fd) < 0) {
			rc = 1;
			break;
		}
	}
	filerecv_remove_parts(); /* a put the head never finished */
	buf_fini(&in);
	buf_fini(&out);
	return rc;
}

/*
 * --one-request: the agent re-executed under sudo by a fixer request
 * (fixers/nodefile.h). One request line on stdin, no hello, one response
 * line on stdout, exit 0 whatever the answer.
 */
static int serve_one(int in_fd, int out_fd)
{
	struct agent a = {.said_hello = 1, .one_request = 1};
	struct buf in, out;
	char err[CD_ERRLEN] = "no request line on stdin";
	json_t *req = NULL, *resp;
	int got = 0;

	buf_init(&in, PROTO_MAX_LINE);
	buf_init(&out, 2 * PROTO_MAX_LINE);
	while ((got = proto_next(&in, &req, err, sizeof(err))) == 0) {
		ssize_t n = buf_read_fd(&in, in_fd);

		if (n == 0 || (n < 0 && n != CD_ERR_AGAIN)) {
			snprintf(err, sizeof(err), "no complete request line on stdin");
			break;
		}
	}
	if (got == 1) {
		resp = dispatch(&a, req);
		json_decref(req);
	} else {
		resp = proto_fail(0, "bad-request", err);
	}
	if (proto_write(&out, resp, err, sizeof(err)) < 0) {
		json_decref(resp);
		resp = proto_fail(0, "too-big", err);
		proto_write(&out, resp, err, sizeof(err));
	}
	json_decref(resp);
	flush_out(&out, out_fd);
	buf_fini(&in);
	buf_fini(&out);
	return 0;
}

/*
 * SIGTERM, SIGHUP or SIGINT (the head ending a local agent, srun passing on
 * its own, Ctrl-C on the terminal of `check --local`): first kill what the
 * agent started in process groups of its own (dcgmi, the Python probes),
 * which a signal to the agent alone does not reach and which would
 * otherwise run on with PID 1 as their parent; then die of the signal.
 * Jobs end through their reapers' PR_SET_PDEATHSIG. A process forked from
 * the agent that did not set its own handler only dies.
 */
static pid_t agent_pid;

static void on_end_signal(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	if (getpid() == agent_pid)
		child_kill_all();
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void end_signals_catch(void)
{
	static const int sigs[] = {SIGTERM, SIGHUP, SIGINT};
	struct sigaction sa = {.sa_handler = on_end_signal};

	agent_pid = getpid();
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < CD_ARRAY_LEN(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void usage(FILE *f)
{
	fputs(
	    "usage: clusterdoc-agent [--stdio | --connect HOST:PORT | --one-request | --version]\n"
	    "Serves clusterdoc's agent protocol on stdin/stdout; started by clusterdoc.\n"
	    "--connect connects back to the head instead (started by a launcher such as\n"
	    "srun; the node's key comes in $CLUSTERDOC_BACK_KEY, or the run's secret,\n"
	    "from which it is derived, in $CLUSTERDOC_BACK_SECRET).\n"
	    "--one-request answers one file_read, file_write or run request line (the\n"
	    "agent runs itself so under sudo for clusterdoc fix).\n",
	    f);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("clusterdoc-agent %s (protocol %d)\n", AGENT_VERSION, PROTO_VERSION);
		return 0;
	}
	end_signals_catch();
	if (argc > 1 && strcmp(argv[1], "--one-request") == 0)
		return serve_one(STDIN_FILENO, STDOUT_FILENO);
	/* --connect HOST:PORT: connect back to the head, then serve as --stdio */
	if (argc == 3 && strcmp(argv[1], "--connect") == 0) {
		if (agent_connect_back(argv[2]) < 0)
			return 1;
	} else if (argc > 1 && strcmp(argv[1], "--stdio") != 0) {
		usage(stderr);
		return 2;
	}
	int rc = serve(STDIN_FILENO, STDOUT_FILENO);

	job_shutdown();
	reach_shutdown();
	bench_shutdown();
	return rc;
}
