/* SPDX-License-Identifier: MIT */
/*
 * cmd_fix.c - `clusterdoc fix`: check, gather, plan; with --apply, confirm,
 * apply, journal and check again; --undo RUN restores what a run changed.
 *
 * Exit status: plan: 0 nothing to change, 1 changes planned, 2 a node could
 * not be checked. --apply: 0 every change applied and verified, 1 a change
 * failed or a finding is still there, 2 could not check or not confirmed.
 * --undo: 0 everything restored, 1 something was left as is, 2 the journal
 * or the nodes could not be read. SIGINT or SIGTERM during the apply: 130 or
 * 143 (128 + the signal) once the answers in flight are recorded.
 */
#include "cd.h"
#include "jsondoc.h"
#include "termtext.h"
#include "check_once.h"
#include "cmd_fix_undo.h"
#include "command.h"
#include "commands.h"
#include "fixers/fix.h"
#include "fixers/fix_flow.h"
#include "fixers/fix_journal.h"
#include "fixers/fix_run.h"
#include "fixers/sudocmd.h"
#include "loop.h"
#include "optgroups.h"
#include "phase.h"
#include "report/fix_render.h"
#include "secret.h"
#include "signals.h"
#include "targets.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* After SIGINT or SIGTERM during the apply, how long the head waits for
 * the answers of the changes already sent (docs/clusterdoc.1). */
#define INTERRUPT_WAIT_MS 5000
/* How long the agents wait for the head while a question waits for its
 * answer on the terminal (or SSH_ASKPASS, whose own deadline is 5 min). */
#define QUESTION_HOLD_MS (15 * 60 * 1000)

enum {
	OPT_APPLY = OPT_TARGETS_END,
	OPT_YES,
	OPT_ONLY,
	OPT_UNDO,
	OPT_LIST,
	OPT_PORT_RANGE,
	OPT_SUDOERS,
	OPT_USER,
};

struct fix_cli {
	struct targets t;
	struct netcheck_opts o;
	struct fix_opts fo;
	const char *master;
	const char *undo;
	const char *sudoers_user;
	int apply, yes, list, deadline_s, sudoers;
	struct checkopt_dst ck; /* where the check group's values go: o, master, deadline_s */
};

/* The check group's options fix takes; its checks run with them. */
static const struct optuse fix_check_opts[] = {
    {.id = CHECKOPT_MASTER},
    {.id = CHECKOPT_PORT},
    {.id = CHECKOPT_PROBE_TIMEOUT},
    {.id = CHECKOPT_EXPECT_GPUS},
    {.id = CHECKOPT_DEADLINE,
     .help = "      --deadline S         end each check after S seconds\n"},
    {0},
};

/* --port-range LO-HI: 1024 <= LO < HI <= 65535. */
static int parse_port_range(const char *arg, struct fix_opts *fo, char *err, size_t errlen)
{
	char *end;
	long lo = strtol(arg, &end, 10), hi;

	if (end == arg || *end != '-')
		goto bad;
	arg = end + 1;
	hi = strtol(arg, &end, 10);
	if (end == arg || *end || lo < 1024 || hi > 65535 || lo >= hi)
		goto bad;
	fo->port_lo = (int)lo;
	fo->port_hi = (int)hi;
	return 0;
bad:
	return cd_errf(err, errlen, CD_ERR_PARSE,
	               "--port-range wants LO-HI with 1024 <= LO < HI <= 65535, as in 49152-65535");
}

