/* SPDX-License-Identifier: MIT */
/*
 * ib_suggest.c - NCCL_IB_HCA and NCCL_IB_GID_INDEX chosen from the RDMA
 * facts and verified with nccl_ib_predict (ib_suggest.h).
 */
#include "ib_suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "gpu_topo.h"

#define PORTS_MAX NCCL_IB_MAX_DEVS
#define GID_MAX   256

void ib_suggest_env(const json_t *rdma_node,
                    const char *(*get)(const char *name, const char **source, const void *ctx),
                    const void *ctx, struct nccl_ib_env *e)
{
	nccl_ib_env_from_json(rdma_node, NULL, e);
	if (get)
		nccl_ib_env_fill(e, get, ctx);
}

/* ---------------------------------------------------------------- NCCL_IB_HCA */

struct port {
	const char *dev;
	int port;
	int near; /* gpu_topo distance to the nearest GPU; GPU_TOPO_SYS + 1 unknown */
};

/* The sysfs path of a port's HCA from its pci_path (root to device):
 * "/sys/devices/pci0000:00/0000:00:01.0/0000:17:00.0", as gpu_pci has the
 * GPUs'. 0, or -1 when pci_path is missing or odd. */
static int hca_sysfs_path(const json_t *row, char *buf, size_t len)
{
	const json_t *path = json_object_get(row, "pci_path");
	const char *first = json_string_value(json_array_get(path, 0));
	size_t i, used;
	json_t *v;

	if (!first || strlen(first) < 7 || first[4] != ':')
		return -1;
	used = (size_t)snprintf(buf, len, "/sys/devices/pci%.7s", first);
	json_array_foreach(path, i, v)
	{
		if (!json_is_string(v) || used >= len)
			return -1;
		used += (size_t)snprintf(buf + used, len - used, "/%s", json_string_value(v));
	}
	return used < len ? 0 : -1;
}

static int nearness(const json_t *row, const json_t *gpu_pci)
{
	const char *addr;
	json_t *v;
	char path[512];
	int best = GPU_TOPO_SYS + 1;

	if (hca_sysfs_path(row, path, sizeof(path)) != 0)
		return best;
	json_object_foreach((json_t *)json_object_get(gpu_pci, "paths"), addr, v)
	{
		enum gpu_topo t;

		if (!json_is_string(v))
			continue;
		t = gpu_topo_between(json_string_value(v), path, -1, -1);
		if (t != GPU_TOPO_UNKNOWN && (int)t < best)
			best = (int)t;
	}
	return best;
}

static int ports_of_dev(const json_t *rdma, const char *dev, int active_only)
{
	int count = 0;
	size_t i;
	json_t *row;

	json_array_foreach(rdma, i, row)
	{
		const char *d = json_string_value(json_object_get(row, "device"));
		const char *st = json_string_value(json_object_get(row, "state"));

		if (d && strcmp(d, dev) == 0 && (!active_only || (st && !strcmp(st, "ACTIVE"))))
			count++;
	}
	return count;
}

/* The ACTIVE IB/RoCE ports of a node that libibverbs lists (an HCA
 * without its verbs provider does not exist for NCCL), nearest a GPU first
 * (stable). */
static size_t active_ports(const struct ib_suggest_node *n, struct port *p)
{
	size_t count = 0, i;
	json_t *row;

	json_array_foreach(n->rdma, i, row)
	{
		const char *dev = json_string_value(json_object_get(row, "device"));
		const char *st = json_string_value(json_object_get(row, "state"));
		const char *ll = json_string_value(json_object_get(row, "link_layer"));
		json_t *port = json_object_get(row, "port");

		if (!dev || !*dev || !json_is_integer(port) || !st || strcmp(st, "ACTIVE") != 0 ||
		    !ll || (strcmp(ll, "InfiniBand") != 0 && strcmp(ll, "Ethernet") != 0) ||
		    !nccl_ib_port_listed(row) || count == PORTS_MAX)
			continue;
		p[count].dev = dev;
		p[count].port = (int)json_integer_value(port);
		p[count].near = nearness(row, n->gpu_pci);
		count++;
	}
	for (size_t a = 1; a < count; a++) { /* insertion sort: stable */
		struct port x = p[a];
		size_t b = a;

		for (; b > 0 && p[b - 1].near > x.near; b--)
			p[b] = p[b - 1];
		p[b] = x;
	}
	return count;
}

