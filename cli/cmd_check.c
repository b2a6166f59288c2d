/* SPDX-License-Identifier: MIT */
/*
 * cmd_check.c - `clusterdoc check` and `clusterdoc env`: run the network
 * check (probes/netcheck.h), diagnose it (probes/diagnose.h), and render
 * the findings and the verified environment as text, JSON
 * (docs/report-format.md) or shell `export` lines.
 *
 * Results can also go to Prometheus, a Pushgateway and JUnit (report.h),
 * and to Slurm (check_slurm.h: the Prolog verdict, --drain, --undrain).
 *
 * Exit status: check: 0 no error findings, 1 error findings, 2 a node (or
 * everything) could not be checked to the end (unreachable, or partial: it
 * stopped answering after its probe), or a report, drain or the deadline
 * failed. With --slurm-prolog: 1 only for error findings on the local node.
 * env: 0 every value verified, 1 some value could not be verified, 2 a node
 * shown could not be checked to the end.
 */
#include "cd.h"
#include "termtext.h"
#include "check_once.h"
#include "cmd_check_watch.h"
#include "report/check_render.h"
#include "check_slurm.h"
#include "command.h"
#include "commands.h"
#include "optgroups.h"
#include "probes/dcgm_agent.h"
#include "probes/diagnose.h"
#include "report/report.h"
#include "run_check.h"
#include "settings.h"
#include "targets.h"
#include "transport_back.h"

#include <errno.h>
#include <unistd.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

enum {
	OPT_NODE = OPT_TARGETS_END,
	OPT_SLURM_PROLOG,
	OPT_DRAIN,
	OPT_UNDRAIN,
	OPT_WATCH,
	OPT_COUNT,
	OPT_LOCAL,
	OPT_DRY_RUN,
};

/* The Prolog's default bound on the whole check, in seconds; with
 * --dcgm-level, the level's own bound on dcgmi is added to it. */
#define PROLOG_DEADLINE_S 30

struct check_run {
	int env; /* `clusterdoc env` */
	struct targets t;
	struct report_opts rep_o;
	struct netcheck_opts o;
	struct checkopt_dst ck; /* where the check group's values go: o, master, deadline_s */
	const char *master;     /* --master HOST */
	const char *only;       /* env --node HOST; check --slurm-prolog: the local node */
	int prolog;             /* --slurm-prolog */
	int drain, undrain;     /* --drain, --undrain */
	int local;              /* --local: this node alone, through the local transport */
	int dry_run;            /* --dry-run: print the drains, run none */
	char local_name[256];   /* --local: the node's name (--node, $SLURMD_NODENAME,
	                           the hostname) */
	int deadline_s;         /* --deadline; 0 = none */
	int deadline_hit;
	struct netcheck_stats stats; /* what the deadline cut, among others */
	long long started_at;        /* Unix time */
	struct netmodel *m;
	struct diagnosis *d;
	int64_t started_ms;
	int watch_ms; /* --watch SECONDS, in ms; 0 = one check */
	int count;    /* --count N: rounds of --watch; 0 = until interrupted */
};

/* ---------------------------------------------------------------- command */

/* the check group, in its order, with the deadline in the check's words */
static const struct optuse check_help[] = {
    {.id = CHECKOPT_MASTER},
    {.id = CHECKOPT_PORT},
    {.id = CHECKOPT_PROBE_TIMEOUT},
    {.id = CHECKOPT_NO_FIREWALL},
    {.id = CHECKOPT_FULL_MATRIX_MAX},
    {.id = CHECKOPT_PYTHON},
    {.id = CHECKOPT_EXPECT_GPUS},
    {.id = CHECKOPT_DCGM_LEVEL},
    {.id = CHECKOPT_DEADLINE,
     .help = "      --deadline S         end the check after S seconds, reporting the nodes\n"
             "                           that had not answered (default: none; 30 with\n"
             "                           --slurm-prolog)\n"},
    {.id = CHECKOPT_SEED},
    {0},
};