static const struct optdef own_defs[] = {
    {"apply", no_argument, OPT_APPLY, "--apply",
     "      --apply              make the changes (asks unless --yes)\n"},
    {"yes", no_argument, 'y', "--yes", "  -y, --yes                do not ask\n"},
    {"only", required_argument, OPT_ONLY, "--only",
     "      --only ID,...        only these fixers\n"},
    {"undo", required_argument, OPT_UNDO, "--undo",
     "      --undo RUN           restore what that run changed (its journal is in\n"
     "                           ~/.local/state/clusterdoc/runs/)\n"},
    {"list", no_argument, OPT_LIST, "--list",
     "      --list               the runs that can be undone\n"},
    {"port-range", required_argument, OPT_PORT_RANGE, "--port-range",
     "      --port-range LO-HI   port-range: the ephemeral range to narrow to\n"
     "                           (default 49152-65535)\n"},
    {"sudoers", no_argument, OPT_SUDOERS, "--sudoers",
     "      --sudoers            print the sudoers lines that let a non-root login\n"
     "                           run every root command of the fixers (sudo -n)\n"},
    {"user", required_argument, OPT_USER, "--user",
     "      --user NAME          the user those lines name (default: $USER)\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct fix_cli *c = ctx;

	switch (opt) {
	case OPT_APPLY:
		c->apply = 1;
		return 0;
	case 'y':
		c->yes = 1;
		return 0;
	case OPT_ONLY:
		c->fo.only = arg;
		return 0;
	case OPT_UNDO:
		c->undo = arg;
		return 0;
	case OPT_LIST:
		c->list = 1;
		return 0;
	case OPT_PORT_RANGE:
		return parse_port_range(arg, &c->fo, err, errlen);
	case OPT_SUDOERS:
		c->sudoers = 1;
		return 0;
	case OPT_USER:
		c->sudoers_user = arg;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of fix", shown);
}

static int finish_own(void *ctx, const struct optset *s, char *err, size_t errlen)
{
	struct fix_cli *c = ctx;

	(void)s;
	if (fix_check_only(&c->fo, err, errlen) < 0)
		return CD_ERR_PARSE;
	if (c->undo && (c->apply || c->fo.only))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--undo restores a run; it takes no --apply or --only");
	return 0;
}

static const struct optgroup own_group = {
    .defs = own_defs,
    .ndefs = CD_ARRAY_LEN(own_defs),
    .parse = parse_own,
    .finish = finish_own,
    .cmdline_only = (const int[]){OPT_APPLY, 'y', OPT_UNDO, OPT_LIST, OPT_SUDOERS, 0}};

static const struct optuse own_first[] = {{.id = OPT_APPLY}, {.id = 'y'},      {.id = OPT_ONLY},
                                          {.id = OPT_UNDO},  {.id = OPT_LIST}, {0}};
static const struct optuse own_last[] = {
    {.id = OPT_PORT_RANGE}, {.id = OPT_SUDOERS}, {.id = OPT_USER}, {0}};

static const struct command_opts opts[] = {
    {.g = &own_group, .uses = own_first},
    {.g = &checkopt_group, .uses = fix_check_opts, .dst = offsetof(struct fix_cli, ck)},
    {.g = &own_group, .uses = own_last},
    {0},
};

const struct command command_fix = {
    .name = "fix",
    .summary = "plan, apply and undo the fixes for what check found (dry run first)",
    .usage = "usage: clusterdoc fix -w HOSTLIST [--apply [--yes]] [--only ID,...] [options]\n"
             "       clusterdoc fix --undo RUN [-w HOSTLIST]\n"
             "       clusterdoc fix --list\n"
             "       clusterdoc fix --sudoers [--user NAME]\n"
             "Check the nodes, then show what would fix the findings: per node, the file\n"
             "edits as diffs and the commands as they would run. Nothing changes without\n"
             "--apply, which asks first, applies through non-interactive sudo where root is\n"
             "needed, keeps an undo journal and checks again.\n\n"
             "Fixers: env (the verified NCCL/Gloo interface variables in env.sh, ~/.nccl.conf\n"
             "and the shell's rc file), hosts (the hostname on the data address in "
             "/etc/hosts),\n"
             "firewall (TCP from the cluster's subnet on the data interface, never disabling\n"
             "the firewall), ssh-key (nodes that refuse the head's key get it in\n"
             "~/.ssh/authorized_keys, logging in once by password: asked on the terminal or\n"
             "through SSH_ASKPASS), port-range (only with --only: a narrower\n"
             "ip_local_port_range, and the firewall opens only it and MASTER_PORT).\n\n"
             "Exit status: 0 nothing to change (or all applied and verified), 1 changes\n"
             "planned (or a fix failed or did not verify), 2 could not check, 130/143\n"
             "Ctrl-C or SIGTERM during the apply (it waits up to 5 s for the answers in\n"
             "flight, and records them; a second Ctrl-C exits at once).\n\n"
             "Options:\n",
    .shortopts = "y",
    .nodes = COMMAND_NODES_LATER,
    .targets = offsetof(struct fix_cli, t),
    .opts = opts,
    .run = cmd_fix,
};

/* ---------------------------------------------------------------- phases */

static int check(struct fix_cli *c, struct netmodel *m, struct diagnosis **d)
{
	struct check_once once = {.pool = &c->t.pool,
	                          .o = c->o,
	                          .deadline_s = c->deadline_s,
	                          .m = m,
	                          .master = c->master};
	char err[CD_ERRLEN];

	if (check_once_run(&once, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc fix: %s\n", err);
		return -1;
	}
	*d = once.d;
	return once.checked;
}

/* Before a question that blocks the loop: the agents hold on, and the
 * lines that say so leave on the loop's next turns. */
static void hold_agents(struct fix_flow *flow, struct loop *loop)
{
	fix_flow_hold(flow, QUESTION_HOLD_MS);
	for (int k = 0; k < 3; k++)
		loop_run_once(loop, 0);
}

/* Ask on the terminal; no terminal and no --yes is a refusal. */
static int confirm(const struct fix_flow_report *r)
{
	char line[16];

	/* the plan (stdout) first, whole, when both go to one file */
	fflush(stdout);
	if (!isatty(STDIN_FILENO)) {
		fprintf(stderr, "clusterdoc fix: --apply asks before changing anything and there "
		                "is no terminal to ask on: add --yes\n");
		return 0;
	}
	termtext_printf(stderr, "\nApply %zu change%s on %zu node%s? [y/N] ", r->changes,
	                r->changes == 1 ? "" : "s", r->nodes, r->nodes == 1 ? "" : "s");
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

/* Each finding, its nodes and which fixer answers it ("by hand" when none
 * does: its own fix is in `clusterdoc check`'s text and docs/findings.md). */
static void print_findings(const struct netmodel *m, const struct diagnosis *d)
{
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];
		char by[128], nodes[512] = "";
		size_t used = 0;

		for (size_t q = 0; q < f->nnodes && used < sizeof(nodes); q++)
			used += (size_t)snprintf(nodes + used, sizeof(nodes) - used, "%s%s",
			                         q ? "," : "", m->nodes[f->nodes[q]].host);
		termtext_printf(stdout, "  %-7s %-24s %-16s fix: %s\n", severity_name(f->severity),
		                f->id, nodes, fix_fixers_for(f, by, sizeof(by)) ? by : "by hand");
	}
}

/* The errors no fixer answers: the fix leaves them, and says so after its
 * plan (the exit status counts the plan's changes, not them). */
static void print_left(const struct netmodel *m, const struct diagnosis *d)
{
	int n = 0;

	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];
		char by[128];

		if (f->severity != SEV_ERROR || fix_fixers_for(f, by, sizeof(by)))
			continue;
		if (!n++)
			printf("\nleft to you (no fixer of clusterdoc changes these; `clusterdoc "
			       "check` "
			       "gives each one's fix):\n");
		termtext_printf(stdout, "  %s", f->id);
		for (size_t q = 0; q < f->nnodes; q++)
			termtext_printf(stdout, "%s%s", q ? "," : " on ",
			                m->nodes[f->nodes[q]].host);
		termtext_printf(stdout, ": %s\n", f->message ? f->message : "");
	}
}

