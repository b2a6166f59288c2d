/*
 * fix_run.c - gather, apply and undo over the SSH pool (fix_run.h). Each
 * node is a small state machine that sends one request at a time; its
 * reply callback sends the next.
 */
#include "fix_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "proto.h"
#include "sha256.h"
#include "sudocmd.h"

#define RUN_TIMEOUT_MS 20000

enum fx_mode { FX_GATHER, FX_HOME_ID, FX_APPLY, FX_UNDO };

struct fx_node {
	struct fix_session *s;
	size_t i;
	struct pool_node *pn;
	int step;
	int finished;
	const char *failed_fixer; /* apply: the fixer whose step failed */

	/* apply and undo first ask sudo whether it allows every root command
	 * the node will run (sudo -n -l), so a refusal changes nothing */
	int prepared, who_known;
	unsigned uid;
	char user[64];
	json_t *paths;  /* whoami's "paths": where each program is */
	char ***checks; /* the argvs to ask about */
	size_t nchecks, checked, nrefused;
	char refused[CD_ERRLEN];
};

struct fix_session {
	struct loop *loop;
	struct sshpool *pool;
	struct fx_node *nodes;
	size_t n;
	size_t left; /* nodes not finished */
	enum fx_mode mode;
	int started;
	void (*done)(void *);
	void *arg;
	void (*gather_done)(void *); /* after the home-id pass */
	void *gather_arg;

	/* gather */
	struct fix_node_state *states;
	const int *skip;
	const char *const *fw_iface;
	/* apply */
	const struct fix_plan *plan;
	struct fix_journal *j;
	struct fix_result **results;
	char *journal_err;
	size_t journal_errlen;
	/* undo */
	const struct fix_journal *uj;
	struct fix_result *uresults;
};

const char *fix_status_name(enum fix_status s)
{
	static const char *const names[] = {"pending", "applied", "unchanged", "failed", "skipped"};

	return (unsigned)s < CD_ARRAY_LEN(names) ? names[s] : "?";
}

static void step(struct fx_node *x);
static json_t *file_write_req(const char *path, const char *data, size_t len, int remove,
                              const char *expect, unsigned mode, const char *backup, int sudo);
static void sudo_refusal(struct fx_node *x, const char *const *argv, const char *why, char *out,
                         size_t len);
static void prepare_step(struct fx_node *x);

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
static json_t *whoami_req(void)
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

static void node_finish(struct fx_node *x)
{
	if (x->finished)
		return;
	x->finished = 1;
	if (x->pn && node_state(x->pn) == NODE_READY && x->s->mode == FX_UNDO)
		sshpool_close_node(x->pn);
	if (--x->s->left == 0)
		x->s->done(x->s->arg);
}

static int send(struct fx_node *x, json_t *req, sshpool_reply_cb cb)
{
	if (sshpool_request(x->pn, req, RUN_TIMEOUT_MS + 5000, cb, x) < 0) {
		node_finish(x);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- session */

static void prep_reset(struct fx_node *x)
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

struct fix_session *fix_session_new(struct loop *loop, struct sshpool *pool,
                                    const char *const *hosts, size_t n)
{
	struct fix_session *s = cd_calloc(1, sizeof(*s));

	s->loop = loop;
	s->pool = pool;
	s->n = n;
	s->nodes = cd_calloc(n ? n : 1, sizeof(*s->nodes));
	for (size_t i = 0; i < n; i++) {
		s->nodes[i] = (struct fx_node){.s = s, .i = i, .pn = sshpool_add(pool, hosts[i])};
		node_set_data(s->nodes[i].pn, &s->nodes[i]);
	}
	return s;
}

void fix_session_free(struct fix_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (node_state(s->nodes[i].pn) == NODE_READY)
			sshpool_close_node(s->nodes[i].pn);
		prep_reset(&s->nodes[i]);
	}
	free(s->nodes);
	free(s);
}

static int node_skipped(const struct fix_session *s, size_t i)
{
	if (s->mode == FX_GATHER)
		return s->skip && s->skip[i];
	if (s->mode == FX_HOME_ID)
		return !s->states[i].gathered;
	if (s->mode == FX_APPLY)
		return s->plan->nodes[i].nactions == 0;
	for (size_t k = 0; k < s->uj->nchanges; k++)
		if (strcmp(s->uj->changes[k].host, node_host(s->nodes[i].pn)) == 0)
			return 0;
	return 1;
}

static void fail_node(struct fx_node *x, const char *msg)
{
	struct fix_session *s = x->s;

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
			    strcmp(s->uj->changes[k].host, node_host(x->pn)) == 0) {
				r->status = FIX_FAILED;
				snprintf(r->message, sizeof(r->message), "%s", msg);
			}
		}
	}
	node_finish(x);
}

