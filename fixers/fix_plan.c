/* SPDX-License-Identifier: MIT */
/*
 * fix_plan.c - the fixers' table and the planning driver (fix.h): which
 * fixers act on which node and in which order. The helpers the fixers make
 * their actions with are fix_action.c's.
 */
#include "fix.h"
#include "fix_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int selected(const struct fix_opts *o, const struct fixer *f);

const struct fixer fixer_table[] = {
    {.id = "ssh-key",
     .title = "the head's key in authorized_keys of nodes that refuse it, and their host keys",
     .by_default = 1,
     .findings = fix_sshkey_findings,
     .plan = fix_sshkey_plan,
     .login_stage = 1},
    {.id = "env",
     .title = "the verified interface variables in every login shell",
     .by_default = 1,
     .findings = fix_env_findings,
     .answers = fix_env_answers,
     .plan = fix_env_plan},
    {.id = "hosts",
     .title = "the hostname mapped to the data address in /etc/hosts",
     .by_default = 1,
     .findings = fix_hosts_findings,
     .plan = fix_hosts_plan},
    {.id = "firewall",
     .title = "TCP from the cluster's subnet allowed on the data interface",
     .by_default = 1,
     .findings = fix_firewall_findings,
     .plan = fix_firewall_plan,
     .reads_firewall = 1},
    {.id = "port-range",
     .title = "a narrower ip_local_port_range, and the firewall opens only it and MASTER_PORT",
     .by_default = 0,
     .findings = fix_ports_findings,
     .plan = fix_ports_plan,
     .narrows_ports = 1,
     .verify = fix_ports_verify},
};
const size_t fixer_table_len = CD_ARRAY_LEN(fixer_table);

const struct fixer *fixer_find(const char *id)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (strcmp(fixer_table[k].id, id) == 0)
			return &fixer_table[k];
	return NULL;
}

const struct fixer *fixer_login_stage(void)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].login_stage)
			return &fixer_table[k];
	return NULL;
}

int fixer_answers(const struct fixer *f, const char *id)
{
	for (const char *const *p = f->findings; p && *p; p++)
		if (strcmp(*p, id) == 0)
			return 1;
	return 0;
}

int fixer_answers_finding(const struct fixer *f, const struct finding *fd)
{
	return fixer_answers(f, fd->id) && (!f->answers || f->answers(fd));
}

size_t fix_fixers_for(const struct finding *fd, char *out, size_t len)
{
	size_t n = 0, off = 0;

	out[0] = 0;
	for (size_t k = 0; k < fixer_table_len; k++) {
		if (!fixer_answers_finding(&fixer_table[k], fd) || off >= len)
			continue;
		off +=
		    (size_t)snprintf(out + off, len - off, "%s%s", n ? "," : "", fixer_table[k].id);
		n++;
	}
	return n;
}

void fix_gather_inputs(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, struct fix_node_state *states, int *skip,
                       const char **fw_iface)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const char *ifname = NULL, *addr;

		fix_node_state_init(&states[i]);
		skip[i] = !m->nodes[i].probed;
		if (fix_wants_firewall(m, d, o, i) && fix_data_iface(m, d, i, &ifname, &addr) < 0)
			ifname = NULL;
		fw_iface[i] = ifname;
	}
}

