/* SPDX-License-Identifier: MIT */
/*
 * diagnose_expect.c - the configuration's [expect] (probes/expect.h) against
 * each node checked: expect-gpus, expect-ib-rate, expect-mtu and
 * expect-driver, each an error naming what was declared and what the node
 * has. One row of `rows` per key; a key not declared checks nothing, and a
 * node that was not probed is node-unreachable's, not these.
 */
#include "diagnose_internal.h"

#include <stdio.h>
#include <string.h>

#define EV  640
#define KEY 96

struct row {
	const char *id;
	const char *message; /* "%N": the nodes */
	const char *fix;
	/* the node's evidence when it does not meet e, into ev; 0 when it does */
	int (*unmet)(const struct nm_node *n, const struct expect *e, char *ev, size_t len);
	/* the finding's key: the value declared */
	void (*key)(const struct expect *e, char *buf, size_t len);
};

static int declared_gpus(const struct expect *e)
{
	return e->gpus > 0;
}

static int gpus_unmet(const struct nm_node *n, const struct expect *e, char *ev, size_t len)
{
	json_t *gpus = json_object_get(n->nvidia, "gpus");
	const char *why = json_string_value(json_object_get(n->nvidia, "gpus_error"));
	long long count = (long long)json_array_size(gpus);

	if (!declared_gpus(e) || count == e->gpus)
		return 0;
	snprintf(ev, len, "%s: NVML lists %lld GPU%s, [expect] gpus = %d%s%s", n->host, count,
	         count == 1 ? "" : "s", e->gpus, why ? ": " : "", why ? why : "");
	return 1;
}

/* Each ACTIVE port below the rate declared, "mlx5_0/1 100 Gb/s"; a node
 * with no ACTIVE port at all does not meet it either. */
static int ib_rate_unmet(const struct nm_node *n, const struct expect *e, char *ev, size_t len)
{
	json_t *ports = json_object_get(n->rdma, "rdma"), *p;
	size_t k, used, active = 0;
	int slow = 0;

	if (!e->ib_rate)
		return 0;
	used = (size_t)snprintf(ev, len, "%s: [expect] ib-rate = %d Gb/s;", n->host, e->ib_rate);
	json_array_foreach(ports, k, p)
	{
		const char *state = json_string_value(json_object_get(p, "state"));
		const char *dev = json_string_value(json_object_get(p, "device"));
		json_t *rate = json_object_get(p, "rate_gbps");

		if (!state || strcmp(state, "ACTIVE") != 0)
			continue;
		active++;
		if (json_is_number(rate) && json_number_value(rate) >= e->ib_rate)
			continue;
		slow = 1;
		if (used < len)
			used += (size_t)snprintf(
			    ev + used, len - used, " %s/%lld %s", dev ? dev : "?",
			    (long long)json_integer_value(json_object_get(p, "port")),
			    json_is_number(rate) ? "" : "rate unknown");
		if (used < len && json_is_number(rate))
			used += (size_t)snprintf(ev + used, len - used, "at %g Gb/s",
			                         json_number_value(rate));
	}
	if (!active)
		snprintf(ev + (used < len ? used : len - 1), used < len ? len - used : 1,
		         " no RDMA port is ACTIVE (%zu port%s)", json_array_size(ports),
		         json_array_size(ports) == 1 ? "" : "s");
	return slow || !active;
}

/* A data interface: up, neither loopback nor virtual, with a global address. */
static int data_iface(const struct nm_node *n, const struct nm_iface *f)
{
	if (!f->up || f->loopback || diagnose_virtual_name(f->name))
		return 0;
	for (size_t a = 0; a < n->naddrs; a++)
		if (strcmp(n->addrs[a].ifname, f->name) == 0 &&
		    (strcmp(n->addrs[a].scope, "global") == 0 ||
		     strcmp(n->addrs[a].scope, "ula") == 0))
			return 1;
	return 0;
}

