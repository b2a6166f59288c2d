/* SPDX-License-Identifier: MIT */
/*
 * rdma_matrix.c - each node's end of the RDMA proof, the pairs not tested
 * and why, and the proof's results in the model and the report
 * (rdma_matrix.h).
 */
#include "probes/rdma_matrix.h"
#include "probes/diagnose_rdma.h"
#include "probes/nccl_ib.h"
#include "probes/netmodel.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RDMA_PROOF_MAX   (4 * 1024 * 1024)
#define RDMA_PROOF_MIN   (256 * 1024)
#define RDMA_NODE_BUDGET (16 * 1024 * 1024)

static const char *str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int port_active(json_t *p)
{
	const char *state = str_of(p, "state");

	return state && strcmp(state, "ACTIVE") == 0;
}

static void end_from_dev(struct rdma_end *e, const struct nccl_ib_dev *d)
{
	e->ok = 1;
	snprintf(e->device, sizeof(e->device), "%s", d->dev);
	e->port = d->port;
	e->roce = d->roce;
	e->gid_index = d->roce ? d->gid_index : -1;
	if (d->roce && d->gid_index < 0) {
		e->ok = 0;
		snprintf(e->why, sizeof(e->why), "no usable GID on %s:%d", d->dev, d->port);
	}
}

/* NCCL's pick on node n with its variables as the plan changes them (hca
 * NULL, gid -1: as they are), else with none; 1 when that is IB with a
 * port. */
static int pick_port(const struct nm_node *n, const char *hca, int gid, struct nccl_ib_pick *pk)
{
	json_t *ports = json_object_get(n->rdma, "rdma"),
	       *rnode = json_object_get(n->rdma, "rdma_node");
	const char *version = n->nccl_version[0] ? n->nccl_version : NULL;
	struct nccl_ib_env e;
	char value[16];

	diagnose_rdma_env(n, &e);
	if (hca) {
		e.ib_hca.value = hca;
		e.ib_hca.source = "the plan";
	}
	if (gid >= 0) {
		snprintf(value, sizeof(value), "%d", gid);
		e.ib_gid_index.value = value;
		e.ib_gid_index.source = "the plan";
	}
	nccl_ib_predict(ports, rnode, &e, version, pk);
	if (pk->transport != NCCL_IB_IB || pk->ndevs == 0) {
		memset(&e, 0, sizeof(e));
		nccl_ib_predict(ports, rnode, &e, version, pk);
	}
	return pk->transport == NCCL_IB_IB && pk->ndevs > 0;
}

void rdma_matrix_end(const struct nm_node *n, const char *plan_hca, int plan_gid,
                     struct rdma_end *e)
{
	json_t *ports = json_object_get(n->rdma, "rdma"),
	       *rnode = json_object_get(n->rdma, "rdma_node"), *p;
	struct nccl_ib_pick *pk = cd_malloc(sizeof(*pk));
	size_t k;
	int active = 0;

	memset(e, 0, sizeof(*e));
	e->gid_index = -1;
	e->login_gid_index = -1;
	json_array_foreach(ports, k, p) active += port_active(p);
	e->has_ports = json_array_size(ports) > 0;
	if (!json_is_object(rnode) || !str_of(rnode, "verbs_lib"))
		snprintf(e->why, sizeof(e->why), "no libibverbs");
	else if (json_array_size(ports) == 0)
		snprintf(e->why, sizeof(e->why), "no RDMA device");
	else if (!active)
		snprintf(e->why, sizeof(e->why), "no ACTIVE port");
	if (e->why[0])
		goto out;
	/* the index the login's variables give, said beside the plan's */
	if (pick_port(n, NULL, -1, pk) && pk->devs[0].roce)
		e->login_gid_index = pk->devs[0].gid_index;
	/* the port and index the job will use: the proof tests what run and
	 * mnist set, not what the login would have used */
	if (!pick_port(n, plan_hca, plan_gid, pk)) {
		snprintf(e->why, sizeof(e->why), "no port NCCL would use (%.70s)", pk->reason);
		goto out;
	}
	end_from_dev(e, &pk->devs[0]);
	e->gid_plan = e->roce && plan_gid >= 0 && e->gid_index == plan_gid;
out:
	free(pk);
}