static const struct optdef own_defs[] = {
    {"slurm-prolog", no_argument, OPT_SLURM_PROLOG, "--slurm-prolog",
     "      --slurm-prolog       run as a Slurm Prolog: print nothing, exit 1 only for\n"
     "                           error findings on this node (docs/slurm.md)\n"},
    {"node", required_argument, OPT_NODE, "--node",
     "      --node HOST          this node, for --slurm-prolog (default\n"
     "                           $SLURMD_NODENAME, else the hostname); with\n"
     "                           --drain/--undrain: act on this node only\n"},
    {"drain", no_argument, OPT_DRAIN, "--drain",
     "      --drain              drain the nodes with error findings of their own\n"
     "                           state (scontrol, Reason=\"clusterdoc: IDS\";\n"
     "                           docs/slurm.md says which)\n"},
    {"undrain", no_argument, OPT_UNDRAIN, "--undrain",
     "      --undrain            resume the nodes that pass and were drained by\n"
     "                           clusterdoc\n"},
    {"watch", required_argument, OPT_WATCH, "--watch",
     "      --watch S            keep the agents connected and check again every S\n"
     "                           seconds, printing the findings raised and cleared\n"
     "                           (--json: one line per round); Ctrl-C ends it with\n"
     "                           the last state\n"},
    {"count", required_argument, OPT_COUNT, "--count",
     "      --count N            with --watch: stop after N rounds\n"},
    {"local", no_argument, OPT_LOCAL, "--local",
     "      --local              check this node itself, with no SSH: its agent runs\n"
     "                           here; the checks between nodes are skipped (a Slurm\n"
     "                           Prolog or HealthCheckProgram: docs/slurm.md)\n"},
    {"dry-run", no_argument, OPT_DRY_RUN, "--dry-run",
     "      --dry-run            with --drain: print the scontrol command of each\n"
     "                           drain, run none\n"},
};

/* --watch SECONDS (a decimal, at least 0.1 s) and --count N. */
static int parse_watch(struct check_run *r, int opt, const char *val, char *err, size_t errlen)
{
	char *end;
	double s;
	long n;

	if (opt == OPT_WATCH) {
		s = strtod(val, &end);
		if (end == val || *end || !(s >= 0.1 && s <= 86400))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--watch wants seconds from 0.1 to 86400, not \"%s\"", val);
		r->watch_ms = (int)(s * 1000 + 0.5);
		return 0;
	}
	n = strtol(val, &end, 10);
	if (end == val || *end || n < 1 || n > 1000000)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--count wants a number of rounds from 1, not \"%s\"", val);
	r->count = (int)n;
	return 0;
}

/* check's and env's own options. */
static int parse_own(void *ctx, int opt, const char *val, const char *shown, char *err,
                     size_t errlen)
{
	struct check_run *r = ctx;

	switch (opt) {
	case OPT_NODE:
		r->only = val;
		return 0;
	case OPT_WATCH:
	case OPT_COUNT:
		return parse_watch(r, opt, val, err, errlen);
	case OPT_LOCAL:
		r->local = 1;
		return 0;
	case OPT_DRY_RUN:
		r->dry_run = 1;
		return 0;
	case OPT_SLURM_PROLOG:
	case OPT_DRAIN:
	case OPT_UNDRAIN:
		r->prolog |= opt == OPT_SLURM_PROLOG;
		r->drain |= opt == OPT_DRAIN;
		r->undrain |= opt == OPT_UNDRAIN;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option here", shown);
}

/* --local: the one node checked is this one, by the name Slurm knows it
 * by, and it runs through the local transport (no SSH, no upload); the
 * nodes -w or the configuration gave are not used. */
static int set_local(struct check_run *r, char *err, size_t errlen)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (r->t.hosts_given)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--local checks this node alone: not with -w, --hostfile, -g or -x "
		               "(--node NAME names it)");
	if (r->t.pool.launcher != LAUNCHER_SSH)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--local starts this node's agent itself: not with --launcher");
	if (r->watch_ms)
		return cd_errf(err, errlen, CD_ERR_PARSE, "--local runs once: not with --watch");
	if (r->only)
		snprintf(r->local_name, sizeof(r->local_name), "%s", r->only);
	else if (env && *env)
		snprintf(r->local_name, sizeof(r->local_name), "%s", env);
	else if (gethostname(r->local_name, sizeof(r->local_name) - 1) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "--local: gethostname: %s", strerror(errno));
	hostlist_free(r->t.hosts);
	r->t.hosts = hostlist_new();
	/* the configuration's nodes are not used, nor is its exclude: this node is
	 * checked, as its Prolog or health check asks */
	hostlist_free(r->t.exclude);
	r->t.exclude = hostlist_new();
	if (hostlist_parse(r->t.hosts, r->local_name, err, errlen) < 0 ||
	    hostlist_count(r->t.hosts) != 1)
		return cd_errf(err, errlen, CD_ERR_PARSE, "--local: \"%s\" is not a node name",
		               r->local_name);
	r->t.pool.local_host = r->t.hosts->names[0];
	return 0;
}

