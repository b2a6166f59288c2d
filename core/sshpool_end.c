/* SPDX-License-Identifier: MIT */
/*
 * sshpool_end.c - ending a node whose agent stopped answering
 * (sshpool.h: sshpool_node_end), through a fresh SSH session.
 *
 * An agent that misses a deadline may be stopped (SIGSTOP, a debugger), so
 * wedged that it reads nothing, or cut off from the head. A stopped agent
 * cannot end its job: the job's reaper waits for it (its PDEATHSIG fires
 * only when the agent dies) and its silence bound does not run while it is
 * stopped, so closing its session leaves the job running without bound.
 * The fresh session both re-tests the path (a partition shows as a fresh
 * connection that times out) and ends exactly the processes the head knows:
 * the agent's pid from its hello and the job's session and process group
 * from its start answer, never a name or a pattern.
 */
#include "sshpool_internal.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END_CONNECT_MAX_MS  5000 /* a fresh connection gets at most this (the re-test) */
#define END_SCRIPT_SLACK_MS 8000 /* the script's own waits past the grace, and its login */
#define END_GRACE_MIN_MS    1000 /* from SIGTERM to SIGKILL when no job said its own */
#define END_OUT_MAX         (16 * 1024)

enum end_phase { END_CONNECTING, END_LOGGING_IN, END_RUNNING };

struct pool_end {
	struct conn conn;
	int conn_started;
	uint64_t timer;
	enum end_phase phase;
	int connect_ms; /* the fresh connection's deadline */
	char why[CD_ERRLEN / 2];
	char late[96]; /* the head's own lag at the deadline, or "" */
};

/*
 * The script the fresh session runs, after "a=AGENT r=SESSION g=GROUP
 * t=GRACE_TENTHS": it says the agent's state and the job's processes (those
 * of process group g or session r, zombies aside), continues them, sends
 * SIGTERM, SIGKILL after the grace to what is left, waits up to 3 s and
 * says what is still there. Only shell builtins in the loops (no fork per
 * process); one line, no single quote: it runs inside sh -c '...' from
 * whatever login shell the user has, as the bootstrap does.
 */
static const char end_script[] =
    "st() { read -r l 2>/dev/null </proc/$1/stat || return 0; l=${l##*\") \"}; s=${l%% *};"
    " [ \"$s\" = Z ] || echo \"$s\"; }; "
    "mem() { for f in /proc/[0-9]*/stat; do read -r l 2>/dev/null <$f || continue;"
    " l=${l##*\") \"}; set -- $l; [ \"$1\" = Z ] && continue;"
    " if { [ $g -gt 0 ] && [ \"$3\" = $g ]; } || { [ $r -gt 0 ] && [ \"$4\" = $r ]; }; then"
    " p=${f%/stat}; echo ${p#/proc/}; fi; done; }; "
    "left() { x=$(mem); [ $a -gt 0 ] && [ -n \"$(st $a)\" ] && x=\"$a $x\"; echo $x; }; "
    "[ $a -gt 0 ] && echo \"CDEND agent $(st $a)\"; "
    "j=$(mem); echo CDEND job $j; "
    "[ $a -gt 0 ] && kill -CONT $a 2>/dev/null; "
    "[ -n \"$j\" ] && kill -CONT $j 2>/dev/null; "
    "[ -n \"$j\" ] && kill -TERM $j 2>/dev/null; "
    "[ $a -gt 0 ] && kill -TERM $a 2>/dev/null; "
    "i=0; while [ $i -lt $t ] && [ -n \"$(left)\" ]; do sleep 0.1; i=$((i+1)); done; "
    "x=$(left); [ -n \"$x\" ] && kill -KILL $x 2>/dev/null; "
    "i=0; while [ $i -lt 30 ] && [ -n \"$(left)\" ]; do sleep 0.1; i=$((i+1)); done; "
    "echo CDEND left $(left); "
    "echo CDEND end";

char *pool_end_command(long long agent, long long session, long long group, int grace_ms)
{
	/* only numbers go in: nothing from the node reaches the shell as text */
	return cd_asprintf("exec /bin/sh -c 'a=%lld r=%lld g=%lld t=%d; %s'", agent, session, group,
	                   (grace_ms > 0 ? grace_ms : END_GRACE_MIN_MS) / 100, end_script);
}

/* Copy the rest of the line after prefix (at most len - 1 bytes) into dst. */
static void copy_rest(char *dst, size_t len, const char *line, size_t line_len, size_t prefix)
{
	size_t n = line_len > prefix ? line_len - prefix : 0;

	if (n >= len)
		n = len - 1;
	memcpy(dst, line + prefix, n);
	dst[n] = 0;
}

