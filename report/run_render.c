/* SPDX-License-Identifier: MIT */
/*
 * run_render.c - the summary, JSON report and dry-run plan of
 * `clusterdoc run` (run_render.h).
 */
#include "report/run_render.h"
#include "termtext.h"
#include "cd.h"
#include "job.h"
#include "report/rdzv_render.h"

#include <stdlib.h>
#include <string.h>

void run_shell_quote(const char *s, char *out, size_t outlen)
{
	size_t o = 0;
	int plain = *s != '\0';

	for (const char *p = s; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		               "_-./:=@%+,",
		               *p) != NULL;
	if (plain) {
		snprintf(out, outlen, "%s", s);
		return;
	}
	if (outlen < 3) {
		if (outlen)
			out[0] = '\0';
		return;
	}
	out[o++] = '\'';
	for (const char *p = s; *p && o + 5 < outlen; p++) {
		if (*p == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *p;
		}
	}
	out[o++] = '\'';
	out[o] = '\0';
}

static void put_quoted(FILE *f, const char *s)
{
	size_t cap;
	char *q;

	/* "~/..." keeps its tilde outside the quotes, so that the shell expands it */
	if (strncmp(s, "~/", 2) == 0) {
		fputs("~/", f);
		s += 2;
		if (!*s)
			return;
	}
	cap = strlen(s) * 4 + 3;
	q = cd_malloc(cap);

	run_shell_quote(s, q, cap);
	fputs(q, f);
	free(q);
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case 9:
		return "SIGKILL";
	case 15:
		return "SIGTERM";
	case 2:
		return "SIGINT";
	case 6:
		return "SIGABRT";
	case 11:
		return "SIGSEGV";
	case 12:
		return "SIGUSR2";
	case 10:
		return "SIGUSR1";
	default:
		return "a signal";
	}
}

static void node_outcome(const struct run_node *n, char *out, size_t len)
{
	if (!n->started)
		snprintf(out, len, "not started%s%s", n->error[0] ? ": " : "", n->error);
	else if (!n->ended)
		snprintf(out, len, "still running");
	else if (n->stopped)
		snprintf(out, len, "stopped by clusterdoc (%s)",
		         n->signal ? signal_name(n->signal) : "it ended while asked to stop");
	else if (n->exit_code < 0)
		snprintf(out, len, "%s", n->error[0] ? n->error : "lost");
	else if (n->signal)
		snprintf(out, len, "killed by %s (%d)", signal_name(n->signal), n->signal);
	else
		snprintf(out, len, "exit %d", n->exit_code);
}

static void print_tail(FILE *f, const struct run_node *n)
{
	size_t first = (n->tail_next + RUN_TAIL_LINES - n->tail_n) % RUN_TAIL_LINES;

	for (size_t k = 0; k < n->tail_n; k++) {
		const struct run_line *l = &n->tail[(first + k) % RUN_TAIL_LINES];

		termtext_printf(f, "    %s r%d%s: %s\n", n->host, n->first_rank,
		                strcmp(l->stream, "err") == 0 ? " (stderr)" : "", l->text);
	}
}

