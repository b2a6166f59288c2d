/* SPDX-License-Identifier: MIT */
/* nodegroup.c - resolve "@group" through the table of group sources (see nodegroup.h). */
#include "nodegroup.h"

#include "buf.h"
#include "cd.h"
#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* What a group or source name may hold: it is written into upcalls. */
#define GROUP_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/"

/* The nodes text of a group (an upcall's output, a YAML value) into out:
 * it may name other groups, resolved in source. */
static int add_text(struct nodegroups *g, const char *source, const char *group, const char *text,
                    struct hostlist *out, char *err, size_t errlen)
{
	struct hostlist *tmp;
	const char *saved = g->cur_source;
	char herr[CD_ERRLEN], me[96];
	int rc;

	/* a name too long for the path is no loop: said as what it is */
	if ((size_t)snprintf(me, sizeof(me), "%s:%s", source, group) >= sizeof(me))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "@%s:%s: a group name longer than %zu bytes", source, group,
		               sizeof(me) - 2);
	for (int k = 0; k < g->npath; k++) {
		if (strcmp(g->path[k], me) != 0)
			continue;
		size_t used = (size_t)snprintf(err, errlen, "@%s includes itself: ", me);

		for (int m = k; m < g->npath && used < errlen; m++)
			used += (size_t)snprintf(err + used, errlen - used, "@%s -> ", g->path[m]);
		if (used < errlen)
			snprintf(err + used, errlen - used, "@%s", me);
		g->loop_said = 1;
		g->loops_found++;
		return CD_ERR_PARSE;
	}
	if (g->npath < NODEGROUP_DEPTH)
		snprintf(g->path[g->npath], sizeof(g->path[0]), "%s", me);
	g->npath++;
	tmp = hostlist_new();
	tmp->groups = &g->hook;
	g->cur_source = source;
	rc = hostlist_parse(tmp, text, herr, sizeof(herr));
	g->cur_source = saved;
	g->npath--;
	if (rc < 0 && g->loop_said) /* the loop's chain says it all */
		snprintf(err, errlen, "%s", strstr(herr, "@") ? strstr(herr, "@") : herr);
	else if (rc < 0)
		cd_errf(err, errlen, rc, "@%s:%s: %s", source, group, herr);
	else if (hostlist_union(out, tmp) < 0)
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG, "@%s:%s: more than %d hosts", source,
		             group, HOSTLIST_MAX);
	hostlist_free(tmp);
	if (!g->npath)
		g->loop_said = 0;
	return rc;
}

/* Run argv: 1 with its stdout in out when it printed something, 0 when it
 * printed nothing (exit 0), an error naming what when it failed. */
static int run_source(struct nodegroups *g, char *const argv[], const char *what, struct buf *out,
                      char *err, size_t errlen)
{
	struct buf errout;
	char why[CD_ERRLEN], how[64];
	int status = 0, rc;

	if (g->no_programs)
		return cd_errf(err, errlen, CD_ERR_REFUSED,
		               "%s runs a program, which is not waited for here: give the group "
		               "with -w on the command line",
		               what);
	buf_init(&errout, 64 << 10);
	rc = child_run(argv, out, &errout, g->timeout_ms, &status, why, sizeof(why));
	if (rc < 0) {
		cd_errf(err, errlen, rc, "%s: %s", what, why);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		child_describe_status(status, how, sizeof(how));
		errout.len = strcspn(errout.data ? errout.data : "", "\n");
		rc = cd_errf(err, errlen, CD_ERR_IO, "%s %s%s%.*s", what, how,
		             errout.len ? ": " : "", (int)errout.len,
		             errout.data ? errout.data : "");
	} else {
		rc = out->len && out->data[strspn(out->data, " \t\r\n")] ? 1 : 0;
	}
	buf_fini(&errout);
	return rc;
}

/* ---- ClusterShell ---- */

static void cs_load(struct nodegroups *g)
{
	if (g->cs_loaded)
		return;
	g->cs_loaded = 1;
	g->cs_rc = csgroups_load(&g->cs, g->cs_err, sizeof(g->cs_err));
}

/* cmd with $GROUP, $SOURCE and $CFGDIR replaced (ClusterShell substitutes text). */
static char *upcall_expand(const char *cmd, const char *source, const char *group,
                           const char *cfgdir)
{
	static const char *const vars[] = {"$GROUP", "$SOURCE", "$CFGDIR"};
	const char *vals[] = {group, source, cfgdir ? cfgdir : ""};
	struct buf b;
	char *out;

	buf_init(&b, 1 << 20);
	while (*cmd) {
		size_t k = 0;

		while (k < CD_ARRAY_LEN(vars) && strncmp(cmd, vars[k], strlen(vars[k])) != 0)
			k++;
		if (k < CD_ARRAY_LEN(vars)) {
			buf_append_str(&b, vals[k]);
			cmd += strlen(vars[k]);
		} else {
			buf_append(&b, cmd++, 1);
		}
	}
	out = cd_strdup(b.data ? b.data : "");
	buf_fini(&b);
	return out;
}

