/* SPDX-License-Identifier: MIT */
/* diagnose_rdma.c - the RDMA findings (diagnose_rdma.h, docs/findings.md):
 * ports not ACTIVE/LinkUp, rates and MTUs that differ, a memlock limit
 * below what NCCL's IB transport registers, no peer-memory module, a stale
 * NCCL_IB_HCA, and from nccl_ib.c's prediction a fallback to sockets and
 * RoCE GIDs of different kinds. Reads each node's "rdma" object (netmodel.h).
 *
 * Severity follows what NCCL does with the fault: what leaves the node
 * without a usable RDMA port, or makes NCCL's first registration fail, is
 * an error; what NCCL works around at a cost (a port skipped, a slower or
 * smaller-MTU link, no GPUDirect RDMA) warns. */
#include "probes/diagnose_rdma.h"
#include "probes/diagnose_internal.h"
#include "probes/nccl_ib.h"
#include "cd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose (as in diagnose.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV  512
#define MSG 256
#define KEY 160

/* ---------------------------------------------------------------- the facts */

static json_t *ports_of(const struct nm_node *n)
{
	return json_object_get(n->rdma, "rdma");
}

static json_t *rnode_of(const struct nm_node *n)
{
	return json_object_get(n->rdma, "rdma_node");
}

/* A node whose agent reads the RDMA facts and which has RDMA ports. */
static int judged(const struct nm_node *n)
{
	return n->probed && json_is_object(rnode_of(n)) && json_array_size(ports_of(n)) > 0;
}

static const char *str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int int_of(json_t *o, const char *key, long long *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return 0;
	*v = json_integer_value(j);
	return 1;
}

static int port_num(json_t *port)
{
	long long p;

	return int_of(port, "port", &p) && p >= 0 && p <= INT_MAX ? (int)p : -1;
}

/* "mlx5_0/1" */
static void port_label(char *buf, size_t len, json_t *port)
{
	const char *dev = str_of(port, "device");

	snprintf(buf, len, "%s/%d", dev ? dev : "?", port_num(port));
}

static int is_word(json_t *port, const char *key, const char *word)
{
	const char *v = str_of(port, key);

	return v && strcmp(v, word) == 0;
}

/* NCCL takes only an ACTIVE port (src/transport/net_ib/init.cc). */
static int port_up(json_t *port)
{
	return is_word(port, "state", "ACTIVE") && is_word(port, "phys_state", "LinkUp");
}

/* Known to be down: a state or physical state read and not the good one. */
static int port_down(json_t *port)
{
	return (str_of(port, "state") && !is_word(port, "state", "ACTIVE")) ||
	       (str_of(port, "phys_state") && !is_word(port, "phys_state", "LinkUp"));
}

static const char *or_null(const char *s)
{
	return s ? s : "null";
}

/* ---------------------------------------------------------------- rdma-port-down */

static const char port_down_fix[] =
    "Bring the port up: `ibstat` / `ibv_devinfo` show it; phys_state Polling or Disabled is "
    "the cable, transceiver or switch port; state INIT with LinkUp on InfiniBand is a port the "
    "subnet manager has not configured (is opensm or the fabric's SM running?). A port meant to "
    "stay unused can be left out of NCCL_IB_HCA.";

/* How many ACTIVE, LinkUp ports node n has. */
static size_t ports_up(const struct nm_node *n)
{
	json_t *p;
	size_t k, up = 0;

	json_array_foreach(ports_of(n), k, p) up += port_up(p);
	return up;
}

/* Whether a judged node other than i has a usable port: RDMA is in use. */
static int fabric_in_use(const struct netmodel *m, size_t i)
{
	for (size_t j = 0; j < m->nnodes; j++)
		if (j != i && judged(&m->nodes[j]) && ports_up(&m->nodes[j]))
			return 1;
	return 0;
}

