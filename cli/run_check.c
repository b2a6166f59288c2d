/* SPDX-License-Identifier: MIT */
/*
 * run_check.c - the check `clusterdoc run` and `mnist` do first
 * (run_check.h): a fresh check made into the job's plan, or the saved plan
 * with --no-check, then the gate.
 */
#include "run_check.h"
#include "termtext.h"
#include "cd.h"
#include "check_once.h"
#include "fixers/fix_journal.h"
#include "fsutil.h"
#include "hostlist.h"
#include "jobs/jobgate.h"
#include "optgroups.h"
#include "settings.h"
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const struct optuse run_check_uses[] = {
    {.id = CHECKOPT_EXPECT_GPUS,
     .help = "      --expect-gpus N     the check first: a node with fewer GPUs is\n"
             "                          gpu-missing (an error)\n"},
    {0},
};

/* The saved plan of exactly these nodes: <state>/check-<hash of the host
 * list, the master first>.json, beside the runs' directories. */
static int check_path(const char *const *hosts, size_t n, char *out, size_t len)
{
	char base[768], err[CD_ERRLEN], hex[SHA256_HEX_LEN];
	struct sha256 h;
	unsigned char dig[32];

	if (fix_journal_dir(base, sizeof(base), err, sizeof(err)) < 0 ||
	    cd_mkdir_p(base, err, sizeof(err)) < 0)
		return -1;
	sha256_init(&h);
	for (size_t i = 0; i < n; i++)
		sha256_update(&h, hosts[i], strlen(hosts[i]) + 1);
	sha256_final(&h, dig);
	sha256_hex(dig, hex);
	snprintf(out, len, "%s/check-%.16s.json", base, hex);
	return 0;
}

/* The plan where --no-check finds it; a failure is said (cmd NULL: not),
 * and the job goes on. */
static void save_plan(const struct job_plan *p, const char *path, const char *cmd)
{
	char err[CD_ERRLEN] = "";
	json_t *j = job_plan_to_json(p);
	char *text = json_dumps(j, JSON_INDENT(2));

	if ((!text || cd_write_file_atomic(path, text, strlen(text), 0600, err, sizeof(err)) < 0) &&
	    cmd)
		termtext_printf(stderr, "clusterdoc %s: the check is not saved: %s\n", cmd, err);
	free(text);
	json_decref(j);
}

void run_check_save(const struct job_plan *p, const char *const *hosts, size_t n)
{
	char path[1024];

	if (check_path(hosts, n, path, sizeof(path)) == 0)
		save_plan(p, path, NULL);
}

static struct job_plan *load_plan(struct run_check *c, const char *path)
{
	char err[CD_ERRLEN], why[CD_ERRLEN];
	struct job_plan *p;
	json_error_t je;
	json_t *j;
	long long age;

	j = path[0] ? json_load_file(path, 0, &je) : NULL;
	if (!j) {
		fprintf(stderr,
		        "clusterdoc %s: --no-check: no saved check of these nodes (%s): run once "
		        "without --no-check\n",
		        c->cmd, path[0] ? path : "no state directory");
		return NULL;
	}
	p = job_plan_from_json(j, err, sizeof(err));
	json_decref(j);
	if (!p) {
		fprintf(stderr,
		        "clusterdoc %s: --no-check: the saved check %s cannot be used: %s: run "
		        "once without --no-check\n",
		        c->cmd, path, err);
		return NULL;
	}
	if (job_plan_key_differs(p, c->hosts, c->n, c->master_port, c->iface, why, sizeof(why))) {
		fprintf(stderr,
		        "clusterdoc %s: --no-check: the saved check of these nodes does not fit "
		        "this job: %s: run once without --no-check\n",
		        c->cmd, why);
		job_plan_free(p);
		return NULL;
	}
	age = (long long)time(NULL) - p->time;
	fprintf(stderr, "# using the check of these nodes saved %lld min %lld s ago\n", age / 60,
	        age % 60);
	return p;
}

static struct job_plan *fresh_plan(struct run_check *c, const char *path)
{
	struct check_once once;
	struct netmodel *m;
	struct job_plan *p;
	char err[CD_ERRLEN];

