/* SPDX-License-Identifier: MIT */
/*
 * fix_gather.c - the gather of a fix run (fix_run.h): on every node,
 * who logs in, the home's token, the files the fixers edit and, where the
 * firewall fixer acts, the firewall; then a second pass reads the home's
 * token back so nodes sharing a home agree.
 */
#include "fix_run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "homegroups.h"
#include "proto.h"

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

/* The gather's steps: whoami, the home's token (read, then replaced by a
 * fresh one), the files, then the firewall's commands. */
enum {
	GATHER_WHOAMI = 0,
	GATHER_PEEK,
	GATHER_MARK,
	GATHER_FILES = 8, /* gather_path's paths are steps 3..GATHER_FILES */
	GATHER_NFT,
	GATHER_UFW,
	GATHER_FIREWALLD,
	GATHER_FWD_ZONE,
	GATHER_FWD_RULES,
	GATHER_END,
};

/* The file step k reads: gather_path's, or from GATHER_END on the
 * caller's extra ones (fix_run_gather_extra). */
static const char *file_path(const struct fix_run_node *x, int k)
{
	if (k >= GATHER_END)
		return x->s->extra[k - GATHER_END];
	return gather_path(&x->s->states[x->i], k - (GATHER_MARK + 1));
}

static void on_gather(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                      void *arg)
{
	struct fix_run_node *x = arg;
	struct fix_node_state *st = &x->s->states[x->i];
	int k = x->step;

	if (x->finished)
		return;
	if (k == GATHER_WHOAMI) {
		if (!res) {
			fix_run_node_fail(x, msg);
			return;
		}
		st->uid = (unsigned)json_integer_value(json_object_get(res, "uid"));
		snprintf(st->user, sizeof(st->user), "%s", fix_run_str(res, "user"));
		snprintf(st->home, sizeof(st->home), "%s", fix_run_str(res, "home"));
		snprintf(st->shell, sizeof(st->shell), "%s", fix_run_str(res, "shell"));
		st->has_sudo = json_is_string(json_object_get(res, "sudo"));
		x->uid = st->uid;
		snprintf(x->user, sizeof(x->user), "%s", st->user);
		json_decref(x->paths);
		x->paths = json_incref(json_object_get(res, "paths"));
	} else if (k == GATHER_PEEK) {
		/* what the mark may replace: the token as it is now */
		homegroups_expect(res, x->home_expect, sizeof(x->home_expect));
	} else if (k == GATHER_MARK) {
		/* a conflict: a node of the same home replaced it first */
	} else if (k <= GATHER_FILES || k >= GATHER_END) {
		struct fix_file_state *f = fix_state_add_file(st, file_path(x, k));

		if (!res) {
			snprintf(f->error, sizeof(f->error), "%s: %s", code, msg);
		} else {
			const char *b64 = fix_run_str(res, "data");

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
		const char *out = res ? fix_run_str(res, "stdout") : "";
		char line[256];

		if (res)
			fix_run_first_line(res, line, sizeof(line));
		else
			snprintf(line, sizeof(line), "%s", msg);
		switch (k) {
		case GATHER_NFT:
			if (status == 0)
				st->nft_json = cd_strdup(out);
			else if (res && json_is_string(json_object_get(res, "sudo_error")))
				fix_run_sudo_refusal(
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
	fix_run_step(x);
}

void fix_run_gather_step(struct fix_run_node *x)
{
	struct fix_node_state *st = &x->s->states[x->i];
	const char *iface = x->s->fw_iface ? x->s->fw_iface[x->i] : NULL;
	int k = x->step, sudo = st->uid != 0;
	char zarg[160], zone[96];

	if (k == GATHER_WHOAMI) {
		fix_run_send(x, fix_run_req_whoami(), on_gather);
	} else if (k == GATHER_PEEK) {
		fix_run_send(x, homegroups_req_read(), on_gather);
	} else if (k == GATHER_MARK) {
		char token[HOMEGROUPS_TOKEN_LEN];

		/* A fresh token every run, replacing the one just read: nodes
		 * that share the home read back the one that won, and a token
		 * copied with a node's image is replaced on each node by its
		 * own, so separate homes never look shared. */
		homegroups_token_new(token);
		fix_run_send(
		    x, homegroups_req_mark(token, x->home_expect[0] ? x->home_expect : "absent"),
		    on_gather);
	} else if (k <= GATHER_FILES ||
	           (k >= GATHER_END && (size_t)(k - GATHER_END) < x->s->nextra)) {
		json_t *req = proto_request(0, "file_read");

		json_object_set_new(req, "path", json_string(file_path(x, k)));
		fix_run_send(x, req, on_gather);
	} else if (k < GATHER_END && !iface) {
		/* no firewall to read: on to the extra files */
		x->step = GATHER_END;
		fix_run_step(x);
	} else if (k < GATHER_END) {
		const char *nft[] = {"nft", "-j", "list", "ruleset", NULL};
		const char *ufw[] = {"ufw", "status", NULL};
		const char *fwd[] = {"firewall-cmd", "--state", NULL};
		const char *zq[] = {"firewall-cmd", zarg, NULL};
		const char *rq[] = {"firewall-cmd", zone, "--list-rich-rules", NULL};

		st->fw_gathered = 1;
		snprintf(zarg, sizeof(zarg), "--get-zone-of-interface=%s", iface);
		snprintf(zone, sizeof(zone), "--zone=%s", st->firewalld_zone);
		if (k == GATHER_NFT)
			fix_run_send(x, fix_run_req_run(nft, sudo), on_gather);
		else if (k == GATHER_UFW)
			fix_run_send(x, fix_run_req_run(ufw, sudo), on_gather);
		else if (k == GATHER_FIREWALLD)
			fix_run_send(x, fix_run_req_run(fwd, sudo), on_gather);
		else if (k == GATHER_FWD_ZONE && st->firewalld_running == 1)
			fix_run_send(x, fix_run_req_run(zq, sudo), on_gather);
		else if (k == GATHER_FWD_RULES && st->firewalld_zone[0])
			fix_run_send(x, fix_run_req_run(rq, sudo), on_gather);
		else {
			x->step++;
			fix_run_step(x);
		}
	} else {
		st->gathered = 1;
		fix_run_node_done(x);
	}
}

static void on_home_id(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                       void *arg)
{
	struct fix_run_node *x = arg;
	struct fix_node_state *st = &x->s->states[x->i];

	if (x->finished)
		return;
	homegroups_token(res, st->home_id);
	fix_run_node_done(x);
}

void fix_run_home_id_step(struct fix_run_node *x)
{
	fix_run_send(x, homegroups_req_read(), on_home_id);
}

/* The second pass, once every node wrote its token if none was there:
 * each reads the token that stayed, so nodes sharing the home agree. */
static void home_id_pass(void *arg)
{
	struct fix_run *s = arg;

	s->mode = FX_HOME_ID;
	s->done = s->gather_done;
	s->arg = s->gather_arg;
	fix_run_begin(s);
}

void fix_run_gather_extra(struct fix_run *s, const char *const *paths, size_t n)
{
	s->extra = paths;
	s->nextra = n;
}

void fix_run_gather(struct fix_run *s, struct fix_node_state *states, const int *skip,
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
	fix_run_begin(s);
}