/* An error when the node has no usable port while other nodes do (it
 * cannot join the fabric the others use); else a warning: NCCL skips the
 * port, and a node or cluster that does not use RDMA may leave it down. */
static void check_port_down(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *ports = ports_of(n), *p;
	size_t k, down = 0, up = ports_up(n);
	enum severity sev = up || !fabric_in_use(st->m, i) ? SEV_WARNING : SEV_ERROR;
	char msg[MSG], ev[EV], label[96];

	json_array_foreach(ports, k, p) down += port_down(p);
	if (!down)
		return;
	json_array_foreach(ports, k, p)
	{
		if (!port_down(p))
			continue;
		port_label(label, sizeof(label), p);
		if (down == 1)
			snprintf(msg, sizeof(msg), "RDMA port %s of %%N is down%s", label,
			         up ? "" : ": the node has no ACTIVE port");
		else
			snprintf(msg, sizeof(msg), "%zu RDMA ports of %%N are down%s", down,
			         up ? "" : ": the node has no ACTIVE port");
		snprintf(ev, sizeof(ev), "%s %s (%s): state %s, phys_state %s", n->host, label,
		         or_null(str_of(p, "link_layer")), or_null(str_of(p, "state")),
		         or_null(str_of(p, "phys_state")));
		diagnose_note(st, "rdma-port-down", sev, n->host, i, msg, port_down_fix, ev);
	}
}

/* ---------------------------------------------------------------- rates and MTUs */

/* One ACTIVE port's value of the field compared. */
struct pval {
	size_t node;
	json_t *port;
	long long v;
};

static int cmp_pval(const void *pa, const void *pb)
{
	const struct pval *a = pa, *b = pb;

	return a->v < b->v ? -1 : a->v > b->v;
}

/* The value most ports have (ties: the larger, so the slower or smaller
 * ones are the odd ones out); vals sorted. *count: how many have it. */
static long long common_value(const struct pval *vals, size_t n, size_t *count)
{
	long long best = vals[0].v;
	size_t best_n = 0;

	for (size_t a = 0, b; a < n; a = b) {
		for (b = a; b < n && vals[b].v == vals[a].v; b++)
			;
		if (b - a >= best_n) {
			best_n = b - a;
			best = vals[a].v;
		}
	}
	*count = best_n;
	return best;
}

/* What one comparison reads, says and is noted as. */
struct pcompare {
	const char *id;
	const char *field;      /* the port's integer field */
	const char *link_layer; /* only ports of it */
	const char *what;       /* "rate", "IB MTU (active_mtu)", "netdev MTU" */
	const char *unit;       /* " Gb/s", "" */
	const char *text;       /* the port's field that says it in words, or NULL */
	const char *fix;
};

/* The ACTIVE ports of the judged nodes with c's field set. The caller
 * frees. */
static struct pval *collect(const struct netmodel *m, const struct pcompare *c, size_t *n)
{
	struct pval *vals = NULL;

	*n = 0;
	for (size_t i = 0; i < m->nnodes; i++) {
		json_t *p;
		size_t k;
		long long v;

		if (!judged(&m->nodes[i]))
			continue;
		json_array_foreach(ports_of(&m->nodes[i]), k, p)
		{
			if (!port_up(p) || !is_word(p, "link_layer", c->link_layer) ||
			    !int_of(p, c->field, &v))
				continue;
			vals = cd_realloc(vals, (*n + 1) * sizeof(*vals));
			vals[(*n)++] = (struct pval){.node = i, .port = p, .v = v};
		}
	}
	return vals;
}