static void on_ready(struct sshpool *pool, struct pool_node *pn, void *arg)
{
	struct fx_node *x = node_data(pn);

	if (x && !x->finished)
		step(x);
}

static void on_failed(struct sshpool *pool, struct pool_node *pn, void *arg)
{
	struct fx_node *x = node_data(pn);

	if (x && !x->finished)
		fail_node(x, node_error_message(pn));
}

/* Start the phase: ready nodes begin at once, the others when ready. */
static void begin(struct fix_session *s)
{
	static const struct sshpool_handlers h = {.ready = on_ready, .failed = on_failed};

	s->left = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->nodes[i].step = 0;
		prep_reset(&s->nodes[i]);
		s->nodes[i].finished = node_skipped(s, i);
		s->left += !s->nodes[i].finished;
	}
	if (!s->left) {
		s->done(s->arg);
		return;
	}
	if (!s->started) {
		s->started = 1;
		sshpool_start(s->pool, &h, s);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct fx_node *x = &s->nodes[i];

		if (x->finished)
			continue;
		if (node_state(x->pn) == NODE_READY)
			step(x);
		else
			fail_node(x, node_error_message(x->pn) ?: "the node's agent is gone");
	}
}

/* ---------------------------------------------------------------- gather */

static const char *gather_path(const struct fix_node_state *st, int k)
{
	int by_ssh;

	switch (k) {
	case 0:
		return fix_rc_file(st->shell, &by_ssh);
	case 1:
		return FIX_ENV_SH;
	case 2:
		return FIX_NCCL_CONF;
	case 3:
		return FIX_ETC_HOSTS;
	case 4:
		return FIX_AUTHORIZED_KEYS;
	case 5:
		return FIX_SYSCTL_PORTS;
	}
	return NULL;
}

/* The gather's steps: whoami, the home's token, the files, then the
 * firewall's commands. */
enum {
	GATHER_WHOAMI = 0,
	GATHER_MARK,
	GATHER_FILES = 7, /* gather_path's paths are steps 2..GATHER_FILES */
	GATHER_NFT,
	GATHER_UFW,
	GATHER_FIREWALLD,
	GATHER_FWD_ZONE,
	GATHER_FWD_RULES,
	GATHER_END,
};

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/* The first line of a command's stderr (or stdout), for a message. */
static void first_line(json_t *res, char *out, size_t len)
{
	const char *e = str(res, "stderr");

	if (!*e)
		e = str(res, "stdout");
	snprintf(out, len, "%.*s", (int)strcspn(e, "\n"), e);
}

