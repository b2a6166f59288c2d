/* SPDX-License-Identifier: MIT */
/*
 * netmodel.c - the cluster's network model: parse the agents' JSON answers
 * into plain structs, once, for the predictors and the diagnosis.
 *
 * Everything read from an agent is untrusted: strings are bounded copies,
 * numbers are range-checked, entries of the wrong shape are skipped.
 */
#include "netmodel.h"
#include "probes/rdma_matrix.h"
#include "fwrules.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Bounded copy of a JSON string member; "" when missing or not a string. */
static void copy_str(char *dst, size_t len, json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	snprintf(dst, len, "%s", s ? s : "");
}

static long long get_int(json_t *obj, const char *key, long long dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static int family_of(json_t *obj)
{
	const char *f = json_string_value(json_object_get(obj, "family"));

	if (f && strcmp(f, "inet") == 0)
		return AF_INET;
	if (f && strcmp(f, "inet6") == 0)
		return AF_INET6;
	return 0;
}

struct netmodel *netmodel_new(const char *const *hosts, size_t n)
{
	struct netmodel *m = cd_calloc(1, sizeof(*m));

	m->nodes = cd_calloc(n ? n : 1, sizeof(*m->nodes));
	m->nnodes = n;
	m->master_port = 29500;
	for (size_t i = 0; i < n; i++) {
		snprintf(m->nodes[i].host, sizeof(m->nodes[i].host), "%s", hosts[i]);
		m->nodes[i].shm_bytes = -1;
		m->nodes[i].neigh_thresh3[0] = m->nodes[i].neigh_thresh3[1] = -1;
		m->nodes[i].neigh_fulls = -1;
	}
	return m;
}

static void node_fini(struct nm_node *n)
{
	free(n->ifaces);
	free(n->addrs);
	free(n->hostaddrs);
	for (size_t i = 0; i < n->nhosts_lines; i++)
		free(n->hosts_lines[i]);
	free(n->hosts_lines);
	for (size_t i = 0; i < n->nvars; i++)
		free(n->vars[i].value);
	free(n->vars);
	free(n->routes);
	free(n->fwrules);
	json_decref(n->ascend);
	json_decref(n->nvidia);
	json_decref(n->rdma);
}

void netmodel_free(struct netmodel *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nnodes; i++)
		node_fini(&m->nodes[i]);
	free(m->nodes);
	free(m->listeners);
	free(m->attempts);
	free(m);
}

static void parse_ifaces(struct nm_node *n, json_t *arr)
{
	size_t i;
	json_t *v;

	n->ifaces = cd_calloc(json_array_size(arr) + 1, sizeof(*n->ifaces));
	json_array_foreach(arr, i, v)
	{
		struct nm_iface *f = &n->ifaces[n->nifaces];
		long long speed = get_int(v, "speed_mbps", -1);

		copy_str(f->name, sizeof(f->name), v, "name");
		if (!f->name[0])
			continue;
		f->index = (int)get_int(v, "index", 0);
		f->up = json_is_true(json_object_get(v, "up"));
		f->running = json_is_true(json_object_get(v, "running"));
		f->loopback = json_is_true(json_object_get(v, "loopback"));
		copy_str(f->operstate, sizeof(f->operstate), v, "operstate");
		f->mtu = (int)get_int(v, "mtu", 0);
		f->speed_mbps = speed >= 0 && speed < 100000000 ? (int)speed : -1;
		copy_str(f->kind, sizeof(f->kind), v, "kind");
		copy_str(f->driver, sizeof(f->driver), v, "driver");
		f->rp_filter = (int)get_int(v, "rp_filter", -1);
		f->arp_ignore = (int)get_int(v, "arp_ignore", -1);
		f->arp_announce = (int)get_int(v, "arp_announce", -1);
		copy_str(f->master, sizeof(f->master), v, "master");
		n->nifaces++;
	}
}

