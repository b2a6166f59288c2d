/* SPDX-License-Identifier: MIT */
/*
 * nccl_ib.c - the prediction of NCCL's IB transport (nccl_ib.h has the
 * rules and their sources). Each function names the NCCL function whose
 * behaviour it reproduces; the code is written from those rules, not
 * taken from NCCL.
 */
#include "nccl_ib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cd.h"
#include "predict.h"

#define GID_MAX 256

const char *nccl_ib_transport_name(enum nccl_ib_transport t)
{
	static const char *const names[] = {
	    [NCCL_IB_UNKNOWN] = "unknown",
	    [NCCL_IB_IB] = "ib",
	    [NCCL_IB_SOCKET] = "socket",
	    [NCCL_IB_PLUGIN] = "plugin",
	};

	return t >= NCCL_IB_UNKNOWN && t <= NCCL_IB_PLUGIN ? names[t] : "unknown";
}

/* ---- the variables ---- */

static const struct {
	const char *name;
	size_t off;
} env_names[] = {
    {"NCCL_IB_HCA", offsetof(struct nccl_ib_env, ib_hca)},
    {"NCCL_IB_DISABLE", offsetof(struct nccl_ib_env, ib_disable)},
    {"NCCL_IB_GID_INDEX", offsetof(struct nccl_ib_env, ib_gid_index)},
    {"NCCL_IB_ROCE_VERSION_NUM", offsetof(struct nccl_ib_env, ib_roce_version_num)},
    {"NCCL_IB_ADDR_FAMILY", offsetof(struct nccl_ib_env, ib_addr_family)},
    {"NCCL_IB_ADDR_RANGE", offsetof(struct nccl_ib_env, ib_addr_range)},
    {"NCCL_NET", offsetof(struct nccl_ib_env, net)},
};

static void env_take(struct nccl_ib_env *e, const json_t *vars, const char *source)
{
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++) {
		struct nccl_ib_var *v = (struct nccl_ib_var *)((char *)e + env_names[i].off);
		const char *value = json_string_value(json_object_get(vars, env_names[i].name));

		if (!v->value && value) {
			v->value = value;
			v->source = source;
		}
	}
}

void nccl_ib_env_fill(struct nccl_ib_env *e,
                      const char *(*get)(const char *name, const char **source, const void *ctx),
                      const void *ctx)
{
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++) {
		struct nccl_ib_var *v = (struct nccl_ib_var *)((char *)e + env_names[i].off);
		const char *source = NULL;

		if (!v->value) {
			v->value = get(env_names[i].name, &source, ctx);
			v->source = v->value ? source : NULL;
		}
	}
}

int nccl_ib_env_set(struct nccl_ib_env *e, const char *name, const char *value, const char *source)
{
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++) {
		struct nccl_ib_var *v = (struct nccl_ib_var *)((char *)e + env_names[i].off);

		if (strcmp(env_names[i].name, name) == 0) {
			v->value = value;
			v->source = source;
			return 0;
		}
	}
	return -1;
}

void nccl_ib_env_from_json(const json_t *rdma_node, const json_t *nccl_conf, struct nccl_ib_env *e)
{
	size_t i;
	json_t *file;

	memset(e, 0, sizeof(*e));
	env_take(e, json_object_get(rdma_node, "nccl_vars"), "environment");
	json_array_foreach(nccl_conf, i, file)
	{
		const char *path = json_string_value(json_object_get(file, "path"));

		env_take(e, json_object_get(file, "vars"), path ? path : "nccl.conf");
	}
}

/* NCCL_PARAM's reading (src/misc/param.cc ncclLoadParam): an empty value
 * keeps the default; otherwise strtoll(str, NULL, 0), the default only when
 * errno is set (out of range). So "1x" is 1 and "x" is 0; the newest
 * sources also keep the default for "x", which this does not follow. */
static long long param_int(const struct nccl_ib_var *v, long long dflt)
{
	long long n;

	if (!v->value || !*v->value)
		return dflt;
	errno = 0;
	n = strtoll(v->value, NULL, 0);
	return errno ? dflt : n;
}