static void compare_ports(struct dstate *st, const struct pcompare *c)
{
	size_t n, same;
	struct pval *vals = collect(st->m, c, &n);
	long long common;
	char msg[MSG], ev[EV], label[96], key[KEY];

	if (n < 2)
		goto out;
	qsort(vals, n, sizeof(*vals), cmp_pval);
	if (vals[0].v == vals[n - 1].v)
		goto out;
	common = common_value(vals, n, &same);
	/* one finding per id and link layer: a RoCE MTU shows in both MTUs */
	snprintf(msg, sizeof(msg), "%s RDMA ports of %%N have another %s than the others",
	         c->link_layer, strcmp(c->id, "rdma-rate-mismatch") == 0 ? "rate" : "MTU");
	snprintf(key, sizeof(key), "%s/%s", c->id, c->link_layer);
	for (size_t k = 0; k < n; k++) {
		const struct nm_node *node = &st->m->nodes[vals[k].node];
		const char *text = c->text ? str_of(vals[k].port, c->text) : NULL;
		const char *dev = str_of(vals[k].port, "netdev");

		if (vals[k].v == common)
			continue;
		port_label(label, sizeof(label), vals[k].port);
		if (dev)
			snprintf(label + strlen(label), sizeof(label) - strlen(label), " (%s)",
			         dev);
		snprintf(ev, sizeof(ev), "%s %s: %s %lld%s%s%s%s, %zu of %zu %s ports %lld%s",
		         node->host, label, c->what, vals[k].v, c->unit, text ? " (" : "",
		         text ? text : "", text ? ")" : "", same, n, c->link_layer, common,
		         c->unit);
		diagnose_note(st, c->id, SEV_WARNING, key, vals[k].node, msg, c->fix, ev);
	}
out:
	free(vals);
}

static const char rate_fix[] =
    "A port below the others' rate trained down (a cable, transceiver or switch port: "
    "`ibstat`, `mlxlink -d DEV`); every collective runs at the slowest link's pace. Reseat or "
    "replace it, or keep that node out of the job.";
static const char mtu_fix[] =
    "Give every RDMA port the same MTU: on RoCE the netdev's (`ip link set DEV mtu 9000`, with "
    "the switches passing it), which sets the RoCE MTU; on InfiniBand the subnet manager's "
    "partition MTU (opensm's partitions.conf, `mtu=5` for 4096). NCCL uses the smaller of the "
    "two ends' active_mtu, so a smaller port slows every connection to it.";

static const struct pcompare comparisons[] = {
    {.id = "rdma-rate-mismatch",
     .field = "rate_gbps",
     .link_layer = "InfiniBand",
     .what = "rate",
     .unit = " Gb/s",
     .text = "rate",
     .fix = rate_fix},
    {.id = "rdma-rate-mismatch",
     .field = "rate_gbps",
     .link_layer = "Ethernet",
     .what = "rate",
     .unit = " Gb/s",
     .text = "rate",
     .fix = rate_fix},
    {.id = "rdma-mtu-mismatch",
     .field = "active_mtu",
     .link_layer = "InfiniBand",
     .what = "IB MTU (active_mtu)",
     .unit = "",
     .fix = mtu_fix},
    {.id = "rdma-mtu-mismatch",
     .field = "active_mtu",
     .link_layer = "Ethernet",
     .what = "IB MTU (active_mtu)",
     .unit = "",
     .fix = mtu_fix},
    {.id = "rdma-mtu-mismatch",
     .field = "mtu",
     .link_layer = "Ethernet",
     .what = "netdev MTU",
     .unit = "",
     .fix = mtu_fix},
};

/* ---------------------------------------------------------------- memlock, peermem */

static const char memlock_fix[] =
    "Lift the limit for the job's login, as NCCL's troubleshooting guide says: `* soft memlock "
    "unlimited` and `* hard memlock unlimited` in /etc/security/limits.conf (or limits.d), "
    "LimitMEMLOCK=infinity for a systemd service (slurmd: also PropagateResourceLimits), "
    "`--ulimit memlock=-1` for a container; log in again and check `ulimit -l`.";