static void parse_addrs(struct nm_node *n, json_t *arr)
{
	size_t i;
	json_t *v;

	n->addrs = cd_calloc(json_array_size(arr) + 1, sizeof(*n->addrs));
	json_array_foreach(arr, i, v)
	{
		struct nm_addr *a = &n->addrs[n->naddrs];
		long long prefix = get_int(v, "prefix", -1);

		copy_str(a->ifname, sizeof(a->ifname), v, "ifname");
		copy_str(a->addr, sizeof(a->addr), v, "address");
		a->family = family_of(v);
		if (!a->ifname[0] || !a->addr[0] || !a->family)
			continue;
		a->prefix = prefix >= 0 && prefix <= 128 ? (int)prefix : 0;
		a->scope_id = (unsigned)get_int(v, "scope_id", 0);
		copy_str(a->scope, sizeof(a->scope), v, "scope");
		n->naddrs++;
	}
}

static void parse_hostaddrs(struct nm_node *n, json_t *probe)
{
	json_t *arr = json_object_get(probe, "hostname_addrs"), *v;
	size_t i;

	copy_str(n->hostname_error, sizeof(n->hostname_error), probe, "hostname_error");
	n->hostaddrs = cd_calloc(json_array_size(arr) + 1, sizeof(*n->hostaddrs));
	json_array_foreach(arr, i, v)
	{
		struct nm_hostaddr *h = &n->hostaddrs[n->nhostaddrs];

		copy_str(h->addr, sizeof(h->addr), v, "address");
		h->family = family_of(v);
		h->bindable = json_is_true(json_object_get(v, "bindable"));
		if (h->addr[0] && h->family)
			n->nhostaddrs++;
	}
	arr = json_object_get(probe, "hosts_lines");
	n->hosts_lines = cd_calloc(json_array_size(arr) + 1, sizeof(char *));
	json_array_foreach(arr, i, v)
	{
		if (json_is_string(v))
			n->hosts_lines[n->nhosts_lines++] = cd_strdup(json_string_value(v));
	}
}

static int wanted_var(const char *name)
{
	return strncmp(name, "NCCL_", 5) == 0 || strncmp(name, "GLOO_", 5) == 0 ||
	       strncmp(name, "MASTER_", 7) == 0 || strncmp(name, "TORCH_", 6) == 0;
}

/* Add name=value unless the name is already set (the first source wins). */
static void add_var(struct nm_node *n, const char *name, const char *value, const char *source)
{
	if (!wanted_var(name) || strlen(name) >= sizeof(n->vars[0].name) || nm_var_get(n, name))
		return;
	n->vars = cd_realloc(n->vars, (n->nvars + 1) * sizeof(*n->vars));
	snprintf(n->vars[n->nvars].name, sizeof(n->vars[0].name), "%s", name);
	snprintf(n->vars[n->nvars].source, sizeof(n->vars[0].source), "%s", source);
	n->vars[n->nvars].value = cd_strdup(value);
	n->nvars++;
}

/* NCCL's precedence: the process environment, then the conf files in the
 * order the agent listed them ($NCCL_CONF_FILE or ~/.nccl.conf, then
 * /etc/nccl.conf). Only NCCL_ keys count from conf files. */
static void parse_vars(struct nm_node *n, json_t *probe, json_t *facts)
{
	json_t *env = json_object_get(probe, "env"), *conf, *file, *v;
	const char *key;
	size_t i;

	if (!json_is_object(env))
		env = json_object_get(facts, "env");
	json_object_foreach(env, key, v)
	{
		if (json_is_string(v))
			add_var(n, key, json_string_value(v), "environment");
	}
	conf = json_object_get(probe, "nccl_conf");
	json_array_foreach(conf, i, file)
	{
		const char *path = json_string_value(json_object_get(file, "path"));

		json_object_foreach(json_object_get(file, "vars"), key, v)
		{
			if (json_is_string(v) && strncmp(key, "NCCL_", 5) == 0)
				add_var(n, key, json_string_value(v), path ? path : "nccl.conf");
		}
	}
}

