/* SPDX-License-Identifier: MIT */
/* diagnose_ascend.c - the Ascend NPU findings (docs/ascend.md,
 * docs/findings.md): the device IP plan against the guide's rules, links,
 * net_health and netdetect, TLS settings across devices, duplicated device
 * addresses, an incomplete NPU probe; and the HCCL settings per node as an
 * info finding. Reads each node's "ascend" object (netmodel.h). */
#include "probes/ascend_plan.h"
#include "probes/diagnose_internal.h"
#include "probes/facts_ascend.h"
#include "cd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose (as in diagnose.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV 640

static const char *host_of(const struct netmodel *m, size_t i)
{
	return m->nodes[i].host;
}

static json_t *devices_of(const struct nm_node *n)
{
	return json_object_get(json_object_get(n->ascend, "probe"), "devices");
}

/* A node whose agent answered: ascend-probe-incomplete for what did not. */
static void check_incomplete(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *probe = json_object_get(n->ascend, "probe"),
	       *nd = json_object_get(n->ascend, "netdetect");
	json_t *d, *line, *r;
	char ev[EV];
	size_t k, q;

	if (json_is_string(json_object_get(n->ascend, "npus_error"))) {
		snprintf(ev, sizeof(ev), "%s: %s", host_of(st->m, i),
		         json_string_value(json_object_get(n->ascend, "npus_error")));
		diagnose_note(st, "ascend-probe-incomplete", SEV_WARNING, "", i,
		              "the NPU probe is incomplete on %N",
		              "Run the quoted command on the node; its findings are unknown "
		              "until it answers.",
		              ev);
	}
	if (json_is_string(json_object_get(probe, "error"))) {
		snprintf(ev, sizeof(ev), "%s: ascend_probe: %s", host_of(st->m, i),
		         json_string_value(json_object_get(probe, "error")));
		diagnose_note(st, "ascend-probe-incomplete", SEV_WARNING, "", i,
		              "the NPU probe is incomplete on %N", "", ev);
	}
	json_array_foreach(devices_of(n), k, d)
	{
		json_array_foreach(json_object_get(d, "incomplete"), q, line)
		{
			snprintf(ev, sizeof(ev), "%s: %s", host_of(st->m, i),
			         json_string_value(line));
			diagnose_note(st, "ascend-probe-incomplete", SEV_WARNING, "", i,
			              "the NPU probe is incomplete on %N", "", ev);
		}
	}
	json_array_foreach(json_object_get(nd, "results"), k, r)
	{
		if (!json_is_string(json_object_get(r, "incomplete")))
			continue;
		snprintf(ev, sizeof(ev), "%s: %s", host_of(st->m, i),
		         json_string_value(json_object_get(r, "incomplete")));
		diagnose_note(st, "ascend-probe-incomplete", SEV_WARNING, "", i,
		              "the NPU probe is incomplete on %N", "", ev);
	}
	if (json_is_string(json_object_get(nd, "error"))) {
		snprintf(ev, sizeof(ev), "%s: ascend_netdetect: %s", host_of(st->m, i),
		         json_string_value(json_object_get(nd, "error")));
		diagnose_note(st, "ascend-probe-incomplete", SEV_WARNING, "", i,
		              "the NPU probe is incomplete on %N", "", ev);
	}
}

/* Links, net_health and the netdetect results of node i. */
static void check_links(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *d, *r;
	char ev[EV];
	size_t k;

	json_array_foreach(devices_of(n), k, d)
	{
		const char *link = json_string_value(json_object_get(d, "link"));
		const char *h = json_string_value(json_object_get(d, "net_health"));
		json_int_t id = json_integer_value(json_object_get(d, "id"));

		if (link && strcmp(link, "UP") != 0) {
			snprintf(ev, sizeof(ev), "%s: device %lld: link status %s",
			         host_of(st->m, i), (long long)id, link);
			diagnose_note(st, "ascend-link-down", SEV_ERROR, "", i,
			              "a device link is down on %N",
			              "Check the device's optical module and cable and the switch "
			              "port (hccn_tool -i N -lldp -g names it); HCCL cannot use a "
			              "device whose link is down.",
			              ev);
		}
		/* "Init": no detect address set yet; netdetect below answers */
		if (h && strcmp(h, "Success") != 0 && strcmp(h, "Init") != 0) {
			snprintf(ev, sizeof(ev), "%s: device %lld: net health status %s",
			         host_of(st->m, i), (long long)id, h);
			diagnose_note(
			    st, "ascend-net-health", SEV_ERROR, "", i,
			    "a device's network health is not success on %N",
			    "Check the device's address, link and gateway (hccn_tool -i N "
			    "-ip -g, -link -g, -gateway -g) and the peer's.",
			    ev);
		}
	}
	json_array_foreach(json_object_get(json_object_get(n->ascend, "netdetect"), "results"), k,
	                   r)
	{
		const char *h = json_string_value(json_object_get(r, "health"));

		if (!h || strcmp(h, "Success") == 0)
			continue;
		snprintf(ev, sizeof(ev), "%s: device %lld toward %s: net health status %s",
		         host_of(st->m, i),
		         (long long)json_integer_value(json_object_get(r, "device")),
		         json_string_value(json_object_get(r, "address")), h);
		diagnose_note(st, "ascend-net-health", SEV_ERROR, "", i,
		              "a device's network health is not success on %N", "", ev);
	}
}