static void check_memlock(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *rn = rnode_of(n);
	long long bytes;
	char ev[EV];

	if (json_is_true(json_object_get(rn, "memlock_unlimited")) ||
	    !int_of(rn, "memlock_bytes", &bytes) || bytes < 0 || bytes >= RDMA_MEMLOCK_MIN_BYTES)
		return;
	snprintf(ev, sizeof(ev),
	         "%s: ulimit -l %lld KiB (%lld bytes), below the %lld bytes NCCL's IB transport "
	         "registers for one connection",
	         n->host, bytes / 1024, bytes, RDMA_MEMLOCK_MIN_BYTES);
	diagnose_note(st, "rdma-memlock-low", SEV_ERROR, "", i,
	              "the locked-memory limit (ulimit -l) of %N is below what NCCL's IB transport "
	              "registers",
	              memlock_fix, ev);
}

static const char peermem_fix[] =
    "Load the peer-memory module that comes with the NVIDIA driver: `modprobe nvidia_peermem` "
    "(and `nvidia_peermem` in /etc/modules-load.d/ to keep it; the old nv_peer_mem of "
    "MLNX_OFED does the same). NCCL then says `GPU Direct RDMA Enabled` for the HCA. With the "
    "open GPU kernel modules and a kernel with dma-buf support, NCCL (2.13 and later, "
    "NCCL_DMABUF_ENABLE) may use DMA-BUF instead: check that its log says GPU Direct RDMA "
    "Enabled.";

static void check_peermem(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *pm = json_object_get(rnode_of(n), "peermem");
	char ev[EV];

	if (n->gpus <= 0 || !json_is_null(pm))
		return;
	snprintf(ev, sizeof(ev),
	         "%s: %d GPU%s, %zu RDMA port%s, no nvidia_peermem or nv_peer_mem in /proc/modules",
	         n->host, n->gpus, n->gpus == 1 ? "" : "s", json_array_size(ports_of(n)),
	         json_array_size(ports_of(n)) == 1 ? "" : "s");
	diagnose_note(st, "gpudirect-rdma-missing", SEV_WARNING, "", i,
	              "%N have GPUs and RDMA ports but no peer-memory module: no GPUDirect RDMA "
	              "(NCCL stages through host memory)",
	              peermem_fix, ev);
}

/* ---------------------------------------------------------------- the prediction */

/* A variable the head read for node ctx (netmodel: the environment or a conf
 * file, environment first, as NCCL does), for nccl_ib_env_fill. */
static const char *nm_value(const char *name, const char **source, const void *ctx)
{
	const struct nm_var *var = nm_var_get(ctx, name);

	if (!var)
		return NULL;
	*source = var->source;
	return var->value;
}

/* The node's NCCL variables, the prediction's env: the login environment the
 * RDMA facts saw, else what netmodel read. */
void diagnose_rdma_env(const struct nm_node *n, struct nccl_ib_env *e)
{
	nccl_ib_env_from_json(rnode_of(n), NULL, e);
	nccl_ib_env_fill(e, nm_value, n);
}

/* ---------------------------------------------------------------- nccl-ib-hca-stale */

static const char hca_fix[] =
    "Name the node's HCAs (`ibv_devices`, `ls /sys/class/infiniband`) in NCCL_IB_HCA where it "
    "is set (the login environment, ~/.nccl.conf or /etc/nccl.conf), or unset it so NCCL uses "
    "every ACTIVE port.";

static int entry_found(json_t *ports, const struct nccl_list *l, int e)
{
	json_t *p;
	size_t k;

	json_array_foreach(ports, k, p)
	{
		const char *dev = str_of(p, "device");

		if (dev && nccl_list_item_matches(l, e, dev, port_num(p)))
			return 1;
	}
	return 0;
}

