/* SPDX-License-Identifier: MIT */
/*
 * transport_back_srun.c - the srun launcher (transport_back_internal.h):
 * one `srun` step starts every node's agent inside the Slurm allocation
 * (with --sbcast, a copy of the agent sent ahead); srun's stderr names the
 * nodes it could not start.
 */
#include "transport_back_internal.h"
#include "cd.h"
#include "hostlist.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The grace is over: each node srun said had exited fails with srun's line
 * (unless the agent's own words came meanwhile). */
static void exited_flush(struct backlisten *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->exited[i])
			back_fail_host(b, i, b->exited[i]);
		free(b->exited[i]);
		b->exited[i] = NULL;
	}
}

static void on_exited_grace(struct loop *loop, void *arg)
{
	struct backlisten *b = arg;

	b->exited_timer = 0;
	exited_flush(b);
}

/* srun's error line names host i. Its "task N: Exited with exit code"
 * races the agent's own stderr (another connection of slurmstepd's): that
 * line waits EXITED_GRACE_MS for the agent's words, which say why. */
static void launcher_names(struct backlisten *b, size_t i, const char *line)
{
	if (!strstr(line, ": Exited with exit code")) {
		back_fail_host(b, i, line);
		return;
	}
	if (b->taken[i] || b->dead[i] || b->exited[i])
		return;
	b->exited[i] = cd_strdup(line);
	if (!b->exited_timer)
		b->exited_timer = loop_timer_add(b->loop, EXITED_GRACE_MS, on_exited_grace, b);
}

/* What srun says while it waits for Slurm (Slurm 22.05's src/srun: the
 * allocation's and the step's retries), and once it got them. */
static const struct {
	const char *needle;
	int waits; /* 1: srun waits; 0: the wait is over */
} srun_waits[] = {
    {"queued and waiting for resources", 1},
    {"Required node not available", 1},
    {"Requested partition configuration not available now", 1},
    {"step creation temporarily disabled", 1},
    {"has been allocated resources", 0},
    {"Step created for", 0},
};

int back_srun_waits(const char *line)
{
	if (strncmp(line, "srun: ", 6) != 0)
		return -1;
	for (size_t k = 0; k < CD_ARRAY_LEN(srun_waits); k++)
		if (strstr(line, srun_waits[k].needle))
			return srun_waits[k].waits;
	return -1;
}

/* srun's own line: kept while srun waits, all dropped once it no longer
 * does (backlisten_waiting). */
static void srun_wait_line(struct backlisten *b, const char *line)
{
	int waits = back_srun_waits(line);
	char *joined;

	if (waits == 0) {
		free(b->srun_waiting);
		b->srun_waiting = NULL;
	}
	if (waits != 1 || (b->srun_waiting && strlen(b->srun_waiting) > SRUN_WAIT_MAX))
		return;
	joined = b->srun_waiting ? cd_asprintf("%s; %s", b->srun_waiting, line) : cd_strdup(line);
	free(b->srun_waiting);
	b->srun_waiting = joined;
}

const char *back_srun_waiting(const struct backlisten *b)
{
	return b->srun_waiting;
}

/* A line of srun's stderr: an error naming a node that has not connected
 * fails that node with srun's own words. */
void back_srun_line(struct backlisten *b, const char *line)
{
	srun_wait_line(b, line);
	/* The agent's own words first ("clusterdoc-agent: NODE: cannot connect
	 * back ..."): srun's "task exited" line follows them. */
	if (strncmp(line, "clusterdoc-agent: ", 18) == 0) {
		char name[BACKAUTH_NAME_MAX];
		size_t len = strcspn(line + 18, ":");
		long i;

		if (len < sizeof(name) && line[18 + len] == ':') {
			snprintf(name, sizeof(name), "%.*s", (int)len, line + 18);
			if ((i = back_find_host(b, name)) >= 0)
				back_fail_host(b, (size_t)i, line);
		}
		return;
	}
	if (!strstr(line, "error"))
		return;
	for (size_t i = 0; i < b->n; i++) {
		const char *h = b->hosts[i], *at = line;
		size_t hl = strlen(h);

		while ((at = strstr(at, h))) {
			int left = at == line || strchr(" :,[(", at[-1]);
			int right = !at[hl] || strchr(" :,])", at[hl]);

			if (left && right) {
				launcher_names(b, i, line);
				break;
			}
			at += hl;
		}
	}
}