/* "=mlx5_0,mlx5_1:1" for the ports; "" when there are none or the value
 * would pass IB_SUGGEST_HCA_MAX. */
static void hca_value(const struct ib_suggest_node *n, const struct port *p, size_t count,
                      char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < count; k++) {
		int whole =
		    ports_of_dev(n->rdma, p[k].dev, 0) == ports_of_dev(n->rdma, p[k].dev, 1);
		int seen = 0;

		for (size_t j = 0; whole && j < k; j++)
			seen |= strcmp(p[j].dev, p[k].dev) == 0;
		if (seen)
			continue;
		if (whole)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
			                         used ? "," : "=", p[k].dev);
		else
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s:%d",
			                         used ? "," : "=", p[k].dev, p[k].port);
		if (used >= len) {
			buf[0] = '\0';
			return;
		}
	}
}

/* Do two picks use the same transport and the same set of "dev:port"? */
static int same_pick(const struct nccl_ib_pick *a, const struct nccl_ib_pick *b)
{
	if (a->transport != b->transport || a->ndevs != b->ndevs)
		return 0;
	for (int i = 0; i < a->ndevs; i++) {
		int found = 0;

		for (int j = 0; j < b->ndevs && !found; j++)
			found = strcmp(a->devs[i].dev, b->devs[j].dev) == 0 &&
			        a->devs[i].port == b->devs[j].port;
		if (!found)
			return 0;
	}
	return 1;
}

static void predict(const struct ib_suggest_node *n, const struct nccl_ib_env *e,
                    struct nccl_ib_pick *out)
{
	nccl_ib_predict(n->rdma, n->rdma_node, e, n->version, out);
}

/* Node i's NCCL_IB_HCA, verified: set, NCCL uses IB on exactly its ACTIVE
 * ports. *changes: the pick differs from the node's pick as it is. */
static char *hca_for_node(const struct ib_suggest_node *n, int *changes, char **notes)
{
	struct port p[PORTS_MAX];
	size_t count = active_ports(n, p);
	struct nccl_ib_pick *now = cd_malloc(sizeof(*now)), *with = cd_malloc(sizeof(*with));
	struct nccl_ib_env e = n->env;
	char value[IB_SUGGEST_HCA_MAX + 1];
	char *out = NULL;

	hca_value(n, p, count, value, sizeof(value));
	if (!value[0])
		goto done;
	e.ib_hca.value = value;
	e.ib_hca.source = "suggested";
	predict(n, &n->env, now);
	predict(n, &e, with);
	if (with->transport != NCCL_IB_IB || (size_t)with->ndevs != count) {
		cd_strcatf(notes, "%s: NCCL_IB_HCA=%s did not verify (NCCL would use %s: %s)\n",
		           n->host, value, nccl_ib_transport_name(with->transport), with->reason);
		goto done;
	}
	*changes |= !same_pick(now, with);
	out = cd_strdup(value);
done:
	free(now);
	free(with);
	return out;
}