/* "mlx5_0, mlx5_1": the node's HCAs, once each (ports come in name order). */
static void hca_names(json_t *ports, char *buf, size_t len)
{
	const char *last = NULL, *dev;
	size_t k, used = 0;
	json_t *p;

	buf[0] = '\0';
	json_array_foreach(ports, k, p)
	{
		dev = str_of(p, "device");
		if (!dev || (last && strcmp(last, dev) == 0) || used + strlen(dev) + 3 >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", dev);
		last = dev;
	}
}

/* "mlx5_9, mlx5_0:2": the entries of l that match no port of the node. */
static int missing_entries(json_t *ports, const struct nccl_list *l, char *buf, size_t len)
{
	size_t used = 0;
	int missing = 0;

	buf[0] = '\0';
	for (int e = 0; e < l->nitems; e++) {
		char port[16] = "";

		if (entry_found(ports, l, e))
			continue;
		missing++;
		if (l->items[e].port != -1)
			snprintf(port, sizeof(port), ":%d", l->items[e].port);
		if (used + strlen(l->items[e].prefix) + strlen(port) + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "",
			                         l->items[e].prefix, port);
	}
	return missing;
}

static void check_hca_stale(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	struct nccl_ib_env e;
	const char *source, *value;
	struct nccl_list l;
	char missing[160], have[160], msg[MSG], ev[EV], key[KEY];
	int nmissing;
	enum severity sev;

	diagnose_rdma_env(n, &e);
	value = e.ib_hca.value;
	source = e.ib_hca.source ? e.ib_hca.source : "environment";
	nccl_list_parse(value, NCCL_IB_MAX_DEVS, &l);
	if (l.nitems == 0)
		return;
	nmissing = missing_entries(ports_of(n), &l, missing, sizeof(missing));
	if (!nmissing)
		return;
	hca_names(ports_of(n), have, sizeof(have));
	if (l.exclude) {
		sev = SEV_INFO;
		snprintf(msg, sizeof(msg), "NCCL_IB_HCA=%.80s excludes HCAs that %%N lack", value);
	} else if (nmissing == l.nitems) {
		sev = SEV_ERROR;
		snprintf(
		    msg, sizeof(msg),
		    "NCCL_IB_HCA=%.80s matches no HCA of %%N: NCCL's IB transport finds no device",
		    value);
	} else {
		sev = SEV_WARNING;
		snprintf(msg, sizeof(msg), "NCCL_IB_HCA=%.80s names HCAs that %%N lack", value);
	}
	snprintf(ev, sizeof(ev), "%s: NCCL_IB_HCA=%s (%s): %s match%s no HCA port of the node (%s)",
	         n->host, value, source, missing, nmissing == 1 ? "es" : "", have);
	snprintf(key, sizeof(key), "%d/%.120s", (int)sev, value);
	diagnose_note(st, "nccl-ib-hca-stale", sev, key, i, msg, hca_fix, ev);
}

void diagnose_rdma_predict_env(const struct nm_node *n, const char *version,
                               const struct nccl_ib_env *e, struct nccl_ib_pick *pk)
{
	nccl_ib_predict(ports_of(n), rnode_of(n), e, version, pk);
}

void diagnose_rdma_predict(const struct nm_node *n, const char *version, struct nccl_ib_pick *pk)
{
	struct nccl_ib_env e;

	diagnose_rdma_env(n, &e);
	diagnose_rdma_predict_env(n, version, &e, pk);
}

static void predict_node(const struct nm_node *n, struct nccl_ib_pick *pk)
{
	diagnose_rdma_predict(n, n->nccl_version[0] ? n->nccl_version : NULL, pk);
}

/* ---------------------------------------------------------------- nccl-ib-fallback */

static const char fallback_fix[] =
    "Give NCCL's IB transport what it lacks, as the evidence says: unset NCCL_IB_DISABLE or "
    "NCCL_NET=Socket, install libibverbs and the HCA's provider (rdma-core: libibverbs1, "
    "ibverbs-providers), or make NCCL_IB_HCA name the node's ACTIVE ports; NCCL_DEBUG=INFO "
    "then says \"NET/IB : Using [0]mlx5_0:1/...\" instead of \"NET/Socket\".";

/* The fallbacks another finding already names on the node: a node
 * without an ACTIVE port (rdma-port-down) and an NCCL_IB_HCA that matches
 * no HCA (nccl-ib-hca-stale, error); one cause, one finding. */
static int fallback_named_elsewhere(const char *reason)
{
	return strcmp(reason, "no ACTIVE port") == 0 ||
	       strstr(reason, " matches no HCA of the node");
}

/* An error when other nodes will use IB (the job mixes transports, and
 * the node's ranks move their data over TCP at a fraction of the RDMA
 * bandwidth); a warning when no node will (the job runs, over sockets). */
static void check_fallback(struct dstate *st, size_t i, const struct nccl_ib_pick *pk, size_t nib)
{
	const struct nm_node *n = &st->m->nodes[i];
	enum severity sev = nib ? SEV_ERROR : SEV_WARNING;
	char ev[EV];

	if (pk->transport != NCCL_IB_SOCKET || fallback_named_elsewhere(pk->reason))
		return;
	snprintf(ev, sizeof(ev), "%s: %zu RDMA port%s, NCCL will use NET/Socket: %s", n->host,
	         json_array_size(ports_of(n)), json_array_size(ports_of(n)) == 1 ? "" : "s",
	         pk->reason);
	diagnose_note(st, "nccl-ib-fallback", sev, sev == SEV_ERROR ? "error" : "warning", i,
	              "NCCL will fall back to sockets on %N although it has RDMA ports",
	              fallback_fix, ev);
}

/* ---------------------------------------------------------------- roce-gid-mismatch */

static const char gid_fix[] =
    "Make every node pick a GID of the same RoCE version and address family: set "
    "NCCL_IB_GID_INDEX per node to its RoCE v2 IPv4 entry (`show_gids`, or "
    "/sys/class/infiniband/<hca>/ports/<port>/gid_attrs/types/<index>), or unset it and let "
    "NCCL choose (2.21+: NCCL_IB_ROCE_VERSION_NUM=2, NCCL_IB_ADDR_FAMILY=AF_INET); give the "
    "RoCE netdev an IPv4 address where the v2 entry is missing.";

/* A RoCE port's pick as one word: "RoCE v2/ipv4". */
static void gid_kind(const struct nccl_ib_dev *d, char *buf, size_t len)
{
	if (d->gid_type > 0)
		snprintf(buf, len, "RoCE v%d/%s", d->gid_type, d->gid_family);
	else
		snprintf(buf, len, "unknown type/%s", d->gid_family);
}

/* The kind the nodes should share: the most frequent RoCE v2 IPv4 or
 * IPv6 pick (what NCCL's default chooses), else the most frequent. */
static void gid_reference(const struct nccl_ib_pick *picks, size_t n, char *ref, size_t len)
{
	size_t best = 0, score;
	char kind[48], other[48];

	ref[0] = '\0';
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < picks[i].ndevs; k++) {
			const struct nccl_ib_dev *d = &picks[i].devs[k];

			gid_kind(d, kind, sizeof(kind));
			score = d->gid_type == 2 && (!strcmp(d->gid_family, "ipv4") ||
			                             !strcmp(d->gid_family, "ipv6"))
			            ? n * NCCL_IB_MAX_DEVS
			            : 0;
			for (size_t j = 0; j < n; j++)
				for (int q = 0; q < picks[j].ndevs; q++) {
					gid_kind(&picks[j].devs[q], other, sizeof(other));
					score += picks[j].devs[q].roce && !strcmp(kind, other);
				}
			if (d->roce && score > best) {
				best = score;
				snprintf(ref, len, "%s", kind);
			}
		}
}

