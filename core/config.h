/* SPDX-License-Identifier: MIT */
/*
 * config.h - clusterdoc's configuration files: defaults for the long
 * options, and named node groups (docs/clusterdoc.1, FILES; docs/config.md).
 *
 *	# a comment: '#' first on a line (after blanks)
 *	ssh = openssh                  KEY = VALUE: KEY is a long option's name
 *	nodes = node[01-16]            the default of -w
 *	accept-new = yes               an option without a value: yes/no
 *	include /etc/clusterdoc/site   another file, read here (relative: to this file's
 *	                               folder; a pattern, such as conf.d/NAME.conf with NAME
 *	                               a '*': each match in order, none is no error)
 *	[check]                        what follows holds for `clusterdoc check` only
 *	expect-gpus = 8
 *	[expect]                       what the node should have (probes/expect.h;
 *	mtu = 9000                     the front end gives its keys in the schema)
 *	[groups]                       named node groups (also [group]): NAME = HOSTLIST
 *	gpu = node[01-08]
 *
 * The module knows no option: the front end gives it the keys each
 * section takes (struct config_schema, built from the command table), and
 * a line naming anything else is an error naming the nearest key. Values
 * are kept as text; the front end parses them with the options' own
 * parsers, when a command takes them.
 *
 * Several layers are read into one struct config, in order; for a key, the
 * line read last wins (config_get). Errors are "FILE:LINE: WHAT" in the
 * caller's buffer, WHAT quoting the line's key or value.
 */
#ifndef CD_CONFIG_H
#define CD_CONFIG_H

#include <getopt.h>
#include <stddef.h>

#include "hostlist.h"

#define CONFIG_FILE_MAX    (1024 * 1024) /* bytes of one file */
#define CONFIG_LINE_MAX    4096          /* bytes of one line */
#define CONFIG_INCLUDE_MAX 16            /* files open at once through include */
#define CONFIG_ENTRIES_MAX 4096          /* lines with a key, all layers together */
#define CONFIG_GROUPS      "groups"      /* the named node groups' section */

/* Where a layer comes from, in the order they are read. */
enum config_origin {
	CONFIG_SYSTEM, /* /etc/clusterdoc/config */
	CONFIG_USER,   /* $XDG_CONFIG_HOME/clusterdoc/config */
	CONFIG_ENV,    /* the file $CLUSTERDOC_CONFIG names */
	CONFIG_OPTION, /* -O KEY=VALUE */
};

/* One section's keys: a {0}-ended getopt_long table (has_arg no_argument:
 * the value is yes or no). */
struct config_section {
	const char *name; /* "" is the top, before any [section] */
	const struct option *keys;
	const struct option *cmdline; /* names taken on the command line only, or NULL */
};

/* What a file may say: its sections. [groups]/[group] is always known. */
struct config_schema {
	const struct config_section *sections;
	size_t nsections;
};

/* One KEY = VALUE line, as read. */
struct config_entry {
	char *section; /* "" or a section of the schema, or CONFIG_GROUPS */
	char *key;
	char *value;
	char *file; /* the file that said it; NULL for -O */
	int line;   /* its line, from 1; 0 for -O */
	enum config_origin origin;
};

/* The files a config read, found or not (for `clusterdoc config`). */
struct config_file {
	char *path;
	enum config_origin origin;
	int found; /* 0: there was no such file (not an error for the system and user files) */
};

struct config {
	struct config_entry *entries;
	size_t n, cap;
	struct config_file *files;
	size_t nfiles;
};

void config_init(struct config *c);
void config_fini(struct config *c);

/*
 * Read the text buf[0..len) (need not be NUL-terminated) as the file named
 * path, into c. An include line reads that file (config_read_file). Returns
 * 0, or CD_ERR_PARSE / CD_ERR_IO / CD_ERR_TOOBIG with "PATH:LINE: ..." in
 * err; the entries read before the bad line stay in c (the caller refuses
 * the whole config: nothing half-understood is used). include_ok 0: an
 * include line is an error (the fuzz harness reads no file).
 */
int config_parse(struct config *c, const struct config_schema *schema, const char *buf, size_t len,
                 const char *path, enum config_origin origin, int include_ok, char *err,
                 size_t errlen);

/*
 * Read the file at path into c, following its include lines; a file that
 * includes one it is being read from is an error naming the chain ("include
 * loop: a -> b -> a"). must_exist 0: a missing file is recorded as not
 * found and is no error. Returns as config_parse does (CD_ERR_NOTFOUND
 * for a missing file that must exist).
 */
int config_read_file(struct config *c, const struct config_schema *schema, const char *path,
                     enum config_origin origin, int must_exist, char *err, size_t errlen);

/*
 * One -O argument "KEY=VALUE" (or "SECTION.KEY=VALUE") into c. 0, or
 * CD_ERR_PARSE with "-O ARG: ..." in err.
 */
int config_add_option(struct config *c, const struct config_schema *schema, const char *arg,
                      char *err, size_t errlen);

/*
 * The entry that sets key for a command: the last one read of those in
 * section "" or in section cmd (NULL: "" only). NULL when none does.
 * Borrowed from c.
 */
const struct config_entry *config_get(const struct config *c, const char *cmd, const char *key);

/* The [groups] entry named name (the last one read), or NULL. */
const struct config_entry *config_group(const struct config *c, const char *name);

/* "yes"/"true"/"on"/"1": 1; "no"/"false"/"off"/"0": 0; else -1. */
int config_bool(const char *value);

/* "/etc/clusterdoc/config", "user", "$CLUSTERDOC_CONFIG", "-O". */
const char *config_origin_name(enum config_origin o);

#endif