void run_print_text(FILE *f, const struct run_report *rep)
{
	char what[CD_ERRLEN + 64];
	size_t orphans = 0, checked = 0;

	if (!rep->failed)
		termtext_printf(f, "# clusterdoc run %s: ok, %d rank(s) on %zu node(s)\n",
		                rep->run_id, rep->nranks, rep->nnodes);
	else
		termtext_printf(f, "# clusterdoc run %s: FAILED (exit %d): %s\n", rep->run_id,
		                rep->exit_status, rep->failure);
	if (rep->root_cause >= 0) {
		const struct run_node *n = &rep->nodes[rep->root_cause];

		node_outcome(n, what, sizeof(what));
		if (n->worker_failed && n->worker_exit >= 0)
			snprintf(what, sizeof(what), "exit %d", n->worker_exit);
		else if (n->worker_failed)
			snprintf(what, sizeof(what), "killed by signal %d", -n->worker_exit);
		/* with torchrun's report of the failed worker, the node's first error
		 * line may be another worker's (a victim's): its last lines follow */
		if (n->worker_failed)
			termtext_printf(f, "root cause: %s r%d: %s (torchrun's report)\n", n->host,
			                n->worker_rank, what);
		else
			termtext_printf(f, "root cause: %s r%d: %s%s%s\n", n->host, n->first_rank,
			                what, n->first_error[0] ? ": " : "", n->first_error);
		print_tail(f, n);
	}
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];

		if ((long)i == rep->root_cause || (!rep->failed && n->exit_code == 0))
			continue;
		node_outcome(n, what, sizeof(what));
		if (n->nranks == 0) /* refused before its ranks were planned */
			termtext_printf(f, "%s: %s\n", n->host, what);
		else
			termtext_printf(f, "%s r%d: %s\n", n->host, n->first_rank, what);
	}
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];
		size_t k;
		json_t *p;

		if (!n->orphans)
			continue;
		checked++;
		json_array_foreach(n->orphans, k, p)
		{
			orphans++;
			termtext_printf(f, "left behind on %s: pid %lld %s\n", n->host,
			                (long long)json_integer_value(json_object_get(p, "pid")),
			                json_string_value(json_object_get(p, "cmdline")) ?: "");
		}
		json_array_foreach(n->gpu_holders, k, p)
		{
			termtext_printf(f, "holding a GPU on %s: pid %lld %s\n", n->host,
			                (long long)json_integer_value(json_object_get(p, "pid")),
			                json_string_value(json_object_get(p, "comm")) ?: "");
		}
	}
	if (checked)
		termtext_printf(
		    f, "orphan check: %zu process(es) of the run left on %zu node(s) checked\n",
		    orphans, checked);
	for (size_t i = 0; i < rep->nnodes; i++)
		if (rep->nodes[i].ended_by_head[0])
			termtext_printf(f, "%s: %s\n", rep->nodes[i].host,
			                rep->nodes[i].ended_by_head);
	if (rep->synced) {
		int sent = 0;

		for (size_t i = 0; i < rep->nnodes; i++)
			sent += rep->nodes[i].files_sent;
		/* a failed sync says so: the tree is not there */
		if (rep->sync_failed)
			termtext_printf(
			    f, "sync: FAILED: %zu file(s) for %s, not on every node (%d sent)\n",
			    rep->sync_files, rep->run_dir, sent);
		else
			termtext_printf(f, "sync: %zu file(s) at %s, %d sent\n", rep->sync_files,
			                rep->run_dir, sent);
	}
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];

		if (n->lines_dropped)
			fprintf(
			    f,
			    "output lost: %s: %lld line(s) (a burst past the %d its agent keeps; "
			    "the log marks where)\n",
			    n->host, n->lines_dropped, JOB_LOG_KEEP);
	}
	rdzv_print_text(f, rep->rendezvous);
	if (rep->warning[0])
		termtext_printf(f, "warning: %s\n", rep->warning);
	if (rep->dump_signal)
		termtext_printf(
		    f, "hang-ready: kill -%s a rank's PID for its Python stacks in %s/hang/\n",
		    signal_name(rep->dump_signal) + 3, rep->run_dir);
	termtext_printf(f, "times: plan %.1f s, start %.2f s, job %.1f s, total %.1f s\n",
	                rep->plan_ms / 1e3, rep->start_ms / 1e3, rep->job_ms / 1e3,
	                rep->elapsed_ms / 1e3);
}