/* TLS: every device of the cluster must agree. */
static void check_tls(struct dstate *st)
{
	size_t on = 0, off = 0;
	char *list[2] = {NULL, NULL};

	for (size_t i = 0; i < st->m->nnodes; i++) {
		json_t *d;
		size_t k;

		json_array_foreach(devices_of(&st->m->nodes[i]), k, d)
		{
			json_t *t = json_object_get(d, "tls");
			int v;

			if (!json_is_integer(t))
				continue;
			v = json_integer_value(t) ? 1 : 0;
			*(v ? &on : &off) += 1;
			cd_strcatf(&list[v], "%s%s:%lld", list[v] ? ", " : "", host_of(st->m, i),
			           (long long)json_integer_value(json_object_get(d, "id")));
		}
	}
	if (on && off) {
		char ev[EV * 2];

		for (size_t i = 0; i < st->m->nnodes; i++)
			if (json_array_size(devices_of(&st->m->nodes[i])))
				diagnose_note(
				    st, "ascend-tls-mismatch", SEV_ERROR, "", i,
				    "TLS is enabled on some devices and disabled on others",
				    "Set one TLS switch on every device (hccn_tool -i N -tls -s "
				    "enable 0|1) and restart the job: HCCL fails to link devices "
				    "whose TLS settings differ.",
				    "");
		snprintf(ev, sizeof(ev), "tls switch 1 (enabled) on %zu: %s", on, list[1]);
		diagnose_note(st, "ascend-tls-mismatch", SEV_ERROR, "", SIZE_MAX, "", "", ev);
		snprintf(ev, sizeof(ev), "tls switch 0 (disabled) on %zu: %s", off, list[0]);
		diagnose_note(st, "ascend-tls-mismatch", SEV_ERROR, "", SIZE_MAX, "", "", ev);
	}
	free(list[0]);
	free(list[1]);
}

struct plan_ctx {
	struct dstate *st;
	const size_t *node; /* server index -> node index */
};

static void on_break(void *arg, enum ascend_rule rule, size_t s1, size_t s2, const char *text)
{
	struct plan_ctx *p = arg;
	int dup = rule == ASCEND_RULE_DUPLICATE;
	const char *id = dup ? "ascend-duplicate-address" : "ascend-ip-plan";
	const char *msg = dup ? "the same device address is used twice (%N)"
	                      : "the device IP plan breaks the Ascend rules (%N)";
	const char *fix = dup ? "Give every device its own address (hccn_tool -i N -ip -s address "
	                        "A netmask M); HCCL links to whichever device answers."
	                      : "Re-plan the device addresses as docs/ascend.md shows (devices "
	                        "i and i+4 share a segment, 0-3 are in different ones, device i "
	                        "of every server in one segment) and set them with hccn_tool -i "
	                        "N -ip -s address A netmask M.";

	diagnose_note(p->st, id, SEV_ERROR, "", p->node[s1], msg, fix, text);
	diagnose_note(p->st, id, SEV_ERROR, "", p->node[s2], msg, fix, "");
}

static void check_plan(struct dstate *st)
{
	const struct netmodel *m = st->m;
	struct ascend_server_plan *plan = cd_calloc(m->nnodes + 1, sizeof(*plan));
	struct ascend_dev_addr *addrs;
	size_t *node = cd_calloc(m->nnodes + 1, sizeof(*node)), ns = 0, total = 0, used = 0;
	struct plan_ctx ctx = {.st = st, .node = node};

	for (size_t i = 0; i < m->nnodes; i++)
		total += json_array_size(devices_of(&m->nodes[i]));
	addrs = cd_calloc(total + 1, sizeof(*addrs));
	for (size_t i = 0; i < m->nnodes; i++) {
		json_t *devs = devices_of(&m->nodes[i]), *d;
		size_t k;

		if (!json_array_size(devs))
			continue;
		plan[ns] =
		    (struct ascend_server_plan){.server = m->nodes[i].host, .dev = &addrs[used]};
		json_array_foreach(devs, k, d)
		{
			struct ascend_dev_addr *a = &addrs[used++];
			json_t *ip = json_object_get(d, "ip");

			a->dev = (int)json_integer_value(json_object_get(d, "id"));
			snprintf(a->addr, sizeof(a->addr), "%s",
			         json_string_value(json_object_get(ip, "address"))
			             ? json_string_value(json_object_get(ip, "address"))
			             : "");
			snprintf(a->mask, sizeof(a->mask), "%s",
			         json_string_value(json_object_get(ip, "netmask"))
			             ? json_string_value(json_object_get(ip, "netmask"))
			             : "");
			plan[ns].n++;
		}
		node[ns++] = i;
	}
	if (ns)
		ascend_plan_check(plan, ns, on_break, &ctx);
	free(addrs);
	free(plan);
	free(node);
}

