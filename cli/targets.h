/* SPDX-License-Identifier: MIT */
/*
 * targets.h - the options every node-targeting subcommand shares: which
 * nodes (-w, --hostfile, -g, -x, $SLURM_JOB_NODELIST; "@group" through the
 * group sources of nodegroup.h) and how to reach them
 * (ssh backend, config, user, port, key, fan-out, deadlines, host keys).
 */
#ifndef CD_TARGETS_H
#define CD_TARGETS_H

#include <getopt.h>

#include "hostfile.h"
#include "hostlist.h"
#include "nodegroup.h"
#include "sshpool.h"

struct targets {
	struct hostlist *hosts;   /* selected nodes, in hostlist order */
	struct hostlist *exclude; /* -x */
	struct sshpool_opts pool; /* how to reach them */
	struct nodegroups groups; /* resolves "@group" in -w, -x, --hostfile (hosts->groups) */
	struct hostslots slots;   /* --hostfile's slots=N / host:N, per host */
	const char *slots_file;   /* the --hostfile that gave slots (for messages) */
	int json;                 /* --json */
	int hosts_optional;       /* targets_finish accepts no nodes (the TUI asks) */
	int hosts_given;          /* -w, --hostfile, -g or -x was on the command line
	                             (command_parse), not only in the configuration */
	char empty_source[160];   /* the last -w/--hostfile that gave no node ("--hostfile F") */
};

/* The getopt_long options targets_option understands; append them to a
 * command's own table with TARGETS_LONGOPTS. Short options: "w:x:g:F:l:p:i:f:t:".
 * A command whose -f is its own (bench: the size factor, BENCHOPT_SHORTOPTS)
 * takes TARGETS_SHORTOPTS_NOF; its fan-out stays --fanout. */
#define TARGETS_SHORTOPTS_NOF "w:x:g:F:l:p:i:t:"
#define TARGETS_SHORTOPTS     TARGETS_SHORTOPTS_NOF "f:"
enum {
	OPT_HOSTFILE = 1000,
	OPT_SSH,
	OPT_ACCEPT_NEW,
	OPT_CONNECT_TIMEOUT,
	OPT_AUTH_TIMEOUT,
	OPT_JSON,
	OPT_AGENT,
	OPT_FANOUT,         /* --fanout; -f too, where the command leaves it to the targets */
	OPT_AGENT_LAUNCHER, /* --launcher ssh|srun|local-connect */
	OPT_LISTEN,         /* --listen ADDR[:PORT] */
	OPT_SBCAST,         /* --sbcast: srun's agent copied to the nodes' /tmp first */
	OPT_TARGETS_END,    /* commands number their own long options from here */
};
#define TARGETS_LONGOPTS                                                                           \
	{"nodes", required_argument, NULL, 'w'}, {"exclude", required_argument, NULL, 'x'},        \
	    {"ssh-config", required_argument, NULL, 'F'}, {"login", required_argument, NULL, 'l'}, \
	    {"ssh-port", required_argument, NULL, 'p'},                                            \
	    {"identity", required_argument, NULL, 'i'},                                            \
	    {"hostfile", required_argument, NULL, OPT_HOSTFILE},                                   \
	    {"ssh", required_argument, NULL, OPT_SSH},                                             \
	    {"accept-new", no_argument, NULL, OPT_ACCEPT_NEW},                                     \
	    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},                     \
	    {"auth-timeout", required_argument, NULL, OPT_AUTH_TIMEOUT},                           \
	    {"json", no_argument, NULL, OPT_JSON}, {"agent", required_argument, NULL, OPT_AGENT},  \
	    {"fanout", required_argument, NULL, OPT_FANOUT},                                       \
	    {"launcher", required_argument, NULL, OPT_AGENT_LAUNCHER},                             \
	    {"listen", required_argument, NULL, OPT_LISTEN},                                       \
	    {"sbcast", no_argument, NULL, OPT_SBCAST},                                             \
	{                                                                                          \
		"timeout", required_argument, NULL, 't'                                            \
	}

void targets_init(struct targets *t);
/* The head's node group sources: core/nodegroup.h's rows, with the
 * configuration files' [groups] (cli/settings.h) as the first. targets_init
 * calls it; so does any command that expands hostlists without targets. */
void targets_groups_init(struct nodegroups *g);
void targets_fini(struct targets *t);

/* Handle one option (cli/command.c hands it every option no group took);
 * returns 1 when it was a targets option, 0 when not ours, or -1 after
 * printing an error naming the option. */
int targets_option(struct targets *t, int opt, const char *arg, const char *cmd);

/* targets_option with the error in err ("invalid value \"0\" for -f"), not
 * printed: 1, 0, or < 0. A configuration file's value goes through here. */
int targets_set(struct targets *t, int opt, const char *arg, char *err, size_t errlen);

/* After option parsing: apply -x, fall back to $SLURM_JOB_NODELIST, find the
 * agent binary. Returns 0, or -1 after printing what to do. */
int targets_finish(struct targets *t, const char *cmd);

/* The agent the head would push when no --agent is given: $CLUSTERDOC_AGENT,
 * else clusterdoc-agent beside the head, in ../libexec/clusterdoc, or in the
 * installed libexec directory. A new string (the caller frees it), or NULL. */
char *targets_find_agent(void);

/* One -w or -x argument: "-" reads standard input (pdsh's "-w -"), anything
 * else as hostlist_add_arg. Returns as those do. */
int targets_add_arg(struct hostlist *hl, const char *arg, char *err, size_t errlen);

/*
 * The ranks per node a host file's slots give, for a command whose
 * --nproc-per-node was not given: N when every node has N slots, 0 when
 * the host files gave none, -1 when they differ (err says which two:
 * "n1 has 8 slots, n2 has 4").
 */
int targets_common_slots(const struct targets *t, char *err, size_t errlen);

/* The option help shared by every node-targeting command. */
extern const char targets_help[];

#endif