static void suggest_hca(const struct ib_suggest_node *nodes, size_t n, struct ib_suggestion *s)
{
	int changes = 0, all_same = 1, any = 0;

	for (size_t i = 0; i < n; i++) {
		if (json_array_size(nodes[i].rdma) == 0)
			continue;
		s->hca_per_node[i] = hca_for_node(&nodes[i], &changes, &s->notes);
	}
	for (size_t i = 0; i < n; i++) {
		if (!s->hca_per_node[i]) {
			all_same &= json_array_size(nodes[i].rdma) == 0;
			continue;
		}
		if (any && strcmp(s->hca_per_node[i], s->hca) != 0)
			all_same = 0;
		if (!any)
			s->hca = s->hca_per_node[i];
		any = 1;
	}
	/* Not needed: NCCL already picks those ports everywhere. */
	if (!changes) {
		for (size_t i = 0; i < n; i++) {
			free(s->hca_per_node[i]);
			s->hca_per_node[i] = NULL;
		}
		s->hca = NULL;
		return;
	}
	s->hca = all_same && any ? cd_strdup(s->hca) : NULL;
}

/* ---------------------------------------------------------------- NCCL_IB_GID_INDEX */

/* Whether the port's GID at index has RoCE v2 type and the family. */
static void v2_indexes(const json_t *row, const char *family, unsigned char *ok)
{
	size_t i;
	json_t *g;

	json_array_foreach(json_object_get(row, "gids"), i, g)
	{
		json_t *idx = json_object_get(g, "index");
		const char *type = json_string_value(json_object_get(g, "type"));
		const char *fam = json_string_value(json_object_get(g, "family"));
		long long k = json_is_integer(idx) ? json_integer_value(idx) : -1;

		if (k >= 0 && k < GID_MAX && type && strcmp(type, "RoCE v2") == 0 && fam &&
		    strcmp(fam, family) == 0)
			ok[k] = 1;
	}
}

static const json_t *row_of(const json_t *rdma, const struct nccl_ib_dev *d)
{
	size_t i;
	json_t *row;

	json_array_foreach(rdma, i, row)
	{
		const char *dev = json_string_value(json_object_get(row, "device"));

		if (dev && strcmp(dev, d->dev) == 0 &&
		    json_integer_value(json_object_get(row, "port")) == d->port)
			return row;
	}
	return NULL;
}

static const char *wanted_family(const struct nccl_ib_env *e)
{
	return e->ib_addr_family.value && strcmp(e->ib_addr_family.value, "AF_INET6") == 0 ? "ipv6"
	                                                                                   : "ipv4";
}

/* The node's env with the suggested NCCL_IB_HCA, if any. */
static void env_suggested(const struct ib_suggest_node *n, const struct ib_suggestion *s, size_t i,
                          struct nccl_ib_env *e)
{
	*e = n->env;
	if (s->hca_per_node[i]) {
		e->ib_hca.value = s->hca_per_node[i];
		e->ib_hca.source = "suggested";
	}
}

/* Which indexes hold a v2 GID of the family on every RoCE port NCCL would
 * use on the node (ok[GID_MAX]); 0 when NCCL would use no RoCE port. */
static int node_v2_indexes(const struct ib_suggest_node *n, const struct ib_suggestion *s, size_t i,
                           unsigned char *ok)
{
	struct nccl_ib_pick *p = cd_malloc(sizeof(*p));
	struct nccl_ib_env e;
	int roce = 0;

	env_suggested(n, s, i, &e);
	predict(n, &e, p);
	memset(ok, 1, GID_MAX);
	for (int k = 0; p->transport == NCCL_IB_IB && k < p->ndevs; k++) {
		unsigned char one[GID_MAX] = {0};

		if (!p->devs[k].roce)
			continue;
		roce = 1;
		v2_indexes(row_of(n->rdma, &p->devs[k]), wanted_family(&e), one);
		for (int g = 0; g < GID_MAX; g++)
			ok[g] &= one[g];
	}
	free(p);
	return roce;
}

/* With NCCL_IB_GID_INDEX=index, NCCL picks a v2 GID of the family on
 * every RoCE port of the node. */