static void on_gather(struct pool_node *pn, json_t *res, const char *code, const char *msg,
                      void *arg)
{
	struct fx_node *x = arg;
	struct fix_node_state *st = &x->s->states[x->i];
	int k = x->step;

	if (x->finished)
		return;
	if (k == GATHER_WHOAMI) {
		if (!res) {
			fail_node(x, msg);
			return;
		}
		st->uid = (unsigned)json_integer_value(json_object_get(res, "uid"));
		snprintf(st->user, sizeof(st->user), "%s", str(res, "user"));
		snprintf(st->home, sizeof(st->home), "%s", str(res, "home"));
		snprintf(st->shell, sizeof(st->shell), "%s", str(res, "shell"));
		st->has_sudo = json_is_string(json_object_get(res, "sudo"));
		x->uid = st->uid;
		snprintf(x->user, sizeof(x->user), "%s", st->user);
		json_decref(x->paths);
		x->paths = json_incref(json_object_get(res, "paths"));
	} else if (k == GATHER_MARK) {
		/* written when absent; a conflict is another node's token */
	} else if (k <= GATHER_FILES) {
		struct fix_file_state *f = fix_state_add_file(st, gather_path(st, k - 2));

		if (!res) {
			snprintf(f->error, sizeof(f->error), "%s: %s", code, msg);
		} else {
			const char *b64 = str(res, "data");

			f->read = 1;
			f->exists = json_is_true(json_object_get(res, "exists"));
			f->mode = (unsigned)json_integer_value(json_object_get(res, "mode"));
			if (f->exists &&
			    !(f->data = base64_decode_new(b64, strlen(b64), &f->len))) {
				f->read = 0;
				snprintf(f->error, sizeof(f->error), "the agent sent bad base64");
			}
		}
	} else {
		int status = res ? (int)json_integer_value(json_object_get(res, "status")) : -1;
		const char *out = res ? str(res, "stdout") : "";
		char line[256];

		if (res)
			first_line(res, line, sizeof(line));
		else
			snprintf(line, sizeof(line), "%s", msg);
		switch (k) {
		case GATHER_NFT:
			if (status == 0)
				st->nft_json = cd_strdup(out);
			else if (res && json_is_string(json_object_get(res, "sudo_error")))
				sudo_refusal(
				    x, (const char *const[]){"nft", "-j", "list", "ruleset", NULL},
				    line, st->nft_error, sizeof(st->nft_error));
			else if (status == 127)
				snprintf(st->nft_error, sizeof(st->nft_error),
				         "nft is not installed");
			else
				snprintf(st->nft_error, sizeof(st->nft_error), "nft: %s", line);
			break;
		case GATHER_UFW:
			if (status == 0 && strstr(out, "Status: active")) {
				st->ufw_active = 1;
				st->ufw_status = cd_strdup(out);
			} else if (status == 0) {
				st->ufw_active = 0;
			}
			break;
		case GATHER_FIREWALLD:
			st->firewalld_running = status == 127 || status < 0             ? -1
			                        : strstr(out, "running") && status == 0 ? 1
			                                                                : 0;
			break;
		case GATHER_FWD_ZONE:
			if (status == 0)
				snprintf(st->firewalld_zone, sizeof(st->firewalld_zone), "%.*s",
				         (int)strcspn(out, "\n"), out);
			break;
		case GATHER_FWD_RULES:
			if (status == 0)
				st->firewalld_rules = cd_strdup(out);
			break;
		}
	}
	x->step++;
	step(x);
}

static json_t *run_req(const char *const *argv, int sudo)
{
	json_t *req = proto_request(0, "run"), *a = json_array();

	for (; *argv; argv++)
		json_array_append_new(a, json_string(*argv));
	json_object_set_new(req, "argv", a);
	json_object_set_new(req, "sudo", json_boolean(sudo));
	json_object_set_new(req, "timeout_ms", json_integer(RUN_TIMEOUT_MS));
	return req;
}