static int cs_find(struct nodegroups *g, const char *source, const char *group,
                   struct hostlist *out, char *err, size_t errlen)
{
	const struct csgroups_source *s;
	char *cmd, *what, *argv[4];
	struct buf b;
	int rc, r;

	cs_load(g);
	if (g->cs_rc < 0)
		return cd_errf(err, errlen, g->cs_rc, "@%s: %s", group, g->cs_err);
	if (!(s = csgroups_find(&g->cs, source ? source : g->cs.default_source)))
		return 0;
	for (size_t i = 0; i < s->ngroups; i++)
		if (strcmp(s->groups[i], group) == 0) {
			rc = add_text(g, s->name, group, s->nodes[i], out, err, errlen);
			return rc < 0 ? rc : 1;
		}
	if (!s->map)
		return 0;
	cmd = upcall_expand(s->map, s->name, group, s->cfgdir);
	what =
	    cd_asprintf("%s:%zu: the map upcall of [%s] for @%s", s->path, s->line, s->name, group);
	argv[0] = "/bin/sh", argv[1] = "-c", argv[2] = cmd, argv[3] = NULL;
	buf_init(&b, NODEGROUP_OUT_MAX);
	rc = run_source(g, argv, what, &b, err, errlen);
	if (rc > 0 && (r = add_text(g, s->name, group, b.data, out, err, errlen)) < 0)
		rc = r;
	buf_fini(&b);
	free(what);
	free(cmd);
	return rc;
}

