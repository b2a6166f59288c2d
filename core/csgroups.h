/* SPDX-License-Identifier: MIT */
/*
 * csgroups.h - ClusterShell's node group configuration, parsed as
 * groups.conf(5) documents it:
 *
 *   groups.conf     [Main] with default (the source of a bare "@group"),
 *                   confdir (groupsdir in older releases: directories of
 *                   more *.conf files holding sources only) and autodir
 *                   (directories of *.yaml files); then one section per
 *                   group source, "[name]" or "[name,alias,...]", whose
 *                   map upcall prints the nodes of $GROUP. Lines are
 *                   "key: value" or "key = value"; an indented line
 *                   continues the value; '#' and ';' start comments.
 *   groups.d/X.yaml "source:" at the left margin, then indented
 *                   "group: nodes" lines (nodes a string, quoted or not, or
 *                   a flow list [a, b]).
 *
 * Only what resolving "@source:group" needs is kept: default, the
 * directories, each source's map upcall and the static groups. Other keys
 * (all, list, reverse, cache_time...) are accepted and ignored, as
 * ClusterShell ignores what it does not use. Where a key or source is
 * given twice, the first wins: groups.conf(5) reads the user's file before
 * the system's and takes "the first obtained value".
 *
 * The parsers are pure (buf, len -> struct); csgroups_load reads the files.
 */
#ifndef CD_CSGROUPS_H
#define CD_CSGROUPS_H

#include <stddef.h>

/* One group source: a groups.conf section (with a map upcall) or a YAML
 * file's top-level key (with static groups). */
struct csgroups_source {
	char *name;
	char *map;              /* the map upcall, or NULL */
	char *cfgdir;           /* $CFGDIR for the upcall: the directory of its groups.conf */
	char **groups, **nodes; /* static groups (YAML) */
	size_t ngroups;
	char *path; /* where it was defined */
	size_t line;
};

struct csgroups {
	char *default_source; /* [Main] default, or NULL */
	char **dirs;          /* confdir/groupsdir and autodir entries, $CFGDIR */
	int *dir_yaml;        /* expanded; dir_yaml[i]: autodir (*.yaml) */
	size_t ndirs;
	struct csgroups_source *src;
	size_t nsrc;
	char **files; /* every file read, for "looked in" messages */
	size_t nfiles;
};

void csgroups_init(struct csgroups *c);
void csgroups_fini(struct csgroups *c);

/*
 * Parse a groups.conf (main != 0: [Main] allowed) or a confdir *.conf file
 * (main == 0: sources only) at path into c; cfgdir is what $CFGDIR stands
 * for (the directory of the first groups.conf read, as in ClusterShell).
 * Returns 0 or CD_ERR_PARSE: "PATH:LINE: \"VALUE\": why" for a line that is
 * neither a section, a key, a continuation nor a comment, a key before any
 * section, or [Main] where only sources may be.
 */
int csgroups_parse_conf(struct csgroups *c, const char *buf, size_t len, const char *path,
                        const char *cfgdir, int main, char *err, size_t errlen);

/*
 * Parse a groups.d *.yaml file into c's static groups. Returns 0 or
 * CD_ERR_PARSE ("PATH:LINE: \"VALUE\": why") for anything outside the
 * subset above (a group line before any source, a line without "key:",
 * block lists, an unterminated quote).
 */
int csgroups_parse_yaml(struct csgroups *c, const char *buf, size_t len, const char *path,
                        char *err, size_t errlen);

/*
 * Read ClusterShell's files where ClusterShell looks (groups.conf(5)):
 * $CLUSTERSHELL_CFGDIR/groups.conf (only when set), then
 * $XDG_CONFIG_HOME/clustershell (default ~/.config/clustershell),
 * ~/.local/etc/clustershell and /etc/clustershell; then the confdir and
 * autodir directories the first [Main] names (default: groups.conf.d and
 * groups.d beside each groups.conf read). Missing files are no error
 * (ClusterShell then has no groups); a file that does not parse is.
 */
int csgroups_load(struct csgroups *c, char *err, size_t errlen);

/* The source named name (a section's name or alias), or NULL. */
const struct csgroups_source *csgroups_find(const struct csgroups *c, const char *name);

#endif