/* The flow waits for us: stop the loop (fix_flow.h's changed). */
static void on_flow(struct fix_flow *flow, void *arg)
{
	phase_done(arg);
}

static void wait_flow(struct phase *ph)
{
	ph->done = 0;
	phase_wait(ph);
}

/* The apply's signals (signals.h): the first stops the run and waits a
 * bounded time for the answers in flight; a second exits at once, the
 * intents being on disk already. */
struct apply_wait {
	struct phase *ph;
	struct fix_flow *flow;
	int sig;       /* the first signal, or 0 */
	int timed_out; /* INTERRUPT_WAIT_MS passed */
	uint64_t timer;
};

static void on_wait_over(struct loop *loop, void *arg)
{
	struct apply_wait *w = arg;

	w->timer = 0;
	w->timed_out = 1;
	phase_done(w->ph);
}

static void on_signal(struct signals *s, int sig, void *arg)
{
	struct apply_wait *w = arg;
	const struct fix_flow_report *r = fix_flow_report(w->flow);
	char err[CD_ERRLEN];

	if (w->sig) {
		fprintf(stderr,
		        "clusterdoc fix: %s again: exiting now; the journal of run %s holds "
		        "every change sent (undo with: clusterdoc fix --undo %s)\n",
		        strsignal(sig), r->run, r->run);
		_exit(signals_exit_status(w->sig));
	}
	w->sig = sig;
	if (fix_flow_interrupt(w->flow, err, sizeof(err)) < 0)
		termtext_printf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n",
		                err);
	fprintf(stderr,
	        "clusterdoc fix: %s: sending no new change; waiting up to %d s for the answers "
	        "in flight (again to exit now)\n",
	        strsignal(sig), INTERRUPT_WAIT_MS / 1000);
	w->timer = loop_timer_add(w->ph->loop, INTERRUPT_WAIT_MS, on_wait_over, w);
}

