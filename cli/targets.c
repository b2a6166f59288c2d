/* SPDX-License-Identifier: MIT */
/* targets.c - node selection and SSH options shared by subcommands (see targets.h). */
#include "targets.h"

#include "progress.h"
#include "settings.h"
#include "genders.h"
#include "termtext.h"
#include "cd.h"
#include "transport_back.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char targets_help[] =
    "Nodes:\n"
    "  -w, --nodes HOSTLIST nodes, e.g. node[01-16,20], ^FILE, - (standard input),\n"
    "                       @group or @source:group (ClusterShell's groups.conf,\n"
    "                       @sj:JOBID, @sp:PARTITION through Slurm) (repeatable)\n"
    "  --hostfile FILE      one node or hostlist per line, # comments; Open MPI and\n"
    "                       DeepSpeed's \"host slots=N\", MPICH's \"host:N\" (N: the\n"
    "                       default --nproc-per-node of run and mnist); - reads stdin\n"
    "  -g ATTR[=VAL],...    the nodes of /etc/genders with one of these attributes\n"
    "                       ($CLUSTERDOC_GENDERS names another genders file)\n"
    "  -x, --exclude HOSTLIST  exclude these nodes\n"
    "                       (default inside a Slurm job: $SLURM_JOB_NODELIST)\n"
    "SSH:\n"
    "  --ssh libssh2|openssh  transport (default libssh2; openssh runs the ssh binary)\n"
    "  -F, --ssh-config FILE  ssh_config file\n"
    "  -l, --login USER     remote user\n"
    "  -p, --ssh-port PORT  remote port\n"
    "  -i, --identity KEY   identity file\n"
    "  --accept-new         record unknown host keys (changed keys are always refused)\n"
    "  -f N, --fanout N     nodes connecting at once (default 64)\n"
    "  --connect-timeout S  TCP connect deadline (default 10)\n"
    "  --auth-timeout S     SSH handshake + authentication deadline (default 10)\n"
    "  -t S, --timeout S    deadline for starting the agent and for each request (default 30)\n"
    "  --agent PATH         the clusterdoc-agent binary to run on nodes\n"
    "Launcher:\n"
    "  --launcher ssh|srun|local-connect  how the agents start (default ssh; srun\n"
    "                       inside a Slurm allocation: each agent connects back to the\n"
    "                       head, proving a per-run secret; local-connect: local\n"
    "                       processes, for measurement)\n"
    "  --listen ADDR[:PORT] the head's address for agents connecting back (default:\n"
    "                       the one that reaches the first node, an ephemeral port)\n"
    "  --sbcast             srun: copy the agent to /tmp on the allocation's nodes with\n"
    "                       sbcast first (where --agent is not on a shared path)\n"
    "  --json               machine-readable output\n";

/* The pool's notes (a node sent to the openssh transport) go to stderr,
 * between the run's own lines. */
static void say_notice(const char *line, void *arg)
{
	(void)arg;
	progress_hide(); /* on its own line, not after the progress line */
	fprintf(stderr, "clusterdoc: %s\n", line);
}

void targets_groups_init(struct nodegroups *g)
{
	nodegroups_init(g);
	g->config_text = config_group_text;
	g->config_nearest = config_group_nearest;
}

void targets_init(struct targets *t)
{
	memset(t, 0, sizeof(*t));
	t->hosts = hostlist_new();
	t->exclude = hostlist_new();
	sshpool_opts_init(&t->pool);
	t->pool.notice = say_notice;
	targets_groups_init(&t->groups);
	hostslots_init(&t->slots);
	t->hosts->groups = &t->groups.hook;
	t->exclude->groups = &t->groups.hook;
}

void targets_fini(struct targets *t)
{
	hostlist_free(t->hosts);
	hostlist_free(t->exclude);
	free((char *)t->pool.agent_path);
	nodegroups_fini(&t->groups);
	hostslots_fini(&t->slots);
}

/* A word of -w - that is an Open MPI hostfile's "slots=N" (or any KEY=VALUE):
 * -w takes host names; slots come with --hostfile. */
static int slots_on_stdin(const struct hostlist *hl, size_t from, char *err, size_t errlen)
{
	for (size_t i = from; i < hostlist_count(hl); i++)
		if (strchr(hl->names[i], '='))
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s: \"%s\" is not a host name: a hostfile with slots is "
			               "read by --hostfile - (-w - takes host names)",
			               HOSTLIST_STDIN_NAME, hl->names[i]);
	return 0;
}

int targets_add_arg(struct hostlist *hl, const char *arg, char *err, size_t errlen)
{
	size_t before = hostlist_count(hl);

	if (strcmp(arg, "-") == 0) {
		if (hostlist_read_fd(hl, STDIN_FILENO, HOSTLIST_STDIN_NAME, err, errlen) < 0)
			return -1;
		return slots_on_stdin(hl, before, err, errlen);
	}
	return hostlist_add_arg(hl, arg, err, errlen);
}