/* What check's own options say together. */
static int finish_own(void *ctx, const struct optset *s, char *err, size_t errlen)
{
	struct check_run *r = ctx;

	(void)s;
	if (r->env)
		return 0;
	if (r->only && !r->prolog && !r->drain && !r->undrain && !r->local)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--node names the local node of --local, --slurm-prolog, --drain or "
		               "--undrain; without them, every node given is checked");
	if (r->dry_run && !r->drain)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--dry-run says what --drain would do; give --drain with it");
	if (settings_expect(&r->o.expect, err, errlen) < 0)
		return -1;
	if (r->local && set_local(r, err, errlen) < 0)
		return -1;
	if (r->count && !r->watch_ms)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--count N is the number of rounds of --watch");
	if (r->watch_ms && (r->prolog || r->drain || r->undrain))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "--watch runs alone: not with --slurm-prolog, --drain or --undrain");
	if (r->prolog && !r->deadline_s)
		r->deadline_s = PROLOG_DEADLINE_S + dcgm_level_ms(r->o.dcgm_level) / 1000;
	return 0;
}

static const struct optgroup own_group = {
    .defs = own_defs,
    .ndefs = CD_ARRAY_LEN(own_defs),
    .parse = parse_own,
    .finish = finish_own,
    .cmdline_only = (const int[]){OPT_SLURM_PROLOG, OPT_NODE, OPT_DRAIN, OPT_UNDRAIN, OPT_WATCH,
                                  OPT_LOCAL, OPT_DRY_RUN, 0}};

/* env takes --node alone, in its own words */
static const struct optuse env_own[] = {
    {.id = OPT_NODE, .help = "      --node HOST          print only this node's lines\n"},
    {0},
};

static const struct command_opts check_opts[] = {
    {.g = &checkopt_group, .uses = check_help, .dst = offsetof(struct check_run, ck)},
    {.g = &own_group},
    {.g = &reportopt_group, .dst = offsetof(struct check_run, rep_o)},
    {0},
};

/* env writes no reports: it knows their options, as check does, and refuses them */
static const struct command_opts env_opts[] = {
    {.g = &checkopt_group, .uses = check_help, .dst = offsetof(struct check_run, ck)},
    {.g = &own_group, .uses = env_own},
    {.g = &reportopt_group, .refused = 1},
    {0},
};

const struct command command_check = {
    .name = "check",
    .summary = "diagnose the network: what NCCL and Gloo pick, what peers reach, fixes",
    .usage = "usage: clusterdoc check -w HOSTLIST [options]\n"
             "Probe every node's interfaces, routes, hostname and firewall, test TCP\n"
             "between every pair of nodes on every candidate address, predict what NCCL and\n"
             "Gloo will pick, and print the findings (worst first) and the verified "
             "environment.\n"
             "Exit status: 0 no error findings, 1 error findings, 2 a node could not be "
             "checked\n(or a report or drain failed). With --slurm-prolog: 1 only for error "
             "findings on\nthe local node.\n\n"
             "Options:\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct check_run, t),
    .opts = check_opts,
    .run = cmd_check,
};

const struct command command_env = {
    .name = "env",
    .summary = "the verified NCCL/Gloo/MASTER_ environment as export lines",
    .usage = "usage: clusterdoc env -w HOSTLIST [--node HOST] [options]\n"
             "Check the network, then print shell-ready export lines of the verified\n"
             "environment (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME,\n"
             "MASTER_ADDR, MASTER_PORT; NCCL_IB_HCA and NCCL_IB_GID_INDEX where RDMA ports\n"
             "need them) for one node or for every node.\n"
             "Exit status: 0 all verified, 1 something could not be verified, 2 could not "
             "check.\n\n"
             "Options:\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct check_run, t),
    .opts = env_opts,
    .run = cmd_env,
};