	once = (struct check_once){.pool = c->pool};
	netcheck_opts_init(&once.o);
	once.o.master_port = c->master_port;
	once.o.expect_gpus = c->expect_gpus;
	/* the site's declaration of its nodes, as every `clusterdoc check` reads it */
	if (settings_expect(&once.o.expect, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc %s: %s\n", c->cmd, err);
		return NULL;
	}
	m = netmodel_new(c->hosts, c->n);
	once.m = m;
	/* says what --no-check would do, never that it was given */
	fprintf(stderr, "# checking the nodes' network first (to use the last saved check "
	                "instead, pass --no-check)\n");
	if (check_once_run(&once, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc %s: the check: %s\n", c->cmd, err);
		netmodel_free(m);
		return NULL;
	}
	p = job_plan_from_check(m, once.d, c->master_port, c->iface);
	diagnosis_free(once.d);
	netmodel_free(m);
	if (path[0])
		save_plan(p, path, c->cmd);
	return p;
}

/* An explicit --master-port the check found blocked: named, with the one
 * it proved. 0 to go on (the port is the plan's now), -1 refused. */
static int asked_port(struct run_check *c, struct job_plan *p)
{
	if (!c->master_port || p->master_port == c->master_port)
		return 0;
	if (p->master_port_proved && !c->force) {
		fprintf(stderr,
		        "clusterdoc %s: --master-port %d is not reachable on the master %s from "
		        "every node (the check's master-port-blocked); the check proved %d: use "
		        "--master-port %d, or leave --master-port out\n",
		        c->cmd, c->master_port, p->nodes[p->master].host, p->master_port,
		        p->master_port);
		return -1;
	}
	job_plan_use_port(p, c->master_port);
	return 0;
}

/* --env may not override what the plan sets, unless forced. */
static int env_overrides(const struct run_check *c, const struct job_plan *p)
{
	int bad = 0;

	for (size_t k = 0; k < c->nenv; k++) {
		const char *eq = strchr(c->env[k], '=');
		char name[64];

		if (!eq || (size_t)(eq - c->env[k]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - c->env[k]), c->env[k]);
		for (size_t i = 0; i < p->n; i++) {
			if (!job_plan_sets(p, i, name))
				continue;
			if (c->force) {
				termtext_printf(stderr,
				                "# --force: --env %s overrides the plan's value\n",
				                name);
			} else {
				fprintf(stderr,
				        "clusterdoc %s: --env %s overrides the value the plan sets "
				        "(clusterdoc env shows it): drop it, or add --force\n",
				        c->cmd, name);
				bad = 1;
			}
			break;
		}
	}
	return bad ? -1 : 0;
}

/* The refused errors are the own state of some nodes only: say how to start
 * the job on the others. */
static void say_leave_out(const struct run_check *c, const struct job_plan *p)
{
	const char **hosts;
	struct hostlist *hl;
	char err[CD_ERRLEN], *folded;

	if (!job_gate_leave_out(p, c->n == 1, c->uses ? c->uses : JOB_USES_ALL, &hosts))
		return;
	hl = hostlist_new();
	for (size_t i = 0; hosts[i]; i++)
		if (hostlist_add_arg(hl, hosts[i], err, sizeof(err)) < 0)
			break;
	folded = hostlist_fold(hl);
	termtext_printf(stderr,
	                "clusterdoc %s: these are the own state of %s alone: `-x %s` starts "
	                "the job on the other nodes (after a check of them)\n",
	                c->cmd, folded, folded);
	free(folded);
	hostlist_free(hl);
	free(hosts);
}

int run_check_gate(struct run_check *c)
{
	char path[1024], *refused = NULL, *avoided = NULL;
	struct job_plan *p;
	int gating, rc = -1;
	size_t unproved = 0;

	if (check_path(c->hosts, c->n, path, sizeof(path)) < 0)
		path[0] = '\0';
	p = c->no_check ? load_plan(c, path) : fresh_plan(c, path);
	if (!p)
		return -1;
	if (asked_port(c, p) < 0 || env_overrides(c, p) < 0)
		goto out;
	gating =
	    job_gate_judge_for(p, c->n == 1, c->uses ? c->uses : JOB_USES_ALL, &refused, &avoided);
	for (char *s = avoided, *nl; s && *s && (nl = strchr(s, '\n')); s = nl + 1)
		fprintf(stderr, "# %.*s\n", (int)(nl - s), s);
	if (gating && !c->force) {
		termtext_printf(
		    stderr,
		    "clusterdoc %s: the check found what would break the job, and the "
		    "plan's environment does not avoid it (--force starts it anyway)%s:\n%s",
		    c->cmd, c->dry_run ? "; a run would be refused, the plan follows" : "",
		    refused);
		say_leave_out(c, p);
		if (!c->dry_run)
			goto out;
		c->refused = 1;
	} else if (gating)
		termtext_printf(stderr, "# --force: not refused for what the check found:\n%s",
		                refused);
	if (!c->master_port && p->master_port_proved && p->port_tried &&
	    p->master_port != p->port_tried)
		fprintf(stderr, "# MASTER_PORT=%d: the port the check proved (%d is not usable)\n",
		        p->master_port, p->port_tried);
	for (size_t i = 0; i < p->n; i++) {
		if (!p->nodes[i].proved)
			termtext_printf(stderr, "%s%s",
			                unproved++
			                    ? ","
			                    : "# not proved by the check (each takes its own "
			                      "interface, as NCCL picks it): ",
			                p->nodes[i].host);
	}
	if (unproved)
		fputc('\n', stderr);
	c->plan = p;
	p = NULL;
	rc = 0;
out:
	job_plan_free(p);
	free(refused);
	free(avoided);
	return rc;
}

void run_check_fini(struct run_check *c)
{
	job_plan_free(c->plan);
	c->plan = NULL;
}

struct job_plan *run_check_saved(const char *const *hosts, size_t n, long long *age_s)
{
	char path[1024], err[CD_ERRLEN];
	struct job_plan *p = NULL;
	json_error_t je;
	json_t *j;

	if (check_path(hosts, n, path, sizeof(path)) < 0 || !(j = json_load_file(path, 0, &je)))
		return NULL;
	p = job_plan_from_json(j, err, sizeof(err));
	json_decref(j);
	if (p && job_plan_key_differs(p, hosts, n, 0, NULL, err, sizeof(err))) {
		job_plan_free(p);
		return NULL;
	}
	if (p)
		*age_s = (long long)time(NULL) - p->time;
	return p;
}

int run_check_order(const char *const *names, size_t n, const char *master, const char ***out,
                    char *err, size_t errlen)
{
	const char **o = cd_calloc(n ? n : 1, sizeof(*o));
	size_t at = 0, k = 1;

	if (master) {
		while (at < n && strcmp(names[at], master) != 0)
			at++;
		if (at == n) {
			snprintf(
			    err, errlen,
			    "--master %s is not one of the nodes given with -w (or --hostfile)",
			    master);
			free(o);
			return -1;
		}
	}
	if (n)
		o[0] = names[at];
	for (size_t i = 0; i < n; i++)
		if (i != at)
			o[k++] = names[i];
	*out = o;
	return 0;
}
