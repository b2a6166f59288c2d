/* SPDX-License-Identifier: MIT */
/*
 * peerssh_matrix.c - the head's side of the node-to-node SSH check
 * (peerssh_matrix.h): one peer_ssh request per node, naming every other
 * node, and the matrix their answers make.
 */
#include "peerssh_matrix.h"
#include "diagnose.h"
#include "diagnose_internal.h"
#include "fanout.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the matrix */

struct peerssh_matrix *peerssh_matrix_new(const char *const *hosts, size_t n)
{
	struct peerssh_matrix *m = cd_calloc(1, sizeof(*m));

	m->n = n;
	m->hosts = cd_calloc(n ? n : 1, sizeof(*m->hosts));
	m->node_error = cd_calloc(n ? n : 1, sizeof(*m->node_error));
	m->cell = cd_calloc(n ? n * n : 1, sizeof(*m->cell));
	for (size_t i = 0; i < n; i++) {
		m->hosts[i] = cd_strdup(hosts[i]);
		m->node_error[i] = cd_strdup("");
	}
	return m;
}

void peerssh_matrix_free(struct peerssh_matrix *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->hosts[i]);
		free(m->node_error[i]);
	}
	free(m->hosts);
	free(m->node_error);
	free(m->cell);
	free(m);
}

size_t peerssh_matrix_failed(const struct peerssh_matrix *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n * m->n; i++)
		k += m->cell[i].tested && m->cell[i].reason != PEERSSH_OK;
	return k;
}

size_t peerssh_matrix_untested(const struct peerssh_matrix *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++)
		for (size_t j = 0; j < m->n; j++)
			k += i != j && !m->cell[i * m->n + j].tested;
	return k;
}

int peerssh_matrix_fill_row(struct peerssh_matrix *m, size_t from, const json_t *result, char *err,
                            size_t errlen)
{
	const json_t *rs = json_object_get(result, "results");
	size_t k = 0;

	if (from >= m->n || !json_is_array(rs) || json_array_size(rs) != m->n - 1)
		return cd_errf(err, errlen, CD_ERR_PROTO, "peer_ssh: %zu results for %zu peers",
		               json_array_size(rs), m->n ? m->n - 1 : 0);
	/* check the whole row before filling any of it */
	for (size_t to = 0; to < m->n; to++) {
		const json_t *r;
		const char *peer, *reason;

		if (to == from)
			continue;
		r = json_array_get(rs, k++);
		peer = json_string_value(json_object_get(r, "peer"));
		reason = json_string_value(json_object_get(r, "reason"));
		if (!peer || strcmp(peer, m->hosts[to]) != 0 || !reason ||
		    !json_is_boolean(json_object_get(r, "ok")))
			return cd_errf(err, errlen, CD_ERR_PROTO,
			               "peer_ssh: result %zu is not the answer for %s", k - 1,
			               m->hosts[to]);
	}
	k = 0;
	for (size_t to = 0; to < m->n; to++) {
		struct peerssh_cell *c = &m->cell[from * m->n + to];
		const json_t *r;
		const char *detail;

		if (to == from)
			continue;
		r = json_array_get(rs, k++);
		detail = json_string_value(json_object_get(r, "detail"));
		c->tested = 1;
		c->reason =
		    json_is_true(json_object_get(r, "ok"))
		        ? PEERSSH_OK
		        : peerssh_reason_from_id(json_string_value(json_object_get(r, "reason")));
		/* an agent that says "ok" with a failing reason, or the reverse, is
		 * taken at its "ok" */
		if (c->reason == PEERSSH_OK && !json_is_true(json_object_get(r, "ok")))
			c->reason = PEERSSH_OTHER;
		snprintf(c->detail, sizeof(c->detail), "%s",
		         c->reason == PEERSSH_OK || !detail ? "" : detail);
		c->ms = (int)json_integer_value(json_object_get(r, "ms"));
	}
	return 0;
}

json_t *peerssh_matrix_json(const struct peerssh_matrix *m)
{
	json_t *hosts = json_array(), *pairs = json_array(), *errs = json_object();

	for (size_t i = 0; i < m->n; i++) {
		json_array_append_new(hosts, json_string(m->hosts[i]));
		if (m->node_error[i][0])
			json_object_set_new(errs, m->hosts[i], json_string(m->node_error[i]));
	}
	for (size_t i = 0; i < m->n; i++)
		for (size_t j = 0; j < m->n; j++) {
			const struct peerssh_cell *c = peerssh_cell_at(m, i, j);

			if (i == j)
				continue;
			json_array_append_new(
			    pairs, json_pack("{s:s, s:s, s:b, s:s, s:s, s:I}", "from", m->hosts[i],
			                     "to", m->hosts[j], "ok",
			                     c->tested && c->reason == PEERSSH_OK, "reason",
			                     c->tested ? peerssh_reason_id(c->reason) : "untested",
			                     "detail", c->tested ? c->detail : m->node_error[i],
			                     "ms", (json_int_t)c->ms));
		}
	return json_pack("{sososo}", "hosts", hosts, "pairs", pairs, "node_errors", errs);
}

