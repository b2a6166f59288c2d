/* SPDX-License-Identifier: MIT */
/*
 * settings.h - the configuration of this run: the files clusterdoc reads
 * (core/config.h), in order, and what they say.
 *
 *   1. /etc/clusterdoc/config            ($CLUSTERDOC_SYSTEM_CONFIG names another)
 *   2. $XDG_CONFIG_HOME/clusterdoc/config (default ~/.config/clusterdoc/config)
 *   3. the file $CLUSTERDOC_CONFIG names (it must exist)
 *   4. -O KEY=VALUE on the command line, in their order
 *
 * The line read last wins; the command line's own options win over all of
 * them (cli/command.c applies a key only to an option the words did not
 * give). The keys are the long options of the command table (command.h):
 * one key per long option a command takes, except --help and the options
 * marked cmdline_only (struct optdef); a section [COMMAND] holds keys for
 * that command alone. The schema is built from the table, never listed by
 * hand.
 */
#ifndef CD_SETTINGS_H
#define CD_SETTINGS_H

#include <stddef.h>

#include "config.h"
#include "hostlist.h"
#include "probes/expect.h"

/*
 * Read the files once per process, and the -O values (opts[0..nopts),
 * "KEY=VALUE"; opts NULL: none yet) at the first call that gives opts;
 * later calls return what was read. 0, or < 0 with
 * "FILE:LINE: ..." (or "-O ARG: ...") in err: the run must stop there,
 * before anything reaches a node.
 */
int settings_load(char *const *opts, size_t nopts, char *err, size_t errlen);

/* What settings_load read (empty before it). Valid for the process's life:
 * the options' values point into it. */
const struct config *settings_config(void);

/* The keys of every section, from the command table. */
const struct config_schema *settings_schema(void);

/*
 * A named node group of the configuration ([groups] NAME = HOSTLIST): 1
 * with its hosts text in *text (borrowed, valid for the process's life;
 * it may name other groups, "@other", already checked as a hostlist); 0
 * when no file names it; < 0 with err ("FILE:LINE: ...") when the
 * configuration cannot be read. Reads the files (without -O) when
 * settings_load has not run yet. What a row of core/nodegroup.c's group
 * sources needs (its add_text resolves "@other" with the same sources).
 */
int config_group_text(const char *name, const char **text, char *err, size_t errlen);

/* The configuration's [groups] name nearest to name, two edits at most
 * (for "did you mean @train?"), or NULL. Valid for the process's life. */
const char *config_group_nearest(const char *name);

/*
 * config_group_text, its hosts added to out (parsed with out's own group
 * hook: "@other" in them resolves only when out has one). 1, 0 or < 0 as
 * above; a parse error names the group's FILE:LINE.
 */
int config_group_lookup(const char *name, struct hostlist *out, char *err, size_t errlen);

/*
 * The [expect] section of what settings_load read into e (zeroed first;
 * the last line of a key wins). 0, or CD_ERR_PARSE with "FILE:LINE: KEY =
 * VALUE: WHY" (or "-O expect.KEY=VALUE: WHY") in err.
 */
int settings_expect(struct expect *e, char *err, size_t errlen);

#endif