static void gather_step(struct fx_node *x)
{
	struct fix_node_state *st = &x->s->states[x->i];
	const char *iface = x->s->fw_iface ? x->s->fw_iface[x->i] : NULL;
	int k = x->step, sudo = st->uid != 0;
	char zarg[160], zone[96];

	if (k == GATHER_WHOAMI) {
		send(x, whoami_req(), on_gather);
	} else if (k == GATHER_MARK) {
		char token[40];

		cd_random_token(token, sizeof(token));
		snprintf(token + 32, sizeof(token) - 32, "\n");
		send(x,
		     file_write_req(FIX_HOME_ID, token, strlen(token), 0, "absent", 0600, NULL, 0),
		     on_gather);
	} else if (k <= GATHER_FILES) {
		json_t *req = proto_request(0, "file_read");

		json_object_set_new(req, "path", json_string(gather_path(st, k - 2)));
		send(x, req, on_gather);
	} else if (k > GATHER_FILES && iface) {
		const char *nft[] = {"nft", "-j", "list", "ruleset", NULL};
		const char *ufw[] = {"ufw", "status", NULL};
		const char *fwd[] = {"firewall-cmd", "--state", NULL};
		const char *zq[] = {"firewall-cmd", zarg, NULL};
		const char *rq[] = {"firewall-cmd", zone, "--list-rich-rules", NULL};

		st->fw_gathered = 1;
		snprintf(zarg, sizeof(zarg), "--get-zone-of-interface=%s", iface);
		snprintf(zone, sizeof(zone), "--zone=%s", st->firewalld_zone);
		if (k == GATHER_NFT)
			send(x, run_req(nft, sudo), on_gather);
		else if (k == GATHER_UFW)
			send(x, run_req(ufw, sudo), on_gather);
		else if (k == GATHER_FIREWALLD)
			send(x, run_req(fwd, sudo), on_gather);
		else if (k == GATHER_FWD_ZONE && st->firewalld_running == 1)
			send(x, run_req(zq, sudo), on_gather);
		else if (k == GATHER_FWD_RULES && st->firewalld_zone[0])
			send(x, run_req(rq, sudo), on_gather);
		else if (k < GATHER_END) {
			x->step++;
			step(x);
		} else {
			st->gathered = 1;
			node_finish(x);
		}
	} else {
		st->gathered = 1;
		node_finish(x);
	}
}

static void on_home_id(struct pool_node *pn, json_t *res, const char *code, const char *msg,
                       void *arg)
{
	struct fx_node *x = arg;
	struct fix_node_state *st = &x->s->states[x->i];
	const char *b64 = res ? str(res, "data") : "";
	size_t len = 0;
	char *data = json_is_true(json_object_get(res, "exists"))
	                 ? base64_decode_new(b64, strlen(b64), &len)
	                 : NULL;

	if (x->finished) {
		free(data);
		return;
	}
	if (data && len >= 16 && len < sizeof(st->home_id) + 1)
		snprintf(st->home_id, sizeof(st->home_id), "%.*s", (int)strcspn(data, "\n"), data);
	free(data);
	node_finish(x);
}

/* The second pass, once every node wrote its token if none was there:
 * each reads the token that stayed, so nodes sharing the home agree. */
static void home_id_pass(void *arg)
{
	struct fix_session *s = arg;

	s->mode = FX_HOME_ID;
	s->done = s->gather_done;
	s->arg = s->gather_arg;
	begin(s);
}

void fix_session_gather(struct fix_session *s, struct fix_node_state *states, const int *skip,
                        const char *const *fw_iface, void (*done)(void *), void *arg)
{
	s->mode = FX_GATHER;
	s->states = states;
	s->skip = skip;
	s->fw_iface = fw_iface;
	s->gather_done = done;
	s->gather_arg = arg;
	s->done = home_id_pass;
	s->arg = s;
	begin(s);
}

/* ---------------------------------------------------------------- sudo first */

/* The message for a root command sudo refuses on this node: the node, the
 * command, sudo's words and the sudoers line that allows it. */
static void sudo_refusal(struct fx_node *x, const char *const *argv, const char *why, char *out,
                         size_t len)
{
	const char *path = json_string_value(json_object_get(x->paths, argv[0]));
	char line[600], *cmd = fix_command_line_plain(argv);

	sudocmd_line_for(x->user[0] ? x->user : "USER", argv, path, line, sizeof(line));
	char *m =
	    cd_asprintf("%s: sudo refused `%s` for %s (%s); allow it with the sudoers line: %s",
	                node_host(x->pn), cmd, x->user[0] ? x->user : "this user",
	                why && *why ? why : "refused", line);

	snprintf(out, len, "%s", m);
	free(m);
	free(cmd);
}