/* ---------------------------------------------------------------- the run */

struct peerssh_run {
	struct loop *loop;
	struct sshpool *pool;
	struct sshpool_node **nodes;
	struct peerssh_matrix *m;
	struct fanout *fan;
	int timeout_ms;
	void (*done)(void *);
	void *arg;
};

struct peer_node {
	struct peerssh_run *r;
	size_t i;
};

static void on_answer(struct sshpool_node *pn, json_t *res, const char *code, const char *msg,
                      void *arg)
{
	struct peer_node *x = arg;
	struct peerssh_run *r = x->r;
	char err[CD_ERRLEN];

	if (!res) {
		free(r->m->node_error[x->i]);
		r->m->node_error[x->i] = cd_asprintf("%s: %s", code, msg);
	} else if (peerssh_matrix_fill_row(r->m, x->i, res, err, sizeof(err)) < 0) {
		free(r->m->node_error[x->i]);
		r->m->node_error[x->i] = cd_strdup(err);
	}
	fanout_settle(r->fan, x->i);
	free(x);
}

static void on_ready(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct peerssh_run *r = arg;
	struct peer_node *x;
	json_t *req, *peers;
	size_t i = 0;

	while (i < r->m->n && r->nodes[i] != pn)
		i++;
	if (i == r->m->n)
		return;
	req = proto_request(0, "peer_ssh");
	peers = json_array();
	for (size_t j = 0; j < r->m->n; j++)
		if (j != i)
			json_array_append_new(peers, json_string(r->m->hosts[j]));
	json_object_set_new(req, "peers", peers);
	json_object_set_new(req, "timeout_ms", json_integer(r->timeout_ms));
	x = cd_calloc(1, sizeof(*x));
	x->r = r;
	x->i = i;
	/* the agent answers once every ssh client ended or was killed at its
	 * deadline; with PEERSSH_PARALLEL at a time that is this many rounds */
	if (sshpool_request(
	        pn, req,
	        r->timeout_ms * (int)((r->m->n + PEERSSH_PARALLEL - 1) / PEERSSH_PARALLEL) + 10000,
	        on_answer, x) < 0) {
		free(x);
		free(r->m->node_error[i]);
		r->m->node_error[i] = cd_strdup("the request could not be sent");
		fanout_settle(r->fan, i);
	}
}

static void on_failed(struct sshpool *pool, struct sshpool_node *pn, void *arg)
{
	struct peerssh_run *r = arg;

	for (size_t i = 0; i < r->m->n; i++) {
		if (r->nodes[i] != pn)
			continue;
		free(r->m->node_error[i]);
		r->m->node_error[i] = cd_asprintf(
		    "%s: %s", sshpool_node_error_code(pn) ? sshpool_node_error_code(pn) : "ssh",
		    sshpool_node_error_message(pn) ? sshpool_node_error_message(pn) : "");
		fanout_settle_all(r->fan, i);
	}
}

static void on_all_done(void *arg)
{
	struct peerssh_run *r = arg;

	r->done(r->arg);
}

struct peerssh_run *peerssh_run_start(struct loop *loop, struct sshpool *pool,
                                      const char *const *hosts, size_t n, int timeout_ms,
                                      void (*done)(void *), void *arg)
{
	static const struct sshpool_handlers h = {.ready = on_ready, .failed = on_failed};
	struct peerssh_run *r = cd_calloc(1, sizeof(*r));

	r->loop = loop;
	r->pool = pool;
	r->m = peerssh_matrix_new(hosts, n);
	r->timeout_ms = timeout_ms;
	r->done = done;
	r->arg = arg;
	r->nodes = cd_calloc(n ? n : 1, sizeof(*r->nodes));
	r->fan = fanout_new(loop, n, on_all_done, r);
	for (size_t i = 0; i < n; i++) {
		r->nodes[i] = sshpool_add(pool, hosts[i]);
		fanout_expect(r->fan, i, 1);
	}
	/* a single node has no pair to test: nothing to ask */
	if (n < 2)
		for (size_t i = 0; i < n; i++)
			fanout_settle_all(r->fan, i);
	fanout_begin(r->fan);
	if (n >= 2)
		sshpool_start(pool, &h, r);
	return r;
}