static const char *source_of(const struct nccl_ib_var *v)
{
	return v->source ? v->source : "environment";
}

/* ---- the GID table (ncclIbGetGidIndex, ncclUpdateGidIndex) ---- */

struct gid {
	int set; /* 1 = listed in the facts (non-zero) */
	unsigned char raw[16];
	int version; /* 1, 2, or -1 when types/<i> had no known word */
	char family[16];
	char address[48];
};

/* getGidAddrFamily: IPv4-mapped (::ffff:a.b.c.d) or its multicast form
 * (ff0e::ffff:a.b.c.d) is AF_INET, everything else AF_INET6. */
static int gid_is_v4(const unsigned char *a)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char mcast[12] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(a, mapped, 12) == 0 || memcmp(a, mcast, 12) == 0;
}

static int all_zero(const unsigned char *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i])
			return 0;
	}
	return 1;
}

static int gid_link_local(const unsigned char *a)
{
	return a[0] == 0xfe && a[1] == 0x80 && all_zero(a + 2, 6);
}

/* validGid: configuredGid (neither all zero nor fe80:: with a zero
 * interface id) and not link-local. */
static int gid_valid(const unsigned char *a)
{
	int configured = !all_zero(a, 16) && !(a[0] == 0xfe && a[1] == 0x80 && all_zero(a + 2, 14));

	return configured && !gid_link_local(a);
}

/* ncclIbRoceGetVersionNum: "IB/RoCE v1" or "RoCE v1" is 1, "RoCE v2" 2. */
static int gid_version_of(const char *type)
{
	if (!type)
		return -1;
	if (strncmp(type, "IB/RoCE v1", 10) == 0 || strncmp(type, "RoCE v1", 7) == 0)
		return 1;
	if (strncmp(type, "RoCE v2", 7) == 0)
		return 2;
	return -1;
}

struct gid_table {
	struct gid g[GID_MAX];
	int top; /* highest listed index + 1 */
};

static void gid_table_load(const json_t *gids, struct gid_table *t, const char *dev, int port,
                           struct nccl_ib_pick *out)
{
	size_t i;
	json_t *row;

	memset(t, 0, sizeof(*t));
	for (int k = 0; k < GID_MAX; k++)
		t->g[k].version = -1;
	json_array_foreach(gids, i, row)
	{
		json_t *idx = json_object_get(row, "index");
		const char *text = json_string_value(json_object_get(row, "gid"));
		const char *fam = json_string_value(json_object_get(row, "family"));
		const char *addr = json_string_value(json_object_get(row, "address"));
		long long n = json_is_integer(idx) ? json_integer_value(idx) : -1;
		struct gid *g;

		if (n < 0 || n >= GID_MAX || !text) {
			cd_appendf(out->errors, sizeof(out->errors),
			           "%s%s/%d: GID entry %zu unreadable", out->errors[0] ? "; " : "",
			           dev, port, i);
			continue;
		}
		g = &t->g[n];
		if (inet_pton(AF_INET6, text, g->raw) != 1) {
			cd_appendf(out->errors, sizeof(out->errors),
			           "%s%s/%d: GID %lld \"%.48s\" unreadable",
			           out->errors[0] ? "; " : "", dev, port, n, text);
			continue;
		}
		g->set = 1;
		g->version = gid_version_of(json_string_value(json_object_get(row, "type")));
		snprintf(g->family, sizeof(g->family), "%s", fam ? fam : "");
		snprintf(g->address, sizeof(g->address), "%s", addr ? addr : "");
		if ((int)n + 1 > t->top)
			t->top = (int)n + 1;
	}
}

struct gid_rule {
	int v6;        /* NCCL_IB_ADDR_FAMILY=AF_INET6 */
	int roce_ver;  /* NCCL_IB_ROCE_VERSION_NUM */
	int has_range; /* NCCL_IB_ADDR_RANGE parsed */
	unsigned char range[16];
	int prefixlen;
};

/* envIbAddrRange: "addr/len" in the chosen family; a missing '/', a bad
 * address or a length past the family's width means no range. */