static void on_srun(struct loop *loop, int fd, short revents, void *arg)
{
	struct backlisten *b = arg;
	char how[64], msg[CD_ERRLEN];
	const char *last;

	if (fd == b->srun.err_fd || fd == b->srun.out_fd) {
		back_launcher_read(b, fd);
		return;
	}
	loop_unwatch(loop, fd);
	if (!child_reap(&b->srun))
		return;
	back_launcher_read(b, b->srun.err_fd);
	loop_timer_cancel(loop, b->exited_timer);
	b->exited_timer = 0;
	exited_flush(b);
	child_describe_status(b->srun.status, how, sizeof(how));
	last = back_launcher_last(b);
	snprintf(msg, sizeof(msg), "srun %s before the node's agent connected back%s%s", how,
	         last[0] ? ": " : "", last);
	for (size_t i = 0; i < b->n; i++)
		back_fail_host(b, i, msg);
}

/* Inside an allocation (SLURM_JOB_NODELIST, as salloc and sbatch set it)
 * srun starts tasks only on the allocation's nodes: a node of the run
 * outside it fails here, named, instead of srun refusing every node.
 * Returns 1 when host i is in the allocation (or there is none). */
static int in_allocation(struct backlisten *b, const struct hostlist *alloc, size_t i)
{
	char msg[CD_ERRLEN];
	char *fold;

	if (!alloc)
		return 1;
	for (size_t k = 0; k < alloc->count; k++)
		if (strcmp(alloc->names[k], b->hosts[i]) == 0)
			return 1;
	fold = hostlist_fold(alloc);
	snprintf(msg, sizeof(msg),
	         "not in the allocation of Slurm job %s (%s): srun cannot start its agent there",
	         getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "?", fold);
	free(fold);
	back_fail_host(b, i, msg);
	return 0;
}

static struct hostlist *allocation(void)
{
	const char *nl = getenv("SLURM_JOB_NODELIST");
	struct hostlist *hl;
	char err[CD_ERRLEN];

	if (!nl || !*nl || !getenv("SLURM_JOB_ID"))
		return NULL;
	hl = hostlist_new();
	if (hostlist_parse(hl, nl, err, sizeof(err)) < 0) { /* not ours to judge: srun will */
		hostlist_free(hl);
		return NULL;
	}
	return hl;
}

void backlisten_set_sbcast(struct backlisten *b)
{
	b->sbcast = 1;
}

/* `sbcast --force AGENT /tmp/clusterdoc-agent.JOBID` (man sbcast, 22.05: to
 * every node of the job's allocation), before the step. Returns the copy's
 * path (malloc'd), or NULL with sbcast's own words in err. */
static char *sbcast_agent(const char *agent, char *err, size_t errlen)
{
	const char *job = getenv("SLURM_JOB_ID");
	char *dest, *argv[] = {"sbcast", "--force", (char *)agent, NULL, NULL};
	struct buf out, errout;
	int status = 0, rc;

	if (!job || !*job) {
		snprintf(err, errlen, "--sbcast needs a Slurm allocation (no $SLURM_JOB_ID)");
		return NULL;
	}
	dest = cd_asprintf("/tmp/clusterdoc-agent.%s", job);
	argv[3] = dest;
	buf_init(&out, 65536);
	buf_init(&errout, 65536);
	rc = child_run(argv, &out, &errout, SBCAST_TIMEOUT_MS, &status, err, errlen);
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		char how[64];

		child_describe_status(status, how, sizeof(how));
		while (errout.len && errout.data[errout.len - 1] == '\n')
			errout.len--;
		snprintf(err, errlen, "sbcast %s: %.*s", how,
		         (int)(errout.len < 300 ? errout.len : 300),
		         errout.data ? errout.data : "");
		rc = CD_ERR_IO;
	}
	buf_fini(&out);
	buf_fini(&errout);
	if (rc < 0) {
		free(dest);
		return NULL;
	}
	return dest;
}