/* --slurm-prolog: 1 only when an error finding names the local node. */
static int prolog_status(const struct check_run *r)
{
	char name[256];
	long local = check_local_node(r->m, r->only, name, sizeof(name));

	if (local < 0) {
		/* a Prolog that fails here would drain the node for a setup
		 * mistake; say so loudly instead */
		openlog("clusterdoc", LOG_PID, LOG_DAEMON);
		syslog(LOG_WARNING,
		       "--slurm-prolog: this node (%s) is not one of the nodes checked; set --node "
		       "or SLURMD_NODENAME",
		       name);
		closelog();
		fprintf(stderr,
		        "clusterdoc check: --slurm-prolog: this node (%s) is not one of the nodes "
		        "checked; set --node or SLURMD_NODENAME\n",
		        name);
		return 0;
	}
	return check_slurm_prolog_verdict(r->m, r->d, (size_t)local);
}

/* --local: what one node alone cannot show. Each row is a check that needs
 * the node's peers; `check -w HOSTLIST` from a login node runs them. */
static const char *const needs_peers[] = {
    "TCP between the nodes on every candidate address (NCCL's and Gloo's choice; "
    "ipv6-no-route, route-egress-mismatch)",
    "the master's port and address as the other nodes reach them",
    "the nodes' hostnames and /etc/hosts agreeing",
    "path MTU and bulk transfers between the nodes",
    "the RDMA pair test and rates, MTUs and versions agreeing across nodes",
};

static void print_local_note(const struct check_run *r)
{
	printf("\n%s was checked alone (--local); these checks need its peers "
	       "(clusterdoc check -w HOSTLIST):\n",
	       r->local_name);
	for (size_t i = 0; i < CD_ARRAY_LEN(needs_peers); i++)
		printf("  - %s\n", needs_peers[i]);
}

/* After the check: the exit status, Slurm's part and the reports. checked:
 * the nodes probed; complete: those of them checked to the end (a partial
 * node could not be checked everything: 2). */
static int finish_check(struct check_run *r, int checked, int complete)
{
	int rc = complete < (int)r->m->nnodes ? 2 : r->d->errors ? 1 : 0;
	int failed = 0;
	long local = -1;
	char name[256];

	if (!checked)
		fprintf(stderr, "clusterdoc check: no node could be checked\n");
	if (r->deadline_hit && !r->prolog)
		fprintf(
		    stderr,
		    "clusterdoc check: the deadline (%d s) passed during the %s phase; the nodes "
		    "that had not answered are reported as node-unreachable (partial when "
		    "they had answered their probe)\n",
		    r->deadline_s, r->stats.deadline_phase[0] ? r->stats.deadline_phase : "last");
	else if (r->stats.connect_timeout_ms &&
	         r->stats.connect_timeout_ms < r->o.probe_timeout_ms && !r->prolog)
		fprintf(stderr,
		        "clusterdoc check: the deadline (%d s) shortened each TCP attempt to %d ms "
		        "(--probe-timeout %d)\n",
		        r->deadline_s, r->stats.connect_timeout_ms, r->o.probe_timeout_ms);
	if (r->prolog)
		rc = prolog_status(r);
	if ((r->drain || r->undrain) && r->only) {
		local = check_local_node(r->m, r->only, name, sizeof(name));
		if (local < 0) {
			fprintf(stderr,
			        "clusterdoc check: --node %s is not one of the nodes checked\n",
			        r->only);
			failed = 1;
		}
	}
	if (r->drain && (!r->only || local >= 0) &&
	    check_slurm_drain(r->m, r->d, local, r->prolog,
	                      !r->dry_run ? NULL
	                      : r->t.json ? stderr
	                                  : stdout) < 0)
		failed = 1;
	if (r->undrain && (!r->only || local >= 0) &&
	    check_slurm_undrain(r->m, r->d, local, r->prolog) < 0)
		failed = 1;
	if (report_wanted(&r->rep_o)) {
		struct report_run run = {
		    .command = "check",
		    .elapsed_s = (double)(cd_now_ms() - r->started_ms) / 1000,
		    .started_at = r->started_at,
		    .exit_status = rc,
		};
		struct prom *prom = report_check_prom(r->m, r->d, &run);
		struct junit *junit = report_check_junit(r->m, r->d, &run);

		failed |= report_emit(&r->rep_o, &run, prom, junit) < 0;
		prom_free(prom);
		junit_free(junit);
	}
	/* a Prolog's status is the node's health alone: a report or drain that
	 * failed was said on stderr and must not drain this node */
	if (failed && !r->prolog && rc < 2)
		rc = 2;
	return rc;
}