int pool_end_parse(const char *text, size_t len, struct pool_end_found *f)
{
	static const char agent[] = "CDEND agent", job[] = "CDEND job", left[] = "CDEND left",
	                  end[] = "CDEND end";
	const char *p = text, *stop = text + len;

	memset(f, 0, sizeof(*f));
	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(stop - p);

		if (n >= sizeof(agent) - 1 && memcmp(p, agent, sizeof(agent) - 1) == 0) {
			f->have_agent = 1;
			copy_rest(f->agent_state, sizeof(f->agent_state), p, n, sizeof(agent));
		} else if (n >= sizeof(job) - 1 && memcmp(p, job, sizeof(job) - 1) == 0) {
			copy_rest(f->job, sizeof(f->job), p, n, sizeof(job));
		} else if (n >= sizeof(left) - 1 && memcmp(p, left, sizeof(left) - 1) == 0) {
			copy_rest(f->left, sizeof(f->left), p, n, sizeof(left));
		} else if (n == sizeof(end) - 1 && memcmp(p, end, n) == 0) {
			f->complete = 1;
		}
		p += n + (nl != NULL);
	}
	return f->complete ? 0 : CD_ERR_PARSE;
}

/* ------------------------------------------------------------ the finding */

/* "its job (process group 812) and its agent (pid 790)": what the head ends. */
static void say_targets(const struct sshpool_node *node, long long agent, char *dst, size_t len)
{
	char job[64] = "";

	if (node->job_pgid > 0)
		snprintf(job, sizeof(job), "its job (process group %lld)", node->job_pgid);
	else if (node->job_pid > 0)
		snprintf(job, sizeof(job), "its job (session %lld)", node->job_pid);
	if (job[0] && agent > 0)
		snprintf(dst, len, "%s and its agent (pid %lld)", job, agent);
	else if (agent > 0)
		snprintf(dst, len, "its agent (pid %lld)", agent);
	else
		snprintf(dst, len, "%s", job[0] ? job : "nothing it knew of");
}

/* "...: its job may still run there until its agent's own bound ends it,
 * 330 s ...": the silence bound plus the head's grace, as its hello said.
 * A node that started no job (a check, facts) has only its agent there. */
static void say_may_run(const struct sshpool_node *node, char *dst, size_t len)
{
	json_t *silence = json_object_get(node->hello, "silence_ms");
	long long grace = json_integer_value(json_object_get(node->hello, "head_grace_ms"));
	const char *what = node->job_pgid > 0 || node->job_pid > 0 ? "its job" : "its agent";

	if (json_is_integer(silence) && json_integer_value(silence) > 0)
		snprintf(
		    dst, len,
		    "%s may still run there until the agent's own bound ends it, %lld s "
		    "after the last keepalive it heard%s (a stopped agent's bound waits until "
		    "it runs again)",
		    what,
		    (long long)((json_integer_value(silence) + (grace > 0 ? grace : 0)) / 1000),
		    grace > 0 ? ", --head-grace included" : "");
	else
		snprintf(dst, len,
		         "%s may still run there: its agent has no bound on the head's "
		         "silence",
		         what);
}

struct end_outcome {
	const char *code; /* the node's failure code */
	char finding[CD_ERRLEN + 256];
	char ended[CD_ERRLEN + 256]; /* sshpool_node_ended */
};

static void outcome_not_reached(struct sshpool_node *node, const char *how, struct end_outcome *o)
{
	char may[256];

	say_may_run(node, may, sizeof(may));
	snprintf(o->finding, sizeof(o->finding), "%s; %s", how, may);
	snprintf(o->ended, sizeof(o->ended),
	         "its agent stopped answering and a fresh SSH session could not reach %s: %s",
	         node->host, may);
}

static void outcome_script(struct sshpool_node *node, const struct pool_end_found *f,
                           struct end_outcome *o)
{
	long long agent = json_integer_value(json_object_get(node->hello, "pid"));
	char targets[160], state[160], left[300] = "";

	say_targets(node, agent, targets, sizeof(targets));
	if (!f->have_agent)
		snprintf(state, sizeof(state), "a fresh SSH session logged in");
	else if (!f->agent_state[0])
		snprintf(state, sizeof(state),
		         "a fresh SSH session found its agent (pid %lld) gone", agent);
	else if (f->agent_state[0] == 'T' || f->agent_state[0] == 't')
		snprintf(state, sizeof(state),
		         "a fresh SSH session found its agent (pid %lld) stopped (state %s)", agent,
		         f->agent_state);
	else
		snprintf(state, sizeof(state),
		         "a fresh SSH session found its agent (pid %lld) running (state %s): it is "
		         "overloaded or stuck, not stopped",
		         agent, f->agent_state);
	o->code = f->have_agent && (f->agent_state[0] == 'T' || f->agent_state[0] == 't')
	              ? "agent-stopped"
	              : "slow";
	if (f->left[0])
		snprintf(left, sizeof(left), "; still there after SIGKILL: pid(s) %s", f->left);
	snprintf(o->finding, sizeof(o->finding), "%s; ended %s through that session%s", state,
	         targets, left);
	snprintf(o->ended, sizeof(o->ended),
	         "its agent stopped answering; ended %s through a fresh SSH session%s", targets,
	         left);
}

