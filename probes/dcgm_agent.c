/* SPDX-License-Identifier: MIT */
/* dcgm_agent.c - the agent's dcgm_diag request (dcgm_agent.h). */
#include "probes/dcgm_agent.h"
#include "probes/facts_ascend.h"
#include "childrun.h"
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define ERR_MAX 4096

struct diag {
	struct loop *loop;
	json_t *out;
	int timeout_ms;
	int cut; /* the request's timeout_ms (the check's deadline) set it */
};

static void diag_done(const struct childrun_result *r, void *arg)
{
	struct diag *d = arg;

	json_object_set_new(d->out, "output", json_stringn(r->out->data, r->out->len));
	json_object_set_new(d->out, "stderr", json_stringn(r->err->data, r->err->len));
	if (r->rc == 0 && !r->spawn_errno && WIFEXITED(r->status))
		json_object_set_new(d->out, "exit", json_integer(WEXITSTATUS(r->status)));
	if (r->rc < 0) {
		char why[256];

		if (r->out_truncated)
			snprintf(why, sizeof(why), "dcgmi printed more than %d bytes",
			         DCGM_OUT_MAX);
		else
			snprintf(why, sizeof(why), "dcgmi did not finish in %d s%s: %s",
			         d->timeout_ms / 1000,
			         d->cut ? " (what the check's --deadline left it)" : "", r->error);
		json_object_set_new(d->out, "error", json_string(why));
	} else if (r->spawn_errno) {
		json_object_set_new(d->out, "error", json_stringn(r->err->data, r->err->len));
	}
	loop_stop(d->loop);
}

/* The deadline: the level's, or the node's test override; shortened to the
 * request's when that is shorter (what the check's --deadline leaves). */
static int diag_timeout(json_t *req, int level, int *cut)
{
	json_t *t = json_object_get(req, "timeout_ms");
	const char *env = getenv("CLUSTERDOC_DCGM_TIMEOUT_MS");
	int ms = env && atoi(env) > 0 ? atoi(env) : dcgm_level_ms(level);

	*cut = json_is_integer(t) && json_integer_value(t) > 0 && json_integer_value(t) < ms;
	return *cut ? (int)json_integer_value(t) : ms;
}

json_t *dcgm_agent_diag(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *lv = json_object_get(req, "level");
	char path[4096], level[4], err[256];
	struct diag d = {0};
	struct childrun_opts o = {
	    .out_max = DCGM_OUT_MAX,
	    .err_max = ERR_MAX,
	    .out_cap = CHILDRUN_CAP_FAIL,
	    .err_cap = CHILDRUN_CAP_TAIL,
	    .start = {.own_group = 1},
	};
	char *argv[] = {path, "diag", "-r", level, "-j", NULL};

	if (!json_is_integer(lv) || json_integer_value(lv) < 1 || json_integer_value(lv) > 2) {
		*code = "bad_request";
		snprintf(msg, msglen, "dcgm_diag: \"level\" must be 1 or 2");
		return NULL;
	}
	if (!ascend_on_path("dcgmi", path, sizeof(path)))
		return json_pack("{s:b}", "present", 0);
	snprintf(level, sizeof(level), "%d", (int)json_integer_value(lv));
	d.timeout_ms = o.timeout_ms = diag_timeout(req, (int)json_integer_value(lv), &d.cut);
	d.out = json_pack("{s:b, s:s, s:I, s:i, s:n}", "present", 1, "path", path, "level",
	                  json_integer_value(lv), "timeout_ms", d.timeout_ms, "exit");
	d.loop = loop_new();
	if (childrun_start_opts(d.loop, argv, &o, diag_done, &d, err, sizeof(err)))
		loop_run(d.loop);
	else
		json_object_set_new(d.out, "error", json_string(err));
	loop_free(d.loop);
	return d.out;
}
