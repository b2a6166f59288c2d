/*
 * run_check.c - the check `clusterdoc run` does first (run_check.h): a
 * fresh check of the nodes, or the saved one with --no-check.
 */
#include "run_check.h"
#include "cd.h"
#include "check_once.h"
#include "fixers/fix_journal.h"
#include "fsutil.h"
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The saved check of exactly these nodes: <state>/check-<hash of the
 * host list>.json, beside the runs' directories. */
static int check_path(const struct run_check *c, char *out, size_t len)
{
	char base[768], err[CD_ERRLEN], hex[SHA256_HEX_LEN];
	struct sha256 h;
	unsigned char dig[32];

	if (fix_journal_dir(base, sizeof(base), err, sizeof(err)) < 0 ||
	    cd_mkdir_p(base, err, sizeof(err)) < 0)
		return -1;
	sha256_init(&h);
	for (size_t i = 0; i < c->n; i++)
		sha256_update(&h, c->hosts[i], strlen(c->hosts[i]) + 1);
	sha256_final(&h, dig);
	sha256_hex(dig, hex);
	snprintf(out, len, "%s/check-%.16s.json", base, hex);
	return 0;
}

/* What a run keeps of a check: when, the error findings, each node's
 * proved interface. */
static json_t *check_record(const struct diagnosis *d, size_t n)
{
	json_t *errors = json_array(), *ifaces = json_array();

	for (size_t k = 0; k < d->nfindings; k++) {
		if (d->findings[k].severity == SEV_ERROR)
			json_array_append_new(errors, json_pack("{ssss}", "id", d->findings[k].id,
			                                        "message", d->findings[k].message));
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ifaces,
		                      json_string(i < d->nnodes ? d->pred[i].data_iface : ""));
	return json_pack("{sisIsoso}", "version", 1, "time", (json_int_t)time(NULL), "errors",
	                 errors, "ifaces", ifaces);
}

int run_check_gate(struct run_check *c)
{
	size_t n = c->n;
	char path[1024], err[CD_ERRLEN];
	json_t *rec = NULL, *errors, *ifaces;
	size_t k;
	json_t *e;
	int rc = -1;

	if (check_path(c, path, sizeof(path)) < 0)
		path[0] = '\0';
	if (c->no_check) {
		json_error_t je;
		long long age;

		rec = path[0] ? json_load_file(path, 0, &je) : NULL;
		if (!rec) {
			fprintf(
			    stderr,
			    "clusterdoc run: --no-check: no saved check of these nodes (%s): run "
			    "once without --no-check\n",
			    path[0] ? path : "no state directory");
			return -1;
		}
		age = (long long)time(NULL) - json_integer_value(json_object_get(rec, "time"));
		fprintf(stderr, "# using the check of these nodes saved %lld min %lld s ago\n",
		        age / 60, age % 60);
	} else {
		struct check_once once;
		struct netmodel *m = netmodel_new(c->hosts, n);

		fprintf(stderr,
		        "# checking the nodes' network (--no-check: the last saved check)\n");
		once = (struct check_once){.pool = c->pool, .m = m};
		netcheck_opts_init(&once.o);
		once.o.master_port = c->master_port;
		if (check_once_run(&once, err, sizeof(err)) < 0) {
			fprintf(stderr, "clusterdoc run: the check: %s\n", err);
			netmodel_free(m);
			return -1;
		}
		rec = check_record(once.d, n);
		diagnosis_free(once.d);
		netmodel_free(m);
		if (path[0]) {
			char *text = json_dumps(rec, JSON_INDENT(2));

			if (!text || cd_write_file_atomic(path, text, strlen(text), 0600, err,
			                                  sizeof(err)) < 0)
				fprintf(stderr, "clusterdoc run: the check is not saved: %s\n",
				        err);
			free(text);
		}
	}
	errors = json_object_get(rec, "errors");
	if (json_array_size(errors) && !c->force) {
		fprintf(stderr, "clusterdoc run: the check found what would break the job "
		                "(--force starts it anyway):\n");
		json_array_foreach(errors, k, e)
		{
			fprintf(stderr, "  %s: %s\n", json_string_value(json_object_get(e, "id")),
			        json_string_value(json_object_get(e, "message")));
		}
		goto out;
	}
	json_array_foreach(errors, k, e)
	{
		fprintf(stderr, "# --force: starting despite %s\n",
		        json_string_value(json_object_get(e, "id")));
	}
	ifaces = json_object_get(rec, "ifaces");
	c->ifaces = cd_calloc(n ? n : 1, sizeof(*c->ifaces));
	for (size_t i = 0; i < n && i < json_array_size(ifaces); i++)
		c->ifaces[i] = cd_strdup(json_string_value(json_array_get(ifaces, i)) ?: "");
	c->record = json_incref(rec);
	rc = 0;
out:
	json_decref(rec);
	return rc;
}

void run_check_fini(struct run_check *c)
{
	for (size_t i = 0; c->ifaces && i < c->n; i++)
		free(c->ifaces[i]);
	free(c->ifaces);
	json_decref(c->record);
	c->ifaces = NULL;
	c->record = NULL;
}
