/* SPDX-License-Identifier: MIT */
/*
 * cmd_config.c - `clusterdoc config`: the settings the configuration files
 * and -O give (cli/settings.h), each with where it came from. Exit 0, or 2
 * when a file cannot be read or holds a bad line (said as FILE:LINE).
 */
#include "cd.h"
#include "command.h"
#include "commands.h"
#include "jsondoc.h"
#include "settings.h"
#include "targets.h"
#include "termtext.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_JSON_VERSION 1

enum { CONFIGOPT_JSON = 1, CONFIGOPT_ALL };

struct config_cli {
	int json, all;
};

static const struct optdef own_defs[] = {
    {"json", no_argument, CONFIGOPT_JSON, "--json",
     "      --json               the same as a JSON document\n"},
    {"all", no_argument, CONFIGOPT_ALL, "--all",
     "      --all                also every key no file sets (from \"default\")\n"},
};

static int parse_own(void *ctx, int opt, const char *arg, const char *shown, char *err,
                     size_t errlen)
{
	struct config_cli *c = ctx;

	(void)arg, (void)shown, (void)err, (void)errlen;
	if (opt == CONFIGOPT_JSON)
		c->json = 1;
	else
		c->all = 1;
	return 0;
}

static const struct optgroup own_group = {.defs = own_defs,
                                          .ndefs = CD_ARRAY_LEN(own_defs),
                                          .parse = parse_own,
                                          .cmdline_only = (const int[]){CONFIGOPT_ALL, 0}};

static const struct command_opts opts[] = {
    {.g = &own_group},
    {0},
};

const struct command command_config = {
    .name = "config",
    .summary = "the settings of the configuration files, and where each comes from",
    .usage = "usage: clusterdoc config [--json] [--all] [-O KEY=VALUE]...\n"
             "Print the settings the configuration files and -O give, one per line, with\n"
             "the file and line (or -O, or the environment) each comes from. Files, in\n"
             "order, the last line read winning: /etc/clusterdoc/config,\n"
             "~/.config/clusterdoc/config ($XDG_CONFIG_HOME), $CLUSTERDOC_CONFIG, then -O;\n"
             "a command's own options win over all of them. Keys are the long options\n"
             "(nodes, login, ssh, fanout, timeout, python, expect-gpus...); [COMMAND]\n"
             "sections hold one command's, [groups] named node groups. See clusterdoc(1).\n"
             "Every value is checked as each command that takes it would check it.\n"
             "Exit status: 0, or 2 when a file has a bad line or value (FILE:LINE says\n"
             "which).\n\n"
             "Options:\n",
    .nodes = COMMAND_NO_NODES,
    .opts = opts,
    .run = cmd_config,
};

/* Settings the environment gives when no file does: the defaults the
 * commands take from there. */
static const struct {
	const char *key, *var;
} env_defaults[] = {
    {"nodes", "SLURM_JOB_NODELIST"},
    {"agent", "CLUSTERDOC_AGENT"},
};

/* Whether entry i is the one that counts for its section and key (no later
 * line sets them again). */
static int wins(const struct config *c, size_t i)
{
	for (size_t k = i + 1; k < c->n; k++)
		if (strcmp(c->entries[k].section, c->entries[i].section) == 0 &&
		    strcmp(c->entries[k].key, c->entries[i].key) == 0)
			return 0;
	return 1;
}

static char *source_of(const struct config_entry *e)
{
	if (!e->file)
		return cd_strdup("-O");
	return cd_asprintf("%s:%d", e->file, e->line);
}

static void print_line(const char *key, const char *value, const char *source)
{
	int w = termtext_printf(stdout, "%s = %s", key, value);

	printf("%*s", w < 39 ? 40 - w : 1, "");
	termtext_printf(stdout, "# %s\n", source);
}

/* The sections in the order printed: the top, each command's, the groups. */
static void print_section(const struct config *c, const char *section)
{
	int head = 0;

	for (size_t i = 0; i < c->n; i++) {
		char *src;

		if (strcmp(c->entries[i].section, section) != 0 || !wins(c, i))
			continue;
		if (section[0] && !head++)
			printf("[%s]\n", section);
		src = source_of(&c->entries[i]);
		print_line(c->entries[i].key, c->entries[i].value, src);
		free(src);
	}
}

