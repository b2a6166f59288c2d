/* SPDX-License-Identifier: MIT */
/*
 * nodegroup.h - "@group" and "@source:group" in host lists: a table of group
 * sources, asked in order, the first that knows the group giving its nodes.
 *
 * The rows (nodegroup.c, nodegroup_sources[]):
 *   ClusterShell  its groups.conf and groups.d where ClusterShell looks
 *                 (csgroups.h): static YAML groups, and map upcalls run
 *                 with $GROUP, $SOURCE and $CFGDIR replaced, as
 *                 ClusterShell does, under a deadline. "@group" is looked
 *                 up in [Main] default.
 *   Slurm         @sj:JOBID (also @slurmjob:) through `squeue -h -j JOBID
 *                 -o %N`, @sp:PARTITION (also @slurmpart:) through `sinfo
 *                 -h -p PARTITION -o %N`, as ClusterShell's
 *                 slurm.conf.example maps them.
 * Another source (a config file's named groups) is one more row.
 *
 * A group no source knows is an error naming it and every place looked,
 * never a host name:
 *   unknown node group @gpu; looked in: ClusterShell (no groups.conf in
 *   ~/.config/clustershell, /etc/clustershell), Slurm (@sj:JOBID, @sp:PARTITION)
 * A group's nodes may name other groups (of the same source when bare);
 * more than NODEGROUP_DEPTH levels is an error (a loop).
 */
#ifndef CD_NODEGROUP_H
#define CD_NODEGROUP_H

#include <stddef.h>

#include "csgroups.h"
#include "hostlist.h"

#define NODEGROUP_DEPTH      16
#define NODEGROUP_TIMEOUT_MS 10000 /* each upcall or Slurm command */
#define NODEGROUP_OUT_MAX    ((size_t)4 << 20)

struct nodegroups {
	struct hostlist_groups hook; /* set a hostlist's groups to &hook */
	struct csgroups cs;          /* loaded on the first "@" */
	int cs_loaded, cs_rc;
	char cs_err[256];
	int timeout_ms;
	/* 1: a group whose source runs a program (a map upcall, squeue, sinfo)
	 * is an error instead: for a caller on an event loop, which must not
	 * wait up to timeout_ms on it (the TUI's node prompt) */
	int no_programs;
	int depth;
	const char *cur_source; /* the source whose group is being expanded */
	/* the groups being expanded, outermost first ("config:train"): a group
	 * met again inside itself is a loop, said once with its chain */
	char path[NODEGROUP_DEPTH][96];
	int npath, loop_said;
	int loops_found; /* loops met since nodegroups_init (clusterdoc config asks) */
	/* clusterdoc's own configuration's [groups] (set by the head's
	 * targets, cli/settings.h config_group_text: core reads no config
	 * file): 1 with the group's hosts text, 0 when no file names it, < 0
	 * with err. NULL: no such source. */
	int (*config_text)(const char *name, const char **text, char *err, size_t errlen);
	/* the configuration's group name nearest to name (two edits at most),
	 * for "did you mean @train?"; NULL: none (or no such source) */
	const char *(*config_nearest)(const char *name);
};

/* One group source (a row). find: 1 when it knows source:group (NULL source:
 * a bare "@group") and added its hosts to out; 0 when it does not; or a
 * negative enum cd_err with err set (an upcall that failed). describe:
 * where it looked, for the unknown-group message (nothing when the source
 * is not there). */
struct nodegroup_source {
	const char *name;
	int (*find)(struct nodegroups *g, const char *source, const char *group,
	            struct hostlist *out, char *err, size_t errlen);
	void (*describe)(struct nodegroups *g, char *buf, size_t len);
};

/* Ready to resolve; nothing is read until the first "@" (hook.ctx = g). */
void nodegroups_init(struct nodegroups *g);
void nodegroups_fini(struct nodegroups *g);

#endif
