/* SPDX-License-Identifier: MIT */
/*
 * fix_run.c - the fix run over the SSH pool (fix_run.h): its nodes, the
 * phase's barrier (fanout.h), the requests every step sends, and the sudo
 * pre-check before a node's first change. Each node is a small state
 * machine that sends one request at a time; its reply callback sends the
 * next. The gather is fix_gather.c's, apply and undo are fix_apply.c's.
 */
#include "fix_run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "proto.h"
#include "sudocmd.h"

const char *fix_status_name(enum fix_status s)
{
	static const char *const names[] = {"pending", "applied", "unchanged", "failed", "skipped"};

	return (unsigned)s < CD_ARRAY_LEN(names) ? names[s] : "?";
}

/* argv as one line, words with spaces quoted (new string) */
static char *fix_command_line_plain(const char *const *argv)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	for (const char *const *a = argv; a && *a; a++) {
		int q = !**a || strpbrk(*a, " \t'\"{}") != NULL;

		buf_append_strs(&b, a == argv ? "" : " ", q ? "'" : "", *a, q ? "'" : "", NULL);
	}
	s = cd_strndup(b.data ? (const char *)b.data : "", b.len);
	buf_fini(&b);
	return s;
}

/* whoami, asking where the programs sudo may run are */
json_t *fix_run_req_whoami(void)
{
	static const char *const progs[] = {"nft",          "iptables", "ip6tables", "ufw",
	                                    "firewall-cmd", "sysctl",   "cp",        "tee",
	                                    "chmod",        "mv",       "rm"};
	json_t *req = proto_request(0, "whoami"), *w = json_array();

	for (size_t k = 0; k < CD_ARRAY_LEN(progs); k++)
		json_array_append_new(w, json_string(progs[k]));
	json_object_set_new(req, "which", w);
	return req;
}

void fix_run_node_done(struct fix_run_node *x)
{
	if (x->finished)
		return;
	x->finished = 1;
	if (x->pn && sshpool_node_state(x->pn) == SSHPOOL_NODE_READY && x->s->mode == FX_UNDO)
		sshpool_close_node(x->pn);
	fanout_settle(x->s->fan, x->i);
}