static void print_text(const struct config *c, int all)
{
	const struct config_schema *s = settings_schema();

	for (size_t i = 0; i < c->nfiles; i++)
		termtext_printf(stdout, "# %s %s%s\n", config_origin_name(c->files[i].origin),
		                c->files[i].path, c->files[i].found ? "" : " (none)");
	print_section(c, "");
	for (size_t i = 0; i < CD_ARRAY_LEN(env_defaults); i++) {
		const char *v = getenv(env_defaults[i].var);
		char *src;

		if (config_get(c, NULL, env_defaults[i].key) || !v || !*v)
			continue;
		src = cd_asprintf("environment ($%s)", env_defaults[i].var);
		print_line(env_defaults[i].key, v, src);
		free(src);
	}
	for (const struct option *o = s->sections[0].keys; all && o->name; o++)
		if (!config_get(c, NULL, o->name))
			printf("# %s%*s# default\n", o->name, (int)(38 - strlen(o->name)), "");
	for (size_t i = 1; i < s->nsections; i++)
		print_section(c, s->sections[i].name);
	print_section(c, CONFIG_GROUPS);
}

static json_t *entry_json(const struct config_entry *e)
{
	json_t *o = json_pack("{ssssssssss?}", "section", e->section, "key", e->key, "value",
	                      e->value, "source", e->file ? "file" : "-O", "file", e->file);

	if (e->file)
		json_object_set_new(o, "line", json_integer(e->line));
	return o;
}

static void print_json(const struct config *c, int all)
{
	json_t *doc = json_pack("{sisss[]s[]}", "version", CONFIG_JSON_VERSION, "command", "config",
	                        "files", "settings");
	json_t *files = json_object_get(doc, "files"), *set = json_object_get(doc, "settings");
	const struct config_schema *s = settings_schema();

	for (size_t i = 0; i < c->nfiles; i++)
		json_array_append_new(files,
		                      json_pack("{sssssb}", "path", c->files[i].path, "origin",
		                                config_origin_name(c->files[i].origin), "found",
		                                c->files[i].found));
	for (size_t i = 0; i < c->n; i++)
		if (wins(c, i))
			json_array_append_new(set, entry_json(&c->entries[i]));
	for (size_t i = 0; i < CD_ARRAY_LEN(env_defaults); i++) {
		const char *v = getenv(env_defaults[i].var);

		if (!config_get(c, NULL, env_defaults[i].key) && v && *v)
			json_array_append_new(set, json_pack("{ssssssssss}", "section", "", "key",
			                                     env_defaults[i].key, "value", v,
			                                     "source", "environment", "variable",
			                                     env_defaults[i].var));
	}
	for (const struct option *o = s->sections[0].keys; all && o->name; o++)
		if (!config_get(c, NULL, o->name))
			json_array_append_new(set,
			                      json_pack("{sssssnss}", "section", "", "key", o->name,
			                                "value", "source", "default"));
	jsondoc_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

/* A [groups] entry that names itself, through others or not, is as bad as
 * a malformed one: each group is expanded (with no group source that runs
 * a program: a map upcall, squeue; those are checked when used) and a loop
 * is named with its chain. 0, or -1 after saying which. */
static int check_group_loops(const struct config *c)
{
	struct nodegroups g;
	int rc = 0;

	targets_groups_init(&g);
	g.no_programs = 1;
	for (size_t i = 0; i < c->n && rc == 0; i++) {
		const struct config_entry *e = &c->entries[i];
		struct hostlist *hl;
		char word[128], err[CD_ERRLEN];
		int loops;

		if (strcmp(e->section, CONFIG_GROUPS) != 0 || !wins(c, i))
			continue;
		hl = hostlist_new();
		hl->groups = &g.hook;
		snprintf(word, sizeof(word), "@config:%s", e->key);
		loops = g.loops_found;
		if (hostlist_parse(hl, word, err, sizeof(err)) < 0 && g.loops_found > loops) {
			termtext_printf(stderr, "clusterdoc config: %s:%d: %s\n",
			                e->file ? e->file : "-O", e->line, err);
			rc = -1;
		}
		hostlist_free(hl);
	}
	nodegroups_fini(&g);
	return rc;
}

int cmd_config(int argc, char **argv)
{
	struct config_cli c = {0};
	struct expect want; /* [expect], checked as check reads it */
	char err[CD_ERRLEN];
	int p = command_parse(&command_config, &c, argc, argv, NULL);

	if (p != 0)
		return p > 0 ? 0 : 2;
	/* a value no command would take is as bad a line as an unknown key */
	if (command_check_config(command_config.name) < 0)
		return 2;
	if (settings_expect(&want, err, sizeof(err)) < 0) {
		termtext_printf(stderr, "clusterdoc config: %s\n", err);
		return 2;
	}
	if (check_group_loops(settings_config()) < 0)
		return 2;
	if (c.json)
		print_json(settings_config(), c.all);
	else
		print_text(settings_config(), c.all);
	return 0;
}