static void parse_facts(struct nm_node *n, json_t *facts)
{
	json_t *torch, *nccl, *python, *gpus, *errors, *perr, *found;
	const char *tv = NULL;

	if (!facts)
		return;
	if (!n->hostname[0])
		copy_str(n->hostname, sizeof(n->hostname), facts, "hostname");
	copy_str(n->os, sizeof(n->os), facts, "os");
	copy_str(n->os_short, sizeof(n->os_short), facts, "os_short");
	if (!n->os_short[0])
		snprintf(n->os_short, sizeof(n->os_short), "%s", n->os);
	copy_str(n->kernel, sizeof(n->kernel), facts, "kernel");
	python = json_object_get(facts, "python");
	copy_str(n->python_version, sizeof(n->python_version), python, "version");
	copy_str(n->python_path, sizeof(n->python_path), python, "path");
	found = json_object_get(facts, "python_candidates");
	n->python_found_count = (int)json_array_size(found);
	copy_str(n->python_found, sizeof(n->python_found), json_array_get(found, 0), "path");
	copy_str(n->python_found_version, sizeof(n->python_found_version), json_array_get(found, 0),
	         "version");
	torch = json_object_get(facts, "torch");
	/* A python that did not answer (a timeout under load, a broken
	 * install) says nothing about torch: unknown, not missing. */
	errors = json_object_get(facts, "errors");
	perr = json_object_get(errors, "python");
	perr = perr ? perr : json_object_get(errors, "torch");
	if (json_is_string(perr))
		snprintf(n->python_error, sizeof(n->python_error), "%s", json_string_value(perr));
	n->torch_known = json_is_object(torch) || (json_is_null(torch) && !perr);
	copy_str(n->torch_version, sizeof(n->torch_version), torch, "version");
	/* The NCCL a PyTorch job loads is torch's own; the system one otherwise. */
	tv = json_string_value(json_object_get(torch, "nccl_version"));
	nccl = json_object_get(facts, "nccl");
	if (tv)
		snprintf(n->nccl_version, sizeof(n->nccl_version), "%s", tv);
	else
		copy_str(n->nccl_version, sizeof(n->nccl_version), nccl, "version");
	gpus = json_object_get(facts, "gpus");
	n->gpus = (int)json_array_size(gpus);
}

static void parse_rdma(struct nm_node *n, json_t *probe)
{
	static const char *const keys[] = {"rdma", "rdma_node"};

	n->rdma_ports = (int)json_array_size(json_object_get(probe, "rdma"));
	for (size_t k = 0; k < CD_ARRAY_LEN(keys); k++) {
		json_t *v = json_object_get(probe, keys[k]);

		if (!v)
			continue;
		if (!n->rdma)
			n->rdma = json_object();
		json_object_set(n->rdma, keys[k], v);
	}
}

/* A node whose facts list NPUs, or say npu-smi failed, is an Ascend node. */
static void ascend_from_facts(struct netmodel *m, size_t i, json_t *facts)
{
	json_t *npus = json_object_get(facts, "npus");
	json_t *err = json_object_get(json_object_get(facts, "errors"), "npus");

	if (json_array_size(npus) == 0 && !json_is_string(err))
		return;
	netmodel_set_ascend(m, i, "npus", npus ? npus : json_null());
	if (err)
		netmodel_set_ascend(m, i, "npus_error", err);
	if (json_object_get(facts, "ascend_env"))
		netmodel_set_ascend(m, i, "env", json_object_get(facts, "ascend_env"));
}

/* The NVIDIA GPU facts the findings read, kept as the agent sent them. */
static void nvidia_from_facts(struct nm_node *n, json_t *facts)
{
	static const char *const keys[] = {"gpus", "gpu_driver", "gpu_pci", "xid"};

	for (size_t k = 0; k < CD_ARRAY_LEN(keys); k++) {
		json_t *v = json_object_get(facts, keys[k]);

		if (!v)
			continue;
		if (!n->nvidia)
			n->nvidia = json_object();
		json_object_set(n->nvidia, keys[k], v);
	}
	if (n->nvidia && json_is_string(json_object_get(json_object_get(facts, "errors"), "gpus")))
		json_object_set(n->nvidia, "gpus_error",
		                json_object_get(json_object_get(facts, "errors"), "gpus"));
}

