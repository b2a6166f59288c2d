/* SPDX-License-Identifier: MIT */
/* completion.c - bash and zsh completion scripts from the command table (completion.h). */
#include "completion.h"
#include "cd.h"
#include "command.h"
#include "targets.h"

#include <string.h>

/* One long option as the scripts offer it. */
struct compopt {
	const char *name; /* without "--" */
	int has_arg;
	const char *values; /* the words it takes, space separated; NULL: any */
};

#define COMPOPT_MAX (OPTSET_MAX + 16)

static const struct option targets_longopts[] = {
    TARGETS_LONGOPTS,
    {0},
};

/* The short options of the targets that take a value, with what it is:
 * host lists get host names, the others files. */
static const struct {
	const char *opt;
	int hosts;
} targets_short[] = {
    {"-w", 1},
    {"-x", 1},
    {"-F", 0},
    {"-i", 0},
};

/* Only words a shell script can hold unquoted: getopt names are [a-z0-9-]. */
static int plain_word(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

/* The targets' options that take one of a few words (struct option has no
 * place for them): what targets_set accepts (test_completion.c). */
static const struct {
	const char *name, *values;
} targets_values[] = {
    {"ssh", "libssh2 openssh"},
    {"launcher", "ssh srun local-connect"},
};

static void add(struct compopt *v, size_t *n, const char *name, int has_arg, const char *values)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].name, name) == 0)
			return;
	if (*n < COMPOPT_MAX && plain_word(name))
		v[(*n)++] = (struct compopt){.name = name, .has_arg = has_arg, .values = values};
}

static const char *targets_values_of(const char *name)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(targets_values); i++)
		if (strcmp(targets_values[i].name, name) == 0)
			return targets_values[i].values;
	return NULL;
}

/* The words option id of g takes (its values row), or NULL. */
static const char *words_of(const struct optgroup *g, int id)
{
	for (const struct optvalues *v = g->values; v && v->id; v++)
		if (v->id == id)
			return v->words;
	return NULL;
}

static const struct optdef *def_of(const struct optgroup *g, int id)
{
	for (size_t i = 0; i < g->ndefs; i++)
		if (g->defs[i].id == id)
			return &g->defs[i];
	return NULL;
}

/* The long options c's --help lists, in its order: a group's option that
 * --help leaves out (an alias) or refuses is not offered either. */
static size_t command_compopts(const struct command *c, struct compopt *v)
{
	size_t n = 0;

	for (const struct command_opts *o = c->opts; o && o->g; o++) {
		if (o->refused)
			continue;
		if (!o->uses) {
			for (size_t i = 0; i < o->g->ndefs; i++)
				if (o->g->defs[i].help)
					add(v, &n, o->g->defs[i].name, o->g->defs[i].has_arg,
					    words_of(o->g, o->g->defs[i].id));
			continue;
		}
		for (const struct optuse *u = o->uses; u->id; u++) {
			const struct optdef *d = def_of(o->g, u->id);

			if (d && (u->help || d->help))
				add(v, &n, u->name ? u->name : d->name, d->has_arg,
				    words_of(o->g, u->id));
		}
	}
	if (c->nodes != COMMAND_NO_NODES)
		for (const struct option *t = targets_longopts; t->name; t++)
			add(v, &n, t->name, t->has_arg, targets_values_of(t->name));
	add(v, &n, "help", no_argument, NULL);
	/* the global options every command's --help lists (command.c) */
	add(v, &n, "verbose", no_argument, NULL);
	add(v, &n, "version", no_argument, NULL);
	return n;
}

/* A summary inside single quotes: ' as '\'' */
static void put_quoted(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
}

static void bash_command(FILE *f, const struct command *c)
{
	struct compopt v[COMPOPT_MAX];
	size_t n = command_compopts(c, v);
	const char *sep = "";

	fprintf(f, "\t%s)\n\t\topts='", c->name);
	for (size_t i = 0; i < n; i++, sep = " ")
		fprintf(f, "%s--%s", sep, v[i].name);
	fputs("'\n\t\tvals='", f);
	sep = "";
	for (size_t i = 0; i < n; i++)
		if (v[i].has_arg) {
			fprintf(f, "%s--%s", sep, v[i].name);
			sep = " ";
		}
	if (c->nodes != COMMAND_NO_NODES)
		for (size_t i = 0; i < CD_ARRAY_LEN(targets_short); i++)
			fprintf(f, " %s", targets_short[i].opt);
	/* "--backend=gloo,nccl,auto": an option's words, for the case below */
	fputs("'\n\t\tchoices='", f);
	sep = "";
	for (size_t i = 0; i < n; i++)
		if (v[i].values) {
			fprintf(f, "%s--%s=", sep, v[i].name);
			for (const char *w = v[i].values; *w; w++)
				fputc(*w == ' ' ? ',' : *w, f);
			sep = " ";
		}
	fputs("'\n\t\t;;\n", f);
}