static void gid_rule_range(struct gid_rule *r, const char *value)
{
	char text[128];
	char *slash;
	long len;

	r->has_range = 0;
	if (!value || !*value)
		return;
	snprintf(text, sizeof(text), "%s", value);
	slash = strchr(text, '/');
	if (!slash)
		return;
	*slash = '\0';
	len = strtol(slash + 1, NULL, 10);
	if (r->v6) {
		if (inet_pton(AF_INET6, text, r->range) != 1 || len > 128)
			return;
	} else {
		memset(r->range, 0, sizeof(r->range));
		if (inet_pton(AF_INET, text, r->range + 12) != 1 || len > 32)
			return;
	}
	r->prefixlen = len < 0 ? 0 : (int)len;
	r->has_range = 1;
}

/* matchGidAddrPrefix: AF_INET compares the last 32 bits, AF_INET6 the
 * leading prefixlen bits; no range matches. */
static int gid_in_range(const struct gid_rule *r, const unsigned char *a)
{
	int start = r->v6 ? 0 : 12, bits = r->prefixlen;

	if (!r->has_range)
		return 1;
	for (int i = start; bits > 0 && i < 16; i++, bits -= 8) {
		unsigned char mask = bits >= 8 ? 0xff : (unsigned char)(0xff << (8 - bits));

		if ((a[i] & mask) != (r->range[i] & mask))
			return 0;
	}
	return 1;
}

/* ncclUpdateGidIndex: the candidate replaces the current index when it
 * brings the wanted family the current lacks (inside the range), or, of
 * the wanted family, valid and inside the range, when it has the wanted
 * RoCE version and the current has another version or is not valid. */
static int gid_better(const struct gid_rule *r, const struct gid *cur, const struct gid *cand)
{
	int want_v4 = !r->v6, cur_v4 = gid_is_v4(cur->raw), cand_v4 = gid_is_v4(cand->raw);
	int in_range = gid_in_range(r, cand->raw);

	if (cand_v4 != cur_v4 && cand_v4 == want_v4 && in_range)
		return 1;
	if (cand_v4 != want_v4 || !gid_valid(cand->raw) || !in_range)
		return 0;
	return (cur->version != cand->version || !gid_valid(cur->raw)) &&
	       cand->version == r->roce_ver;
}

static void gid_describe(const struct gid *g, struct nccl_ib_dev *d)
{
	d->gid_type = g->version;
	if (!g->set)
		snprintf(d->gid_family, sizeof(d->gid_family), "zero");
	else
		snprintf(d->gid_family, sizeof(d->gid_family), "%s", g->family);
	snprintf(d->gid_address, sizeof(d->gid_address), "%s", g->address);
}

/* The RoCE port's GID index (ncclIbGetGidIndex). The facts list only the
 * non-zero entries, so an index they lack is an all-zero GID; the scan
 * stops after the last listed index (an all-zero entry past it could only
 * win under AF_INET6 when index 0 is IPv4-mapped, which ports do not have). */
static void gid_pick(const struct gid_table *t, const struct nccl_ib_env *e,
                     const struct nccl_version *ver, struct nccl_ib_dev *d)
{
	static const struct nccl_version auto_since = {2, 21, 0};
	long long forced = param_int(&e->ib_gid_index, -1);
	struct gid_rule r = {0};
	int best = 0;

	if (forced < 0 && nccl_version_cmp(ver, &auto_since) < 0)
		forced = 0; /* NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", 0) before 2.21 */
	if (forced >= 0) {
		d->gid_index = (int)forced;
		if (forced >= GID_MAX || !t->g[forced].set) {
			snprintf(d->note, sizeof(d->note), "no GID at index %lld", forced);
			snprintf(d->gid_family, sizeof(d->gid_family), "zero");
			d->gid_type = -1;
			return;
		}
		gid_describe(&t->g[forced], d);
		return;
	}
	r.v6 = e->ib_addr_family.value && strcmp(e->ib_addr_family.value, "AF_INET6") == 0;
	r.roce_ver = (int)param_int(&e->ib_roce_version_num, 2);
	gid_rule_range(&r, e->ib_addr_range.value);
	for (int i = 1; i < t->top; i++) {
		if (gid_better(&r, &t->g[best], &t->g[i]))
			best = i;
	}
	d->gid_index = best;
	gid_describe(&t->g[best], d);
	if (!t->g[best].set)
		snprintf(d->note, sizeof(d->note), "no GID of the wanted family; index 0 is empty");
}