int fix_run_send(struct fix_run_node *x, json_t *req, sshpool_reply_cb cb)
{
	if (sshpool_request(x->pn, req, RUN_TIMEOUT_MS + 5000, cb, x) < 0) {
		fix_run_node_done(x);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- session */

/* The phase's barrier is done (fanout.h: on a loop turn of its own). */
static void phase_done(void *arg)
{
	struct fix_run *s = arg;

	s->done(s->arg);
}

static void prep_reset(struct fix_run_node *x)
{
	for (size_t k = 0; k < x->nchecks; k++)
		fix_argv_free(x->checks[k]);
	free(x->checks);
	json_decref(x->paths);
	x->checks = NULL;
	x->paths = NULL;
	x->nchecks = x->checked = x->nrefused = 0;
	x->prepared = x->who_known = 0;
	x->refused[0] = 0;
}

struct fix_run *fix_run_new(struct loop *loop, struct sshpool *pool, const char *const *hosts,
                            size_t n)
{
	struct fix_run *s = cd_calloc(1, sizeof(*s));

	s->loop = loop;
	s->pool = pool;
	s->n = n;
	s->nodes = cd_calloc(n ? n : 1, sizeof(*s->nodes));
	s->fan = fanout_new(loop, n, phase_done, s);
	for (size_t i = 0; i < n; i++) {
		s->nodes[i] =
		    (struct fix_run_node){.s = s, .i = i, .pn = sshpool_add(pool, hosts[i])};
		sshpool_node_set_data(s->nodes[i].pn, &s->nodes[i]);
	}
	return s;
}

void fix_run_free(struct fix_run *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		loop_timer_cancel(s->loop, s->nodes[i].pause_timer);
		fix_argv_free(s->nodes[i].found_undo);
		if (sshpool_node_state(s->nodes[i].pn) == SSHPOOL_NODE_READY)
			sshpool_close_node(s->nodes[i].pn);
		prep_reset(&s->nodes[i]);
	}
	fanout_free(s->fan);
	free(s->nodes);
	free(s);
}

static int node_skipped(const struct fix_run *s, size_t i)
{
	if (s->mode == FX_GATHER)
		return s->skip && s->skip[i];
	if (s->mode == FX_HOME_ID)
		return !s->states[i].gathered;
	if (s->mode == FX_APPLY)
		return s->plan->nodes[i].nactions == 0;
	for (size_t k = 0; k < s->uj->nchanges; k++)
		if (strcmp(s->uj->changes[k].host, sshpool_node_host(s->nodes[i].pn)) == 0)
			return 0;
	return 1;
}

void fix_run_node_fail(struct fix_run_node *x, const char *msg)
{
	struct fix_run *s = x->s;

	if (s->mode == FX_HOME_ID) {
		/* without the token the node counts as having its own home */
	} else if (s->mode == FX_GATHER) {
		snprintf(s->states[x->i].error, sizeof(s->states[x->i].error), "%s", msg);
	} else if (s->mode == FX_APPLY) {
		for (size_t k = 0; k < s->plan->nodes[x->i].nactions; k++) {
			struct fix_result *r = &s->results[x->i][k];

			if (r->status == FIX_PENDING) {
				r->status = FIX_FAILED;
				snprintf(r->message, sizeof(r->message), "%s", msg);
			}
		}
	} else {
		for (size_t k = 0; k < s->uj->nchanges; k++) {
			struct fix_result *r = &s->uresults[k];

			if (r->status == FIX_PENDING &&
			    strcmp(s->uj->changes[k].host, sshpool_node_host(x->pn)) == 0) {
				r->status = FIX_FAILED;
				snprintf(r->message, sizeof(r->message), "%s", msg);
			}
		}
	}
	fix_run_node_done(x);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct fix_run_node *x = sshpool_node_data(pn);

	if (x && !x->finished)
		fix_run_step(x);
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct fix_run_node *x = sshpool_node_data(pn);

	if (x && !x->finished)
		fix_run_node_fail(x, sshpool_node_error_message(pn));
}

void fix_run_begin(struct fix_run *s)
{
	static const struct sshpool_handlers h = {.ready = on_ready, .failed = on_failed};

	size_t left = 0;

	for (size_t i = 0; i < s->n; i++) {
		s->nodes[i].step = 0;
		prep_reset(&s->nodes[i]);
		s->nodes[i].finished = node_skipped(s, i);
		if (!s->nodes[i].finished)
			fanout_expect(s->fan, i, 1);
		left += !s->nodes[i].finished;
	}
	fanout_begin(s->fan); /* done runs on a later turn, never from here */
	if (!left)
		return;
	if (!s->started) {
		s->started = 1;
		sshpool_start(s->pool, &h, s);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct fix_run_node *x = &s->nodes[i];

		if (x->finished)
			continue;
		if (sshpool_node_state(x->pn) == SSHPOOL_NODE_READY)
			fix_run_step(x);
		else
			fix_run_node_fail(x, sshpool_node_error_message(x->pn)
			                         ?: "the node's agent is gone");
	}
}

/* ---------------------------------------------------------------- requests */

const char *fix_run_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/* The first line of a command's stderr (or stdout), for a message. */
void fix_run_first_line(json_t *res, char *out, size_t len)
{
	const char *e = fix_run_str(res, "stderr");

	if (!*e)
		e = fix_run_str(res, "stdout");
	snprintf(out, len, "%.*s", (int)strcspn(e, "\n"), e);
}

json_t *fix_run_req_run(const char *const *argv, int sudo)
{
	json_t *req = proto_request(0, "run"), *a = json_array();

	for (; *argv; argv++)
		json_array_append_new(a, json_string(*argv));
	json_object_set_new(req, "argv", a);
	json_object_set_new(req, "sudo", json_boolean(sudo));
	json_object_set_new(req, "timeout_ms", json_integer(RUN_TIMEOUT_MS));
	return req;
}

json_t *fix_run_req_file_write(const char *path, const char *data, size_t len, int remove,
                               const char *expect, unsigned mode, const char *backup, int sudo)
{
	json_t *req = proto_request(0, "file_write");

	json_object_set_new(req, "path", json_string(path));
	if (remove) {
		json_object_set_new(req, "remove", json_true());
	} else {
		char *b64 = cd_malloc(base64_encoded_size(len));

		base64_encode(data ? data : "", len, b64);
		json_object_set_new(req, "data", json_string(b64));
		free(b64);
	}
	json_object_set_new(req, "expect", json_string(expect));
	json_object_set_new(req, "mode", json_integer(mode));
	if (backup)
		json_object_set_new(req, "backup", json_string(backup));
	json_object_set_new(req, "sudo", json_boolean(sudo));
	return req;
}

/* ---------------------------------------------------------------- sudo first */

/* The message for a root command sudo refuses on this node: the node, the
 * command, sudo's words and the sudoers line that allows it. */
void fix_run_sudo_refusal(struct fix_run_node *x, const char *const *argv, const char *why,
                          char *out, size_t len)
{
	const char *path = json_string_value(json_object_get(x->paths, argv[0]));
	char line[FIX_MSGLEN], *cmd = fix_command_line_plain(argv);

	sudocmd_line_for(x->user[0] ? x->user : "USER", argv, path, line, sizeof(line));
	char *m =
	    cd_asprintf("%s: sudo refused `%s` for %s (%s); allow it with the sudoers line: %s",
	                sshpool_node_host(x->pn), cmd, x->user[0] ? x->user : "this user",
	                why && *why ? why : "refused", line);

	snprintf(out, len, "%s", m);
	free(m);
	free(cmd);
}

static void add_check(struct fix_run_node *x, char **argv_take)
{
	for (size_t k = 0; k < x->nchecks; k++) {
		if (fix_argv_equal((const char *const *)argv_take,
		                   (const char *const *)x->checks[k])) {
			fix_argv_free(argv_take);
			return;
		}
	}
	x->checks = cd_realloc(x->checks, (x->nchecks + 1) * sizeof(*x->checks));
	x->checks[x->nchecks++] = argv_take;
}

/* The file steps (sudocmd.h) a write or removal of path may run. */
static void add_file_checks(struct fix_run_node *x, const char *path, int exists, int remove,
                            unsigned mode)
{
	enum sudocmd_step steps[8];
	size_t n = sudocmd_file_steps(exists, remove, steps);

	for (size_t k = 0; k < n; k++) {
		struct sudocmd c;

		if (sudocmd_file(steps[k], path, mode, &c) == 0)
			add_check(x, fix_argv_copy((char *const *)c.argv));
	}
}

/* A command's argv with "{handle}" (known only once nft answers) as 1. */
static void add_cmd_check(struct fix_run_node *x, char **argv)
{
	char **v = fix_argv_copy(argv);

	for (size_t k = 0; v[k]; k++)
		if (strcmp(v[k], "{handle}") == 0) {
			free(v[k]);
			v[k] = cd_strdup("1");
		}
	add_check(x, v);
}

/* Every root command node x will run in this phase, and its undo's. */
static void build_checks(struct fix_run_node *x)
{
	struct fix_run *s = x->s;

	if (x->uid == 0)
		return;
	if (s->mode == FX_APPLY) {
		const struct fix_node_plan *np = &s->plan->nodes[x->i];

		for (size_t k = 0; k < np->nactions; k++) {
			const struct fix_action *a = &np->actions[k];

			if (!a->sudo)
				continue;
			if (a->kind == FIX_FILE) {
				add_file_checks(x, a->path, a->before_exists, 0, a->mode);
				add_file_checks(x, a->path, 1, !a->before_exists, a->mode);
			} else {
				add_cmd_check(x, a->argv);
				add_cmd_check(x, a->undo);
			}
		}
		return;
	}
	for (size_t k = 0; k < s->uj->nchanges; k++) {
		const struct fix_change *c = &s->uj->changes[k];

		if (!c->sudo || strcmp(c->host, sshpool_node_host(x->pn)) != 0)
			continue;
		if (c->kind == FIX_FILE) {
			add_file_checks(x, c->path, c->after_exists, !c->before_exists, 0644);
		} else {
			char **lookup = fix_run_lookup_argv(c);

			if (lookup)
				add_cmd_check(x, lookup);
			fix_argv_free(lookup);
			add_cmd_check(x, c->undo);
		}
	}
}

static void on_prepare(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                       void *arg)
{
	struct fix_run_node *x = arg;

	if (x->finished)
		return;
	if (!x->who_known) {
		if (!res) {
			fix_run_node_fail(x, msg);
			return;
		}
		x->who_known = 1;
		x->uid = (unsigned)json_integer_value(json_object_get(res, "uid"));
		snprintf(x->user, sizeof(x->user), "%s", fix_run_str(res, "user"));
		json_decref(x->paths);
		x->paths = json_incref(json_object_get(res, "paths"));
		build_checks(x);
	} else {
		const char *const *argv = (const char *const *)x->checks[x->checked];
		int status = res ? (int)json_integer_value(json_object_get(res, "status")) : -1;

		if (status != 0) {
			char why[256];

			if (!res)
				snprintf(why, sizeof(why), "%s", msg);
			else if (status == 127)
				snprintf(why, sizeof(why), "sudo is not installed");
			else
				fix_run_first_line(res, why, sizeof(why));
			if (!x->nrefused++)
				fix_run_sudo_refusal(x, argv, why, x->refused, sizeof(x->refused));
		}
		x->checked++;
	}
	fix_run_step(x);
}

/* Before a node's first change: whoami, then `sudo -n -l COMMAND` for each
 * root command; a refusal fails the node with nothing changed. */
void fix_run_prepare_step(struct fix_run_node *x)
{
	if (!x->who_known) {
		fix_run_send(x, fix_run_req_whoami(), on_prepare);
	} else if (x->checked < x->nchecks) {
		const char *head[] = {"sudo", "-n", "-l", NULL};
		json_t *req = fix_run_req_run(head, 0), *a = json_object_get(req, "argv");

		for (char **v = x->checks[x->checked]; *v; v++)
			json_array_append_new(a, json_string(*v));
		fix_run_send(x, req, on_prepare);
	} else if (x->nrefused) {
		char msg[FIX_MSGLEN];
		size_t n;

		x->prepared = 1;
		snprintf(msg, sizeof(msg), "%s", x->refused);
		n = strlen(msg);
		if (x->nrefused > 1)
			snprintf(
			    msg + n, sizeof(msg) - n,
			    " (and %zu more: clusterdoc fix --sudoers --user %s prints every line)",
			    x->nrefused - 1, x->user);
		n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, "; nothing was changed on %s",
		         sshpool_node_host(x->pn));
		fix_run_node_fail(x, msg);
	} else {
		x->prepared = 1;
		fix_run_step(x);
	}
}

/* ---------------------------------------------------------------- steps */

void fix_run_step(struct fix_run_node *x)
{
	switch (x->s->mode) {
	case FX_GATHER:
		fix_run_gather_step(x);
		break;
	case FX_HOME_ID:
		fix_run_home_id_step(x);
		break;
	case FX_APPLY:
		fix_run_apply_step(x);
		break;
	case FX_UNDO:
		fix_run_undo_step(x);
		break;
	}
}