/* What the flow asks while it applies: the password on the terminal (or
 * SSH_ASKPASS), and going on without the login stage when it failed; after
 * a signal, nothing more: until APPLIED or the wait is over. */
static void answer_login(struct fix_flow *flow, struct phase *ph, struct apply_wait *w)
{
	const struct fix_flow_report *r = fix_flow_report(flow);
	char *pw = cd_calloc(1, FIX_PASSWORD_MAX), err[CD_ERRLEN], prompt[512];

	for (;;) {
		wait_flow(ph);
		if (w->timed_out)
			break;
		if (r->state == FIX_FLOW_PASSWORD && !w->sig) {
			fix_flow_password_prompt(flow, prompt, sizeof(prompt));
			hold_agents(flow, ph->loop);
			if (secret_ask(prompt, pw, FIX_PASSWORD_MAX, err, sizeof(err)) == 0) {
				fix_flow_password(flow, pw, err, sizeof(err));
			} else {
				termtext_printf(stderr, "clusterdoc fix: ssh-key: %s\n", err);
				fix_flow_skip_login(flow, err, sizeof(err));
			}
			secret_wipe(pw, FIX_PASSWORD_MAX);
		} else if (r->state == FIX_FLOW_PASSWORD || r->state == FIX_FLOW_LOGIN_FAILED) {
			if (r->state == FIX_FLOW_LOGIN_FAILED)
				termtext_printf(stderr, "clusterdoc fix: %s\n", r->error);
			fix_flow_skip_login(flow, err, sizeof(err));
		} else if (r->state == FIX_FLOW_APPLIED) {
			break;
		}
	}
	free(pw);
}

/* After a signal: what was done, on stderr; the exit status. */
static int report_interrupted(const struct fix_flow_report *r, const struct apply_wait *w)
{
	size_t made = 0, unknown = fix_journal_unknown(r->j), unsent = 0;
	char err[CD_ERRLEN];

	for (size_t k = 0; k < r->j->nchanges; k++)
		made += r->j->changes[k].outcome == FIX_OUTCOME_APPLIED;
	for (size_t i = 0; r->p && i < r->p->nnodes; i++)
		for (size_t k = 0; k < r->p->nodes[i].nactions; k++)
			unsent += r->results[i][k].status == FIX_SKIPPED ||
			          r->results[i][k].status == FIX_PENDING;
	if (fix_journal_save(r->j, err, sizeof(err)) < 0)
		termtext_printf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n",
		                err);
	fprintf(stderr,
	        "clusterdoc fix: interrupted (%s): %zu change%s made, %zu of unknown outcome "
	        "(no answer within %d s), %zu not sent; run %s is journalled: undo with: "
	        "clusterdoc fix --undo %s\n",
	        strsignal(w->sig), made, made == 1 ? "" : "s", unknown, INTERRUPT_WAIT_MS / 1000,
	        unsent, r->run, r->run);
	return signals_exit_status(w->sig);
}