/* Node n's RoCE picks in ev ("node1 mlx5_0:1 GID 3 RoCE v2 ipv4
 * 10.0.11.12; ..."); returns whether one differs from ref. */
static int gid_evidence(const struct nm_node *n, const struct nccl_ib_pick *pk, const char *ref,
                        char *ev, size_t len)
{
	int differs = 0;

	ev[0] = '\0';
	for (int k = 0; k < pk->ndevs; k++) {
		const struct nccl_ib_dev *d = &pk->devs[k];
		size_t used = strlen(ev);
		char kind[48], type[16] = "unknown type";

		if (!d->roce)
			continue;
		gid_kind(d, kind, sizeof(kind));
		differs |= strcmp(kind, ref) != 0;
		if (d->gid_type > 0)
			snprintf(type, sizeof(type), "RoCE v%d", d->gid_type);
		snprintf(ev + used, len - used, "%s%s %s:%d GID %d %s %s %s%s%s", used ? "; " : "",
		         n->host, d->dev, d->port, d->gid_index, type, d->gid_family,
		         d->gid_address[0] ? d->gid_address : "-", d->note[0] ? ": " : "", d->note);
	}
	return differs;
}

static int uses_roce(const struct nccl_ib_pick *pk)
{
	for (int k = 0; k < pk->ndevs; k++)
		if (pk->transport == NCCL_IB_IB && pk->devs[k].roce)
			return 1;
	return 0;
}

