/* SPDX-License-Identifier: MIT */
/*
 * fix.h - what `clusterdoc fix` would change on each node, as plain data:
 * the fixers' table, the state gathered from a node, and the plan.
 *
 * Planning is pure: fix_plan_build(model, diagnosis, states) reads the
 * check's results (netmodel.h, diagnose.h) and what each node's agent
 * reported (files, user, firewall; fix_run.h gathers it) and returns, per
 * node, the actions that would fix what the diagnosis found. Nothing here
 * talks to a node; fix_run.h applies a plan and undoes it.
 *
 * Every action is least-privilege and reversible:
 *   - a file action replaces a file's whole content with the content read
 *     during the gather plus one marked block (fixers/blockedit.h), so its
 *     undo is "put the bytes back" and applying it twice changes nothing;
 *   - a command action (a firewall rule) carries the command that removes
 *     exactly what it added.
 */
#ifndef CD_FIXERS_FIX_H
#define CD_FIXERS_FIX_H

#include <stddef.h>

#include "blockedit.h"
#include "cd.h"
#include "homegroups.h"
#include "jobs/jobplan.h"
#include "probes/diagnose.h"
#include "probes/netmodel.h"

/* The paths every gather reads (besides the shell's rc file). */
#define FIX_ENV_SH          "~/.config/clusterdoc/env.sh"
#define FIX_NCCL_CONF       "~/.nccl.conf"
#define FIX_ETC_HOSTS       "/etc/hosts"
#define FIX_AUTHORIZED_KEYS "~/.ssh/authorized_keys"
#define FIX_SYSCTL_PORTS    "/etc/sysctl.d/60-clusterdoc-port-range.conf"

/* The comment every firewall rule clusterdoc adds carries, followed by the run. */
#define FIX_RULE_COMMENT "clusterdoc fix"

/* A message that may quote a sudoers line: the lines for commands whose
 * arguments vary are regular expressions of a few hundred characters
 * (sudocmd.c), and a message cut short would lose the line's end and what
 * follows it ("nothing was changed on NODE"). */
#define FIX_MSGLEN 2048

/* ---------------------------------------------------------------- state */

/* One file as the node's agent read it (file_read). */
struct fix_file_state {
	char *path; /* as the agent was asked: "~/.bashrc", "/etc/hosts" */
	int read;   /* 1 when the agent answered */
	int exists; /* the file exists */
	char *data; /* its bytes, NUL-terminated (NULL when absent) */
	size_t len; /* without the NUL */
	unsigned mode;
	char error[CD_ERRLEN]; /* why it could not be read, "" when read */
};

/* What the gather learned on one node. */
struct fix_node_state {
	int gathered;           /* the node answered the gather */
	char error[FIX_MSGLEN]; /* why not (names the node), "" when gathered */
	unsigned uid;
	char user[64];
	char home[512];
	char shell[256];
	int has_sudo; /* sudo is on the node's PATH */
	/* The token in CD_HOME_ID as the node read it after every node wrote
	 * its own (core/homegroups.h): nodes with the same token share the home
	 * directory. "" when unknown. */
	char home_id[HOMEGROUPS_TOKEN_LEN];
	struct fix_file_state *files;
	size_t nfiles;

	/* The firewall, gathered only for nodes the firewall fixer acts on. */
	int fw_gathered;
	char *nft_json; /* `nft -j list ruleset`, NULL when absent or it failed */
	char nft_error[FIX_MSGLEN];
	int ufw_active;        /* -1 unknown (no ufw), 0 inactive, 1 active */
	char *ufw_status;      /* `ufw status` output, NULL unless active */
	int firewalld_running; /* -1 unknown (no firewall-cmd), 0, 1 */
	char firewalld_zone[64];
	char *firewalld_rules; /* `--list-rich-rules` of that zone */
};

void fix_node_state_init(struct fix_node_state *s);
void fix_node_state_fini(struct fix_node_state *s);
/* dst (uninitialised) becomes a copy of src's files: the plans work on a copy
 * and leave the gathered state as it was. */
void fix_node_state_copy_files(struct fix_node_state *dst, const struct fix_node_state *src);

/* Add a file's state (copies path and data; data NULL = absent). */
struct fix_file_state *fix_state_add_file(struct fix_node_state *s, const char *path);
const struct fix_file_state *fix_state_file(const struct fix_node_state *s, const char *path);

/* The rc file a login shell reads for non-interactive SSH commands: bash
 * ~/.bashrc, zsh ~/.zshenv, anything else ~/.profile (*read_by_ssh = 0:
 * a plain `sh -c` over SSH reads no file at all). */