static void print_json(const struct fix_flow_report *r, const struct netmodel *m,
                       const struct netmodel *m2)
{
	json_t *o = fix_plan_json(m, r->p, m2 ? r->results : NULL);

	json_object_set_new(o, "login", fix_login_json(&r->login, m));
	if (m2) {
		json_t *ver = json_array(), *login = json_array();

		if (r->login_ran)
			fix_login_run_json(login, &r->login, m, &r->login_outcome);
		fix_verify_json(ver, m2, &r->verdicts);
		json_object_set_new(o, "login_applied", login);
		json_object_set_new(o, "applied", json_true());
		json_object_set_new(o, "verify", ver);
	}
	jsondoc_dumpf(o, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(o);
}

/* What was applied and how the new check verified it, as text. */
static void print_applied(const struct fix_cli *c, const struct fix_flow_report *r,
                          const struct netmodel *m, const struct netmodel *m2)
{
	printf("\napplied (run %s):\n", r->run);
	if (r->login_ran)
		fix_print_login_run(stdout, &r->login, m, &r->login_outcome);
	if (r->p->nactions)
		fix_print_plan(stdout, m, r->p, r->results);
	printf("\nverified by a new check:\n");
	fix_print_verify(stdout, m2, &r->verdicts);
	if (r->login.nlogin && fix_checked_selected(&c->fo))
		printf("\nnodes reached by key only now were not checked before: run "
		       "clusterdoc fix again for their other fixes\n");
	if (fix_journal_count(r->j))
		printf("\nundo with: clusterdoc fix --undo %s\n", r->run);
}

/* Check, then the fix flow (fix_flow.h): plan and show; with --apply,
 * confirm, apply and verify with a new check. */
static int fix(struct fix_cli *c)
{
	const char *const *hosts = (const char *const *)c->t.hosts->names;
	size_t n = hostlist_count(c->t.hosts);
	struct netmodel *m = netmodel_new(hosts, n), *m2 = NULL;
	struct diagnosis *d = NULL, *d2 = NULL;
	struct phase ph = {.loop = loop_new()};
	struct fix_flow *flow = NULL;
	const struct fix_flow_report *r;
	static const int sigs[] = {SIGINT, SIGTERM};
	struct apply_wait w = {.ph = &ph};
	struct signals *sg = NULL;
	char err[CD_ERRLEN];
	int rc = 2, checked;

	checked = check(c, m, &d);
	if (checked < 0)
		goto out;
	flow = fix_flow_start(
	    ph.loop,
	    &(struct fix_flow_opts){
	        .fo = c->fo, .pool = &c->t.pool, .hosts = hosts, .nhosts = n, .m = m, .d = d},
	    on_flow, &ph, err, sizeof(err));
	if (!flow) {
		termtext_printf(stderr, "clusterdoc fix: %s\n", err);
		goto out;
	}
	wait_flow(&ph);
	r = fix_flow_report(flow);
	if (r->state != FIX_FLOW_PLANNED) {
		termtext_printf(stderr, "clusterdoc fix: %s\n",
		                r->state == FIX_FLOW_FAILED ? r->error : "the plan was not made");
		goto out;
	}
	if (!checked && !r->login.nlogin) {
		fprintf(stderr, "clusterdoc fix: no node could be checked\n");
		goto out;
	}
	if (!c->t.json) {
		printf("check: %d error%s, %d warning%s\n", d->errors, d->errors == 1 ? "" : "s",
		       d->warnings, d->warnings == 1 ? "" : "s");
		print_findings(m, d);
		printf("\nplan (run %s)%s:\n", r->run,
		       c->apply ? "" : "; nothing changes without --apply");
		fix_print_plan(stdout, m, r->p, NULL);
		fix_print_login(stdout, &r->login, m);
		print_left(m, d);
	}
	rc = r->gathered < (size_t)checked || (size_t)checked + r->login.nlogin < n ? 2
	     : r->changes                                                           ? 1
	                                                                            : 0;
	if (!c->apply || !r->changes) {
		if (c->t.json)
			print_json(r, m, NULL);
		else if (c->apply)
			printf("\nnothing to change\n");
		goto out;
	}
	if (!c->yes && isatty(STDIN_FILENO))
		hold_agents(flow, ph.loop);
	if (!c->yes && !confirm(r)) {
		fprintf(stderr, "clusterdoc fix: nothing was changed\n");
		rc = 2;
		goto out;
	}
	/* from here a signal is an event: the changes sent get their answers */
	w.flow = flow;
	sg = signals_new(ph.loop, sigs, CD_ARRAY_LEN(sigs), on_signal, &w, err, sizeof(err));
	if (!sg)
		termtext_printf(stderr,
		                "clusterdoc fix: %s: Ctrl-C will not wait for the nodes' answers\n",
		                err);
	if (fix_flow_apply(flow, NULL, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc fix: %s\n", err);
		goto out;
	}
	answer_login(flow, &ph, &w);
	if (w.sig) {
		rc = report_interrupted(r, &w);
		goto out;
	}
	signals_free(sg);
	sg = NULL;
	if (r->state != FIX_FLOW_APPLIED) {
		fprintf(stderr, "clusterdoc fix: the apply did not finish\n");
		goto out;
	}
	if (r->login_ran && r->login_outcome.journal_error[0])
		termtext_printf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n",
		                r->login_outcome.journal_error);
	if (r->journal_error[0])
		termtext_printf(stderr, "clusterdoc fix: the undo journal could not be saved: %s\n",
		                r->journal_error);

	/* verify with a check of its own: new agents, new login shells */
	m2 = netmodel_new(hosts, n);
	if (check(c, m2, &d2) < 0) {
		diagnosis_free(d2);
		d2 = NULL;
	}
	fix_flow_verify(flow, m2, d2, err, sizeof(err));
	if (c->t.json)
		print_json(r, m, m2);
	else
		print_applied(c, r, m, m2);
	rc = r->failed || r->verdicts.bad || r->journal_error[0] ? 1 : 0;
out:
	if (w.timer)
		loop_timer_cancel(ph.loop, w.timer);
	fix_flow_free(flow);
	signals_free(sg);
	loop_free(ph.loop);
	diagnosis_free(d);
	diagnosis_free(d2);
	netmodel_free(m);
	netmodel_free(m2);
	return rc;
}

/* ---------------------------------------------------------------- undo, list */

/* The sudoers fragment for user (default $USER, else the effective user's
 * name); a name that sudoers would misread is refused. */
static int print_sudoers(const char *user)
{
	char *text;

	if (!user || !*user)
		user = getenv("USER");
	if (!user || !*user) {
		fprintf(stderr, "clusterdoc fix: --sudoers: say which user with --user NAME\n");
		return 2;
	}
	if (strspn(user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
	        strlen(user) ||
	    user[0] == '-') {
		termtext_printf(stderr, "clusterdoc fix: --user \"%s\" is not a plain user name\n",
		                user);
		return 2;
	}
	text = sudocmd_sudoers(user);
	fputs(text, stdout);
	free(text);
	return 0;
}

int cmd_fix(int argc, char **argv)
{
	struct fix_cli c = {0};
	struct fix_journal *j = NULL;
	char err[CD_ERRLEN];
	int rc = 2, p, given;

	targets_init(&c.t);
	netcheck_opts_init(&c.o);
	c.ck = (struct checkopt_dst){.o = &c.o, .master = &c.master, .deadline_s = &c.deadline_s};
	p = command_parse(&command_fix, &c, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	if (c.list) {
		rc = cmd_fix_list();
		goto out;
	}
	if (c.sudoers) {
		rc = print_sudoers(c.sudoers_user);
		goto out;
	}
	if (c.undo) {
		if (fix_journal_load(c.undo, &j, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc fix: %s\n", err);
			goto out;
		}
		if (j->undone) {
			printf("run %s was already undone\n", j->run);
			rc = 0;
			goto out;
		}
		/* without -w: the hosts the run changed */
		given = hostlist_count(c.t.hosts) > 0;
		for (size_t k = 0; k < j->nchanges && !given; k++)
			if (hostlist_parse(c.t.hosts, j->changes[k].host, err, sizeof(err)) < 0) {
				termtext_printf(stderr,
				                "clusterdoc fix: the journal's host %s: %s\n",
				                j->changes[k].host, err);
				goto out;
			}
		if (!j->nchanges) {
			printf("run %s changed nothing\n", j->run);
			rc = 0;
			goto out;
		}
	}
	if (targets_finish(&c.t, "fix") < 0)
		goto out;
	rc = c.undo ? cmd_fix_undo(j, (const char *const *)c.t.hosts->names,
	                           hostlist_count(c.t.hosts), &c.t.pool)
	            : fix(&c);
out:
	fix_journal_free(j);
	targets_fini(&c.t);
	return rc;
}
