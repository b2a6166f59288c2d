/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `clusterdoc run -w HOSTS [options] -- COMMAND [ARGS...]`: the
 * user's own command on every node at once (jobs/run.h), every
 * rank's output live as "HOST rR: line", logs and a summary under the
 * head's state directory. Exit status: 0 every node succeeded; the first
 * failing rank's code (128+signal); 1 it failed otherwise (hung, lost);
 * 2 it could not start (options, nodes, the command missing on a node).
 */
#include "cd.h"
#include "jsondoc.h"
#include "termtext.h"
#include "jobs/jobgate.h"
#include "jobs/rdzvwatch.h"
#include "jobs/run.h"
#include "jobs/runopt.h"
#include "command.h"
#include "commands.h"
#include "fixers/fix_journal.h"
#include "fsutil.h"
#include "job.h"
#include "job_process.h"
#include "loop.h"
#include "optgroups.h"
#include "phase.h"
#include "probes/netcheck.h"
#include "report/run_render.h"
#include "run_check.h"
#include "scan.h"
#include "signals.h"
#include "suspend.h"
#include "targets.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The command line's own options; the job's are jobs/runopt.h's group. */
enum {
	OPT_MASTER = OPT_TARGETS_END,
	OPT_ENV_FILE,
	OPT_SYNC,
	OPT_SYNC_CAP,
	OPT_FORCE,
	OPT_NO_CHECK,
	OPT_QUIET,
	OPT_GROUP,
	OPT_DRY_RUN,
	OPT_HEAD_GRACE,
};

#define MAX_ENV 256
/* --head-grace's default: how long the job runs on while its head is
 * stopped or cut off, past the agents' silence bound (docs/run.md) */
#define RUN_HEAD_GRACE_MS (5 * 60 * 1000)

struct run_cli {
	int head_grace_ms; /* --head-grace: for the job's agents, not the check's */
	struct targets t;
	struct run_opts o;
	int quiet, group, dry_run, force, no_check;
	int master_port;              /* --master-port, 0: none given (the plan's) */
	const char *master;           /* --master NODE, or NULL: the first node */
	const char **ordered;         /* the nodes, the master first */
	struct run_check check;       /* the job's plan (saved as RUN/check.json) */
	struct netcheck_opts check_o; /* the check's options run takes (--expect-gpus) */
	struct checkopt_dst ck;       /* where they go: check_o */
	struct runopt_dst job;        /* where the job's options go: o, the agents' launcher, env */
	char *env[MAX_ENV];           /* owned "NAME=value" */
	size_t nenv;
	const char *sync_dir;
	long long sync_cap;
	struct runsync_manifest manifest;
	struct loop *loop;
	struct sshpool *pool;
	struct run *run;
	const char *const *hosts;
	char logdir[1024]; /* "" when the logs cannot be kept */
	FILE **logs;       /* [2 * node]: out, err */
	struct group *groups;
};

/* --group: the lines of every node, folded at the end (clubak). */
struct group {
	char **lines;
	size_t n, cap;
};

/* ---------------------------------------------------------------- live */

/* torchrun --tee prefixes a worker's line with "[ROLE<local rank>]:"
 * ("[default0]:"): that worker's global rank, else the node's first one. */
static int line_rank(const struct run_report *rep, size_t node, const char *text, const char **rest)
{
	const char *p = text, *digits;
	int local;

	*rest = text;
	if (*p != '[')
		return rep->nodes[node].first_rank;
	while (*++p && *p != ']' && !isdigit((unsigned char)*p))
		;
	digits = p;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == digits || p[0] != ']' || p[1] != ':')
		return rep->nodes[node].first_rank;
	local = atoi(digits);
	if (local >= rep->nodes[node].nranks)
		return rep->nodes[node].first_rank;
	*rest = p[2] == ' ' ? p + 3 : p + 2;
	return rep->nodes[node].first_rank + local;
}