static void cs_describe(struct nodegroups *g, char *buf, size_t len)
{
	size_t n;

	cs_load(g);
	if (!g->cs.nfiles) {
		snprintf(buf, len,
		         "ClusterShell (no groups.conf in $CLUSTERSHELL_CFGDIR, "
		         "~/.config/clustershell, ~/.local/etc/clustershell, /etc/clustershell)");
		return;
	}
	n = (size_t)snprintf(buf, len, "ClusterShell (default source %s; sources",
	                     g->cs.default_source ? g->cs.default_source : "none");
	for (size_t i = 0; i < g->cs.nsrc && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : " ", g->cs.src[i].name);
	for (size_t i = 0; i < g->cs.nfiles && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "; from ",
		                      g->cs.files[i]);
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

/* ---- Slurm ---- */

/* ClusterShell's slurm.conf.example: the sources and the command each runs. */
static const struct slurm_source {
	const char *name, *alias, *prog, *flag;
} slurm_sources[] = {
    {.name = "sj", .alias = "slurmjob", .prog = "squeue", .flag = "-j"},
    {.name = "sp", .alias = "slurmpart", .prog = "sinfo", .flag = "-p"},
};

static int slurm_find(struct nodegroups *g, const char *source, const char *group,
                      struct hostlist *out, char *err, size_t errlen)
{
	const struct slurm_source *s = NULL;
	char *argv[7], *what;
	struct buf b;
	int rc, r;

	for (size_t i = 0; source && i < CD_ARRAY_LEN(slurm_sources); i++)
		if (!strcmp(source, slurm_sources[i].name) ||
		    !strcmp(source, slurm_sources[i].alias))
			s = &slurm_sources[i];
	if (!s)
		return 0;
	argv[0] = (char *)s->prog, argv[1] = "-h", argv[2] = (char *)s->flag;
	argv[3] = (char *)group, argv[4] = "-o", argv[5] = "%N", argv[6] = NULL;
	what = cd_asprintf("@%s:%s: %s -h %s %s -o %%N", source, group, s->prog, s->flag, group);
	buf_init(&b, NODEGROUP_OUT_MAX);
	rc = run_source(g, argv, what, &b, err, errlen);
	if (rc == 0)
		rc = cd_errf(err, errlen, CD_ERR_NOTFOUND, "%s printed no nodes (%s)", what,
		             s->prog[1] == 'q' ? "is the job running?" : "an empty partition?");
	else if (rc > 0 && (r = add_text(g, s->name, group, b.data, out, err, errlen)) < 0)
		rc = r;
	buf_fini(&b);
	free(what);
	return rc;
}

static void slurm_describe(struct nodegroups *g, char *buf, size_t len)
{
	(void)g;
	snprintf(buf, len, "Slurm (@sj:JOBID, @sp:PARTITION)");
}

/* clusterdoc's configuration files' [groups]: "@name" or "@config:name". */
static int config_find(struct nodegroups *g, const char *source, const char *group,
                       struct hostlist *out, char *err, size_t errlen)
{
	const char *text = NULL;
	int rc, r;

	if ((source && strcmp(source, "config") != 0) || !g->config_text)
		return 0;
	rc = g->config_text(group, &text, err, errlen);
	if (rc <= 0)
		return rc;
	r = add_text(g, "config", group, text, out, err, errlen);
	return r < 0 ? r : 1;
}

static void config_describe(struct nodegroups *g, char *buf, size_t len)
{
	if (g->config_text)
		snprintf(buf, len, "clusterdoc config ([groups] of its files)");
}

/* The group sources, asked in this order: clusterdoc's own first. */
static const struct nodegroup_source nodegroup_sources[] = {
    {.name = "config", .find = config_find, .describe = config_describe},
    {.name = "clustershell", .find = cs_find, .describe = cs_describe},
    {.name = "slurm", .find = slurm_find, .describe = slurm_describe},
};

static int unknown(struct nodegroups *g, const char *name, char *err, size_t errlen)
{
	char where[1024] = "", one[512];
	const char *near = g->config_nearest ? g->config_nearest(name) : NULL;
	size_t n = 0;

	for (size_t i = 0; i < CD_ARRAY_LEN(nodegroup_sources) && n < sizeof(where); i++) {
		one[0] = '\0';
		nodegroup_sources[i].describe(g, one, sizeof(one));
		if (one[0]) /* a source this front end does not have says nothing */
			n += (size_t)snprintf(where + n, sizeof(where) - n, "%s%s", n ? ", " : "",
			                      one);
	}
	return cd_errf(err, errlen, CD_ERR_NOTFOUND, "unknown node group @%s%s%s%s; looked in: %s",
	               name, near ? " (did you mean @" : "", near ? near : "", near ? "?)" : "",
	               where);
}

static int resolve_one(struct nodegroups *g, const char *name, struct hostlist *out, char *err,
                       size_t errlen);

/* "@rack[1-2]" (ClusterShell: "ranges work for groups too"): each name of
 * the range, resolved in turn. */
static int resolve(const struct hostlist_groups *hook, const char *name, struct hostlist *out,
                   char *err, size_t errlen)
{
	const char *colon = strchr(name, ':'), *bracket = strchr(name, '[');
	struct hostlist names = {0};
	char herr[CD_ERRLEN], *full;
	size_t pre;
	int rc = 0;

	if (!bracket)
		return resolve_one(hook->ctx, name, out, err, errlen);
	pre = colon && colon < bracket ? (size_t)(colon - name) + 1 : 0;
	if ((rc = hostlist_parse(&names, name + pre, herr, sizeof(herr))) < 0)
		cd_errf(err, errlen, rc, "@%s: %s", name, herr);
	for (size_t i = 0; i < names.count && rc == 0; i++) {
		full = cd_asprintf("%.*s%s", (int)pre, name, names.names[i]);
		rc = resolve_one(hook->ctx, full, out, err, errlen);
		free(full);
	}
	for (size_t i = 0; i < names.count; i++)
		free(names.names[i]);
	free(names.names);
	return rc;
}

static int resolve_one(struct nodegroups *g, const char *name, struct hostlist *out, char *err,
                       size_t errlen)
{
	char *source = NULL, *group, *copy = cd_strdup(name), *colon = strchr(copy, ':');
	int rc = 0;

	group = copy;
	if (colon) {
		*colon = '\0';
		source = copy;
		group = colon + 1;
	}
	if (!*group || (source && !*source) || strspn(group, GROUP_CHARS) != strlen(group) ||
	    (source && strspn(source, GROUP_CHARS) != strlen(source))) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE,
		             "@%s: a node group is @group or @source:group, each of letters, "
		             "digits and . _ + - /",
		             name);
		goto out;
	}
	if (!source)
		source = (char *)g->cur_source;
	if (g->depth >= NODEGROUP_DEPTH) {
		rc = cd_errf(err, errlen, CD_ERR_PARSE,
		             "@%s: groups name groups more than %d deep (a loop?)", name,
		             NODEGROUP_DEPTH);
		goto out;
	}
	g->depth++;
	for (size_t i = 0; i < CD_ARRAY_LEN(nodegroup_sources) && rc == 0; i++)
		rc = nodegroup_sources[i].find(g, source, group, out, err, errlen);
	g->depth--;
	if (rc == 0)
		rc = unknown(g, name, err, errlen);
out:
	free(copy);
	return rc < 0 ? rc : 0;
}

void nodegroups_init(struct nodegroups *g)
{
	memset(g, 0, sizeof(*g));
	csgroups_init(&g->cs);
	g->hook.resolve = resolve;
	g->hook.ctx = g;
	g->timeout_ms = NODEGROUP_TIMEOUT_MS;
}

void nodegroups_fini(struct nodegroups *g)
{
	if (g)
		csgroups_fini(&g->cs);
}