const char *fix_rc_file(const char *shell, int *read_by_ssh);

/* ---------------------------------------------------------------- plan */

enum fix_action_kind { FIX_FILE, FIX_CMD };

struct fix_action {
	const char *fixer; /* the fixer's id ("env", "hosts", "firewall") */
	enum fix_action_kind kind;
	char *summary; /* one line: what it does and why */
	int sudo;      /* needs root: non-interactive sudo unless root */

	/* FIX_FILE: the whole file, before and after. */
	char *path;
	int before_exists;
	char *before;
	size_t before_len;
	char *after;
	size_t after_len;
	unsigned mode; /* for a file that does not exist yet */
	/* a file in a home directory other nodes share, planned once for all
	 * of them: their hosts folded ("node[1-4]"), NULL when not shared */
	char *shared_by;

	/* FIX_CMD: argv (NULL-terminated) and the command that undoes it. In
	 * undo, the word "{handle}" stands for the number nft printed after
	 * "# handle " when the rule was added. */
	char **argv;
	char **undo;
};

struct fix_node_plan {
	struct fix_action *actions;
	size_t nactions;
	char **notes; /* "fixer: what was left alone and why", one per entry */
	size_t nnotes;
	const char **fixers; /* the fixers that act here (ids), in table order */
	size_t nfixers;
	const char **wanted; /* the selected fixers one of whose findings names the
	                        node, planned or not (verification reports each) */
	size_t nwanted;
};

struct fix_plan {
	char run[40];                /* the run id: "20261121-183005-3f9a" */
	struct fix_node_plan *nodes; /* [nnodes], the model's order */
	size_t nnodes;
	size_t nactions;      /* over all nodes */
	int port_lo, port_hi; /* port-range's target when it is selected, else 0 */
};

struct fix_opts {
	const char *only;     /* "env,hosts": the fixers to consider; NULL = the default ones */
	int port_lo, port_hi; /* port-range: the range to narrow to (0 = 49152-65535) */
	/* ssh-key: the head's public key line ("ssh-ed25519 AAAA... comment"),
	 * and login[i] != 0 for the nodes that refused the head's keys (NULL:
	 * none); those are planned although the check could not reach them */
	const char *head_pubkey;
	const int *login;
};

/* 0, or CD_ERR_PARSE when o->only names a fixer that does not exist
 * ("--only: no fixer \"x\" (known: ...)" in err). */
int fix_check_only(const struct fix_opts *o, char *err, size_t errlen);

/* Whether the fixer id is selected by o (--only, else the default ones). */
int fix_selected(const struct fix_opts *o, const char *id);

/* Whether a fixer selected by o has the role: login_stage, narrows_ports;
 * fix_checked_selected: one that plans from the check (not login_stage). */
int fix_login_selected(const struct fix_opts *o);
int fix_ports_selected(const struct fix_opts *o);
int fix_checked_selected(const struct fix_opts *o);

/* port-range's target: o's range, else IANA's dynamic ports 49152-65535. */
void fix_port_range(const struct fix_opts *o, int *lo, int *hi);

/*
 * The plan for every node of m that was checked and gathered. states is
 * [m->nnodes]; a node that was not gathered gets a note and no action.
 * Returns NULL with a message in err when o->only names an unknown fixer.
 */
struct fix_plan *fix_plan_build(const struct netmodel *m, const struct diagnosis *d,
                                const struct fix_node_state *states, const struct fix_opts *o,
                                const char *run, char *err, size_t errlen);
void fix_plan_free(struct fix_plan *p);

/* Shared home directories: nodes whose states have the same home_id and
 * whose plans change a "~/" file from the same bytes to the same bytes get
 * one action, on the first of them, with shared_by naming them all; the
 * others get a note instead. fix_plan_build calls it. */
void fix_plan_share_homes(const struct netmodel *m, const struct fix_node_state *states,
                          struct fix_plan *p);

/* Whether the firewall fixer is selected and will act on node i: the gather
 * reads the firewall (which may need sudo) only then. */
int fix_wants_firewall(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, size_t i);

/* Node i's data interface and address: the verified suggestion, else
 * NCCL's bootstrap pick when it is not loopback (a node whose ports are
 * blocked has no verified one, and its firewall is what needs fixing).
 * 0, or -1 when neither is known. */
int fix_data_iface(const struct netmodel *m, const struct diagnosis *d, size_t i,
                   const char **ifname, const char **addr);