/* One finding across the nodes whose IB transport has RoCE ports, on the
 * nodes whose pick differs from the shared kind, with every such node's
 * pick as evidence: RoCE needs both ends of a connection on the same GID
 * type and family, and a mixed pair hangs or fails to connect
 * (NVIDIA/nccl #718, #1131). The index alone may differ: NCCL picks it
 * per node. */
static void check_gid_mismatch(struct dstate *st, const struct nccl_ib_pick *picks)
{
	const struct netmodel *m = st->m;
	char ref[48], ev[EV];
	size_t nroce = 0, nodd = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		nroce += uses_roce(&picks[i]);
	if (nroce < 2)
		return;
	gid_reference(picks, m->nnodes, ref, sizeof(ref));
	for (size_t i = 0; i < m->nnodes; i++)
		nodd += uses_roce(&picks[i]) &&
		        gid_evidence(&m->nodes[i], &picks[i], ref, ev, sizeof(ev));
	if (!nodd)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		int odd;

		if (!uses_roce(&picks[i]))
			continue;
		odd = gid_evidence(&m->nodes[i], &picks[i], ref, ev, sizeof(ev));
		diagnose_note(st, "roce-gid-mismatch", SEV_ERROR, "", odd ? i : SIZE_MAX,
		              "the RoCE GID NCCL would use on %N differs in type or address family "
		              "from the other nodes' (they connect over the same GID kind)",
		              gid_fix, ev);
	}
}

/* ---------------------------------------------------------------- entry */

/* The findings that need the prediction, from each judged node's pick. */
static void check_prediction(struct dstate *st)
{
	struct nccl_ib_pick *picks = cd_calloc(st->m->nnodes ? st->m->nnodes : 1, sizeof(*picks));
	size_t nib = 0;

	for (size_t i = 0; i < st->m->nnodes; i++) {
		if (judged(&st->m->nodes[i]))
			predict_node(&st->m->nodes[i], &picks[i]);
		nib += picks[i].transport == NCCL_IB_IB;
	}
	for (size_t i = 0; i < st->m->nnodes; i++)
		check_fallback(st, i, &picks[i], nib);
	check_gid_mismatch(st, picks);
	free(picks);
}

void diagnose_check_rdma(struct dstate *st)
{
	for (size_t i = 0; i < st->m->nnodes; i++) {
		if (!judged(&st->m->nodes[i]))
			continue;
		check_port_down(st, i);
		check_memlock(st, i);
		check_peermem(st, i);
		check_hca_stale(st, i);
	}
	check_prediction(st);
	for (size_t c = 0; c < CD_ARRAY_LEN(comparisons); c++)
		compare_ports(st, &comparisons[c]);
}
