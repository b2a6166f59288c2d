/* SPDX-License-Identifier: MIT */
/*
 * jobplan.c - the one plan of a job (jobplan.h): built from a check or from
 * the probes, read by every flow that prints or starts a job.
 */
#include "jobplan.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A bounded copy: a value over its field is cut, never overflows it. */
static void copy_value(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

struct job_plan *job_plan_new(const char *const *hosts, size_t n, size_t master)
{
	struct job_plan *p = cd_calloc(1, sizeof(*p));

	p->n = n;
	p->nodes = cd_calloc(n ? n : 1, sizeof(*p->nodes));
	p->master = master < n ? master : 0;
	p->time = (long long)time(NULL);
	for (size_t i = 0; i < n; i++)
		copy_value(p->nodes[i].host, sizeof(p->nodes[i].host), hosts[i]);
	return p;
}

struct job_plan *job_plan_from_check(const struct netmodel *m, const struct diagnosis *d, int port,
                                     const char *iface)
{
	const char **hosts = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*hosts));
	const struct suggestions *s = &d->sugg;
	struct job_plan *p;

	for (size_t i = 0; i < m->nnodes; i++)
		hosts[i] = m->nodes[i].host;
	p = job_plan_new(hosts, m->nnodes, m->master);
	free(hosts);
	p->proved = m->matrix_done;
	p->port_asked = port;
	p->port_tried = m->master_port;
	copy_value(p->iface_asked, sizeof(p->iface_asked), iface);
	for (size_t i = 0; i < m->nnodes && i < d->nnodes; i++) {
		struct job_plan_node *n = &p->nodes[i];

		n->checked = nm_node_complete(&m->nodes[i]);
		copy_value(n->nccl_ifname, sizeof(n->nccl_ifname),
		           s->nccl_ifname_per_node ? s->nccl_ifname_per_node[i] : NULL);
		if (n->nccl_ifname[0])
			copy_value(n->nccl_family, sizeof(n->nccl_family), diagnose_sugg_family(s));
		copy_value(n->gloo_ifname, sizeof(n->gloo_ifname),
		           s->gloo_ifname_per_node ? s->gloo_ifname_per_node[i] : NULL);
		n->proved = n->nccl_ifname[0] || n->gloo_ifname[0];
		if (s->ib.hca_per_node)
			copy_value(n->nccl_ib_hca, sizeof(n->nccl_ib_hca), s->ib.hca_per_node[i]);
		if (s->ib.gid_per_node && s->ib.gid_per_node[i] >= 0)
			snprintf(n->nccl_ib_gid_index, sizeof(n->nccl_ib_gid_index), "%d",
			         s->ib.gid_per_node[i]);
		/* the address the check chose for the node: proved with it */
		if (n->proved && d->pred[i].data_iface[0]) {
			copy_value(n->ifname, sizeof(n->ifname), d->pred[i].data_iface);
			copy_value(n->addr, sizeof(n->addr), d->pred[i].data_addr);
		}
	}
	copy_value(p->master_addr, sizeof(p->master_addr), s->master_addr);
	p->master_port = s->master_port;
	p->master_port_proved = s->master_port != 0;
	if (s->notes)
		p->notes = cd_strdup(s->notes);
	p->findings = cd_calloc(d->nfindings ? d->nfindings : 1, sizeof(*p->findings));
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];
		struct job_plan_finding *g = &p->findings[p->nfindings++];

		copy_value(g->id, sizeof(g->id), f->id);
		g->severity = f->severity;
		g->message = cd_strdup(f->message ? f->message : "");
		g->evidence = cd_strdup(f->evidence ? f->evidence : "");
		g->nodes = cd_calloc(f->nnodes ? f->nnodes : 1, sizeof(*g->nodes));
		memcpy(g->nodes, f->nodes, f->nnodes * sizeof(*g->nodes));
		g->nnodes = f->nnodes;
	}
	return p;
}

void job_plan_free(struct job_plan *p)
{
	if (!p)
		return;
	for (size_t k = 0; k < p->nfindings; k++) {
		free(p->findings[k].message);
		free(p->findings[k].evidence);
		free(p->findings[k].nodes);
	}
	free(p->findings);
	free(p->nodes);
	free(p->notes);
	free(p);
}