static void add_check(struct fx_node *x, char **argv_take)
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
static void add_file_checks(struct fx_node *x, const char *path, int exists, int remove,
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
static void add_cmd_check(struct fx_node *x, char **argv)
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
static void build_checks(struct fx_node *x)
{
	struct fix_session *s = x->s;

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

		if (!c->sudo || strcmp(c->host, node_host(x->pn)) != 0)
			continue;
		if (c->kind == FIX_FILE)
			add_file_checks(x, c->path, c->after_exists, !c->before_exists, 0644);
		else
			add_cmd_check(x, c->undo);
	}
}

static void on_prepare(struct pool_node *pn, json_t *res, const char *code, const char *msg,
                       void *arg)
{
	struct fx_node *x = arg;

	if (x->finished)
		return;
	if (!x->who_known) {
		if (!res) {
			fail_node(x, msg);
			return;
		}
		x->who_known = 1;
		x->uid = (unsigned)json_integer_value(json_object_get(res, "uid"));
		snprintf(x->user, sizeof(x->user), "%s", str(res, "user"));
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
				first_line(res, why, sizeof(why));
			if (!x->nrefused++)
				sudo_refusal(x, argv, why, x->refused, sizeof(x->refused));
		}
		x->checked++;
	}
	step(x);
}

/* Before a node's first change: whoami, then `sudo -n -l COMMAND` for each
 * root command; a refusal fails the node with nothing changed. */
static void prepare_step(struct fx_node *x)
{
	if (!x->who_known) {
		send(x, whoami_req(), on_prepare);
	} else if (x->checked < x->nchecks) {
		const char *head[] = {"sudo", "-n", "-l", NULL};
		json_t *req = run_req(head, 0), *a = json_object_get(req, "argv");

		for (char **v = x->checks[x->checked]; *v; v++)
			json_array_append_new(a, json_string(*v));
		send(x, req, on_prepare);
	} else if (x->nrefused) {
		char msg[CD_ERRLEN];
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
		snprintf(msg + n, sizeof(msg) - n, "; nothing was changed on %s", node_host(x->pn));
		fail_node(x, msg);
	} else {
		x->prepared = 1;
		step(x);
	}
}

/* ---------------------------------------------------------------- apply */

/* The node's copy of a file before the change, in the login user's home so
 * that user can read it (root files too), and per host, as nodes may share
 * the home: "~/.bashrc" -> ".bashrc", "/etc/hosts" -> "etc_hosts". */
static void backup_path(const char *run, const char *host, const char *path, char *out, size_t len)
{
	char name[256];
	size_t n = 0;

	path += strncmp(path, "~/", 2) == 0 ? 2 : path[0] == '/' ? 1 : 0;
	for (; *path && n + 1 < sizeof(name); path++)
		name[n++] = *path == '/' ? '_' : *path;
	name[n] = 0;
	snprintf(out, len, "~/.local/state/clusterdoc/backup/%s/%s/%s", run, host, name);
}

