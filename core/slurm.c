/* SPDX-License-Identifier: MIT */
/* slurm.c - scontrol calls for --drain and --undrain (see slurm.h). */
#include "slurm.h"

#include "buf.h"
#include "cd.h"
#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define SCONTROL_TIMEOUT_MS 10000

static const char *scontrol_path(void)
{
	const char *p = getenv("CLUSTERDOC_SCONTROL");

	return p && *p ? p : "scontrol";
}

/* Run scontrol with args; its stdout into out (may be NULL). 0 when it
 * exited 0, else a negative cd_err with its first line of stderr in err. */
static int scontrol(char *const args[], struct buf *out, char *err, size_t errlen)
{
	char *argv[8];
	struct buf o, e;
	int n = 0, status = 0, rc;

	argv[n++] = (char *)scontrol_path();
	for (; *args && n < 7; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	buf_init(&o, 1 << 20);
	buf_init(&e, 1 << 16);
	rc = child_run(argv, out ? out : &o, &e, SCONTROL_TIMEOUT_MS, &status, err, errlen);
	if (rc < 0)
		goto done;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char how[64];
		size_t len = strcspn(e.data ? e.data : "", "\n");

		child_describe_status(status, how, sizeof(how));
		rc =
		    cd_errf(err, errlen,
		            e.len && strstr(e.data, "not found") ? CD_ERR_NOTFOUND : CD_ERR_REFUSED,
		            "%s %s: %.*s", argv[0], how, (int)len, e.data ? e.data : "");
	}
done:
	buf_fini(&o);
	buf_fini(&e);
	return rc;
}

/* The value of " KEY=" in a one-line record, up to the next " Word=" (or
 * for Reason, up to its " [user@time]"). */
static void field(const char *line, const char *key, char *dst, size_t cap)
{
	size_t klen = strlen(key);
	const char *p = line, *end;

	dst[0] = '\0';
	for (;;) {
		p = strstr(p, key);
		if (!p)
			return;
		if ((p == line || p[-1] == ' ') && p[klen] == '=')
			break;
		p += klen;
	}
	p += klen + 1;
	end = p + strcspn(p, "\n");
	if (strcmp(key, "Reason") == 0) {
		const char *at = strstr(p, " [");

		if (at && at < end)
			end = at;
	} else {
		const char *sp = strchr(p, ' ');

		if (sp && sp < end)
			end = sp;
	}
	snprintf(dst, cap, "%.*s", (int)(end - p), p);
}

int slurm_node_parse(const char *line, struct slurm_node *n)
{
	memset(n, 0, sizeof(*n));
	if (!strstr(line, "NodeName="))
		return CD_ERR_PARSE;
	field(line, "State", n->state, sizeof(n->state));
	field(line, "Reason", n->reason, sizeof(n->reason));
	if (strcmp(n->reason, "(null)") == 0 || strcmp(n->reason, "none") == 0)
		n->reason[0] = '\0';
	n->drained = strstr(n->state, "DRAIN") != NULL;
	n->down = strstr(n->state, "DOWN") != NULL;
	return 0;
}

int slurm_node_get(const char *name, struct slurm_node *n, char *err, size_t errlen)
{
	char *args[] = {"show", "node", "-o", (char *)name, NULL};
	struct buf out;
	int rc;

	buf_init(&out, 1 << 20);
	rc = scontrol(args, &out, err, errlen);
	if (rc == 0 && slurm_node_parse(out.data ? out.data : "", n) < 0)
		rc = cd_errf(err, errlen, CD_ERR_PARSE,
		             "scontrol show node %s: no NodeName= in %.80s", name,
		             out.data ? out.data : "");
	buf_fini(&out);
	return rc;
}

int slurm_drain(const char *name, const char *reason, char *err, size_t errlen)
{
	char *node = cd_asprintf("NodeName=%s", name), *why = cd_asprintf("Reason=%s", reason);
	char *args[] = {"update", node, "State=DRAIN", why, NULL};
	int rc = scontrol(args, NULL, err, errlen);

	free(node);
	free(why);
	return rc;
}

int slurm_resume(const char *name, char *err, size_t errlen)
{
	char *node = cd_asprintf("NodeName=%s", name);
	char *args[] = {"update", node, "State=RESUME", NULL};
	int rc = scontrol(args, NULL, err, errlen);

	free(node);
	return rc;
}