void netmodel_set_node(struct netmodel *m, size_t i, json_t *probe, json_t *facts)
{
	struct nm_node *n;
	json_t *range;

	if (i >= m->nnodes)
		return;
	n = &m->nodes[i];
	if (probe) {
		n->probed = 1;
		copy_str(n->hostname, sizeof(n->hostname), probe, "hostname");
		parse_ifaces(n, json_object_get(probe, "interfaces"));
		parse_addrs(n, json_object_get(probe, "addresses"));
		parse_hostaddrs(n, probe);
		range = json_object_get(probe, "port_range");
		if (json_array_size(range) == 2) {
			long long lo = json_integer_value(json_array_get(range, 0));
			long long hi = json_integer_value(json_array_get(range, 1));

			if (lo > 0 && hi >= lo && hi <= 65535) {
				n->port_lo = (int)lo;
				n->port_hi = (int)hi;
			}
		}
		n->shm_bytes = get_int(probe, "shm_bytes", -1);
		n->neigh_thresh3[0] =
		    get_int(json_object_get(probe, "neigh_gc_thresh3"), "inet", -1);
		n->neigh_thresh3[1] =
		    get_int(json_object_get(probe, "neigh_gc_thresh3"), "inet6", -1);
		parse_rdma(n, probe);
		fwrules_collect(json_object_get(probe, "firewall"), &n->fwrules, &n->nfwrules,
		                n->firewall_summary, sizeof(n->firewall_summary));
	}
	parse_vars(n, probe, facts);
	parse_facts(n, facts);
	ascend_from_facts(m, i, facts);
	nvidia_from_facts(n, facts);
}

void netmodel_set_nvidia(struct netmodel *m, size_t i, const char *key, json_t *v)
{
	struct nm_node *n = &m->nodes[i];

	if (!n->nvidia)
		n->nvidia = json_object();
	json_object_set(n->nvidia, key, v);
}

void netmodel_set_ascend(struct netmodel *m, size_t i, const char *key, json_t *v)
{
	struct nm_node *n;

	if (i >= m->nnodes || !v)
		return;
	n = &m->nodes[i];
	if (!n->ascend)
		n->ascend = json_object();
	json_object_set(n->ascend, key, v);
}

void netmodel_add_neigh_fulls(struct netmodel *m, size_t i, json_t *fulls)
{
	if (i >= m->nnodes || !json_is_integer(fulls) || json_integer_value(fulls) < 0)
		return;
	if (m->nodes[i].neigh_fulls < 0)
		m->nodes[i].neigh_fulls = 0;
	m->nodes[i].neigh_fulls += json_integer_value(fulls);
}

void netmodel_node_failed(struct netmodel *m, size_t i, const char *code, const char *msg)
{
	if (i >= m->nnodes)
		return;
	m->nodes[i].probed = 0;
	snprintf(m->nodes[i].error_code, sizeof(m->nodes[i].error_code), "%s",
	         code ? code : "failed");
	snprintf(m->nodes[i].error, sizeof(m->nodes[i].error), "%s", msg ? msg : "failed");
}

void netmodel_add_routes(struct netmodel *m, size_t i, json_t *routes)
{
	struct nm_node *n;
	size_t k;
	json_t *v;

	if (i >= m->nnodes)
		return;
	n = &m->nodes[i];
	n->routes =
	    cd_realloc(n->routes, (n->nroutes + json_array_size(routes) + 1) * sizeof(*n->routes));
	json_array_foreach(routes, k, v)
	{
		struct nm_route *r = &n->routes[n->nroutes];

		memset(r, 0, sizeof(*r));
		copy_str(r->to, sizeof(r->to), v, "to");
		copy_str(r->from, sizeof(r->from), v, "from");
		copy_str(r->dev, sizeof(r->dev), v, "dev");
		copy_str(r->src, sizeof(r->src), v, "src");
		copy_str(r->error, sizeof(r->error), v, "errno_name");
		if (!r->error[0] && json_object_get(v, "error"))
			snprintf(r->error, sizeof(r->error), "error");
		if (r->to[0])
			n->nroutes++;
	}
}

static struct nm_listener *add_listener(struct netmodel *m)
{
	m->listeners = cd_realloc(m->listeners, (m->nlisteners + 1) * sizeof(*m->listeners));
	memset(&m->listeners[m->nlisteners], 0, sizeof(*m->listeners));
	return &m->listeners[m->nlisteners++];
}