static void write_bash(FILE *f)
{
	fprintf(f,
	        "# bash completion for clusterdoc(1) %s, made by `clusterdoc completion bash`\n"
	        "# from its command table: do not edit.\n"
	        "_clusterdoc() {\n"
	        "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= opts= vals= choices= c w\n"
	        "\t((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	        "\tCOMPREPLY=()\n"
	        "\tif ((COMP_CWORD == 1)); then\n"
	        "\t\tCOMPREPLY=($(compgen -W '",
	        CLUSTERDOC_VERSION);
	for (size_t i = 0; i < commands_len; i++)
		fprintf(f, "%s ", commands[i]->name);
	fputs("completion --help --version' -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\tfi\n"
	      "\tcase ${COMP_WORDS[1]} in\n",
	      f);
	for (size_t i = 0; i < commands_len; i++)
		bash_command(f, commands[i]);
	fputs("\tcompletion)\n"
	      "\t\t((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\t\t;;\n"
	      "\t*) return 0 ;;\n"
	      "\tesac\n"
	      "\tfor c in $choices; do\n"
	      "\t\tif [[ $prev == \"${c%%=*}\" ]]; then\n"
	      "\t\t\tw=${c#*=}\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"${w//,/ }\" -- \"$cur\"))\n"
	      "\t\t\treturn 0\n"
	      "\t\tfi\n"
	      "\tdone\n"
	      "\tcase \" $vals \" in\n"
	      "\t*\" $prev \"*)\n"
	      "\t\tcase $prev in\n"
	      "\t\t-w | -x) COMPREPLY=($(compgen -A hostname -- \"$cur\")) ;;\n"
	      "\t\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	      "\t\tesac\n"
	      "\t\treturn 0\n"
	      "\t\t;;\n"
	      "\tesac\n"
	      "\t[[ $cur == -* ]] && COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\treturn 0\n"
	      "}\n"
	      "complete -F _clusterdoc clusterdoc\n",
	      f);
}

static void zsh_command(FILE *f, const struct command *c)
{
	struct compopt v[COMPOPT_MAX];
	size_t n = command_compopts(c, v);

	fprintf(f, "\t%s)\n\t\t_arguments \\\n", c->name);
	if (c->nodes != COMMAND_NO_NODES)
		for (size_t i = 0; i < CD_ARRAY_LEN(targets_short); i++)
			fprintf(f, "\t\t\t'%s:%s:%s' \\\n", targets_short[i].opt,
			        targets_short[i].hosts ? "hosts" : "file",
			        targets_short[i].hosts ? "_hosts" : "_files");
	for (size_t i = 0; i < n; i++)
		if (v[i].values)
			fprintf(f, "\t\t\t'--%s:value:(%s)' \\\n", v[i].name, v[i].values);
		else
			fprintf(f, "\t\t\t'--%s%s' \\\n", v[i].name,
			        v[i].has_arg ? ":value:_files" : "");
	fputs("\t\t\t'*:argument:_files'\n\t\t;;\n", f);
}

static void write_zsh(FILE *f)
{
	fprintf(f,
	        "#compdef clusterdoc\n"
	        "# zsh completion for clusterdoc(1) %s, made by `clusterdoc completion zsh`\n"
	        "# from its command table: do not edit.\n"
	        "_clusterdoc() {\n"
	        "\tlocal -a cmds\n"
	        "\tcmds=(\n",
	        CLUSTERDOC_VERSION);
	for (size_t i = 0; i < commands_len; i++) {
		fprintf(f, "\t\t'%s:", commands[i]->name);
		put_quoted(f, commands[i]->summary);
		fputs("'\n", f);
	}
	fputs("\t\t'completion:the bash or zsh completion script'\n"
	      "\t)\n"
	      "\tif ((CURRENT == 2)); then\n"
	      "\t\t_describe -t commands 'clusterdoc command' cmds\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tlocal cmd=$words[2]\n"
	      "\tshift words\n"
	      "\t((CURRENT--))\n"
	      "\tcase $cmd in\n",
	      f);
	for (size_t i = 0; i < commands_len; i++)
		zsh_command(f, commands[i]);
	fputs("\tcompletion)\n"
	      "\t\t_arguments '1:shell:(bash zsh)'\n"
	      "\t\t;;\n"
	      "\tesac\n"
	      "}\n"
	      "_clusterdoc \"$@\"\n",
	      f);
}

int completion_write(FILE *f, const char *shell)
{
	if (strcmp(shell, "bash") == 0)
		write_bash(f);
	else if (strcmp(shell, "zsh") == 0)
		write_zsh(f);
	else
		return -1;
	return 0;
}

int cmd_completion(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf(
		    "usage: clusterdoc completion bash|zsh\n"
		    "Print the shell's completion script for clusterdoc's commands and options.\n");
		return 0;
	}
	if (argc != 2 || completion_write(stdout, argv[1]) < 0) {
		fprintf(stderr, "usage: clusterdoc completion bash|zsh\n");
		return 2;
	}
	return 0;
}