static int mtu_unmet(const struct nm_node *n, const struct expect *e, char *ev, size_t len)
{
	json_t *ports = json_object_get(n->rdma, "rdma"), *p;
	size_t used, k;
	int bad = 0;

	if (!e->mtu)
		return 0;
	used = (size_t)snprintf(ev, len, "%s: [expect] mtu = %d;", n->host, e->mtu);
	for (size_t i = 0; i < n->nifaces; i++) {
		const struct nm_iface *f = &n->ifaces[i];

		if (!data_iface(n, f) || f->mtu == e->mtu)
			continue;
		bad = 1;
		if (used < len)
			used +=
			    (size_t)snprintf(ev + used, len - used, " %s mtu %d", f->name, f->mtu);
	}
	json_array_foreach(ports, k, p)
	{
		const char *ll = json_string_value(json_object_get(p, "link_layer"));
		const char *dev = json_string_value(json_object_get(p, "netdev"));
		json_t *mtu = json_object_get(p, "mtu");

		if (!ll || strcmp(ll, "Ethernet") != 0 || !json_is_integer(mtu) ||
		    json_integer_value(mtu) == e->mtu)
			continue;
		bad = 1;
		if (used < len)
			used += (size_t)snprintf(ev + used, len - used, " %s (RoCE %s) mtu %lld",
			                         dev ? dev : "?",
			                         json_string_value(json_object_get(p, "device")),
			                         (long long)json_integer_value(mtu));
	}
	return bad;
}

static int driver_unmet(const struct nm_node *n, const struct expect *e, char *ev, size_t len)
{
	const char *have = json_string_value(json_object_get(n->nvidia, "gpu_driver"));

	if (!e->driver[0] || (have && strcmp(have, e->driver) == 0))
		return 0;
	snprintf(ev, len, "%s: NVIDIA driver %s, [expect] driver = %s", n->host,
	         have ? have : "unknown (NVML gave none)", e->driver);
	return 1;
}

static void key_gpus(const struct expect *e, char *buf, size_t len)
{
	snprintf(buf, len, "gpus=%d", e->gpus);
}

static void key_ib_rate(const struct expect *e, char *buf, size_t len)
{
	snprintf(buf, len, "ib-rate=%d", e->ib_rate);
}

static void key_mtu(const struct expect *e, char *buf, size_t len)
{
	snprintf(buf, len, "mtu=%d", e->mtu);
}

static void key_driver(const struct expect *e, char *buf, size_t len)
{
	snprintf(buf, len, "driver=%s", e->driver);
}

static const struct row rows[] = {
    {.id = "expect-gpus",
     .message = "%N: the GPUs NVML lists are not the [expect] gpus",
     .fix = "Find the missing GPU: `nvidia-smi -L` against `lspci -d 10de:`; a GPU on the "
            "bus but not in NVML has fallen off (Xid 79) and needs a reset or a reboot; "
            "if the node is meant to have this many, correct [expect] gpus.",
     .unmet = gpus_unmet,
     .key = key_gpus},
    {.id = "expect-ib-rate",
     .message = "%N: an ACTIVE RDMA port is slower than the [expect] ib-rate",
     .fix = "`ibstat` shows each port's rate: a port below its speed is a cable, transceiver "
            "or switch port that trained down (reseat or replace it); no ACTIVE port is the "
            "subnet manager or the link.",
     .unmet = ib_rate_unmet,
     .key = key_ib_rate},
    {.id = "expect-mtu",
     .message = "%N: an interface's MTU is not the [expect] mtu",
     .fix = "Set the MTU where the node's network is configured (netplan, "
            "/etc/network/interfaces, NetworkManager), e.g. `ip link set DEV mtu 9000` for "
            "now; the switch ports must carry it too.",
     .unmet = mtu_unmet,
     .key = key_mtu},
    {.id = "expect-driver",
     .message = "%N: the NVIDIA driver is not the [expect] driver",
     .fix = "Install the declared driver (the node image's package), or correct [expect] "
            "driver when the site moved on; a node on another driver can fail a job whose "
            "CUDA needs it.",
     .unmet = driver_unmet,
     .key = key_driver},
};

void diagnose_check_expect(struct dstate *st)
{
	const struct expect *e = &st->m->expect;
	char ev[EV], key[KEY];

	if (!expect_declared(e))
		return;
	for (size_t i = 0; i < st->m->nnodes; i++) {
		const struct nm_node *n = &st->m->nodes[i];

		if (!n->probed)
			continue;
		for (size_t r = 0; r < CD_ARRAY_LEN(rows); r++) {
			if (!rows[r].unmet(n, e, ev, sizeof(ev)))
				continue;
			rows[r].key(e, key, sizeof(key));
			diagnose_note(st, rows[r].id, SEV_ERROR, key, i, rows[r].message,
			              rows[r].fix, ev);
		}
	}
}