/* ---- the devices (ncclIbInit) ---- */

static void names_of_node(const json_t *rdma, char *buf, size_t len)
{
	const char *last = "";
	size_t i;
	json_t *row;

	buf[0] = '\0';
	json_array_foreach(rdma, i, row)
	{
		const char *dev = json_string_value(json_object_get(row, "device"));

		if (dev && strcmp(dev, last) != 0) {
			cd_appendf(buf, len, "%s%s", buf[0] ? ", " : "", dev);
			last = dev;
		}
	}
}

/* Whether the filter names any port of the node, whatever its state. */
static int matches_a_port(const json_t *rdma, const struct nccl_list *f)
{
	size_t i;
	json_t *row;

	json_array_foreach(rdma, i, row)
	{
		const char *dev = json_string_value(json_object_get(row, "device"));
		json_t *port = json_object_get(row, "port");

		if (dev && json_is_integer(port) &&
		    nccl_list_match(f, dev, (int)json_integer_value(port)))
			return 1;
	}
	return 0;
}

/* The ACTIVE ports no verbs provider serves, by HCA ("mlx5_0, mlx5_1"). */
struct unserved {
	int n;
	char devs[128];
};

/* NCCL never sees an HCA libibverbs does not list ("NET/IB : No device
 * found." when none is left). */
int nccl_ib_port_listed(const json_t *row)
{
	const json_t *prov = json_object_get(row, "provider");

	return !json_is_null(prov) || !prov || !json_is_string(json_object_get(row, "driver"));
}

/* One "rdma" row: 1 when NCCL's IB transport takes it as a device. */
static int port_usable(const json_t *row, size_t i, const struct nccl_list *f,
                       struct nccl_ib_pick *out, int *active, struct unserved *un)
{
	const char *dev = json_string_value(json_object_get(row, "device"));
	const char *state = json_string_value(json_object_get(row, "state"));
	const char *ll = json_string_value(json_object_get(row, "link_layer"));
	json_t *port = json_object_get(row, "port");

	if (!dev || !*dev || strlen(dev) >= sizeof(out->devs[0].dev) || !json_is_integer(port)) {
		cd_appendf(out->errors, sizeof(out->errors),
		           "%srdma[%zu]: a port without device name or number",
		           out->errors[0] ? "; " : "", i);
		return 0;
	}
	if (!state || strcmp(state, "ACTIVE") != 0)
		return 0;
	if (!nccl_ib_port_listed(row)) {
		size_t n = strlen(un->devs);

		/* one name per HCA: its ports follow each other in the list */
		if (n < strlen(dev) || strcmp(un->devs + n - strlen(dev), dev) != 0)
			cd_appendf(un->devs, sizeof(un->devs), "%s%s", n ? ", " : "", dev);
		un->n++;
		return 0;
	}
	if (!ll || (strcmp(ll, "InfiniBand") != 0 && strcmp(ll, "Ethernet") != 0)) {
		if (!ll)
			cd_appendf(out->errors, sizeof(out->errors),
			           "%s%s/%lld: link layer unknown", out->errors[0] ? "; " : "", dev,
			           json_integer_value(port));
		return 0;
	}
	(*active)++;
	return nccl_list_match(f, dev, (int)json_integer_value(port));
}

static void add_dev(const json_t *row, const struct nccl_ib_env *e, const struct nccl_version *ver,
                    struct nccl_ib_pick *out)
{
	struct nccl_ib_dev *d = &out->devs[out->ndevs++];
	struct gid_table *t;