static void on_line(void *arg, size_t node, const char *stream, const char *text)
{
	struct run_cli *c = arg;
	const struct run_report *rep = run_report(c->run);
	int is_err = strcmp(stream, "err") == 0, rank;
	const char *rest;
	FILE *f = c->t.json ? stderr : stdout;
	char line[4096];

	rank = line_rank(rep, node, text, &rest);
	if (c->logs && c->logs[2 * node + is_err]) {
		fprintf(c->logs[2 * node + is_err], "%s\n", text);
		fflush(c->logs[2 * node + is_err]);
	}
	snprintf(line, sizeof(line), "%s r%d: %s", c->hosts[node], rank, rest);
	if (c->group) {
		struct group *g = &c->groups[node];

		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 64;
			g->lines = cd_realloc(g->lines, g->cap * sizeof(*g->lines));
		}
		g->lines[g->n++] = cd_strdup(rest);
		return;
	}
	if (c->quiet && !is_err)
		return;
	termtext_printf(f, "%s\n", line);
	fflush(f);
}

/* Where the lost lines were, in the node's log and on the screen: the log
 * says how much it lacks rather than passing for complete. */
static void on_dropped(void *arg, size_t node, long long count)
{
	struct run_cli *c = arg;

	if (c->logs && c->logs[2 * node]) {
		fprintf(c->logs[2 * node],
		        "[clusterdoc: %lld line(s) of stdout and stderr lost here: the burst "
		        "outran the head; the node's agent keeps the newest %d]\n",
		        count, JOB_LOG_KEEP);
		fflush(c->logs[2 * node]);
	}
	fprintf(stderr,
	        "%s: %lld line(s) of output lost here (a burst past the %d the agent keeps)\n",
	        c->hosts[node], count, JOB_LOG_KEEP);
}

static const struct phase_words phase_words[] = {
    {"probe", "connecting to the nodes"},
    {"put", "putting the run's files on the nodes"},
    {"start", "starting the command on every node"},
    {"orphans", "checking that nothing of the run is left on the nodes"},
};

static void on_phase(void *arg, const char *what)
{
	struct run_cli *c = arg;

	if (!c->quiet)
		phase_say(phase_words, CD_ARRAY_LEN(phase_words), what);
}

static void on_done(void *arg)
{
	loop_stop(((struct run_cli *)arg)->loop);
}

static const struct run_events events = {
    .line = on_line, .dropped = on_dropped, .phase = on_phase, .done = on_done};

static void on_signal(struct signals *s, int sig, void *arg)
{
	struct run_cli *c = arg;

	termtext_printf(stderr, "# %s: stopping the job on every node\n",
	                sig == SIGINT ? "interrupted" : "terminated");
	run_stop(c->run, sig == SIGINT ? "interrupted (Ctrl-C): stopped the job on every node"
	                               : "terminated: stopped the job on every node");
}

/* Ctrl-Z (suspend.h): the job's agents hold while the head is stopped. */
static void hold_agents(void *arg, int hold_ms)
{
	struct run_cli *c = arg;

	sshpool_keepalive_hold(c->pool, hold_ms);
}

static const struct suspend_ops suspend_ops = {.hold = hold_agents};

/* ---------------------------------------------------------------- groups */

static int same_lines(const struct group *a, const struct group *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t k = 0; k < a->n; k++) {
		if (strcmp(a->lines[k], b->lines[k]) != 0)
			return 0;
	}
	return 1;
}

/* Nodes whose whole output is the same are printed once, under their folded names. */
static void print_groups(struct run_cli *c, size_t n)
{
	FILE *f = c->t.json ? stderr : stdout;
	char *done = cd_calloc(n ? n : 1, 1);

	for (size_t i = 0; i < n; i++) {
		struct hostlist *hl;
		char err[CD_ERRLEN], *folded;

		if (done[i])
			continue;
		hl = hostlist_new();
		for (size_t j = i; j < n; j++) {
			if (!done[j] && same_lines(&c->groups[i], &c->groups[j])) {
				done[j] = 1;
				hostlist_add_arg(hl, c->hosts[j], err, sizeof(err));
			}
		}
		folded = hostlist_fold(hl);
		termtext_printf(f, "---------------\n%s (%zu)\n---------------\n", folded,
		                hostlist_count(hl));
		for (size_t k = 0; k < c->groups[i].n; k++)
			termtext_printf(f, "%s\n", c->groups[i].lines[k]);
		free(folded);
		hostlist_free(hl);
	}
	free(done);
}