static json_t *tail_json(const struct run_node *n)
{
	json_t *a = json_array();
	size_t first = (n->tail_next + RUN_TAIL_LINES - n->tail_n) % RUN_TAIL_LINES;

	for (size_t k = 0; k < n->tail_n; k++) {
		const struct run_line *l = &n->tail[(first + k) % RUN_TAIL_LINES];

		json_array_append_new(a,
		                      json_pack("{ss ss}", "stream", l->stream, "text", l->text));
	}
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

/* One entry per global rank. Its exit code is known for --launcher none
 * (the node's command is the rank), when torchrun exited 0 (every worker
 * did), and for the failed worker torchrun's own report names; otherwise
 * torchrun gives no worker's own code (docs/run.md): null then. */
static json_t *ranks_json(const struct run_report *rep)
{
	json_t *ranks = json_array();

	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];
		int own = rep->launcher == RUN_NONE && n->nranks == 1;

		for (int l = 0; l < n->nranks; l++) {
			json_t *code = json_null();

			if (n->ended && rep->launcher == RUN_NONE && n->exit_code >= 0 &&
			    !n->signal)
				code = json_integer(n->exit_code);
			else if (n->worker_failed && n->worker_rank == n->first_rank + l)
				code = json_integer(n->worker_exit); /* torchrun's report */
			else if (n->ended && n->exit_code == 0 && !n->signal)
				code = json_integer(0);
			json_t *rank = json_pack("{sI ss sI so}", "rank",
			                         (json_int_t)(n->first_rank + l), "node", n->host,
			                         "local_rank", (json_int_t)l, "exit_code", code);

			/* the rest is known of a rank only where it is the node's own
			 * process (--launcher none); torchrun's workers: null */
			json_object_set_new(rank, "signal",
			                    own && n->ended && n->signal ? json_integer(n->signal)
			                                                 : json_null());
			json_object_set_new(rank, "first_error",
			                    own ? str_or_null(n->first_error) : json_null());
			json_object_set_new(rank, "wall_ms",
			                    own && n->end_ms && n->start_ms
			                        ? json_integer(n->end_ms - n->start_ms)
			                        : json_null());
			json_array_append_new(ranks, rank);
		}
	}
	return ranks;
}

json_t *run_report_json(const struct run_report *rep)
{
	json_t *nodes = json_array(), *top;
	int sent = 0;
	long long bytes = 0, dropped = 0;

	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];
		json_t *ranks = json_array();

		for (int r = 0; r < n->nranks; r++)
			json_array_append_new(ranks, json_integer(n->first_rank + r));
		json_array_append_new(
		    nodes,
		    json_pack("{ss sI so ss ss sb so so sb so so so so sI so so so}", "host",
		              n->host, "node_rank", (json_int_t)i, "ranks", ranks, "ifname",
		              n->ifname, "addr", n->addr, "started", n->started, "exit_code",
		              n->ended ? json_integer(n->exit_code) : json_null(), "signal",
		              n->ended && n->signal ? json_integer(n->signal) : json_null(),
		              "stopped", n->stopped, "error_code", str_or_null(n->error_code),
		              "error", str_or_null(n->error), "first_error",
		              str_or_null(n->first_error), "last_lines", tail_json(n), "wall_ms",
		              (json_int_t)(n->end_ms && n->start_ms ? n->end_ms - n->start_ms : 0),
		              "orphans", n->orphans ? json_incref(n->orphans) : json_null(),
		              "gpu_holders",
		              n->gpu_holders ? json_incref(n->gpu_holders) : json_null(), "command",
		              n->argv ? json_incref(n->argv) : json_null()));
		json_t *jn = json_array_get(nodes, json_array_size(nodes) - 1);

		json_object_set_new(jn, "put_by",
		                    n->put_by >= 0 ? json_string(rep->nodes[n->put_by].host)
		                                   : json_null());
		json_object_set_new(jn, "ended_by_head", str_or_null(n->ended_by_head));
		json_object_set_new(jn, "proved", json_boolean(n->proved));
		json_object_set_new(jn, "files_sent", json_integer(n->files_sent));
		json_object_set_new(jn, "lines_dropped", json_integer(n->lines_dropped));
		dropped += n->lines_dropped;
		json_object_set_new(jn, "bytes_sent", json_integer(n->bytes_sent));
		sent += n->files_sent;
		bytes += n->bytes_sent;
	}
	top = json_pack(
	    "{si ss ss ss si si si si sb sb sb so so so s{sI sI sI sI}}", "version", 1, "run_id",
	    rep->run_id, "launcher",
	    rep->launcher == RUN_TORCHRUN ? "torchrun"
	    : rep->launcher == RUN_MPIRUN ? "mpirun"
	                                  : "none",
	    "master_addr", rep->master_addr, "master_port", rep->master_port, "nnodes",
	    (int)rep->nnodes, "nranks", rep->nranks, "exit_status", rep->exit_status, "failed",
	    rep->failed, "could_not_start", rep->could_not_start, "interrupted", rep->interrupted,
	    "failure", str_or_null(rep->failure), "root_cause",
	    rep->root_cause >= 0 ? json_string(rep->nodes[rep->root_cause].host) : json_null(),
	    "nodes", nodes, "timing_ms", "plan", (json_int_t)rep->plan_ms, "start",
	    (json_int_t)rep->start_ms, "job", (json_int_t)rep->job_ms, "total",
	    (json_int_t)rep->elapsed_ms);
	json_object_set_new(json_object_get(top, "timing_ms"), "put", json_integer(rep->put_ms));
	json_object_set_new(top, "ranks", ranks_json(rep));
	json_object_set_new(top, "root_cause_rank",
	                    rep->root_cause < 0 ? json_null()
	                    : rep->nodes[rep->root_cause].worker_failed
	                        ? json_integer(rep->nodes[rep->root_cause].worker_rank)
	                        : json_integer(rep->nodes[rep->root_cause].first_rank));
	json_object_set_new(top, "rendezvous", rdzv_report_json(rep->rendezvous));
	json_object_set_new(top, "run_dir", json_string(rep->run_dir));
	json_object_set_new(top, "warning", str_or_null(rep->warning));
	json_object_set_new(top, "lines_dropped", json_integer(dropped));
	json_object_set_new(top, "cwd", json_string(rep->cwd));
	json_object_set_new(top, "dump_signal",
	                    rep->dump_signal ? json_string(signal_name(rep->dump_signal))
	                                     : json_null());
	json_object_set_new(
	    top, "sync",
	    rep->synced ? json_pack("{sI sI sI}", "files", (json_int_t)rep->sync_files,
	                            "files_sent", (json_int_t)sent, "bytes_sent", (json_int_t)bytes)
	                : json_null());
	return top;
}