/* ---------------------------------------------------------------- fixers */

struct fix_ctx {
	const struct netmodel *m;
	const struct diagnosis *d;
	const struct job_plan *plan; /* the check's job plan: the variables env writes */
	const struct fix_node_state *states;
	const struct fix_opts *o;
	const char *run;
	/* the content each file will have after the actions planned so far,
	 * so two fixers editing one file compose */
	struct fix_node_state *work;
};

struct fixer {
	const char *id;
	const char *title;
	int by_default;              /* 0: only with --only (port-range) */
	const char *const *findings; /* the finding ids it answers (NULL-terminated) */
	/* of those, the findings it answers: NULL = all; else 1 for the ones
	 * whose cause it changes (env: nccl-ib-fallback only when NCCL_IB_HCA
	 * is the cause) */
	int (*answers)(const struct finding *fd);
	/* add node i's actions and notes to p */
	void (*plan)(struct fix_ctx *c, size_t i, struct fix_node_plan *p);

	/* Its roles beyond planning (0 / NULL for none): */
	/* it plans for nodes the check could not log in to, which fix_login.h's
	 * stage reaches first (ssh-key) */
	int login_stage;
	/* the gather reads the node's firewall for it (firewall) */
	int reads_firewall;
	/* its target range (fix_port_range) becomes the plan's port_lo/hi, and
	 * the firewall's rule opens only it and MASTER_PORT (port-range) */
	int narrows_ports;
	/* verified by what the new check m2 read on node i, besides its
	 * findings: 0, or -1 with why not in still (port-range: the range) */
	int (*verify)(const struct netmodel *m2, const struct fix_plan *p, size_t i, char *still,
	              size_t len);
};

extern const struct fixer fixer_table[];
extern const size_t fixer_table_len;

const struct fixer *fixer_find(const char *id);
/* The fixer with the login_stage role (ssh-key). */
const struct fixer *fixer_login_stage(void);

/* Whether fixer f answers findings with this id. */
int fixer_answers(const struct fixer *f, const char *id);
/* Whether fixer f answers this finding: its id, and the fixer's answers
 * predicate where it has one. */
int fixer_answers_finding(const struct fixer *f, const struct finding *fd);
/* The fixers answering this finding (fixer_answers_finding), comma-separated
 * in table order ("env,hosts"), into out; returns how many (0: none, fix by
 * hand). */
size_t fix_fixers_for(const struct finding *fd, char *out, size_t len);

/* What a gather of m's nodes takes (fix_run.h): states[i] initialised,
 * skip[i] for the nodes the check did not probe, and fw_iface[i] the data
 * interface of each node whose firewall the selected fixers would change
 * (NULL: its firewall is not read). The arrays have m->nnodes entries. */
void fix_gather_inputs(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, struct fix_node_state *states, int *skip,
                       const char **fw_iface);

/* Whether a finding the fixer answers names node i. */
int fixer_applies(const struct fixer *f, const struct diagnosis *d, size_t i);

/* For the fixers (fix_plan.c). */
void fix_note(struct fix_node_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A file action: NAME's marked block holding body at where, on the working
 * copy of path. Nothing is added when the file would not change. -1 with a
 * note when the file could not be read or its markers are broken. */
int fix_plan_block(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const char *fixer,
                   const char *path, int sudo, const char *name, const char *body,
                   enum blockedit_where where, unsigned mode, const char *summary);
/* A file action replacing path's working copy with after_take (kept). */
int fix_plan_text(struct fix_ctx *c, size_t i, struct fix_node_plan *p, const char *fixer,
                  const char *path, int sudo, char *after_take, size_t after_len, unsigned mode,
                  const char *summary);
/* The working copy of path on node i, or NULL with a note when it could
 * not be read. */
struct fix_file_state *fix_work_file(struct fix_ctx *c, size_t i, struct fix_node_plan *p,
                                     const char *fixer, const char *path);
void fix_plan_cmd(struct fix_node_plan *p, const char *fixer, int sudo, const char *summary,
                  char **argv_take, char **undo_take);
/* A NULL-terminated argv from the arguments (copied), ending at NULL. */
char **fix_argv(const char *first, ...) __attribute__((sentinel));
/* A copy of a NULL-terminated argv (NULL gives an empty one). */
char **fix_argv_copy(char *const *argv);
void fix_argv_free(char **argv);
/* Whether two NULL-terminated argvs are the same words (NULL is empty). */
int fix_argv_equal(const char *const *a, const char *const *b);

#endif