int targets_common_slots(const struct targets *t, char *err, size_t errlen)
{
	return hostslots_common(&t->slots, t->hosts, err, errlen);
}

/* -g ATTR[=VAL],...: the matching nodes of the genders file; none is an error. */
static int add_genders(struct targets *t, const char *query, char *err, size_t errlen)
{
	struct genders g;
	const char *path = genders_path();
	int rc;

	genders_init(&g);
	rc = genders_read(&g, path, err, errlen);
	if (rc == 0 && (rc = genders_select(&g, query, t->hosts, err, errlen)) == 0)
		rc = cd_errf(err, errlen, CD_ERR_NOTFOUND, "-g %s: no node of %s has it", query,
		             path);
	genders_fini(&g);
	return rc < 0 ? rc : 0;
}

/* Seconds (fractions allowed) to milliseconds; -1 when invalid. */
static int parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v <= 0 || v > 86400)
		return -1;
	return (int)(v * 1000);
}

static int parse_int(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	return (int)v;
}

/* The long name of the targets' option id, or "?" (-f: --fanout is another id). */
static const char *long_name(int opt)
{
	static const struct option opts[] = {TARGETS_LONGOPTS, {0}};

	for (const struct option *o = opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

int targets_set(struct targets *t, int opt, const char *arg, char *err, size_t errlen)
{
	int v;

	switch (opt) {
	case 'w':
		v = (int)hostlist_count(t->hosts);
		if (targets_add_arg(t->hosts, arg, err, errlen) < 0)
			goto bad_hostlist;
		if ((int)hostlist_count(t->hosts) == v)
			snprintf(t->empty_source, sizeof(t->empty_source), "-w %s",
			         strcmp(arg, "-") == 0 ? "- (standard input)" : arg);
		return 1;
	case 'x':
		if (targets_add_arg(t->exclude, arg, err, errlen) < 0)
			goto bad_hostlist;
		return 1;
	case OPT_HOSTFILE:
		v = (int)hostlist_count(t->hosts);
		if (hostfile_read(t->hosts, &t->slots, arg, err, errlen) < 0)
			goto bad_hostlist;
		if ((int)hostlist_count(t->hosts) == v)
			snprintf(t->empty_source, sizeof(t->empty_source), "--hostfile %s",
			         strcmp(arg, "-") == 0 ? "- (standard input)" : arg);
		if (t->slots.count)
			t->slots_file = strcmp(arg, "-") == 0 ? "standard input" : arg;
		return 1;
	case 'g':
		if (add_genders(t, arg, err, errlen) < 0)
			goto bad_hostlist;
		return 1;
	case 'F':
		t->pool.ssh_config = arg;
		return 1;
	case 'l':
		t->pool.user = arg;
		return 1;
	case 'p':
		if ((v = parse_int(arg, 1, 65535)) < 0)
			goto bad_value;
		t->pool.port = v;
		return 1;
	case 'i':
		t->pool.identity = arg;
		return 1;
	case 'f':
	case OPT_FANOUT:
		if ((v = parse_int(arg, 1, 100000)) < 0)
			goto bad_value;
		t->pool.fanout = v;
		return 1;
	case 't':
		if ((v = parse_seconds(arg)) < 0)
			goto bad_value;
		t->pool.request_timeout_ms = v;
		return 1;
	case OPT_CONNECT_TIMEOUT:
		if ((v = parse_seconds(arg)) < 0)
			goto bad_value;
		t->pool.connect_timeout_ms = v;
		return 1;
	case OPT_AUTH_TIMEOUT:
		if ((v = parse_seconds(arg)) < 0)
			goto bad_value;
		t->pool.auth_timeout_ms = v;
		return 1;
	case OPT_SSH:
		if (strcmp(arg, "libssh2") == 0) {
			t->pool.backend = SSHPOOL_BACKEND_LIBSSH2;
		} else if (strcmp(arg, "openssh") == 0) {
			t->pool.backend = SSHPOOL_BACKEND_OPENSSH;
		} else {
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--ssh takes libssh2 or openssh, not \"%s\"", arg);
		}
		return 1;
	case OPT_ACCEPT_NEW:
		t->pool.accept_new = 1;
		return 1;
	case OPT_AGENT_LAUNCHER:
		if ((v = launcher_parse(arg)) < 0) {
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--launcher takes ssh, srun or local-connect, not \"%s\"",
			               arg);
		}
		t->pool.launcher = v;
		return 1;
	case OPT_LISTEN:
		t->pool.listen = arg;
		return 1;
	case OPT_SBCAST:
		t->pool.sbcast = 1;
		return 1;
	case OPT_JSON:
		t->json = 1;
		return 1;
	case OPT_AGENT:
		free((char *)t->pool.agent_path);
		t->pool.agent_path = cd_strdup(arg);
		return 1;
	default:
		return 0;
	}
bad_hostlist:
	return CD_ERR_PARSE;
bad_value:
	if (opt == OPT_FANOUT)
		opt = 'f'; /* as the message has always named it */
	if (opt < 256 && strcmp(long_name(opt), "?") != 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "invalid value \"%s\" for -%c/--%s", arg,
		               opt, long_name(opt));
	if (opt < 256)
		return cd_errf(err, errlen, CD_ERR_PARSE, "invalid value \"%s\" for -%c", arg, opt);
	return cd_errf(err, errlen, CD_ERR_PARSE, "invalid value \"%s\" for --%s", arg,
	               long_name(opt));
}