/* The last round of --watch: its status and reports as check's. */
static int finish_watch(void *arg, const struct check_watch_round *last)
{
	struct check_run *r = arg;
	int rc;

	r->m = (struct netmodel *)last->m;
	r->d = (struct diagnosis *)last->d;
	r->stats = last->stats;
	r->deadline_hit = last->deadline_hit;
	rc = finish_check(r, last->checked, last->checked - last->partial);
	r->m = NULL; /* the watch's */
	r->d = NULL;
	return rc;
}

static int run_watch(struct check_run *r)
{
	struct check_watch_cli c = {
	    .pool = &r->t.pool,
	    .hosts = (const char *const *)r->t.hosts->names,
	    .n = hostlist_count(r->t.hosts),
	    .json = r->t.json,
	    .finish = finish_watch,
	    .finish_arg = r,
	};

	c.o.check = r->o;
	c.o.interval_ms = r->watch_ms;
	c.o.count = r->count;
	c.o.deadline_s = r->deadline_s;
	if (r->master) {
		size_t i = 0;

		while (i < c.n && strcmp(c.hosts[i], r->master) != 0)
			i++;
		if (i == c.n) {
			fprintf(
			    stderr,
			    "clusterdoc check: --master %s is not one of the nodes given with -w\n",
			    r->master);
			return 2;
		}
		c.o.check.master = i;
	}
	return cmd_check_watch(&c);
}

static int run(int argc, char **argv, int env)
{
	const char *cmd = env ? "env" : "check";
	struct check_run r = {0};
	struct check_result res;
	struct check_once once;
	char err[CD_ERRLEN];
	int rc = 2, p, checked = 0, complete = 0;

	targets_init(&r.t);
	netcheck_opts_init(&r.o);
	r.env = env;
	r.ck = (struct checkopt_dst){.o = &r.o, .master = &r.master, .deadline_s = &r.deadline_s};
	p = command_parse(env ? &command_env : &command_check, &r, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	r.started_ms = cd_now_ms();
	r.started_at = (long long)time(NULL);
	if (r.watch_ms) {
		rc = run_watch(&r);
		goto out;
	}
	r.m = netmodel_new((const char *const *)r.t.hosts->names, hostlist_count(r.t.hosts));
	once = (struct check_once){
	    .pool = &r.t.pool, .o = r.o, .deadline_s = r.deadline_s, .m = r.m, .master = r.master};
	if (check_once_run(&once, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc %s: %s\n", cmd, err);
		goto out;
	}
	r.d = once.d;
	r.deadline_hit = once.deadline_hit;
	r.stats = once.stats;
	checked = once.checked;
	complete = once.checked - once.partial;
	res = (struct check_result){.m = r.m, .d = r.d, .started_ms = r.started_ms};
	res.stats = once.stats;
	if (r.local) {
		res.needs_peers = needs_peers;
		res.nneeds_peers = CD_ARRAY_LEN(needs_peers);
	}
	/* the job plan, for `run --no-check` (the master first, as run orders the nodes) */
	if (!r.prolog && r.m->master == 0 && checked) {
		struct job_plan *plan = job_plan_from_check(r.m, r.d, r.o.master_port, NULL);

		run_check_save(plan, (const char *const *)r.t.hosts->names,
		               hostlist_count(r.t.hosts));
		job_plan_free(plan);
	}
	if (env && r.t.json)
		rc = checked ? check_print_env_json(&res, r.only) : 2;
	else if (env)
		rc = checked ? check_print_env(&res, r.only) : 2;
	else if (r.prolog)
		; /* a Prolog is quiet: the verdict below logs what fails */
	else if (r.t.json)
		check_print_json(&res);
	else
		check_print_text(&res, checked);
	if (r.local && !env && !r.prolog && !r.t.json)
		print_local_note(&r);
	if (!env)
		rc = finish_check(&r, checked, complete);
	else if (!checked)
		termtext_printf(stderr, "clusterdoc %s: no node could be checked\n", cmd);
out:
	diagnosis_free(r.d);
	netmodel_free(r.m);
	targets_fini(&r.t);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int cmd_env(int argc, char **argv)
{
	return run(argc, argv, 1);
}
