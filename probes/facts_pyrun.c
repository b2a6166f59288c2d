/* SPDX-License-Identifier: MIT */
/* facts_pyrun.c - run an interpreter as a child under a deadline, with capped
 * output (see facts_pyrun.h): one childrun (core/childrun.h) on a private
 * loop. */
#include "probes/facts_pyrun.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pyrun_wait {
	int done, rc, spawn_errno, too_big;
	char error[CD_ERRLEN];
	struct facts_pyrun *r;
};

static void on_done(const struct childrun_result *res, void *arg)
{
	struct pyrun_wait *w = arg;
	struct facts_pyrun *r = w->r;

	w->done = 1;
	w->rc = res->rc;
	w->spawn_errno = res->spawn_errno;
	w->too_big = res->out_truncated;
	snprintf(w->error, sizeof(w->error), "%s", res->error);
	r->status = res->status;
	r->out_len = res->out->len;
	memcpy(r->out, res->out->data ? res->out->data : "", r->out_len);
	r->out[r->out_len] = '\0';
	r->err_len = res->err->len;
	memcpy(r->err, res->err->data ? res->err->data : "", r->err_len);
	r->err[r->err_len] = '\0';
}

int facts_pyrun_child(char *const argv[], int64_t deadline, struct facts_pyrun *r, char *errbuf,
                      size_t errlen)
{
	int64_t left = deadline - cd_now_ms();
	/* stdout: more than FACTS_PYTHON_OUT_MAX is an error (a read of one
	 * byte past it says so); stderr: its end says why */
	struct childrun_opts o = {.timeout_ms = left > 0 ? (int)left : 0,
	                          .out_max = FACTS_PYTHON_OUT_MAX + 1,
	                          .err_max = FACTS_PYRUN_ERR_TAIL,
	                          .err_cap = CHILDRUN_CAP_TAIL,
	                          .start = {.own_group = 1}};
	struct pyrun_wait w = {.r = r};
	struct loop *loop = loop_new();
	int rc;

	memset(r, 0, sizeof(*r));
	r->out = cd_malloc(FACTS_PYTHON_OUT_MAX + 2);
	if (!childrun_start_opts(loop, argv, &o, on_done, &w, errbuf, errlen)) {
		rc = CD_ERR_IO; /* "cannot start ARGV0: why" */
		goto out;
	}
	while (!w.done)
		loop_run_once(loop, -1); /* the run's deadline bounds this */
	rc = w.rc;
	if (rc == CD_ERR_IO && w.too_big)
		rc = cd_errf(errbuf, errlen, CD_ERR_TOOBIG, "%s printed more than %d KiB", argv[0],
		             FACTS_PYTHON_OUT_MAX / 1024);
	else if (rc == CD_ERR_IO)
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "%s", w.error);
	else if (rc == 0 && w.spawn_errno)
		rc = cd_errf(errbuf, errlen, w.spawn_errno == ENOENT ? CD_ERR_NOTFOUND : CD_ERR_IO,
		             "cannot run %s: %s", argv[0], strerror(w.spawn_errno));
out:
	loop_free(loop);
	if (rc < 0) {
		free(r->out);
		r->out = NULL;
	}
	return rc;
}