void netmodel_add_listeners(struct netmodel *m, size_t i, json_t *listen_result)
{
	json_t *v;
	size_t k;

	json_array_foreach(json_object_get(listen_result, "listeners"), k, v)
	{
		struct nm_listener *l = add_listener(m);
		long long port = get_int(v, "port", 0);

		l->node = i;
		copy_str(l->addr, sizeof(l->addr), v, "address");
		l->scope_id = (unsigned)get_int(v, "scope_id", 0);
		l->port = port > 0 && port <= 65535 ? (int)port : 0;
		copy_str(l->error, sizeof(l->error), v, "errno_name");
		l->pmtu_echo = json_is_true(json_object_get(v, "pmtu_echo"));
		if (!l->port && !l->error[0])
			snprintf(l->error, sizeof(l->error), "error");
	}
	json_array_foreach(json_object_get(listen_result, "fixed"), k, v)
	{
		struct nm_listener *l = add_listener(m);
		long long port = get_int(v, "port", 0);

		l->node = i;
		l->fixed_port = 1;
		l->port = port > 0 && port <= 65535 ? (int)port : 0;
		copy_str(l->error, sizeof(l->error), v, "errno_name");
		copy_str(l->held_by, sizeof(l->held_by), v, "held_by");
		if (!l->error[0] && json_object_get(v, "error"))
			snprintf(l->error, sizeof(l->error), "error");
	}
}

struct nm_attempt *netmodel_add_attempt(struct netmodel *m)
{
	struct nm_attempt *a;

	m->attempts = cd_realloc(m->attempts, (m->nattempts + 1) * sizeof(*m->attempts));
	a = &m->attempts[m->nattempts++];
	memset(a, 0, sizeof(*a));
	a->rtt_us = -1;
	a->pmtu = -1;
	snprintf(a->result, sizeof(a->result), "not-tested");
	return a;
}

void netmodel_attempt_set_bulk(struct nm_attempt *a, json_t *row)
{
	const char *bulk = json_string_value(json_object_get(row, "bulk"));

	/* "not-tried" is how the report writes an attempt without the proof */
	snprintf(a->bulk, sizeof(a->bulk), "%s",
	         bulk && strcmp(bulk, "not-tried") != 0 ? bulk : "");
	a->bulk_bytes = get_int(row, "bulk_bytes", 0);
	a->bulk_sent = get_int(row, "bulk_sent", 0);
	a->bulk_received = get_int(row, "bulk_received", 0);
	a->bulk_ms = get_int(row, "bulk_ms", 0);
	a->pmtu = json_is_integer(json_object_get(row, "pmtu")) ? (int)get_int(row, "pmtu", 0) : -1;
	a->pmtu_max = (int)get_int(row, "pmtu_max", 0);
}

/* Index of a node by the name it was given as, or -1. */
static long find_host(const struct netmodel *m, const char *host)
{
	for (size_t i = 0; host && i < m->nnodes; i++) {
		if (strcmp(m->nodes[i].host, host) == 0)
			return (long)i;
	}
	return -1;
}

static void load_matrix(struct netmodel *m, json_t *matrix)
{
	size_t k;
	json_t *v;

	json_array_foreach(matrix, k, v)
	{
		long from = find_host(m, json_string_value(json_object_get(v, "from")));
		long to = find_host(m, json_string_value(json_object_get(v, "to")));
		struct nm_attempt *a;
		json_t *rtt;

		if (from < 0 || to < 0)
			continue;
		a = netmodel_add_attempt(m);
		a->from = (size_t)from;
		a->to = (size_t)to;
		copy_str(a->addr, sizeof(a->addr), v, "address");
		a->scope_id = (unsigned)get_int(v, "scope_id", 0);
		a->port = (int)get_int(v, "port", 0);
		a->fixed_port = json_is_true(json_object_get(v, "fixed_port"));
		copy_str(a->result, sizeof(a->result), v, "result");
		copy_str(a->errno_name, sizeof(a->errno_name), v, "errno_name");
		rtt = json_object_get(v, "rtt_us");
		a->rtt_us = json_is_integer(rtt) ? json_integer_value(rtt) : -1;
		netmodel_attempt_set_bulk(a, v);
		rdma_matrix_set(a, v);
	}
	m->matrix_done =
	    json_array_size(matrix) > 0 || json_is_true(json_object_get(matrix, "done"));
}