const char *rdma_matrix_why_not(const struct rdma_end *from, const struct rdma_end *to, char *buf,
                                size_t len)
{
	if (!from->ok)
		snprintf(buf, len, "%s", from->why);
	else if (!to->ok && strncmp(to->why, "no ", 3) == 0)
		snprintf(buf, len, "peer has %s", to->why);
	else if (!to->ok)
		snprintf(buf, len, "peer: %s", to->why);
	else if (from->roce != to->roce)
		snprintf(buf, len, "link layers differ");
	else
		return NULL;
	return buf;
}

int rdma_matrix_relevant(const struct rdma_end *from, const struct rdma_end *to)
{
	return from->has_ports || to->has_ports;
}

json_t *rdma_matrix_spec(const struct rdma_end *e)
{
	return json_pack("{sssisi}", "device", e->device, "port", e->port, "gid_index",
	                 e->gid_index);
}

long rdma_matrix_bytes(size_t n)
{
	long each = n ? RDMA_NODE_BUDGET / (long)n : RDMA_PROOF_MAX;

	return each > RDMA_PROOF_MAX   ? RDMA_PROOF_MAX
	       : each < RDMA_PROOF_MIN ? RDMA_PROOF_MIN
	                               : each;
}

static void end_set(struct nm_rdma_end *e, json_t *o)
{
	const char *dev = str_of(o, "device");
	json_t *gid = json_object_get(o, "gid_index");

	const char *from = str_of(o, "gid_from");
	json_t *login = json_object_get(o, "login_gid_index");

	snprintf(e->device, sizeof(e->device), "%s", dev ? dev : "");
	e->port = (int)json_integer_value(json_object_get(o, "port"));
	e->gid_index = json_is_integer(gid) ? (int)json_integer_value(gid) : -1;
	/* only the two words this side writes: a report's other value reads as
	 * unknown, not as a third source */
	snprintf(e->gid_from, sizeof(e->gid_from), "%s",
	         from && (!strcmp(from, "plan") || !strcmp(from, "login")) ? from : "");
	e->login_gid_index = json_is_integer(login) ? (int)json_integer_value(login) : -1;
}

void rdma_matrix_set(struct nm_attempt *a, json_t *row)
{
	const char *rdma = str_of(row, "rdma"), *why = str_of(row, "rdma_why");

	if (!rdma)
		return;
	snprintf(a->rdma, sizeof(a->rdma), "%s", rdma);
	snprintf(a->rdma_why, sizeof(a->rdma_why), "%s", why ? why : "");
	a->rdma_bytes = json_integer_value(json_object_get(row, "rdma_bytes"));
	a->rdma_ms = json_number_value(json_object_get(row, "rdma_ms"));
	end_set(&a->rdma_local, json_object_get(row, "rdma_local"));
	end_set(&a->rdma_peer, json_object_get(row, "rdma_peer"));
	a->active_mtu = (int)json_integer_value(json_object_get(row, "active_mtu"));
}

void rdma_matrix_not_tested(struct nm_attempt *a, const char *why)
{
	snprintf(a->rdma, sizeof(a->rdma), "not tested");
	snprintf(a->rdma_why, sizeof(a->rdma_why), "%s", why);
}

void rdma_matrix_sources(struct nm_attempt *a, const struct rdma_end *from,
                         const struct rdma_end *to)
{
	const struct rdma_end *ends[2] = {from, to};
	struct nm_rdma_end *got[2] = {&a->rdma_local, &a->rdma_peer};

	for (int k = 0; k < 2; k++) {
		/* the end the proof answered with is the one asked for */
		if (!got[k]->device[0] || !ends[k]->roce || got[k]->gid_index != ends[k]->gid_index)
			continue;
		snprintf(got[k]->gid_from, sizeof(got[k]->gid_from), "%s",
		         ends[k]->gid_plan ? "plan" : "login");
		got[k]->login_gid_index = ends[k]->login_gid_index;
	}
}

static json_t *end_json(const struct nm_rdma_end *e)
{
	json_t *o =
	    json_pack("{sssisi}", "device", e->device, "port", e->port, "gid_index", e->gid_index);

	if (e->gid_from[0]) {
		json_object_set_new(o, "gid_from", json_string(e->gid_from));
		json_object_set_new(o, "login_gid_index", json_integer(e->login_gid_index));
	}
	return o;
}