/* The argv as a user would type it: torchrun instead of the shim's
 * `python -c '<shim>'`. */
static void print_by_hand(FILE *f, const struct run_node *n)
{
	size_t k = 0, start = 0;
	json_t *a;

	if (json_array_size(n->argv) > 2 &&
	    strcmp(json_string_value(json_array_get(n->argv, 1)) ?: "", "-c") == 0) {
		fputs("torchrun", f);
		start = 3;
	}
	json_array_foreach(n->argv, k, a)
	{
		if (k < start)
			continue;
		if (k)
			fputc(' ', f);
		put_quoted(f, json_string_value(a));
	}
	fputc('\n', f);
}

void run_print_plan(FILE *f, const struct run_report *rep, const char *chdir)
{
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct run_node *n = &rep->nodes[i];
		const char *key;
		json_t *v, *a;
		size_t k;

		termtext_printf(f, "# %s: node_rank %zu, ranks %d-%d, %s %s (%s)\n", n->host, i,
		                n->first_rank, n->first_rank + n->nranks - 1, n->ifname, n->addr,
		                n->proved ? "proved by the check"
		                          : "not proved: the node's own pick");
		fputs("cd ", f);
		put_quoted(f, chdir ? chdir : "~/");
		fputs(" && env", f);
		json_object_foreach(n->env, key, v)
		{
			char kv[4096];
			const char *val = json_string_value(v);

			fputs(" \\\n    ", f);
			/* "~/..." (resolved by the agent) as bash resolves NAME=~/... */
			if (strncmp(val, "~/", 2) == 0) {
				termtext_printf(f, "%s=", key);
				put_quoted(f, val);
				continue;
			}
			snprintf(kv, sizeof(kv), "%s=%s", key, val);
			put_quoted(f, kv);
		}
		fputs(" \\\n   ", f);
		json_array_foreach(n->argv, k, a)
		{
			fputc(' ', f);
			put_quoted(f, json_string_value(a));
		}
		fputs("\n# by hand on ", f);
		termtext_printf(f, "%s:\n", n->host);
		json_object_foreach(n->env, key, v)
		{
			termtext_printf(f, "export %s=", key);
			put_quoted(f, json_string_value(v));
			fputc('\n', f);
		}
		print_by_hand(f, n);
		fputc('\n', f);
	}
}