/* The longest common prefix of the Ascend nodes' data interfaces. */
static void ifname_pattern(const struct dstate *st, char *out, size_t len, int *exact)
{
	size_t n = 0, first = SIZE_MAX;

	out[0] = '\0';
	*exact = 1;
	for (size_t i = 0; i < st->m->nnodes; i++) {
		const char *name = st->d->pred[i].data_iface;

		if (!st->m->nodes[i].ascend)
			continue;
		if (!name[0]) {
			out[0] = '\0';
			return;
		}
		if (first == SIZE_MAX) {
			first = i;
			snprintf(out, len, "%s", name);
			n = strlen(out);
			continue;
		}
		if (strcmp(out, name) != 0)
			*exact = 0;
		for (size_t c = 0; c < n; c++)
			if (out[c] != name[c]) {
				n = c;
				break;
			}
		out[n] = '\0';
	}
}

/* HCCL_IF_IP, HCCL_SOCKET_IFNAME, HCCL_CONNECT_TIMEOUT, MASTER_ADDR/PORT and
 * the launch line per node: one info finding, one evidence line each. */
static void suggest(struct dstate *st, size_t nasc)
{
	const struct netmodel *m = st->m;
	const char *master = m->master < m->nnodes ? st->d->pred[m->master].data_addr : "";
	char pattern[NM_NAME], ev[EV];
	int exact, timeout = nasc <= 32 ? 120 : 120 + 2 * (int)(nasc - 32);
	size_t rank = 0;

	ifname_pattern(st, pattern, sizeof(pattern), &exact);
	if (pattern[0])
		snprintf(ev, sizeof(ev), "every node: export HCCL_SOCKET_IFNAME=%s%s", pattern,
		         exact ? ""
		               : " (a prefix: HCCL matches interface names that start with it)");
	else
		snprintf(ev, sizeof(ev),
		         "every node: no one HCCL_SOCKET_IFNAME fits; set HCCL_IF_IP");
	diagnose_note(st, "ascend-hccl-settings", SEV_INFO, "", SIZE_MAX,
	              "HCCL settings verified for the Ascend nodes",
	              "Export these in the job's environment on each node. Keep the firewall on: "
	              "allow only MASTER_PORT and HCCL's host ports (HCCL_IF_BASE_PORT, 60000 by "
	              "default, one per device) from the other servers (clusterdoc fix's "
	              "firewall fixer does exactly that), or pass --backend hccl to clusterdoc "
	              "run or mnist, which sets these.",
	              ev);
	snprintf(ev, sizeof(ev), "every node: export HCCL_CONNECT_TIMEOUT=%d (%zu servers)",
	         timeout, nasc);
	diagnose_note(st, "ascend-hccl-settings", SEV_INFO, "", SIZE_MAX, "", "", ev);
	for (size_t i = 0; i < m->nnodes; i++) {
		const char *a = st->d->pred[i].data_addr;
		size_t npus = json_array_size(json_object_get(m->nodes[i].ascend, "npus"));

		if (!m->nodes[i].ascend)
			continue;
		if (!a[0] || !master[0]) {
			snprintf(ev, sizeof(ev), "%s: no verified host data address: no HCCL_IF_IP",
			         m->nodes[i].host);
		} else {
			snprintf(
			    ev, sizeof(ev),
			    "%s: HCCL_IF_IP=%s MASTER_ADDR=%s MASTER_PORT=%d torchrun --nnodes=%zu "
			    "--node_rank=%zu --nproc_per_node=%zu --master_addr=%s "
			    "--master_port=%d main.py",
			    m->nodes[i].host, a, master, m->master_port, nasc, rank, npus, master,
			    m->master_port);
		}
		rank++;
		diagnose_note(st, "ascend-hccl-settings", SEV_INFO, "", i, "", "", ev);
	}
}

void diagnose_check_ascend(struct dstate *st)
{
	size_t nasc = 0;

	for (size_t i = 0; i < st->m->nnodes; i++) {
		if (!st->m->nodes[i].ascend)
			continue;
		nasc++;
		check_incomplete(st, i);
		check_links(st, i);
	}
	if (!nasc)
		return;
	check_tls(st);
	check_plan(st);
	suggest(st, nasc);
}