int job_plan_needs_pick(const struct job_plan *p, size_t i, const char *iface)
{
	const struct job_plan_node *n = &p->nodes[i];

	return !n->ifname[0] || (iface && strcmp(iface, n->ifname) != 0);
}

void job_plan_take_pick(struct job_plan *p, size_t i, const char *ifname, const char *addr,
                        const char *rule)
{
	struct job_plan_node *n = &p->nodes[i];

	copy_value(n->ifname, sizeof(n->ifname), ifname);
	copy_value(n->addr, sizeof(n->addr), addr);
	/* Gloo takes exact names; NCCL takes prefixes, so "=" pins the one
	 * interface (eth1 must not also mean eth10). */
	copy_value(n->gloo_ifname, sizeof(n->gloo_ifname), ifname);
	snprintf(n->nccl_ifname, sizeof(n->nccl_ifname), "=%.*s", NM_NAME, ifname);
	copy_value(n->nccl_family, sizeof(n->nccl_family), strchr(addr, ':') ? "AF_INET6" : NULL);
	n->proved = 0;
	cd_strcatf(&p->notes, "%s: %s %s (%s): not proved by a check\n", n->host, ifname, addr,
	           rule && rule[0] ? rule : "NCCL's pick");
	if (i == p->master && p->master_addr[0] && !p->master_port_proved)
		p->master_addr[0] = '\0';
}

struct job_plan *job_plan_copy(const struct job_plan *p)
{
	char err[CD_ERRLEN];
	json_t *j = job_plan_to_json(p);
	struct job_plan *c = job_plan_from_json(j, err, sizeof(err));

	json_decref(j);
	if (!c)
		cd_fatal("job_plan_copy: %s", err);
	return c;
}

void job_plan_use_port(struct job_plan *p, int port)
{
	if (!port || port == p->master_port)
		return;
	p->master_port = port;
	p->master_port_proved = 0;
}

void job_plan_default_master(struct job_plan *p, int port)
{
	if (!p->master_addr[0] && p->n)
		copy_value(p->master_addr, sizeof(p->master_addr), p->nodes[p->master].addr);
	if (!p->master_port)
		p->master_port = port;
}

static int var_add(struct job_var *v, int k, const char *name, const char *value)
{
	if (!value || !value[0])
		return k;
	v[k].name = name;
	copy_value(v[k].value, sizeof(v[k].value), value);
	return k + 1;
}

int job_plan_vars(const struct job_plan *p, size_t i, struct job_var vars[JOB_PLAN_VARS])
{
	const struct job_plan_node *n = &p->nodes[i];
	char port[16] = "";
	int k = 0;

	if (p->master_port)
		snprintf(port, sizeof(port), "%d", p->master_port);
	k = var_add(vars, k, "NCCL_SOCKET_IFNAME", n->nccl_ifname);
	k = var_add(vars, k, "NCCL_SOCKET_FAMILY", n->nccl_family);
	k = var_add(vars, k, "GLOO_SOCKET_IFNAME", n->gloo_ifname);
	k = var_add(vars, k, "NCCL_IB_HCA", n->nccl_ib_hca);
	k = var_add(vars, k, "NCCL_IB_GID_INDEX", n->nccl_ib_gid_index);
	k = var_add(vars, k, "MASTER_ADDR", p->master_addr);
	k = var_add(vars, k, "MASTER_PORT", port);
	return k;
}

void job_plan_env(const struct job_plan *p, size_t i, json_t *env)
{
	struct job_var v[JOB_PLAN_VARS];
	int k = job_plan_vars(p, i, v);

	for (int j = 0; j < k; j++)
		json_object_set_new(env, v[j].name, json_string(v[j].value));
}

int job_plan_nccl_env(const struct job_plan *p, size_t i, json_t *env)
{
	struct job_var v[JOB_PLAN_VARS];
	int k = job_plan_vars(p, i, v), set = 0;

	for (int j = 0; j < k; j++) {
		if (strncmp(v[j].name, "NCCL_", 5) != 0)
			continue;
		json_object_set_new(env, v[j].name, json_string(v[j].value));
		set++;
	}
	return set;
}