void rdma_matrix_json(const struct nm_attempt *a, json_t *row)
{
	if (!a->rdma[0])
		return;
	json_object_set_new(row, "rdma", json_string(a->rdma));
	if (strcmp(a->rdma, "ok") == 0) {
		json_object_set_new(row, "rdma_bytes", json_integer(a->rdma_bytes));
		json_object_set_new(row, "rdma_ms", json_real(a->rdma_ms));
	} else {
		json_object_set_new(row, "rdma_why", json_string(a->rdma_why));
	}
	if (a->rdma_local.device[0])
		json_object_set_new(row, "rdma_local", end_json(&a->rdma_local));
	if (a->rdma_peer.device[0]) {
		json_object_set_new(row, "rdma_peer", end_json(&a->rdma_peer));
		json_object_set_new(row, "active_mtu", json_integer(a->active_mtu));
	}
}

static void ends_text(const struct nm_attempt *a, char *buf, size_t len)
{
	const struct nm_rdma_end *l = &a->rdma_local, *p = &a->rdma_peer;

	snprintf(buf, len, "%s:%d gid %d -> %s:%d gid %d, MTU %d", l->device, l->port, l->gid_index,
	         p->device, p->port, p->gid_index, a->active_mtu);
}

const char *rdma_matrix_text(const struct nm_attempt *a, char *buf, size_t len)
{
	char ends[200] = "";

	if (a->rdma_peer.device[0])
		ends_text(a, ends, sizeof(ends));
	if (strcmp(a->rdma, "ok") == 0)
		snprintf(buf, len, "ok %.1f MiB in %.1f ms (%.0f MB/s), %s",
		         (double)a->rdma_bytes / (1024 * 1024), a->rdma_ms,
		         a->rdma_ms > 0 ? (double)a->rdma_bytes / (a->rdma_ms * 1000) : 0.0, ends);
	else if (ends[0])
		snprintf(buf, len, "%s: %s (%s)", a->rdma, a->rdma_why, ends);
	else
		snprintf(buf, len, "%s: %s", a->rdma, a->rdma_why);
	return buf;
}

/* One end's index and why, without its host: "GID index 3, the plan's and
 * the login's"; "" when its source is unknown. */
static void gid_why(const struct nm_rdma_end *e, char *buf, size_t len)
{
	buf[0] = '\0';
	if (e->gid_index < 0 || !e->gid_from[0])
		return;
	if (strcmp(e->gid_from, "login") == 0)
		snprintf(buf, len, "GID index %d, the login's (the plan sets none)", e->gid_index);
	else if (e->login_gid_index == e->gid_index)
		snprintf(buf, len, "GID index %d, the plan's and the login's", e->gid_index);
	else if (e->login_gid_index < 0)
		snprintf(buf, len,
		         "GID index %d, the plan's (the login's variables give none; run and mnist "
		         "set it)",
		         e->gid_index);
	else
		snprintf(buf, len,
		         "GID index %d, the plan's (the login's %d is what run and mnist "
		         "replace)",
		         e->gid_index, e->login_gid_index);
}

const char *rdma_matrix_gid_text(const struct nm_attempt *a, const char *from, const char *to,
                                 char *buf, size_t len)
{
	char l[160], p[160];

	gid_why(&a->rdma_local, l, sizeof(l));
	gid_why(&a->rdma_peer, p, sizeof(p));
	if (l[0] && strcmp(l, p) == 0) /* "GID index 3" "at both ends" ", the plan's ..." */
		snprintf(buf, len, "%.*s at both ends%s", (int)strcspn(l, ","), l,
		         l + strcspn(l, ","));
	else if (l[0] && p[0])
		snprintf(buf, len, "%s %s; %s %s", from, l, to, p);
	else if (l[0] || p[0])
		snprintf(buf, len, "%s %s", l[0] ? from : to, l[0] ? l : p);
	else
		buf[0] = '\0';
	return buf;
}

int rdma_matrix_any_port(const struct netmodel *m)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		if (json_array_size(json_object_get(m->nodes[i].rdma, "rdma")) > 0)
			return 1;
	}
	return 0;
}