	snprintf(d->dev, sizeof(d->dev), "%s", json_string_value(json_object_get(row, "device")));
	d->port = (int)json_integer_value(json_object_get(row, "port"));
	d->roce = strcmp(json_string_value(json_object_get(row, "link_layer")), "Ethernet") == 0;
	d->gid_index = -1;
	d->gid_type = -1;
	if (!d->roce) {
		snprintf(d->gid_family, sizeof(d->gid_family), "ib");
		return;
	}
	t = cd_malloc(sizeof(*t));
	gid_table_load(json_object_get(row, "gids"), t, d->dev, d->port, out);
	gid_pick(t, e, ver, d);
	free(t);
}

static int socket_because(struct nccl_ib_pick *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int socket_because(struct nccl_ib_pick *out, const char *fmt, ...)
{
	va_list ap;

	out->transport = NCCL_IB_SOCKET;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	return 1;
}

/* The fallbacks decided before any port is looked at: NCCL_NET (net.cc
 * ncclNetInit, strcasecmp), NCCL_IB_DISABLE, then wrap_ibv_symbols. */
static int falls_back_early(const json_t *rdma_node, const struct nccl_ib_env *e,
                            struct nccl_ib_pick *out)
{
	if (e->net.value && strcasecmp(e->net.value, "Socket") == 0)
		return socket_because(out, "NCCL_NET=%s (from %s)", e->net.value,
		                      source_of(&e->net));
	if (param_int(&e->ib_disable, 0) != 0)
		return socket_because(out, "NCCL_IB_DISABLE=%s (from %s)", e->ib_disable.value,
		                      source_of(&e->ib_disable));
	if (json_is_object(rdma_node) && json_is_null(json_object_get(rdma_node, "verbs_lib")))
		return socket_because(out, "no libibverbs");
	return 0;
}

void nccl_ib_predict(const json_t *rdma, const json_t *rdma_node, const struct nccl_ib_env *e,
                     const char *version, struct nccl_ib_pick *out)
{
	struct nccl_version ver;
	struct nccl_list f;
	struct unserved un = {0};
	int active = 0;
	size_t i;
	json_t *row;
	char names[256];

	memset(out, 0, sizeof(*out));
	if (!json_is_array(rdma)) {
		snprintf(out->reason, sizeof(out->reason), "no RDMA facts from this node");
		return;
	}
	if (falls_back_early(rdma_node, e, out))
		return;
	nccl_version_parse(version, &ver);
	nccl_list_parse(e->ib_hca.value, NCCL_IB_MAX_DEVS, &f);
	json_array_foreach(rdma, i, row)
	{
		if (port_usable(row, i, &f, out, &active, &un) && out->ndevs < NCCL_IB_MAX_DEVS)
			add_dev(row, e, &ver, out);
	}
	if (out->ndevs > 0) {
		out->transport = NCCL_IB_IB;
		if (e->ib_hca.value)
			snprintf(out->reason, sizeof(out->reason), "NCCL_IB_HCA=%s (from %s)",
			         e->ib_hca.value, source_of(&e->ib_hca));
		else
			snprintf(out->reason, sizeof(out->reason), "default: every ACTIVE port");
		return;
	}
	if (active == 0 && un.n) {
		socket_because(out, "no verbs provider for %s", un.devs);
		return;
	}
	if (active == 0) {
		socket_because(out, "no ACTIVE port");
		return;
	}
	names_of_node(rdma, names, sizeof(names));
	if (f.exclude)
		socket_because(out, "NCCL_IB_HCA=%s (from %s) excludes every ACTIVE port (%s)",
		               e->ib_hca.value, source_of(&e->ib_hca), names);
	else if (matches_a_port(rdma, &f))
		socket_because(
		    out, "NCCL_IB_HCA=%s (from %s) matches only ports that are not ACTIVE (%s)",
		    e->ib_hca.value, source_of(&e->ib_hca), names);
	else
		socket_because(out, "NCCL_IB_HCA=%s (from %s) matches no HCA of the node (%s)",
		               e->ib_hca.value, source_of(&e->ib_hca), names);
}