int fixer_applies(const struct fixer *f, const struct diagnosis *d, size_t i)
{
	for (size_t k = 0; k < d->nfindings; k++) {
		if (finding_names(&d->findings[k], i) && fixer_answers_finding(f, &d->findings[k]))
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- driver */

int fix_selected(const struct fix_opts *o, const char *id)
{
	const struct fixer *f = fixer_find(id);

	return f && selected(o, f);
}

int fix_login_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].login_stage && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

int fix_ports_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (fixer_table[k].narrows_ports && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

int fix_checked_selected(const struct fix_opts *o)
{
	for (size_t k = 0; k < fixer_table_len; k++)
		if (!fixer_table[k].login_stage && selected(o, &fixer_table[k]))
			return 1;
	return 0;
}

void fix_port_range(const struct fix_opts *o, int *lo, int *hi)
{
	int given = o && o->port_lo && o->port_hi;

	*lo = given ? o->port_lo : 49152;
	*hi = given ? o->port_hi : 65535;
}

/* The fixers selected: --only's list, else the default ones. */
static int selected(const struct fix_opts *o, const struct fixer *f)
{
	const char *s, *e;

	if (!o || !o->only)
		return f->by_default;
	for (s = o->only; *s; s = *e ? e + 1 : e) {
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		if ((size_t)(e - s) == strlen(f->id) && strncmp(s, f->id, (size_t)(e - s)) == 0)
			return 1;
	}
	return 0;
}

int fix_check_only(const struct fix_opts *o, char *err, size_t errlen)
{
	const char *s, *e;

	if (!o || !o->only)
		return 0;
	for (s = o->only; *s; s = *e ? e + 1 : e) {
		char id[32];

		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		snprintf(id, sizeof(id), "%.*s", (int)(e - s), s);
		if (!fixer_find(id)) {
			char known[128] = "";

			for (size_t k = 0; k < fixer_table_len; k++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
				         "%s%s", k ? ", " : "", fixer_table[k].id);
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "--only: no fixer \"%s\" (known: %s)", id, known);
		}
	}
	return 0;
}

int fix_wants_firewall(const struct netmodel *m, const struct diagnosis *d,
                       const struct fix_opts *o, size_t i)
{
	if (i >= m->nnodes)
		return 0;
	for (size_t k = 0; k < fixer_table_len; k++) {
		const struct fixer *f = &fixer_table[k];

		if (f->reads_firewall && selected(o, f) && fixer_applies(f, d, i))
			return 1;
	}
	return 0;
}

struct fix_plan *fix_plan_build(const struct netmodel *m, const struct diagnosis *d,
                                const struct fix_node_state *states, const struct fix_opts *o,
                                const char *run, char *err, size_t errlen)
{
	struct fix_plan *p;
	struct job_plan *plan = NULL;
	struct fix_ctx c = {.m = m, .d = d, .states = states, .o = o, .run = run};

	if (fix_check_only(o, err, errlen) < 0)
		return NULL;
	p = cd_calloc(1, sizeof(*p));
	snprintf(p->run, sizeof(p->run), "%s", run);
	if (fix_ports_selected(o))
		fix_port_range(o, &p->port_lo, &p->port_hi);
	p->nnodes = m->nnodes;
	p->nodes = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*p->nodes));
	c.work = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*c.work));
	for (size_t i = 0; i < m->nnodes; i++)
		fix_node_state_copy_files(&c.work[i], &states[i]);
	if (d)
		c.plan = plan = job_plan_from_check(m, d, 0, NULL);

	for (size_t i = 0; i < m->nnodes; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		/* a node that refused the head's keys was gathered by password:
		 * only ssh-key can plan for it, the check knows nothing else */
		int login = o && o->login && o->login[i];

		if (!m->nodes[i].probed && !login) {
			fix_note(np, "not checked: %s", m->nodes[i].error);
			continue;
		}
		if (!states[i].gathered) {
			fix_note(np, "%s", states[i].error[0] ? states[i].error : "not reached");
			continue;
		}
		for (size_t k = 0; k < fixer_table_len; k++) {
			const struct fixer *f = &fixer_table[k];
			size_t before = np->nactions;

			if (!selected(o, f) || (!m->nodes[i].probed && !f->login_stage))
				continue;
			/* port-range style fixers act when asked; the others when
			 * one of their findings names the node */
			if (f->by_default && !fixer_applies(f, d, i))
				continue;
			np->wanted =
			    cd_realloc(np->wanted, (np->nwanted + 1) * sizeof(*np->wanted));
			np->wanted[np->nwanted++] = f->id;
			f->plan(&c, i, np);
			if (np->nactions > before) {
				np->fixers =
				    cd_realloc(np->fixers, (np->nfixers + 1) * sizeof(*np->fixers));
				np->fixers[np->nfixers++] = f->id;
			}
		}
		p->nactions += np->nactions;
	}
	for (size_t i = 0; i < m->nnodes; i++)
		fix_node_state_fini(&c.work[i]);
	free(c.work);
	job_plan_free(plan);
	fix_plan_share_homes(m, states, p);
	return p;
}

void fix_plan_free(struct fix_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nnodes; i++) {
		struct fix_node_plan *np = &p->nodes[i];

		for (size_t k = 0; k < np->nactions; k++)
			fix_action_fini(&np->actions[k]);
		free(np->actions);
		for (size_t k = 0; k < np->nnotes; k++)
			free(np->notes[k]);
		free(np->notes);
		free(np->fixers);
		free(np->wanted);
	}
	free(p->nodes);
	free(p);
}
