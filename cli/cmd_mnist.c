/* SPDX-License-Identifier: MIT */
/*
 * cmd_mnist.c - `clusterdoc mnist`: the short DDP MNIST job across the nodes
 * (jobs/mnist.h), torch mode or embedded, with every rank's output
 * streamed as it comes and a summary (or JSON) at the end. Exit status: 0
 * the job trained and tested; 1 it started but failed (a rank failed or
 * hung, the parameters differ); 2 it could not start (data, nodes, torch).
 */
#include "cd.h"
#include "termtext.h"
#include "jobs/mnist.h"
#include "command.h"
#include "commands.h"
#include "loop.h"
#include "phase.h"
#include "optgroups.h"
#include "report/mnist_render.h"
#include "jobs/jobgate.h"
#include "run_check.h"
#include "targets.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_QUIET = OPT_TARGETS_END,
	OPT_MASTER,
	OPT_NO_CHECK,
	OPT_FORCE,
};

struct mnist_run {
	struct targets t;
	struct mnist_opts o;
	int quiet;
	int tty; /* stderr is a terminal: progress redrawn in place */
	int no_check, force;
	const char *master;           /* --master NODE, or NULL: the first node */
	const char **ordered;         /* the nodes, the master first */
	struct run_check check;       /* the job's plan (torch mode) */
	struct netcheck_opts check_o; /* the check's options mnist takes (--expect-gpus) */
	struct checkopt_dst ck;       /* where they go: check_o */
	struct loop *loop;
	struct sshpool *pool;
	struct mnist *m;
	const char *const *hosts;
};

/* ---------------------------------------------------------------- live */

static void on_line(void *arg, size_t node, const char *stream, const char *text)
{
	struct mnist_run *r = arg;
	FILE *f = r->t.json ? stderr : stdout;

	if (r->quiet || strncmp(text, "CDMNIST ", 8) == 0)
		return;
	termtext_printf(f, "%s%s: %s\n", r->hosts[node],
	                strcmp(stream, "err") == 0 ? " (stderr)" : "", text);
	fflush(f);
}

static void on_data_progress(void *arg, enum mnist_file file, long long got, long long total)
{
	struct mnist_run *r = arg;

	if (r->quiet || !r->tty)
		return;
	if (total > 0)
		fprintf(stderr, "\rdownloading %s.gz: %3lld%% of %.1f MB", mnist_file_name(file),
		        got * 100 / total, total / 1e6);
	else
		fprintf(stderr, "\rdownloading %s.gz: %.1f MB", mnist_file_name(file), got / 1e6);
	if (got == total)
		fputc('\n', stderr);
}

static const struct phase_words phase_words[] = {
    {"data", "preparing the dataset and connecting to the nodes"},
    {"push", "putting the dataset on the nodes"},
    {"train", "training"},
};

static void on_phase(void *arg, const char *what)
{
	struct mnist_run *r = arg;

	if (!r->quiet)
		phase_say(phase_words, CD_ARRAY_LEN(phase_words), what);
}

static void on_done(void *arg)
{
	loop_stop(((struct mnist_run *)arg)->loop);
}

static const struct mnist_events events = {
    .line = on_line, .data_progress = on_data_progress, .phase = on_phase, .done = on_done};

/* ---------------------------------------------------------------- options */

