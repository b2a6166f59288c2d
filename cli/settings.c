/* SPDX-License-Identifier: MIT */
/* settings.c - the configuration files of this run, and their schema from the command table
 * (settings.h). */
#include "settings.h"
#include "cd.h"
#include "command.h"
#include "longopt.h"
#include "probes/expect.h"

#include <stdlib.h>
#include <string.h>

static struct config cfg;
static int loaded, opts_added, load_rc;
static char load_err[CD_ERRLEN];

static struct config_schema schema;
static struct config_section *sections;

/* The keys of the top section: every command's (cmdline 0: its keys;
 * 1: its command-line-only names), each name once. */
static struct option *union_of(const struct config_section *secs, size_t n, int cmdline)
{
	struct option *all = NULL;
	size_t nall = 0;

	for (size_t i = 0; i < n; i++) {
		for (const struct option *o = cmdline ? secs[i].cmdline : secs[i].keys; o->name;
		     o++) {
			size_t k = 0;

			while (k < nall && strcmp(all[k].name, o->name) != 0)
				k++;
			if (k < nall)
				continue;
			all = cd_realloc(all, (nall + 2) * sizeof(*all));
			all[nall++] = *o;
		}
	}
	all = cd_realloc(all, (nall + 1) * sizeof(*all));
	memset(&all[nall], 0, sizeof(*all));
	return all;
}

static struct option *union_keys(const struct config_section *secs, size_t n)
{
	return union_of(secs, n, 0);
}

static struct option *union_cmdline(const struct config_section *secs, size_t n)
{
	return union_of(secs, n, 1);
}

const struct config_schema *settings_schema(void)
{
	if (sections)
		return &schema;
	/* the top section, then one per command, then [expect] (probes/expect.h) */
	sections = cd_calloc(commands_len + 2, sizeof(*sections));
	for (size_t i = 0; i < commands_len; i++) {
		struct option *keys = cd_calloc(OPTSET_MAX + 1, sizeof(*keys));
		struct option *cmdline = cd_calloc(OPTSET_MAX + 1, sizeof(*cmdline));

		command_keys(commands[i], keys, OPTSET_MAX);
		command_cmdline_keys(commands[i], cmdline, OPTSET_MAX);
		sections[i + 1] = (struct config_section){commands[i]->name, keys, cmdline};
	}
	sections[0] = (struct config_section){"", union_keys(sections + 1, commands_len),
	                                      union_cmdline(sections + 1, commands_len)};
	sections[commands_len + 1] =
	    (struct config_section){EXPECT_SECTION, expect_options(), NULL};
	schema = (struct config_schema){sections, commands_len + 2};
	return &schema;
}

const struct config *settings_config(void)
{
	return &cfg;
}

static char *user_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	/* as the XDG base directory specification says: a relative one is ignored */
	if (xdg && xdg[0] == '/')
		return cd_asprintf("%s/clusterdoc/config", xdg);
	if (home && *home)
		return cd_asprintf("%s/.config/clusterdoc/config", home);
	return NULL;
}

static int read_files(char *err, size_t errlen)
{
	const char *sys = getenv("CLUSTERDOC_SYSTEM_CONFIG"), *env = getenv("CLUSTERDOC_CONFIG");
	const struct config_schema *s = settings_schema();
	char *user = user_path();
	int rc;

	if (!sys || !*sys)
		sys = "/etc/clusterdoc/config";
	rc = config_read_file(&cfg, s, sys, CONFIG_SYSTEM, 0, err, errlen);
	if (rc == 0 && user)
		rc = config_read_file(&cfg, s, user, CONFIG_USER, 0, err, errlen);
	if (rc == 0 && env && *env) {
		rc = config_read_file(&cfg, s, env, CONFIG_ENV, 1, err, errlen);
		if (rc == CD_ERR_NOTFOUND) {
			char why[CD_ERRLEN];

			snprintf(why, sizeof(why), "%s", err);
			rc = cd_errf(err, errlen, rc, "$CLUSTERDOC_CONFIG: %s", why);
		}
	}
	free(user);
	return rc;
}

int settings_load(char *const *opts, size_t nopts, char *err, size_t errlen)
{
	/* the files once; the -O values once, when a command gives them (a
	 * group looked up while -w is read comes before the -O are all known) */
	if (!loaded) {
		loaded = 1;
		config_init(&cfg);
		load_rc = read_files(load_err, sizeof(load_err));
	}
	for (size_t i = 0; load_rc == 0 && !opts_added && i < nopts; i++)
		load_rc =
		    config_add_option(&cfg, settings_schema(), opts[i], load_err, sizeof(load_err));
	if (opts)
		opts_added = 1;
	snprintf(err, errlen, "%s", load_rc < 0 ? load_err : "");
	return load_rc;
}

int config_group_text(const char *name, const char **text, char *err, size_t errlen)
{
	const struct config_entry *e;

	if (settings_load(NULL, 0, err, errlen) < 0)
		return CD_ERR_PARSE;
	if (!(e = config_group(&cfg, name)))
		return 0;
	*text = e->value;
	return 1;
}

const char *config_group_nearest(const char *name)
{
	const char *best = NULL;
	size_t bestd = 3, nl = strlen(name);
	char err[CD_ERRLEN];

	if (settings_load(NULL, 0, err, sizeof(err)) < 0)
		return NULL;
	for (size_t i = 0; i < cfg.n; i++) {
		const struct config_entry *e = &cfg.entries[i];
		size_t d;

		if (strcmp(e->section, CONFIG_GROUPS) != 0 || strcmp(e->key, name) == 0)
			continue;
		d = longopt_distance(name, nl, e->key);
		if (d < bestd || (d == bestd && best && strcmp(e->key, best) < 0)) {
			bestd = d;
			best = e->key;
		}
	}
	return best;
}

int config_group_lookup(const char *name, struct hostlist *out, char *err, size_t errlen)
{
	const struct config_entry *e;
	const char *text;
	char why[CD_ERRLEN];
	int rc = config_group_text(name, &text, err, errlen);

	if (rc <= 0)
		return rc;
	e = config_group(&cfg, name);
	if (hostlist_parse(out, text, why, sizeof(why)) < 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "%s:%d: group %s: %s", e->file, e->line,
		               name, why);
	return 1;
}

int settings_expect(struct expect *e, char *err, size_t errlen)
{
	char why[CD_ERRLEN];

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < cfg.n; i++) {
		const struct config_entry *c = &cfg.entries[i];

		if (strcmp(c->section, EXPECT_SECTION) != 0 ||
		    expect_set(e, c->key, c->value, why, sizeof(why)) == 0)
			continue;
		if (c->file)
			return cd_errf(err, errlen, CD_ERR_PARSE, "%s:%d: %s", c->file, c->line,
			               why);
		return cd_errf(err, errlen, CD_ERR_PARSE, "-O " EXPECT_SECTION ".%s=%s: %s", c->key,
		               c->value, why);
	}
	return 0;
}