/* ------------------------------------------------------------ the session */

static void end_close(struct pool_end *e)
{
	if (e->timer)
		loop_timer_cancel(e->conn.loop, e->timer);
	e->timer = 0;
	if (e->conn_started && e->conn.ops)
		e->conn.ops->close(&e->conn);
	e->conn_started = 0;
}

void pool_node_end_free(struct sshpool_node *node)
{
	struct pool_end *e = node->end;

	if (!e)
		return;
	end_close(e);
	ssh_settings_fini(&e->conn.ssh);
	buf_fini(&e->conn.in);
	buf_fini(&e->conn.out);
	buf_fini(&e->conn.errtail);
	free(e->conn.command);
	free(e->conn.proxy_jump);
	free(e->conn.proxy_command);
	free(e);
	node->end = NULL;
}

/* The end is over: record what was found and ended, and fail the node with
 * it (unless its owner closed it meanwhile). */
static void end_finish(struct sshpool_node *node, struct end_outcome *o)
{
	struct pool_end *e = node->end;
	char msg[3 * CD_ERRLEN];

	snprintf(msg, sizeof(msg), "%s: %s; %s%s", node->host, e->why, o->finding, e->late);
	free(node->ended);
	node->ended = cd_strdup(o->ended);
	pool_node_end_free(node);
	node->ending = 0;
	if (node->state == SSHPOOL_NODE_READY)
		pool_node_fail(node, o->code, "%s", msg);
}

/* Before the login: the head cannot reach the node (a timeout, or a failure
 * to connect), or it reached the port and did not log in. */
static void end_failed_early(struct sshpool_node *node, const char *detail)
{
	struct pool_end *e = node->end;
	struct end_outcome o = {.code = "unreachable"};
	char how[CD_ERRLEN / 2];

	if (e->phase == END_CONNECTING && e->conn.ops == &transport_openssh)
		snprintf(how, sizeof(how), "the head cannot reach %s any more: a fresh ssh %s",
		         node->host, detail);
	else if (e->phase == END_CONNECTING)
		snprintf(how, sizeof(how),
		         "the head cannot reach %s any more: a fresh connection to port %d %s (a "
		         "network partition or a firewall between the head and %s)",
		         node->host, e->conn.ssh.port, detail, node->host);
	else {
		o.code = "slow";
		snprintf(how, sizeof(how),
		         "a fresh SSH session reached port %d of %s but did not log in (%s)",
		         e->conn.ssh.port, node->host, detail);
	}
	outcome_not_reached(node, how, &o);
	end_finish(node, &o);
}

static void end_on_timer(struct loop *loop, void *arg)
{
	struct sshpool_node *node = arg;
	struct pool_end *e = node->end;
	char detail[128];

	e->timer = 0;
	if (e->phase == END_RUNNING) {
		struct end_outcome o = {.code = "slow"};
		char how[256];

		snprintf(how, sizeof(how),
		         "a fresh SSH session logged in but its commands to end the agent did not "
		         "finish in time");
		outcome_not_reached(node, how, &o);
		snprintf(o.ended, sizeof(o.ended),
		         "its agent stopped answering; a fresh SSH session logged in but could not "
		         "end it in time: its job may still run there");
		end_finish(node, &o);
		return;
	}
	snprintf(detail, sizeof(detail), "timed out after %d ms",
	         e->phase != END_CONNECTING ? node->pool->opts.auth_timeout_ms
	         : e->conn.ops == &transport_openssh
	             ? e->connect_ms + node->pool->opts.auth_timeout_ms
	             : e->connect_ms);
	end_failed_early(node, detail);
}

static void end_set_timer(struct sshpool_node *node, int ms)
{
	struct pool_end *e = node->end;

	if (e->timer)
		loop_timer_cancel(node->pool->loop, e->timer);
	e->timer = loop_timer_add(node->pool->loop, ms, end_on_timer, node);
}

static void end_ev_connected(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	node->end->phase = END_LOGGING_IN;
	end_set_timer(node, node->pool->opts.auth_timeout_ms);
}

static void end_ev_handshaken(struct conn *c)
{
}

static void end_ev_authenticated(struct conn *c)
{
	struct sshpool_node *node = c->owner;

	node->end->phase = END_RUNNING;
	end_set_timer(node, (node->job_grace_ms > 0 ? node->job_grace_ms : END_GRACE_MIN_MS) +
	                        END_SCRIPT_SLACK_MS);
}