int targets_option(struct targets *t, int opt, const char *arg, const char *cmd)
{
	char err[CD_ERRLEN];
	int rc = targets_set(t, opt, arg, err, sizeof(err));

	if (rc < 0) {
		termtext_printf(stderr, "clusterdoc %s: %s\n", cmd, err);
		return -1;
	}
	return rc;
}

/* Where `make install` put the agents (LIBEXECDIR/clusterdoc): the Makefile
 * says it; a build by other means looks in the default place. */
#ifndef CD_AGENT_DIR
#define CD_AGENT_DIR "/usr/local/libexec/clusterdoc"
#endif

/* The agent next to this executable, or in ../libexec/clusterdoc/ once
 * installed, or in CD_AGENT_DIR (installed with a BINDIR elsewhere). */
char *targets_find_agent(void)
{
	char self[PATH_MAX], *dir, *path;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *env = getenv("CLUSTERDOC_AGENT");

	/* CLUSTERDOC_AGENT= (empty) is unset, not a file named "" */
	if (env && *env)
		return cd_strdup(env);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	dir = dirname(self);
	path = cd_asprintf("%s/clusterdoc-agent", dir);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	path = cd_asprintf("%s/../libexec/clusterdoc/clusterdoc-agent", dir);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	path = cd_strdup(CD_AGENT_DIR "/clusterdoc-agent");
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

int targets_finish(struct targets *t, const char *cmd)
{
	char err[CD_ERRLEN];
	size_t before;
	const char *slurm = getenv("SLURM_JOB_NODELIST");

	if (!hostlist_count(t->hosts) && slurm && *slurm) {
		if (hostlist_parse(t->hosts, slurm, err, sizeof(err)) < 0) {
			termtext_printf(stderr, "clusterdoc %s: $SLURM_JOB_NODELIST: %s\n", cmd,
			                err);
			return -1;
		}
	}
	before = hostlist_count(t->hosts);
	hostlist_exclude(t->hosts, t->exclude);
	if (!hostlist_count(t->hosts) && !t->hosts_optional) {
		if (before)
			termtext_printf(stderr,
			                "clusterdoc %s: no nodes: the %zu node(s) given are all "
			                "excluded (-x, or the configuration's exclude: `clusterdoc "
			                "config` shows where it is set)\n",
			                cmd, before);
		else if (t->empty_source[0])
			termtext_printf(stderr,
			                "clusterdoc %s: no nodes: %s names none; give -w HOSTLIST, "
			                "--hostfile FILE or -g ATTR (e.g. -w 'node[01-04]')\n",
			                cmd, t->empty_source);
		else
			fprintf(stderr,
			        "clusterdoc %s: no nodes: give -w HOSTLIST, --hostfile FILE or -g "
			        "ATTR (e.g. -w 'node[01-04]')\n",
			        cmd);
		return -1;
	}
	if (getenv("SLURM_JOB_ID") && *getenv("SLURM_JOB_ID")) {
		/* Inside an allocation, say how the agents start. */
		if (t->pool.launcher == LAUNCHER_SSH)
			fprintf(stderr,
			        "clusterdoc %s: in Slurm job %s; agents start over ssh "
			        "(--launcher srun starts them with srun)\n",
			        cmd, getenv("SLURM_JOB_ID"));
		else
			termtext_printf(
			    stderr, "clusterdoc %s: in Slurm job %s; agents start with %s\n", cmd,
			    getenv("SLURM_JOB_ID"), launcher_name(t->pool.launcher));
	}
	if (!t->pool.agent_path)
		t->pool.agent_path = targets_find_agent();
	if (!t->pool.agent_path) {
		fprintf(stderr,
		        "clusterdoc %s: cannot find clusterdoc-agent next to clusterdoc; "
		        "set CLUSTERDOC_AGENT or --agent\n",
		        cmd);
		return -1;
	}
	return 0;
}