/* ---------------------------------------------------------------- logs */

/* path created (or emptied) 0600 whatever the umask, like summary.json: a
 * job's output may hold what its owner alone should read. NULL on error. */
static FILE *log_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fchmod(fd, 0600) < 0 || !(f = fdopen(fd, "w"))) {
		close(fd);
		return NULL;
	}
	return f;
}

static void logs_open(struct run_cli *c, const char *run_id, size_t n)
{
	char base[768], err[CD_ERRLEN], path[1200];

	if (fix_journal_dir(base, sizeof(base), err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc run: %s; the logs are not kept\n", err);
		return;
	}
	snprintf(c->logdir, sizeof(c->logdir), "%s/%s", base, run_id);
	if (cd_mkdir_p(c->logdir, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc run: %s; the logs are not kept\n", err);
		c->logdir[0] = '\0';
		return;
	}
	c->logs = cd_calloc(2 * (n ? n : 1), sizeof(*c->logs));
	for (size_t i = 0; i < n; i++) {
		for (int s = 0; s < 2; s++) {
			snprintf(path, sizeof(path), "%s/%s.%s", c->logdir, c->hosts[i],
			         s ? "err" : "out");
			c->logs[2 * i + s] = log_create(path);
		}
	}
}

static void logs_close(struct run_cli *c, size_t n, const struct run_report *rep)
{
	char path[1200], err[CD_ERRLEN];
	json_t *j;
	char *text;

	if (!c->logdir[0])
		return;
	for (size_t i = 0; c->logs && i < 2 * n; i++) {
		if (c->logs[i])
			fclose(c->logs[i]);
	}
	free(c->logs);
	c->logs = NULL;
	if (!rep)
		return;
	j = c->check.plan ? job_plan_to_json(c->check.plan) : NULL;
	if (j && (text = json_dumps(j, JSON_INDENT(2)))) {
		snprintf(path, sizeof(path), "%s/check.json", c->logdir);
		if (cd_write_file_atomic(path, text, strlen(text), 0600, err, sizeof(err)) < 0)
			termtext_printf(stderr, "clusterdoc run: %s\n", err);
		free(text);
	}
	json_decref(j);
	j = run_report_json(rep);
	text = jsondoc_dumps(j, JSON_INDENT(2));
	snprintf(path, sizeof(path), "%s/summary.json", c->logdir);
	if (text && cd_write_file_atomic(path, text, strlen(text), 0600, err, sizeof(err)) < 0)
		termtext_printf(stderr, "clusterdoc run: %s\n", err);
	free(text);
	json_decref(j);
}

/* ---------------------------------------------------------------- options */

static int add_env(struct run_cli *c, const char *kv, size_t len, char *err, size_t errlen)
{
	if (run_check_env(kv, len, err, errlen) < 0)
		return CD_ERR_PARSE;
	if (c->nenv == MAX_ENV)
		return cd_errf(err, errlen, CD_ERR_PARSE, "more than %d --env variables", MAX_ENV);
	c->env[c->nenv] = cd_malloc(len + 1);
	memcpy(c->env[c->nenv], kv, len);
	c->env[c->nenv++][len] = '\0';
	return 0;
}

/* runopt_dst.env: each --env, in order with --env-file's lines */
static int add_env_option(void *arg, const char *kv, char *err, size_t errlen)
{
	return add_env(arg, kv, strlen(kv), err, errlen);
}

static int read_env_file(struct run_cli *c, const char *path, char *err, size_t errlen)
{
	char *data = NULL, why[CD_ERRLEN];
	size_t len = 0, n;
	const char *p, *end, *line;
	int rc = 0;

	if (scan_read_file(path, 1 << 20, SCAN_FILE_REGULAR, &data, &len, why, sizeof(why)) < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "--env-file %s", why);
	if (memchr(data, '\0', len)) {
		free(data);
		return cd_errf(err, errlen, CD_ERR_PARSE, "--env-file %s holds a NUL byte", path);
	}
	p = data;
	end = data + len;
	while (rc == 0 && scan_next_line(&p, end, &line, &n)) {
		while (n && (*line == ' ' || *line == '\t')) {
			line++;
			n--;
		}
		if (n == 0 || *line == '#')
			continue;
		if (n > 7 && strncmp(line, "export ", 7) == 0) {
			line += 7;
			n -= 7;
		}
		rc = add_env(c, line, n, err, errlen);
	}
	free(data);
	return rc;
}

static const struct optdef own_defs[] = {
    {"master", required_argument, OPT_MASTER, "--master",
     "      --master NODE       the node of rank 0 (default: the first node)\n"},
    {"env-file", required_argument, OPT_ENV_FILE, "--env-file",
     "      --env-file FILE     NAME=VALUE lines (# comments, blank lines)\n"},
    {"sync", required_argument, OPT_SYNC, "--sync",
     "      --sync DIR          put DIR on the nodes (once per shared home, only what\n"
     "                          changed, .gitignore respected); COMMAND runs there\n"},
    {"sync-cap", required_argument, OPT_SYNC_CAP, "--sync-cap",
     "      --sync-cap MIB      refuse a --sync tree over MIB MiB (default 256)\n"},
    {"head-grace", required_argument, OPT_HEAD_GRACE, "--head-grace",
     "      --head-grace S      how long the job runs on when this head is stopped or\n"
     "                          cut off without exiting (kill -STOP, a suspended\n"
     "                          laptop, a partition), past the agents' 30 s silence\n"
     "                          bound (default 300, at most 86400; a Ctrl-Z holds the\n"
     "                          job up to an hour; a head that exits ends it at once)\n"},
    {"quiet", no_argument, OPT_QUIET, "--quiet",
     "      --quiet             show only the ranks' stderr lines live\n"},
    {"group", no_argument, OPT_GROUP, "--group",
     "      --group             fold identical output of the nodes, at the end\n"},
    {"dry-run", no_argument, OPT_DRY_RUN, "--dry-run",
     "      --dry-run           print each node's command and environment; start nothing\n"},
    {"no-check", no_argument, OPT_NO_CHECK, "--no-check",
     "      --no-check          use the last saved check of these nodes, not a new one\n"},
    {"force", no_argument, OPT_FORCE, "--force",
     "      --force             start even when the check found errors the plan's\n"
     "                          environment does not avoid, or --env overrides it\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct run_cli *c = ctx;
	int v;

	switch (opt) {
	case OPT_MASTER:
		c->master = arg;
		return 0;
	case OPT_ENV_FILE:
		return read_env_file(c, arg, err, errlen);
	case OPT_SYNC:
		c->sync_dir = arg;
		return 0;
	case OPT_SYNC_CAP:
		if (opt_int(shown, arg, 1, 1 << 20, &v, err, errlen) < 0)
			return CD_ERR_PARSE;
		c->sync_cap = (long long)v << 20;
		return 0;
	case OPT_FORCE:
		c->force = 1;
		return 0;
	case OPT_NO_CHECK:
		c->no_check = 1;
		return 0;
	case OPT_QUIET:
		c->quiet = 1;
		return 0;
	case OPT_GROUP:
		c->group = 1;
		return 0;
	case OPT_HEAD_GRACE:
		/* the agents' cap (agent/agent.c HEAD_GRACE_MAX_MS) */
		if (opt_int(shown, arg, 0, 86400, &v, err, errlen) < 0)
			return CD_ERR_PARSE;
		c->head_grace_ms = v * 1000;
		return 0;
	case OPT_DRY_RUN:
		c->dry_run = c->o.dry_run = 1;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of run", shown);
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .cmdline_only = (const int[]){OPT_FORCE, 0}};

/* The job's options first: their --launcher (torchrun, none, mpirun, or the
 * agents' ssh, srun, local-connect) is the one getopt_long finds */
static const struct command_opts opts[] = {
    {.g = &runopt_group, .dst = offsetof(struct run_cli, job)},
    {.g = &checkopt_group, .uses = run_check_uses, .dst = offsetof(struct run_cli, ck)},
    {.g = &own_group},
    {0},
};

const struct command command_run = {
    .name = "run",
    .summary = "your own command on every node, torchrun or not",
    .usage = "usage: clusterdoc run -w HOSTLIST [options] -- COMMAND [ARGS...]\n\n"
             "Start COMMAND on every node at once with the environment clusterdoc proved\n"
             "(interface variables, MASTER_ADDR/PORT, ranks), show every rank's output live,\n"
             "stop the job everywhere when one node fails, and leave nothing behind.\n\n",
    .trailer = "Placeholders in COMMAND and ARGS, per node: {node_rank} {nnodes}\n"
               "{nproc_per_node} {world_size} {master_addr} {master_port} {host} {iface};\n"
               "the same values are in NODE_RANK NNODES NPROC_PER_NODE WORLD_SIZE MASTER_ADDR\n"
               "MASTER_PORT. Logs: ~/.local/state/clusterdoc/runs/RUN/.\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct run_cli, t),
    .opts = opts,
    .run = cmd_run,
};

/* ---------------------------------------------------------------- main */

/* Say where the ranks per node come from when a host file gave slots: run
 * honours each node's own count, so differing counts are no error. */
static const struct hostslots *slots_note(const struct targets *t)
{
	char why[CD_ERRLEN];
	int n = targets_common_slots(t, why, sizeof(why));

	if (n > 0)
		termtext_printf(stderr, "clusterdoc run: %d ranks per node, the slots of %s\n", n,
		                t->slots_file);
	else if (n < 0)
		termtext_printf(stderr,
		                "clusterdoc run: the slots of %s differ (%s): each node runs as "
		                "many ranks as its slots (without slots: --nproc-per-node's "
		                "default)\n",
		                t->slots_file, why);
	return &t->slots;
}

int cmd_run(int argc, char **argv)
{
	struct run_cli c = {0};
	const struct run_report *rep = NULL;
	struct signals *sg = NULL;
	struct suspend *susp = NULL;
	struct sshpool_opts pool_opts;
	static const int sigs[] = {SIGINT, SIGTERM};
	char err[CD_ERRLEN];
	int rc = 2, p, dash = -1;
	size_t n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	}
	targets_init(&c.t);
	c.head_grace_ms = RUN_HEAD_GRACE_MS;
	run_opts_init(&c.o);
	c.job = (struct runopt_dst){
	    .o = &c.o, .agent_launcher = &c.t.pool.launcher, .env = add_env_option, .env_arg = &c};
	netcheck_opts_init(&c.check_o);
	c.ck = (struct checkopt_dst){.o = &c.check_o};
	p = command_parse(&command_run, &c, dash < 0 ? argc : dash, argv, NULL);
	if (p == 0 && c.job.master_port_given)
		c.master_port = c.o.master_port; /* given: the plan takes it */
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	if (!c.o.nproc_given && c.t.slots.count)
		c.o.slots = slots_note(&c.t);
	if (dash < 0 || dash + 1 >= argc) {
		fprintf(stderr, "clusterdoc run: no command: clusterdoc run -w HOSTS [options] -- "
		                "COMMAND [ARGS...]\n");
		goto out;
	}
	c.o.argv = (const char *const *)argv + dash + 1;
	c.o.argc = (size_t)(argc - dash - 1);
	c.o.env = (const char *const *)c.env;
	c.o.nenv = c.nenv;
	if (run_check_placeholders(c.o.argv, c.o.argc, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc run: %s\n", err);
		goto out;
	}
	if (c.sync_dir && c.o.chdir) {
		fprintf(stderr, "clusterdoc run: --chdir and --sync: with --sync, COMMAND runs in "
		                "the synced tree (--remote-dir)\n");
		goto out;
	}
	/* the tree is read (and a tree over the cap refused) before any node is contacted */
	if (c.sync_dir) {
		if (runsync_manifest_build(c.sync_dir,
		                           c.sync_cap ? c.sync_cap : RUNSYNC_DEFAULT_CAP,
		                           &c.manifest, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc run: --sync %s\n", err);
			goto out;
		}
		c.o.sync = &c.manifest;
	}
	c.o.request_timeout_ms = c.t.pool.request_timeout_ms;
	c.loop = loop_new();
	pool_opts = c.t.pool;
	pool_opts.head_grace_ms = c.head_grace_ms;
	c.pool = sshpool_new(c.loop, &pool_opts, err, sizeof(err));
	if (!c.pool) {
		termtext_printf(stderr, "clusterdoc run: %s\n", err);
		goto out;
	}
	n = hostlist_count(c.t.hosts);
	if (run_check_order((const char *const *)c.t.hosts->names, n, c.master, &c.ordered, err,
	                    sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc run: %s\n", err);
		n = 0;
		goto out;
	}
	c.hosts = c.ordered;
	c.check = (struct run_check){.cmd = "run",
	                             .pool = &c.t.pool,
	                             .hosts = c.hosts,
	                             .n = n,
	                             .master_port = c.master_port,
	                             .iface = c.o.iface,
	                             .env = c.o.env,
	                             .nenv = c.o.nenv,
	                             .no_check = c.no_check,
	                             .force = c.force,
	                             .dry_run = c.dry_run,
	                             .uses = c.o.gloo ? JOB_USES_SOCKETS : JOB_USES_ALL,
	                             .expect_gpus = c.check_o.expect_gpus};
	if (run_check_gate(&c.check) < 0)
		goto out;
	c.o.plan = c.check.plan;
	c.groups = cd_calloc(n ? n : 1, sizeof(*c.groups));
	sg = signals_new(c.loop, sigs, CD_ARRAY_LEN(sigs), on_signal, &c, err, sizeof(err));
	/* a Ctrl-Z holds the job on every node instead of letting it end */
	susp = suspend_new(c.loop, &suspend_ops, &c, err, sizeof(err));
	c.run = run_start(c.loop, c.pool, c.hosts, n, &c.o, &events, &c);
	if (!c.dry_run) {
		logs_open(&c, run_report(c.run)->run_id, n);
		/* the id at the start: `hang --run` needs it while the job runs */
		termtext_printf(stderr,
		                "# run %s (while it runs: clusterdoc hang --run %s -w ...)\n",
		                run_report(c.run)->run_id, run_report(c.run)->run_id);
	}
	loop_run(c.loop);
	rep = run_report(c.run);
	if (c.group)
		print_groups(&c, n);
	if (c.dry_run && rep->planned) {
		run_print_plan(stdout, rep, rep->cwd);
	} else if (c.t.json) {
		json_t *j = run_report_json(rep);

		jsondoc_dumpf(j, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		run_print_text(c.dry_run ? stderr : stdout, rep);
	}
	if (c.logdir[0] && !c.t.json)
		termtext_printf(stderr, "# logs: %s/\n", c.logdir);
	logs_close(&c, n, rep);
	rc = rep->exit_status;
	if (c.dry_run && !rep->failed)
		rc = c.check.refused ? 2 : 0;
out:
	suspend_free(susp);
	signals_free(sg);
	sshpool_free(c.pool); /* first: it fails what is pending, into run's callbacks */
	run_free(c.run);
	loop_free(c.loop);
	for (size_t i = 0; c.groups && i < n; i++) {
		for (size_t k = 0; k < c.groups[i].n; k++)
			free(c.groups[i].lines[k]);
		free(c.groups[i].lines);
	}
	free(c.groups);
	run_check_fini(&c.check);
	free(c.ordered);
	runsync_manifest_free(&c.manifest);
	for (size_t i = 0; i < c.nenv; i++)
		free(c.env[i]);
	targets_fini(&c.t);
	return rc;
}
