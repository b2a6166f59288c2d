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

void rdma_matrix_end(const struct nm_node *n, struct rdma_end *e)
{
	json_t *ports = json_object_get(n->rdma, "rdma"),
	       *rnode = json_object_get(n->rdma, "rdma_node"), *p;
	struct nccl_ib_pick pk;
	struct nccl_ib_env none;
	size_t k;
	int active = 0;

	memset(e, 0, sizeof(*e));
	e->gid_index = -1;
	json_array_foreach(ports, k, p) active += port_active(p);
	e->has_ports = json_array_size(ports) > 0;
	if (!json_is_object(rnode) || !str_of(rnode, "verbs_lib"))
		snprintf(e->why, sizeof(e->why), "no libibverbs");
	else if (json_array_size(ports) == 0)
		snprintf(e->why, sizeof(e->why), "no RDMA device");
	else if (!active)
		snprintf(e->why, sizeof(e->why), "no ACTIVE port");
	if (e->why[0])
		return;
	/* the port NCCL would use; where NCCL would not use IB (NCCL_IB_DISABLE,
	 * an NCCL_IB_HCA that matches nothing), the fabric is still proven with
	 * what NCCL would pick without those variables */
	diagnose_rdma_predict(n, n->nccl_version[0] ? n->nccl_version : NULL, &pk);
	if (pk.transport != NCCL_IB_IB || pk.ndevs == 0) {
		memset(&none, 0, sizeof(none));
		nccl_ib_predict(ports, rnode, &none, n->nccl_version[0] ? n->nccl_version : NULL,
		                &pk);
	}
	if (pk.transport != NCCL_IB_IB || pk.ndevs == 0) {
		snprintf(e->why, sizeof(e->why), "no port NCCL would use (%.70s)", pk.reason);
		return;
	}
	end_from_dev(e, &pk.devs[0]);
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

	snprintf(e->device, sizeof(e->device), "%s", dev ? dev : "");
	e->port = (int)json_integer_value(json_object_get(o, "port"));
	e->gid_index = json_is_integer(gid) ? (int)json_integer_value(gid) : -1;
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

static json_t *end_json(const struct nm_rdma_end *e)
{
	return json_pack("{sssisi}", "device", e->device, "port", e->port, "gid_index",
	                 e->gid_index);
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

int rdma_matrix_any_port(const struct netmodel *m)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		if (json_array_size(json_object_get(m->nodes[i].rdma, "rdma")) > 0)
			return 1;
	}
	return 0;
}