static const struct optdef own_defs[] = {
    {"master", required_argument, OPT_MASTER, "--master",
     "      --master NODE       torch: the node of rank 0 (default: the first node)\n"},
    {"no-check", no_argument, OPT_NO_CHECK, "--no-check",
     "      --no-check          torch: use the last saved check of these nodes\n"},
    {"force", no_argument, OPT_FORCE, "--force",
     "      --force             torch: start even when the check found errors the\n"
     "                          plan's environment does not avoid\n"},
    {"quiet", no_argument, OPT_QUIET, "--quiet",
     "      --quiet             no live output, only the summary\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct mnist_run *r = ctx;

	switch (opt) {
	case OPT_QUIET:
		r->quiet = 1;
		return 0;
	case OPT_MASTER:
		r->master = arg;
		return 0;
	case OPT_NO_CHECK:
		r->no_check = 1;
		return 0;
	case OPT_FORCE:
		r->force = 1;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of mnist", shown);
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .cmdline_only = (const int[]){OPT_FORCE, 0}};

static const struct command_opts opts[] = {
    {.g = &jobopt_group, .dst = offsetof(struct mnist_run, o)},
    {.g = &checkopt_group, .uses = run_check_uses, .dst = offsetof(struct mnist_run, ck)},
    {.g = &own_group},
    {0},
};

const struct command command_mnist = {
    .name = "mnist",
    .summary = "a short DDP MNIST job across the nodes (torchrun, or embedded in C)",
    .usage = "usage: clusterdoc mnist -w HOSTLIST [options]\n\n"
             "A short data-parallel MNIST training job across the nodes: PyTorch DDP through\n"
             "torchrun with the environment clusterdoc picks, or an MLP trained by the agents\n"
             "themselves over the TCP ring allreduce. Every rank's output is shown live.\n\n",
    .nodes = COMMAND_NODES,
    .targets = offsetof(struct mnist_run, t),
    .opts = opts,
    .run = cmd_mnist,
};

/* ---------------------------------------------------------------- status */

static int started_any(const struct mnist_report *rep)
{
	for (size_t i = 0; i < rep->nnodes; i++) {
		if (rep->nodes[i].started)
			return 1;
	}
	return 0;
}

/* A host file's slots as --nproc-per-node: mnist runs one count on every
 * node, so the slots must agree. */
static int slots_to_nproc(const struct targets *t, struct mnist_opts *o)
{
	char why[CD_ERRLEN];
	int n = targets_common_slots(t, why, sizeof(why));

	if (n < 0 || n > 64) {
		if (n > 64)
			snprintf(why, sizeof(why), "%d slots, more than mnist's 64 ranks per node",
			         n);
		termtext_printf(
		    stderr,
		    "clusterdoc mnist: the slots of %s do not give one rank count (%s): "
		    "mnist runs the same count on every node; give --nproc-per-node\n",
		    t->slots_file, why);
		return -1;
	}
	if (n > 0) {
		o->nproc_per_node = n;
		termtext_printf(stderr, "clusterdoc mnist: %d ranks per node, the slots of %s\n", n,
		                t->slots_file);
	}
	return 0;
}

int cmd_mnist(int argc, char **argv)
{
	struct mnist_run r = {0};
	const struct mnist_report *rep;
	char err[CD_ERRLEN];
	int rc = 2, p;
	size_t n;

	targets_init(&r.t);
	mnist_opts_init(&r.o);
	r.o.master_port = 0; /* given or not: without it, the check's */
	r.tty = isatty(STDERR_FILENO);
	netcheck_opts_init(&r.check_o);
	r.ck = (struct checkopt_dst){.o = &r.check_o};
	p = command_parse(&command_mnist, &r, argc, argv, NULL);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	if (!r.o.nproc_given && r.t.slots.count && slots_to_nproc(&r.t, &r.o) < 0)
		goto out;
	r.o.request_timeout_ms = r.t.pool.request_timeout_ms;
	r.loop = loop_new();
	r.pool = sshpool_new(r.loop, &r.t.pool, err, sizeof(err));
	if (!r.pool) {
		termtext_printf(stderr, "clusterdoc mnist: %s\n", err);
		goto out;
	}
	n = hostlist_count(r.t.hosts);
	if (run_check_order((const char *const *)r.t.hosts->names, n, r.master, &r.ordered, err,
	                    sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc mnist: %s\n", err);
		goto out;
	}
	r.hosts = r.ordered;
	/* torch's rendezvous needs a MASTER_PORT and addresses the check proved;
	 * the embedded ring needs neither */
	if (r.o.mode != MNIST_EMBEDDED) {
		r.check = (struct run_check){.cmd = "mnist",
		                             .pool = &r.t.pool,
		                             .hosts = r.hosts,
		                             .n = n,
		                             .master_port = r.o.master_port,
		                             .iface = r.o.iface,
		                             .no_check = r.no_check,
		                             .force = r.force,
		                             /* a Gloo job never opens a verbs device; auto
		                              * may pick NCCL, so it counts every finding */
		                             .uses = r.o.backend && strcmp(r.o.backend, "gloo") == 0
		                                         ? JOB_USES_SOCKETS
		                                         : JOB_USES_ALL,
		                             .expect_gpus = r.check_o.expect_gpus};
		if (run_check_gate(&r.check) < 0)
			goto out;
		r.o.plan = r.check.plan;
	}
	r.m = mnist_start(r.loop, r.pool, r.hosts, n, &r.o, &events, &r);
	loop_run(r.loop);
	rep = mnist_report(r.m);
	if (r.t.json)
		mnist_print_json(rep);
	else
		mnist_print_text(rep);
	rc = !rep->failed ? 0 : started_any(rep) ? 1 : 2;
out:
	sshpool_free(r.pool); /* first: it fails what is pending, into mnist's callbacks */
	mnist_free(r.m);
	loop_free(r.loop);
	run_check_fini(&r.check);
	free(r.ordered);
	targets_fini(&r.t);
	return rc;
}