static void end_ev_data(struct conn *c)
{
}

static void end_ev_closed(struct conn *c)
{
	struct sshpool_node *node = c->owner;
	struct pool_end_found f;
	struct end_outcome o = {.code = "slow"};

	if (pool_end_parse(c->in.data, c->in.len, &f) < 0) {
		char last[200], how[320];

		conn_stderr_last_line(c, last, sizeof(last));
		snprintf(how, sizeof(how),
		         "a fresh SSH session logged in but its commands to end the agent did not "
		         "finish%s%s",
		         last[0] ? ": " : "", last);
		outcome_not_reached(node, how, &o);
		end_finish(node, &o);
		return;
	}
	outcome_script(node, &f, &o);
	end_finish(node, &o);
}

static void end_ev_failed(struct conn *c, const char *code, const char *msg)
{
	struct sshpool_node *node = c->owner;
	struct pool_end *e = node->end;
	char detail[CD_ERRLEN / 4];

	if (e->phase == END_RUNNING) {
		struct end_outcome o = {.code = "slow"};
		char how[CD_ERRLEN / 4 + 64];

		snprintf(how, sizeof(how), "a fresh SSH session logged in, then failed: %s", msg);
		outcome_not_reached(node, how, &o);
		end_finish(node, &o);
		return;
	}
	snprintf(detail, sizeof(detail), "failed: %s", msg);
	end_failed_early(node, detail);
}

static const struct conn_events end_events = {
    .connected = end_ev_connected,
    .handshaken = end_ev_handshaken,
    .authenticated = end_ev_authenticated,
    .data = end_ev_data,
    .closed = end_ev_closed,
    .failed = end_ev_failed,
};

void sshpool_node_set_job(struct sshpool_node *node, long long pid, long long pgid, int grace_ms)
{
	node->job_pid = pid > 0 ? pid : 0;
	node->job_pgid = pgid > 0 ? pgid : 0;
	node->job_grace_ms = grace_ms > 0 ? grace_ms : 0;
}

const char *sshpool_node_ended(const struct sshpool_node *node)
{
	return node->ended;
}

int sshpool_node_end(struct sshpool_node *node, const char *why)
{
	struct sshpool *pool = node->pool;
	const struct transport_ops *ops = node->conn.ops;
	int64_t late = loop_timer_late_ms(pool->loop);
	struct pool_end *e;
	struct conn *c;

	if (node->state != SSHPOOL_NODE_READY || node->ending)
		return CD_ERR_AGAIN;
	if (ops != &transport_ssh && ops != &transport_openssh)
		return CD_ERR_UNSUPPORTED; /* no login of our own: local, connect-back */
	e = cd_calloc(1, sizeof(*e));
	snprintf(e->why, sizeof(e->why), "%s", why);
	if (late >= SSHPOOL_LATE_NOTE_MS)
		snprintf(e->late, sizeof(e->late),
		         " (the deadline fired %lld ms late: the head lagged too)",
		         (long long)late);
	node->end = e;
	node->ending = 1;
	/* What is pending waits for the outcome: its deadlines would only fail
	 * the node again, with less to say. */
	for (struct pending *p = node->pending; p; p = p->next) {
		loop_timer_cancel(pool->loop, p->timer);
		p->timer = 0;
	}
	c = &e->conn;
	/* The agent's session is of no more use; its settings are the fresh one's. */
	c->ssh = node->conn.ssh;
	ssh_settings_init(&node->conn.ssh);
	c->proxy_jump = node->conn.proxy_jump;
	node->conn.proxy_jump = NULL;
	c->proxy_command = node->conn.proxy_command;
	node->conn.proxy_command = NULL;
	pool_node_release(node);
	c->loop = pool->loop;
	c->ops = ops;
	c->ev = &end_events;
	c->cfg = &pool->cfg;
	c->owner = node;
	c->label = node->host;
	buf_init(&c->in, END_OUT_MAX);
	buf_init(&c->out, 4096);
	buf_init(&c->errtail, 4096);
	c->command = pool_end_command(json_integer_value(json_object_get(node->hello, "pid")),
	                              node->job_pid, node->job_pgid, node->job_grace_ms);
	e->connect_ms = pool->opts.connect_timeout_ms < END_CONNECT_MAX_MS
	                    ? pool->opts.connect_timeout_ms
	                    : END_CONNECT_MAX_MS;
	e->phase = END_CONNECTING;
	/* openssh says nothing before the login: one deadline up to it */
	end_set_timer(node, ops == &transport_openssh ? e->connect_ms + pool->opts.auth_timeout_ms
	                                              : e->connect_ms);
	e->conn_started = 1;
	ops->start(c); /* a failure comes through end_ev_failed */
	return 0;
}