static int gid_verifies(const struct ib_suggest_node *n, const struct ib_suggestion *s, size_t i,
                        int index)
{
	struct nccl_ib_pick *p = cd_malloc(sizeof(*p));
	struct nccl_ib_env e;
	char value[16];
	int ok;

	env_suggested(n, s, i, &e);
	snprintf(value, sizeof(value), "%d", index);
	e.ib_gid_index.value = value;
	e.ib_gid_index.source = "suggested";
	predict(n, &e, p);
	ok = p->transport == NCCL_IB_IB;
	for (int k = 0; ok && k < p->ndevs; k++)
		ok = !p->devs[k].roce || (p->devs[k].gid_type == 2 &&
		                          strcmp(p->devs[k].gid_family, wanted_family(&e)) == 0);
	free(p);
	return ok;
}

static int lowest(const unsigned char *ok)
{
	for (int g = 0; g < GID_MAX; g++) {
		if (ok[g])
			return g;
	}
	return -1;
}

static void suggest_gid(const struct ib_suggest_node *nodes, size_t n, struct ib_suggestion *s)
{
	unsigned char(*ok)[GID_MAX] = cd_calloc(n ? n : 1, GID_MAX);
	unsigned char common[GID_MAX];
	int *roce = cd_calloc(n ? n : 1, sizeof(int)), nroce = 0, all = 1, index;

	memset(common, 1, sizeof(common));
	for (size_t i = 0; i < n; i++) {
		if (json_array_size(nodes[i].rdma) == 0)
			continue;
		roce[i] = node_v2_indexes(&nodes[i], s, i, ok[i]);
		nroce += roce[i];
		for (int g = 0; roce[i] && g < GID_MAX; g++)
			common[g] &= ok[i][g];
	}
	index = lowest(common);
	for (size_t i = 0; index >= 0 && i < n; i++)
		if (roce[i] && !gid_verifies(&nodes[i], s, i, index))
			index = -1;
	if (nroce > 0 && index < 0)
		cd_strcatf(&s->notes,
		           "NCCL_IB_GID_INDEX: no index holds a RoCE v2 GID of the same family on "
		           "every RoCE node, so it is given per node (each node's line above; "
		           "`clusterdoc env` prints each node's own value)\n");
	for (size_t i = 0; i < n; i++) {
		int g = index >= 0 ? index : lowest(ok[i]);

		if (!roce[i]) {
			all &= json_array_size(nodes[i].rdma) == 0;
			continue;
		}
		if (g >= 0 && gid_verifies(&nodes[i], s, i, g)) {
			s->gid_per_node[i] = g;
			continue;
		}
		all = 0;
		cd_strcatf(&s->notes,
		           g < 0 ? "%s: no NCCL_IB_GID_INDEX: no index holds a RoCE v2 %s GID on "
		                   "every RoCE port NCCL would use\n"
		                 : "%s: NCCL_IB_GID_INDEX did not verify (%s)\n",
		           nodes[i].host, wanted_family(&nodes[i].env));
	}
	s->gid_index = all && nroce > 0 && index >= 0 ? index : -1;
	free(ok);
	free(roce);
}

void ib_suggest(const struct ib_suggest_node *nodes, size_t n, struct ib_suggestion *out)
{
	memset(out, 0, sizeof(*out));
	out->hca_per_node = cd_calloc(n ? n : 1, sizeof(char *));
	out->gid_per_node = cd_calloc(n ? n : 1, sizeof(int));
	out->gid_index = -1;
	for (size_t i = 0; i < n; i++)
		out->gid_per_node[i] = -1;
	suggest_hca(nodes, n, out);
	suggest_gid(nodes, n, out);
}

void ib_suggestion_fini(struct ib_suggestion *s, size_t n)
{
	for (size_t i = 0; s->hca_per_node && i < n; i++)
		free(s->hca_per_node[i]);
	free(s->hca_per_node);
	free(s->gid_per_node);
	free(s->hca);
	free(s->notes);
	memset(s, 0, sizeof(*s));
	s->gid_index = -1;
}