int job_plan_sets(const struct job_plan *p, size_t i, const char *name)
{
	struct job_var v[JOB_PLAN_VARS];
	int k = job_plan_vars(p, i, v);

	for (int j = 0; j < k; j++)
		if (strcmp(v[j].name, name) == 0)
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- JSON */

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

json_t *job_plan_to_json(const struct job_plan *p)
{
	json_t *nodes = json_array(), *findings = json_array();

	for (size_t i = 0; i < p->n; i++) {
		const struct job_plan_node *n = &p->nodes[i];
		json_t *o;

		o = json_pack(
		    "{sssosososbsbsososo}", "host", n->host, "interface", str_or_null(n->ifname),
		    "address", str_or_null(n->addr), "family",
		    n->addr[0] ? json_string(strchr(n->addr, ':') ? "inet6" : "inet") : json_null(),
		    "proved", n->proved, "checked", n->checked, "NCCL_SOCKET_IFNAME",
		    str_or_null(n->nccl_ifname), "NCCL_SOCKET_FAMILY", str_or_null(n->nccl_family),
		    "GLOO_SOCKET_IFNAME", str_or_null(n->gloo_ifname));
		/* only where set: a plan without RDMA reads as before */
		if (n->nccl_ib_hca[0])
			json_object_set_new(o, "NCCL_IB_HCA", json_string(n->nccl_ib_hca));
		if (n->nccl_ib_gid_index[0])
			json_object_set_new(o, "NCCL_IB_GID_INDEX",
			                    json_string(n->nccl_ib_gid_index));
		json_array_append_new(nodes, o);
	}
	for (size_t k = 0; k < p->nfindings; k++) {
		const struct job_plan_finding *f = &p->findings[k];
		json_t *idx = json_array();

		for (size_t j = 0; j < f->nnodes; j++)
			json_array_append_new(idx, json_integer((json_int_t)f->nodes[j]));
		json_array_append_new(
		    findings, json_pack("{ssssssssso}", "id", f->id, "severity",
		                        severity_name(f->severity), "message", f->message,
		                        "evidence", f->evidence ? f->evidence : "", "nodes", idx));
	}
	return json_pack("{sisIsbsisisosssisisbsosososo}", "version", JOB_PLAN_VERSION, "time",
	                 (json_int_t)p->time, "proved", p->proved, "port_asked", p->port_asked,
	                 "port_tried", p->port_tried, "iface_asked", str_or_null(p->iface_asked),
	                 "master", p->nodes ? p->nodes[p->master].host : "", "master_index",
	                 (int)p->master, "master_port", p->master_port, "master_port_proved",
	                 p->master_port_proved, "master_addr", str_or_null(p->master_addr), "nodes",
	                 nodes, "findings", findings, "notes", str_or_null(p->notes));
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int severity_of(const char *name)
{
	return strcmp(name, "error") == 0     ? SEV_ERROR
	       : strcmp(name, "warning") == 0 ? SEV_WARNING
	                                      : SEV_INFO;
}

struct job_plan *job_plan_from_json(json_t *j, char *err, size_t errlen)
{
	json_t *nodes = json_object_get(j, "nodes"), *findings = json_object_get(j, "findings");
	json_int_t version = json_integer_value(json_object_get(j, "version"));
	const char **hosts;
	struct job_plan *p;
	size_t i, k;
	json_t *x;

	if (version != JOB_PLAN_VERSION) {
		snprintf(err, errlen,
		         "it was saved by another version of clusterdoc (plan version %lld, this "
		         "one reads %d)",
		         (long long)version, JOB_PLAN_VERSION);
		return NULL;
	}
	if (!json_is_array(nodes) || !json_is_array(findings) || !json_array_size(nodes)) {
		snprintf(err, errlen, "it has no nodes or no findings: not a clusterdoc plan");
		return NULL;
	}
	hosts = cd_calloc(json_array_size(nodes), sizeof(*hosts));
	json_array_foreach(nodes, i, x) hosts[i] = jstr(x, "host");
	p = job_plan_new(hosts, json_array_size(nodes),
	                 (size_t)json_integer_value(json_object_get(j, "master_index")));
	free(hosts);
	p->time = json_integer_value(json_object_get(j, "time"));
	p->proved = json_is_true(json_object_get(j, "proved"));
	p->port_asked = (int)json_integer_value(json_object_get(j, "port_asked"));
	p->port_tried = (int)json_integer_value(json_object_get(j, "port_tried"));
	copy_value(p->iface_asked, sizeof(p->iface_asked), jstr(j, "iface_asked"));
	copy_value(p->master_addr, sizeof(p->master_addr), jstr(j, "master_addr"));
	p->master_port = (int)json_integer_value(json_object_get(j, "master_port"));
	p->master_port_proved = json_is_true(json_object_get(j, "master_port_proved"));
	if (json_string_value(json_object_get(j, "notes")))
		p->notes = cd_strdup(jstr(j, "notes"));
	json_array_foreach(nodes, i, x)
	{
		struct job_plan_node *n = &p->nodes[i];

		copy_value(n->ifname, sizeof(n->ifname), jstr(x, "interface"));
		copy_value(n->addr, sizeof(n->addr), jstr(x, "address"));
		n->proved = json_is_true(json_object_get(x, "proved"));
		n->checked = json_is_true(json_object_get(x, "checked"));
		copy_value(n->nccl_ifname, sizeof(n->nccl_ifname), jstr(x, "NCCL_SOCKET_IFNAME"));
		copy_value(n->nccl_family, sizeof(n->nccl_family), jstr(x, "NCCL_SOCKET_FAMILY"));
		copy_value(n->gloo_ifname, sizeof(n->gloo_ifname), jstr(x, "GLOO_SOCKET_IFNAME"));
		copy_value(n->nccl_ib_hca, sizeof(n->nccl_ib_hca), jstr(x, "NCCL_IB_HCA"));
		copy_value(n->nccl_ib_gid_index, sizeof(n->nccl_ib_gid_index),
		           jstr(x, "NCCL_IB_GID_INDEX"));
	}
	p->findings = cd_calloc(json_array_size(findings) + 1, sizeof(*p->findings));
	json_array_foreach(findings, k, x)
	{
		struct job_plan_finding *f = &p->findings[p->nfindings++];
		json_t *idx = json_object_get(x, "nodes"), *v;
		size_t a;

		copy_value(f->id, sizeof(f->id), jstr(x, "id"));
		f->severity = severity_of(jstr(x, "severity"));
		f->message = cd_strdup(jstr(x, "message"));
		f->evidence = cd_strdup(jstr(x, "evidence")); /* "" in a plan saved before */
		f->nodes = cd_calloc(json_array_size(idx) + 1, sizeof(*f->nodes));
		json_array_foreach(idx, a, v)
		{
			json_int_t at = json_integer_value(v);

			if (at >= 0 && (size_t)at < p->n)
				f->nodes[f->nnodes++] = (size_t)at;
		}
	}
	return p;
}

int job_plan_key_differs(const struct job_plan *p, const char *const *hosts, size_t n, int port,
                         const char *iface, char *why, size_t len)
{
	int same = p->n == n;

	for (size_t i = 0; same && i < n; i++)
		same = strcmp(p->nodes[i].host, hosts[i]) == 0;
	if (!same) {
		snprintf(why, len, "it was made for other nodes or another master");
		return 1;
	}
	if (port && port != p->port_asked) {
		if (p->port_asked)
			snprintf(why, len, "it was made for --master-port %d, not %d",
			         p->port_asked, port);
		else
			snprintf(why, len,
			         "it was made without --master-port (MASTER_PORT %d), not for %d",
			         p->master_port, port);
		return 1;
	}
	if (!port && p->port_asked) {
		snprintf(why, len, "it was made for --master-port %d", p->port_asked);
		return 1;
	}
	if (strcmp(iface ? iface : "", p->iface_asked) != 0) {
		snprintf(why, len, "it was made for %s%s, not %s%s",
		         p->iface_asked[0] ? "--iface " : "no --iface", p->iface_asked,
		         iface ? "--iface " : "no --iface", iface ? iface : "");
		return 1;
	}
	return 0;
}