static json_t *file_write_req(const char *path, const char *data, size_t len, int remove,
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

/* The message of a failed run: sudo's trouble said plainly. */
static void run_failure(json_t *res, const char *argv0, char *out, size_t len)
{
	const char *se = str(res, "sudo_error");
	char line[400];

	first_line(res, line, sizeof(line));
	if (strcmp(se, "password") == 0)
		snprintf(out, len,
		         "sudo wants a password (sudo -n refused): give the user passwordless sudo "
		         "for %s, or run clusterdoc fix as root",
		         argv0);
	else if (strcmp(se, "denied") == 0)
		snprintf(out, len, "sudo refused %s for this user: %s", argv0, line);
	else if (strcmp(se, "missing") == 0)
		snprintf(out, len, "%s needs root and sudo is not installed", argv0);
	else if (json_is_true(json_object_get(res, "timed_out")))
		snprintf(out, len, "%s did not finish within %d s", argv0, RUN_TIMEOUT_MS / 1000);
	else
		snprintf(out, len, "%s exited with status %lld: %s", argv0,
		         json_integer_value(json_object_get(res, "status")), line);
}

static char **resolve_undo(char **undo, const char *out)
{
	const char *h = strstr(out, "# handle ");
	char handle[24] = "", **v = fix_argv_copy(undo);

	if (h)
		snprintf(handle, sizeof(handle), "%.*s", (int)strspn(h + 9, "0123456789"), h + 9);
	for (size_t k = 0; v[k] && handle[0]; k++)
		if (strcmp(v[k], "{handle}") == 0) {
			free(v[k]);
			v[k] = cd_strdup(handle);
		}
	return v;
}

static void on_apply(struct pool_node *pn, json_t *res, const char *code, const char *msg,
                     void *arg)
{
	struct fx_node *x = arg;
	struct fix_session *s = x->s;
	const struct fix_action *a = &s->plan->nodes[x->i].actions[x->step];
	struct fix_result *r = &s->results[x->i][x->step];
	char err[CD_ERRLEN];

	if (x->finished)
		return;
	if (!res) {
		r->status = FIX_FAILED;
		snprintf(r->message, sizeof(r->message), "%s", msg);
	} else if (a->kind == FIX_FILE) {
		r->status =
		    json_is_true(json_object_get(res, "changed")) ? FIX_APPLIED : FIX_UNCHANGED;
		if (r->status == FIX_APPLIED) {
			struct fix_change *c = fix_journal_add(s->j, node_host(pn), a);
			const char *bk = json_string_value(json_object_get(res, "backup"));

			c->backup = bk ? cd_strdup(bk) : NULL;
		}
	} else if (json_integer_value(json_object_get(res, "status")) == 0 &&
	           !json_is_true(json_object_get(res, "timed_out"))) {
		struct fix_change *c = fix_journal_add(s->j, node_host(pn), a);

		r->status = FIX_APPLIED;
		fix_argv_free(c->undo);
		c->undo = resolve_undo(a->undo, str(res, "stdout"));
	} else {
		r->status = FIX_FAILED;
		run_failure(res, a->argv[0], r->message, sizeof(r->message));
	}
	if (r->status == FIX_FAILED)
		x->failed_fixer = a->fixer;
	if (r->status == FIX_APPLIED && fix_journal_save(s->j, err, sizeof(err)) < 0 &&
	    !s->journal_err[0])
		snprintf(s->journal_err, s->journal_errlen, "%s", err);
	x->step++;
	step(x);
}

static void apply_step(struct fx_node *x)
{
	struct fix_session *s = x->s;
	const struct fix_node_plan *np = &s->plan->nodes[x->i];

	if (!x->prepared) {
		prepare_step(x);
		return;
	}
	while ((size_t)x->step < np->nactions) {
		const struct fix_action *a = &np->actions[x->step];
		struct fix_result *r = &s->results[x->i][x->step];
		char expect[SHA256_HEX_LEN], backup[512];

		if (x->failed_fixer && strcmp(x->failed_fixer, a->fixer) == 0) {
			r->status = FIX_SKIPPED;
			snprintf(r->message, sizeof(r->message),
			         "not tried: an earlier step of the %s fix failed", a->fixer);
			x->step++;
			continue;
		}
		if (a->kind == FIX_FILE) {
			if (a->before_exists)
				sha256_data_hex(a->before, a->before_len, expect);
			else
				snprintf(expect, sizeof(expect), "absent");
			backup_path(s->plan->run, node_host(x->pn), a->path, backup,
			            sizeof(backup));
			send(x,
			     file_write_req(a->path, a->after, a->after_len, 0, expect, a->mode,
			                    a->before_exists ? backup : NULL, a->sudo),
			     on_apply);
		} else {
			send(x, run_req((const char *const *)a->argv, a->sudo), on_apply);
		}
		return;
	}
	node_finish(x);
}

void fix_session_apply(struct fix_session *s, const struct fix_plan *plan, struct fix_journal *j,
                       struct fix_result **results, char *journal_err, size_t errlen,
                       void (*done)(void *), void *arg)
{
	s->mode = FX_APPLY;
	s->plan = plan;
	s->j = j;
	s->results = results;
	s->journal_err = journal_err;
	s->journal_errlen = errlen;
	journal_err[0] = 0;
	s->done = done;
	s->arg = arg;
	for (size_t i = 0; i < s->n; i++)
		s->nodes[i].failed_fixer = NULL;
	begin(s);
}

/* ---------------------------------------------------------------- undo */

/* The index of the change this node undoes at its step-th turn (newest
 * first), or -1 when none is left. */
static long undo_index(const struct fx_node *x)
{
	const struct fix_journal *j = x->s->uj;
	int seen = 0;

	for (size_t k = j->nchanges; k-- > 0;) {
		if (strcmp(j->changes[k].host, node_host(x->pn)) != 0)
			continue;
		if (seen++ == x->step)
			return (long)k;
	}
	return -1;
}

static void on_undo(struct pool_node *pn, json_t *res, const char *code, const char *msg, void *arg)
{
	struct fx_node *x = arg;
	long k = undo_index(x);
	const struct fix_change *c = &x->s->uj->changes[k];
	struct fix_result *r = &x->s->uresults[k];

	if (x->finished)
		return;
	if (!res) {
		r->status = FIX_FAILED;
		if (strcmp(code, "conflict") == 0)
			snprintf(r->message, sizeof(r->message),
			         "%s; left as is (the run's backup on the node: %s)", msg,
			         c->backup ? c->backup : "none");
		else
			snprintf(r->message, sizeof(r->message), "%s", msg);
	} else if (c->kind == FIX_FILE) {
		r->status =
		    json_is_true(json_object_get(res, "changed")) ? FIX_APPLIED : FIX_UNCHANGED;
	} else if (json_integer_value(json_object_get(res, "status")) == 0) {
		r->status = FIX_APPLIED;
	} else {
		r->status = FIX_FAILED;
		run_failure(res, c->undo[0] ? c->undo[0] : "?", r->message, sizeof(r->message));
	}
	x->step++;
	step(x);
}

static void undo_step(struct fx_node *x)
{
	long k;
	const struct fix_change *c;

	if (!x->prepared) {
		prepare_step(x);
		return;
	}
	k = undo_index(x);
	if (k < 0) {
		node_finish(x);
		return;
	}
	c = &x->s->uj->changes[k];
	if (c->kind == FIX_FILE)
		send(x,
		     file_write_req(c->path, c->before, c->before_len, !c->before_exists,
		                    c->after_exists ? c->after_sha256 : "absent", 0644, NULL,
		                    c->sudo),
		     on_undo);
	else
		send(x, run_req((const char *const *)c->undo, c->sudo), on_undo);
}

void fix_session_undo(struct fix_session *s, const struct fix_journal *j,
                      struct fix_result *results, void (*done)(void *), void *arg)
{
	s->mode = FX_UNDO;
	s->uj = j;
	s->uresults = results;
	s->done = done;
	s->arg = arg;
	begin(s);
}

static void step(struct fx_node *x)
{
	switch (x->s->mode) {
	case FX_GATHER:
		gather_step(x);
		break;
	case FX_HOME_ID: {
		json_t *req = proto_request(0, "file_read");

		json_object_set_new(req, "path", json_string(FIX_HOME_ID));
		send(x, req, on_home_id);
		break;
	}
	case FX_APPLY:
		apply_step(x);
		break;
	case FX_UNDO:
		undo_step(x);
		break;
	}
}