struct netmodel *netmodel_load_json(json_t *fixture, char *err, size_t errlen)
{
	json_t *nodes = json_object_get(fixture, "nodes"), *v;
	const char **hosts;
	struct netmodel *m;
	size_t i;

	if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
		cd_errf(err, errlen, CD_ERR_PARSE, "fixture: \"nodes\" must be a non-empty array");
		return NULL;
	}
	hosts = cd_calloc(json_array_size(nodes), sizeof(*hosts));
	json_array_foreach(nodes, i, v)
	{
		hosts[i] = json_string_value(json_object_get(v, "host"));
		if (!hosts[i]) {
			free(hosts);
			cd_errf(err, errlen, CD_ERR_PARSE, "fixture: node %zu has no \"host\"", i);
			return NULL;
		}
	}
	m = netmodel_new(hosts, json_array_size(nodes));
	free(hosts);
	json_array_foreach(nodes, i, v)
	{
		const char *e = json_string_value(json_object_get(v, "error"));

		if (e) {
			netmodel_node_failed(m, i, "fixture", e);
			continue;
		}
		netmodel_set_node(m, i, json_object_get(v, "probe"), json_object_get(v, "facts"));
		netmodel_add_routes(m, i, json_object_get(v, "routes"));
		netmodel_add_neigh_fulls(m, i, json_object_get(v, "neigh_table_fulls"));
		netmodel_set_ascend(m, i, "probe", json_object_get(v, "ascend_probe"));
		netmodel_set_ascend(m, i, "netdetect", json_object_get(v, "ascend_netdetect"));
	}
	m->master = (size_t)get_int(fixture, "master", 0);
	if (m->master >= m->nnodes)
		m->master = 0;
	m->master_port = (int)get_int(fixture, "master_port", 29500);
	m->expect_gpus = (int)get_int(fixture, "expect_gpus", 0);
	json_array_foreach(json_object_get(fixture, "listeners"), i, v)
	{
		long node = find_host(m, json_string_value(json_object_get(v, "host")));
		json_t *one;

		if (node < 0)
			continue;
		one = json_pack(
		    "{s[O]}",
		    json_is_true(json_object_get(v, "fixed_port")) ? "fixed" : "listeners", v);
		netmodel_add_listeners(m, (size_t)node, one);
		json_decref(one);
	}
	load_matrix(m, json_object_get(fixture, "matrix"));
	if (json_is_true(json_object_get(fixture, "matrix_done")))
		m->matrix_done = 1;
	return m;
}

const struct nm_var *nm_var_get(const struct nm_node *n, const char *name)
{
	for (size_t i = 0; i < n->nvars; i++) {
		if (strcmp(n->vars[i].name, name) == 0)
			return &n->vars[i];
	}
	return NULL;
}

const struct nm_iface *nm_iface_find(const struct nm_node *n, const char *name)
{
	for (size_t i = 0; i < n->nifaces; i++) {
		if (strcmp(n->ifaces[i].name, name) == 0)
			return &n->ifaces[i];
	}
	return NULL;
}

int nm_node_complete(const struct nm_node *n)
{
	return n->probed && !n->error[0];
}

int nm_node_partial(const struct nm_node *n)
{
	return n->probed && n->error[0];
}

int nm_addr_is_loopback(const struct nm_addr *a)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, a->addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, a->addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

int nm_addr_is_link_local(const struct nm_addr *a)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, a->addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 16) == 0xa9fe; /* 169.254/16 */
	if (inet_pton(AF_INET6, a->addr, &a6) == 1)
		return IN6_IS_ADDR_LINKLOCAL(&a6);
	return 0;
}

void nm_addr_format(char *buf, size_t len, const char *addr, unsigned scope_id)
{
	if (scope_id)
		snprintf(buf, len, "%s%%%u", addr, scope_id);
	else
		snprintf(buf, len, "%s", addr);
}
