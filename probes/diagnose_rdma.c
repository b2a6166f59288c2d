/* diagnose_rdma.c - the RDMA findings (diagnose_rdma.h, docs/findings.md):
 * ports not ACTIVE/LinkUp, rates and MTUs that differ between the ports
 * NCCL would use, a memlock limit below what NCCL's IB transport
 * registers, GPUs beside RDMA ports without a peer-memory module, and an
 * NCCL_IB_HCA that names HCAs the node lacks. Reads each node's "rdma"
 * object (netmodel.h): the probe's "rdma" ports and "rdma_node".
 *
 * Severity follows what NCCL does with the fault: what leaves the node
 * without a usable RDMA port, or makes NCCL's first registration fail, is
 * an error; what NCCL works around at a cost (a port skipped, a slower or
 * smaller-MTU link, no GPUDirect RDMA) warns. */
#include "probes/diagnose_rdma.h"
#include "probes/diagnose_internal.h"
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

/* ---------------------------------------------------------------- NCCL_IB_HCA */

/* atoi() of one field: optional blanks and sign, then digits; clamped
 * where atoi would overflow. */
static int field_atoi(const char *s, size_t len)
{
	size_t i = 0;
	long long v = 0;
	int neg = 0;

	while (i < len && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if (v <= INT_MAX)
			v = v * 10 + (s[i] - '0');
	if (v > INT_MAX)
		v = INT_MAX;
	return neg ? -(int)v : (int)v;
}

/* One entry "<hca>[:<port>[:...]]" of len bytes into e; 0 when its name
 * is empty (NCCL skips it). */
static int parse_entry(const char *s, size_t len, struct rdma_hca_entry *e)
{
	const char *colon = memchr(s, ':', len);
	size_t nlen = colon ? (size_t)(colon - s) : len;

	if (nlen == 0)
		return 0;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, s);
	e->port = -1;
	if (colon) {
		const char *p = colon + 1;
		size_t plen = len - nlen - 1;
		const char *end = memchr(p, ':', plen);

		if (end)
			plen = (size_t)(end - p);
		if (plen)
			e->port = field_atoi(p, plen);
	}
	return 1;
}

size_t rdma_hca_parse(const char *s, size_t len, struct rdma_hca_list *out)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (!s)
		return 0;
	len = strnlen(s, len); /* NCCL reads a C string */
	if (i < len && s[i] == '^') {
		out->exclude = 1;
		i++;
	}
	if (i < len && s[i] == '=') {
		out->exact = 1;
		i++;
	}
	while (i < len && out->n < RDMA_HCA_MAX) {
		const char *comma = memchr(s + i, ',', len - i);
		size_t end = comma ? (size_t)(comma - s) : len;

		if (parse_entry(s + i, end - i, &out->e[out->n]))
			out->n++;
		i = end + 1;
	}
	return out->n;
}

int rdma_hca_entry_matches(const struct rdma_hca_entry *e, int exact, const char *dev, int port)
{
	int name_ok =
	    exact ? strcmp(dev, e->name) == 0 : strncmp(dev, e->name, strlen(e->name)) == 0;

	return name_ok && (e->port == -1 || port == -1 || e->port == port);
}

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

/* ---------------------------------------------------------------- nccl-ib-hca-stale */

static const char hca_fix[] =
    "Name the node's HCAs (`ibv_devices`, `ls /sys/class/infiniband`) in NCCL_IB_HCA where it "
    "is set (the login environment, ~/.nccl.conf or /etc/nccl.conf), or unset it so NCCL uses "
    "every ACTIVE port.";

/* The effective NCCL_IB_HCA: the login environment the RDMA facts saw,
 * else the environment or NCCL conf file netmodel read (environment first,
 * as NCCL does). */
static const char *ib_hca_of(const struct nm_node *n, const char **source)
{
	const char *v = str_of(json_object_get(rnode_of(n), "nccl_vars"), "NCCL_IB_HCA");
	const struct nm_var *var;

	*source = "environment";
	if (v)
		return v;
	var = nm_var_get(n, "NCCL_IB_HCA");
	if (!var)
		return NULL;
	*source = var->source;
	return var->value;
}

static int entry_found(json_t *ports, const struct rdma_hca_list *l, size_t e)
{
	json_t *p;
	size_t k;

	json_array_foreach(ports, k, p)
	{
		const char *dev = str_of(p, "device");

		if (dev && rdma_hca_entry_matches(&l->e[e], l->exact, dev, port_num(p)))
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
static size_t missing_entries(json_t *ports, const struct rdma_hca_list *l, char *buf, size_t len)
{
	size_t missing = 0, used = 0;

	buf[0] = '\0';
	for (size_t e = 0; e < l->n; e++) {
		char port[16] = "";

		if (entry_found(ports, l, e))
			continue;
		missing++;
		if (l->e[e].port != -1)
			snprintf(port, sizeof(port), ":%d", l->e[e].port);
		if (used + strlen(l->e[e].name) + strlen(port) + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "",
			                         l->e[e].name, port);
	}
	return missing;
}

static void check_hca_stale(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	const char *source, *value = ib_hca_of(n, &source);
	struct rdma_hca_list l;
	char missing[160], have[160], msg[MSG], ev[EV], key[KEY];
	size_t nmissing;
	enum severity sev;

	if (!value || rdma_hca_parse(value, strlen(value), &l) == 0)
		return;
	nmissing = missing_entries(ports_of(n), &l, missing, sizeof(missing));
	if (!nmissing)
		return;
	hca_names(ports_of(n), have, sizeof(have));
	if (l.exclude) {
		sev = SEV_INFO;
		snprintf(msg, sizeof(msg), "NCCL_IB_HCA=%.80s excludes HCAs that %%N lack", value);
	} else if (nmissing == l.n) {
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

/* ---------------------------------------------------------------- entry */

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
	for (size_t c = 0; c < CD_ARRAY_LEN(comparisons); c++)
		compare_ports(st, &comparisons[c]);
}