const struct peerssh_matrix *peerssh_run_matrix(const struct peerssh_run *r)
{
	return r->m;
}

struct sshpool_node *peerssh_run_node(const struct peerssh_run *r, size_t i)
{
	return i < r->m->n ? r->nodes[i] : NULL;
}

void peerssh_run_free(struct peerssh_run *r)
{
	if (!r)
		return;
	fanout_free(r->fan);
	peerssh_matrix_free(r->m);
	free(r->nodes);
	free(r);
}

/* ---------------------------------------------------------------- findings */

const char *peerssh_finding_id(enum peerssh_reason r)
{
	switch (r) {
	case PEERSSH_OK:
	case PEERSSH_NREASONS:
		return NULL;
	case PEERSSH_HOSTKEY_UNKNOWN:
		return "peer-ssh-hostkey-unknown";
	case PEERSSH_HOSTKEY_CHANGED:
		return "peer-ssh-hostkey-changed";
	case PEERSSH_DENIED:
		return "peer-ssh-denied";
	case PEERSSH_REFUSED:
	case PEERSSH_TIMEOUT:
	case PEERSSH_UNREACHABLE:
	case PEERSSH_RESOLVE:
		return "peer-ssh-unreachable";
	case PEERSSH_NO_CLIENT:
		return "peer-ssh-no-client";
	case PEERSSH_OTHER:
		break;
	}
	return "peer-ssh-failed";
}

/* What to do, per finding id. */
static const struct {
	const char *id;
	const char *fix;
} fixes[] = {
    {"peer-ssh-hostkey-unknown",
     "`clusterdoc mpi-check --fix --apply` records each node's verified host key in the "
     "others' ~/.ssh/known_hosts"},
    {"peer-ssh-hostkey-changed",
     "find out why the key changed (a reinstalled node, or someone in the middle); then remove "
     "the old line with `ssh-keygen -R PEER` on the node that holds it"},
    {"peer-ssh-denied", "`clusterdoc mpi-check --fix --apply` installs one cluster key for the "
                        "login user on every node"},
    {"peer-ssh-unreachable",
     "the nodes must reach each other's sshd by the names mpirun is given: check sshd, "
     "/etc/hosts or DNS, and the firewall"},
    {"peer-ssh-no-client", "install the OpenSSH client (openssh-client) on the node"},
    {"peer-ssh-failed", "run the ssh command shown by hand on the node"},
    {"node-unreachable", "the node itself could not be checked: see `clusterdoc check`"},
};

static const struct finding_def *catalogue_def(const char *id)
{
	for (size_t k = 0; k < finding_catalogue_len; k++)
		if (strcmp(finding_catalogue[k].id, id) == 0)
			return &finding_catalogue[k];
	return NULL;
}

static const char *fix_for(const char *id)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(fixes); k++)
		if (strcmp(fixes[k].id, id) == 0)
			return fixes[k].fix;
	return "";
}

static json_t *finding_new(const char *id)
{
	const struct finding_def *d = catalogue_def(id);

	return json_pack("{sssssssos[]}", "id", id, "severity",
	                 severity_name(d ? d->severity : SEV_ERROR), "title", d ? d->title : id,
	                 "fix", json_string(fix_for(id)), "pairs");
}

json_t *peerssh_matrix_findings(const struct peerssh_matrix *m)
{
	json_t *out = json_array();

	for (size_t k = 0; k < finding_catalogue_len; k++) {
		const char *id = finding_catalogue[k].id;
		json_t *f = NULL, *pairs;
		char *msg = NULL;
		size_t np = 0;

		for (size_t i = 0; i < m->n; i++)
			for (size_t j = 0; j < m->n; j++) {
				const struct peerssh_cell *c = peerssh_cell_at(m, i, j);
				const char *fid =
				    c->tested ? peerssh_finding_id(c->reason)
				              : (i != j && m->node_error[i][0] ? "node-unreachable"
				                                               : NULL);

				if (!fid || strcmp(fid, id) != 0)
					continue;
				if (!f)
					f = finding_new(id);
				pairs = json_object_get(f, "pairs");
				json_array_append_new(
				    pairs, json_sprintf("%s -> %s", m->hosts[i], m->hosts[j]));
				if (np++ < 6)
					cd_strcatf(&msg, "%s%s -> %s (%s)", np > 1 ? ", " : "",
					           m->hosts[i], m->hosts[j],
					           c->tested ? peerssh_reason_text(c->reason)
					                     : "not asked");
			}
		if (!f)
			continue;
		if (np > 6)
			cd_strcatf(&msg, " and %zu more", np - 6);
		json_object_set_new(f, "message", json_string(msg));
		free(msg);
		json_array_append_new(out, f);
	}
	return out;
}