int back_srun_launch(struct backlisten *b, const char *agent, char *err, size_t errlen)
{
	struct hostlist *hl = hostlist_new(), *alloc = allocation();
	char nodes[32], env_secret[sizeof(BACKAUTH_SECRET_ENV) + BACK_SECRET_HEX + 2];
	char *nodelist, *nodelist_arg, *argv[16], *env[2], *copy = NULL;
	size_t count;
	int k = 0, rc;

	for (size_t i = 0; i < b->n; i++)
		if (in_allocation(b, alloc, i))
			hostlist_parse(hl, b->hosts[i], err, errlen);
	hostlist_free(alloc);
	count = hostlist_count(hl);
	if (!count) { /* every node failed above: nothing for srun to start */
		hostlist_free(hl);
		return 0;
	}
	if (b->sbcast && !(copy = sbcast_agent(agent, err, errlen))) {
		hostlist_free(hl);
		return CD_ERR_IO;
	}
	if (copy)
		agent = copy;
	nodelist = hostlist_fold(hl);
	hostlist_free(hl);
	nodelist_arg = cd_asprintf("--nodelist=%s", nodelist);
	snprintf(nodes, sizeof(nodes), "--nodes=%zu", count);
	/* man srun (22.05): --overlap shares the allocation's CPUs with the
	 * job's own steps; one task per node, on exactly these nodes. The
	 * secret travels in the environment (--export=ALL), never here. */
	argv[k++] = "srun";
	argv[k++] = "--overlap";
	argv[k++] = nodes;
	argv[k++] = "--ntasks-per-node=1";
	argv[k++] = nodelist_arg;
	argv[k++] = "--export=ALL";
	argv[k++] = "--kill-on-bad-exit=0";
	argv[k++] = "--job-name=clusterdoc-agent";
	argv[k++] = (char *)agent;
	argv[k++] = "--connect";
	argv[k++] = b->addr;
	argv[k] = NULL;
	snprintf(env_secret, sizeof(env_secret), "%s=%s", BACKAUTH_SECRET_ENV, b->secret);
	env[0] = env_secret;
	env[1] = NULL;
	rc = child_start(&b->srun, argv, env, err, errlen);
	memset(env_secret, 0, sizeof(env_secret));
	free(nodelist);
	free(nodelist_arg);
	free(copy);
	if (rc < 0)
		return rc;
	b->srun_started = 1;
	child_close_stdin(&b->srun);
	loop_watch(b->loop, b->srun.out_fd, POLLIN, on_srun, b);
	loop_watch(b->loop, b->srun.err_fd, POLLIN, on_srun, b);
	if (b->srun.pid_fd >= 0)
		loop_watch(b->loop, b->srun.pid_fd, POLLIN, on_srun, b);
	return 0;
}

/* Some node's agent connected: srun's step runs. */
static int step_ran(const struct backlisten *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->taken[i])
			return 1;
	return 0;
}

/* srun's row: wait for srun until `until` (its step's agents end once their
 * sockets are closed; a step that never ran has nothing to wait for), then
 * end it as man srun says: a signal (SIGTERM) first, so that srun revokes
 * the allocation it may still be waiting for ("Job allocation N has been
 * revoked") or ends its step; SIGKILL only after SRUN_TERM_MS. A killed
 * srun would leave its pending job in Slurm's queue, to start the agents
 * on every node later. */
void back_srun_fini(struct backlisten *b, int64_t until)
{
	loop_timer_cancel(b->loop, b->exited_timer);
	free(b->srun_waiting);
	b->srun_waiting = NULL;
	if (!b->srun_started)
		return;
	loop_unwatch(b->loop, b->srun.out_fd);
	loop_unwatch(b->loop, b->srun.err_fd);
	if (b->srun.pid_fd >= 0)
		loop_unwatch(b->loop, b->srun.pid_fd);
	while (step_ran(b) && b->srun.pid && !child_reap(&b->srun) && cd_now_ms() < until)
		poll(NULL, 0, 20);
	child_end(&b->srun, SIGTERM, SRUN_TERM_MS);
}
