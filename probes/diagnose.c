/*
 * diagnose.c - findings and verified suggestions from the network model.
 *
 * The order of work: predict what NCCL and Gloo pick on every node as it is
 * configured now; judge every picked address against the matrix; look at
 * what is static (names, MTUs, versions, /dev/shm, firewall rules); then
 * choose a data interface per node that every peer reached, and only then
 * build and re-verify the suggested environment with the same predictors.
 */
#include "diagnose.h"
#include "hostlist.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Evidence lines are bounded on purpose: a line cut at its buffer's end
 * still says what was seen, and no agent can make one grow without end. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define GIB (1024LL * 1024 * 1024)

const struct finding_def finding_catalogue[] = {
    {"node-unreachable", SEV_ERROR, "a node could not be checked"},
    {"ipv6-no-route", SEV_ERROR, "an IPv6 address NCCL/Gloo would use is unreachable"},
    {"link-local-selected", SEV_ERROR, "NCCL/Gloo would use a link-local address"},
    {"iface-unreachable", SEV_ERROR, "an address NCCL/Gloo would use is unreachable"},
    {"hostname-loopback", SEV_ERROR, "the hostname resolves to a loopback address"},
    {"stale-ifname-env", SEV_ERROR, "a set NCCL/GLOO interface variable is wrong"},
    {"gloo-count-mismatch", SEV_ERROR, "nodes would create different numbers of Gloo devices"},
    {"duplicate-address", SEV_ERROR, "the same address exists on several nodes"},
    {"master-port-blocked", SEV_ERROR, "MASTER_PORT on the master is not reachable"},
    {"master-port-in-use", SEV_ERROR, "MASTER_PORT is already taken on the master"},
    {"ephemeral-ports-blocked", SEV_ERROR, "ephemeral ports are blocked on a node"},
    {"firewall-blocks-port", SEV_WARNING, "a firewall drops or rejects a port a job may use"},
    {"route-egress-mismatch", SEV_WARNING, "traffic would leave through another interface"},
    {"virtual-iface-selected", SEV_WARNING, "NCCL/Gloo would use a virtual interface"},
    {"nic-name-mismatch", SEV_WARNING, "the data interface has different names on the nodes"},
    {"mtu-mismatch", SEV_WARNING, "the data interfaces have different MTUs"},
    {"version-mismatch", SEV_ERROR, "torch, NCCL or Python versions differ across nodes"},
    {"torch-missing", SEV_ERROR, "PyTorch is not installed for the login python3"},
    {"shm-small", SEV_WARNING, "/dev/shm is small"},
    {"nccl-version-unknown", SEV_INFO, "NCCL's version is unknown; newest rules assumed"},
};
const size_t finding_catalogue_len = CD_ARRAY_LEN(finding_catalogue);

const char *severity_name(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "info";
}

/* ---------------------------------------------------------------- text */

static void sb_addf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_addf(char **s, const char *fmt, ...)
{
	size_t old = *s ? strlen(*s) : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	*s = cd_realloc(*s, old + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

/* The hosts of a node set, folded like nodeset -f ("node[1-3]"). */
static char *fold_nodes(const struct netmodel *m, const size_t *idx, size_t n)
{
	struct hostlist *hl = hostlist_new();
	char *s;

	hl->names = cd_calloc(n ? n : 1, sizeof(char *));
	hl->capacity = n ? n : 1;
	for (size_t i = 0; i < n; i++)
		hl->names[hl->count++] = cd_strdup(m->nodes[idx[i]].host);
	s = hostlist_fold(hl);
	hostlist_free(hl);
	return s;
}

static const char *node_name(const struct netmodel *m, size_t i)
{
	return m->nodes[i].host;
}

/* ---------------------------------------------------------------- findings */

/*
 * Findings of one id that share a key (the same cause) merge: the nodes and
 * evidence lines accumulate, and the message's "%N" is replaced by the
 * folded node set when the diagnosis is finished.
 */
struct pending {
	const char *id;
	enum severity severity;
	char *key;
	size_t *nodes;
	size_t nnodes;
	char *message; /* may hold "%N" */
	char *evidence;
	char *fix;
};

struct dstate {
	const struct netmodel *m;
	struct diagnosis *d;
	struct pending *p;
	size_t np;
};

static const struct finding_def *def_of(const char *id)
{
	for (size_t i = 0; i < finding_catalogue_len; i++) {
		if (strcmp(finding_catalogue[i].id, id) == 0)
			return &finding_catalogue[i];
	}
	cd_fatal("finding id \"%s\" is not in the catalogue", id);
}

/* Find or create the pending finding (id, key); add node (unless SIZE_MAX)
 * and one evidence line. message and fix are taken from the first call. */
static struct pending *note(struct dstate *st, const char *id, enum severity sev, const char *key,
                            size_t node, const char *message, const char *fix, const char *evidence)
{
	struct pending *p = NULL;
	int have = 0;

	(void)def_of(id);
	for (size_t i = 0; i < st->np; i++) {
		if (strcmp(st->p[i].id, id) == 0 && strcmp(st->p[i].key, key) == 0)
			p = &st->p[i];
	}
	if (!p) {
		st->p = cd_realloc(st->p, (st->np + 1) * sizeof(*st->p));
		p = &st->p[st->np++];
		memset(p, 0, sizeof(*p));
		p->id = id;
		p->severity = sev;
		p->key = cd_strdup(key);
		p->message = cd_strdup(message);
		p->fix = cd_strdup(fix);
	}
	if (sev < p->severity)
		p->severity = sev;
	for (size_t i = 0; i < p->nnodes; i++)
		have |= p->nodes[i] == node;
	if (node != SIZE_MAX && !have) {
		p->nodes = cd_realloc(p->nodes, (p->nnodes + 1) * sizeof(size_t));
		p->nodes[p->nnodes++] = node;
	}
	if (evidence && evidence[0])
		sb_addf(&p->evidence, "%s%s", p->evidence ? "\n" : "", evidence);
	return p;
}

static char *expand_nodes(const char *msg, const char *nodes)
{
	const char *at = strstr(msg, "%N");
	char *out = NULL;

	if (!at)
		return cd_strdup(msg);
	sb_addf(&out, "%.*s%s%s", (int)(at - msg), msg, nodes, at + 2);
	return out;
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	if (a->severity != b->severity)
		return (int)a->severity - (int)b->severity;
	return strcmp(a->id, b->id);
}

static void finish_findings(struct dstate *st)
{
	struct diagnosis *d = st->d;

	d->findings = cd_calloc(st->np + 1, sizeof(*d->findings));
	for (size_t i = 0; i < st->np; i++) {
		struct pending *p = &st->p[i];
		struct finding *f = &d->findings[d->nfindings++];
		char *nodes = fold_nodes(st->m, p->nodes, p->nnodes);

		f->id = p->id;
		f->severity = p->severity;
		f->nodes = p->nodes;
		f->nnodes = p->nnodes;
		f->message = expand_nodes(p->message, nodes[0] ? nodes : "the cluster");
		f->evidence = p->evidence ? p->evidence : cd_strdup("");
		f->fix = p->fix;
		free(nodes);
		free(p->message);
		free(p->key);
		if (f->severity == SEV_ERROR)
			d->errors++;
		else if (f->severity == SEV_WARNING)
			d->warnings++;
	}
	free(st->p);
	qsort(d->findings, d->nfindings, sizeof(*d->findings), cmp_finding);
}

/* ---------------------------------------------------------------- the matrix */

static int is_loopback_text(const char *addr)
{
	struct nm_addr a = {0};

	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	return nm_addr_is_loopback(&a);
}

static int is_link_local_text(const char *addr)
{
	struct nm_addr a = {0};

	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	return nm_addr_is_link_local(&a);
}

enum reach_status diagnose_addr_reach(const struct netmodel *m, size_t to, const char *addr,
                                      int fixed_port, int port, char *worst, size_t worst_len)
{
	size_t ok = 0, bad = 0;

	if (worst_len)
		worst[0] = '\0';
	if (is_loopback_text(addr))
		return REACH_LOOPBACK;
	for (size_t i = 0; i < m->nattempts; i++) {
		const struct nm_attempt *a = &m->attempts[i];

		if (a->to != to || a->from == to || a->fixed_port != fixed_port ||
		    strcmp(a->addr, addr) != 0 || (port && a->port != port) ||
		    strcmp(a->result, "not-tested") == 0)
			continue;
		if (strcmp(a->result, "ok") == 0) {
			ok++;
		} else {
			if (!bad && worst_len)
				snprintf(worst, worst_len, "%s", a->result);
			bad++;
		}
	}
	if (bad)
		return REACH_SOME_BAD;
	return ok ? REACH_ALL_OK : REACH_UNKNOWN;
}

/* "from node2: timeout; from node3: no-route (EHOSTUNREACH)" for the failed
 * attempts toward (to, addr). */
static char *failed_attempts(const struct netmodel *m, size_t to, const char *addr, int fixed_port,
                             int port)
{
	char *s = NULL;

	for (size_t i = 0; i < m->nattempts; i++) {
		const struct nm_attempt *a = &m->attempts[i];

		if (a->to != to || a->from == to || a->fixed_port != fixed_port ||
		    strcmp(a->addr, addr) != 0 || (port && a->port != port) ||
		    strcmp(a->result, "ok") == 0 || strcmp(a->result, "not-tested") == 0)
			continue;
		sb_addf(&s, "%s%s -> %s port %d: %s%s%s%s", s ? "; " : "", node_name(m, a->from),
		        node_name(m, to), a->port, a->result, a->errno_name[0] ? " (" : "",
		        a->errno_name, a->errno_name[0] ? ")" : "");
	}
	return s ? s : cd_strdup("");
}

static int count_probed(const struct netmodel *m)
{
	int n = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		n += m->nodes[i].probed;
	return n;
}

/* ---------------------------------------------------------------- classification */

static int virtual_name(const char *name)
{
	static const char *const prefixes[] = {
	    "docker", "virbr", "veth",   "br-",   "cni",   "flannel", "cali", "tailscale", "wg",
	    "vxlan",  "lxc",   "podman", "weave", "kube-", "tun",     "tap",  "zt",        "vnet",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(prefixes); i++) {
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	}
	return 0;
}

static int same_subnet(const char *a, const char *b, int family, int prefix)
{
	unsigned char x[16], y[16];
	int bytes = family == AF_INET ? 4 : 16;

	if (inet_pton(family, a, x) != 1 || inet_pton(family, b, y) != 1)
		return 0;
	for (int bit = 0; bit < prefix && bit < bytes * 8; bit++) {
		int mask = 0x80 >> (bit % 8);

		if ((x[bit / 8] & mask) != (y[bit / 8] & mask))
			return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- checks */

static void check_unreachable_nodes(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[CD_ERRLEN + 64];

		if (n->probed && n->error[0]) {
			snprintf(ev, sizeof(ev), "%s: %s", n->host, n->error);
			note(st, "node-unreachable", SEV_ERROR, "partial", i,
			     "%N stopped answering during the check: its results are partial",
			     "Look at the node (load, OOM, sshd limits), then run the check again.",
			     ev);
		}
		if (n->probed)
			continue;
		snprintf(ev, sizeof(ev), "%s: %s (%s)", n->host,
		         n->error[0] ? n->error : "no answer",
		         n->error_code[0] ? n->error_code : "failed");
		note(st, "node-unreachable", SEV_ERROR, n->error_code, i,
		     "%N could not be checked: its network, NCCL and Gloo choices are unknown, and "
		     "nothing was verified against it",
		     "Make `ssh <node>` work from this machine (the evidence says what failed), "
		     "then "
		     "run the check again.",
		     ev);
	}
}

/* What one node would use, deduplicated by address, with who uses it. */
struct used_addr {
	struct net_pick pick;
	char who[48]; /* "NCCL", "NCCL bootstrap", "Gloo", joined by ", " */
};

static size_t used_addresses(const struct node_prediction *p, struct used_addr *out, size_t cap)
{
	size_t n = 0;
	const struct net_pick *all[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
	const char *who[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
	size_t k = 0;

	for (int i = 0; i < p->bootstrap.npicks; i++) {
		all[k] = &p->bootstrap.picks[i];
		who[k++] = "NCCL bootstrap";
	}
	for (int i = 0; i < p->nccl.npicks; i++) {
		all[k] = &p->nccl.picks[i];
		who[k++] = "NCCL";
	}
	for (int i = 0; i < p->gloo.npicks; i++) {
		all[k] = &p->gloo.picks[i];
		who[k++] = "Gloo";
	}
	for (size_t i = 0; i < k; i++) {
		size_t j;

		for (j = 0; j < n; j++) {
			if (strcmp(out[j].pick.addr, all[i]->addr) == 0)
				break;
		}
		if (j == n) {
			if (n == cap)
				continue;
			out[n].pick = *all[i];
			snprintf(out[n].who, sizeof(out[n].who), "%s", who[i]);
			n++;
		} else if (!strstr(out[j].who, who[i]) || strcmp(who[i], "NCCL") != 0) {
			if (!strstr(out[j].who, who[i])) {
				size_t len = strlen(out[j].who);

				snprintf(out[j].who + len, sizeof(out[j].who) - len, ", %s",
				         who[i]);
			}
		}
	}
	return n;
}

static int fixed_port_reachable_on(const struct netmodel *m, size_t to, const char *addr)
{
	char worst[24];

	return diagnose_addr_reach(m, to, addr, 1, 0, worst, sizeof(worst)) == REACH_ALL_OK;
}

/* Judge every address a node would use against the matrix. */
static void check_used_addresses(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct used_addr used[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
		size_t nu;

		if (!n->probed)
			continue;
		nu = used_addresses(&st->d->pred[i], used, CD_ARRAY_LEN(used));
		for (size_t u = 0; u < nu; u++) {
			const struct net_pick *pk = &used[u].pick;
			char worst[24], ev[1024], key[160], shown[NM_ADDR + 24];
			enum reach_status rs;
			char *fails;

			nm_addr_format(shown, sizeof(shown), pk->addr, 0);
			if (pk->scope_id)
				snprintf(shown, sizeof(shown), "%s%%%s", pk->addr, pk->ifname);
			if (is_link_local_text(pk->addr)) {
				snprintf(ev, sizeof(ev), "%s: %s would use %s:%s", n->host,
				         used[u].who, pk->ifname, shown);
				note(
				    st, "link-local-selected", SEV_ERROR, "", i,
				    "%N: NCCL or Gloo would use a link-local address, which other "
				    "hosts cannot reach reliably (the scope id is this host's)",
				    "Give the interface a routable address or exclude it: set "
				    "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME as suggested below.",
				    ev);
				continue;
			}
			rs = diagnose_addr_reach(m, i, pk->addr, 0, 0, worst, sizeof(worst));
			if (rs == REACH_LOOPBACK) {
				if (used[u].who[0] == 'G' && st->d->pred[i].gloo.from_hostname)
					continue; /* hostname-loopback says it */
				snprintf(ev, sizeof(ev), "%s: %s would use %s:%s", n->host,
				         used[u].who, pk->ifname, shown);
				note(st, "iface-unreachable", SEV_ERROR, "loopback", i,
				     "%N: NCCL or Gloo would use a loopback address; every peer "
				     "that "
				     "connects to it reaches itself",
				     "Set NCCL_SOCKET_IFNAME (never to lo) and GLOO_SOCKET_IFNAME "
				     "as "
				     "suggested below.",
				     ev);
				continue;
			}
			if (rs != REACH_SOME_BAD)
				continue;
			fails = failed_attempts(m, i, pk->addr, 0, 0);
			snprintf(ev, sizeof(ev), "%s: %s would use %s:%s; %s", n->host, used[u].who,
			         pk->ifname, shown, fails);
			free(fails);
			if (strcmp(worst, "wrong-peer") == 0)
				continue; /* duplicate-address explains it */
			if (pk->family == AF_INET6 &&
			    (strcmp(worst, "no-route") == 0 ||
			     strcmp(worst, "net-unreachable") == 0 ||
			     strcmp(worst, "timeout") == 0 || strcmp(worst, "error") == 0)) {
				snprintf(key, sizeof(key), "%s", pk->ifname);
				note(st, "ipv6-no-route", SEV_ERROR, "", i,
				     "%N: NCCL or Gloo would use an IPv6 address that other nodes "
				     "cannot "
				     "reach (\"No route to host\" / \"Network is unreachable\" in "
				     "NCCL's log, then a hang)",
				     "Exclude that interface: use the NCCL_SOCKET_IFNAME and "
				     "NCCL_SOCKET_FAMILY=AF_INET suggested below, and "
				     "GLOO_SOCKET_IFNAME "
				     "for Gloo.",
				     ev);
			} else if (fixed_port_reachable_on(m, i, pk->addr)) {
				note(
				    st, "ephemeral-ports-blocked", SEV_ERROR, "", i,
				    "%N: peers reach MASTER_PORT but not the ephemeral ports NCCL "
				    "and "
				    "Gloo listen on; the job starts, then hangs or times out after "
				    "rendezvous",
				    "Allow TCP between the cluster's nodes on the data interface, "
				    "or "
				    "shrink net.ipv4.ip_local_port_range and open exactly that "
				    "range "
				    "plus MASTER_PORT. Do not disable the firewall.",
				    ev);
			} else {
				note(
				    st, "iface-unreachable", SEV_ERROR, "peers", i,
				    "%N: NCCL or Gloo would use an address that other nodes cannot "
				    "reach",
				    "Use an interface every node reaches: set NCCL_SOCKET_IFNAME "
				    "and "
				    "GLOO_SOCKET_IFNAME as suggested below (or fix the routing or "
				    "firewall the evidence points at).",
				    ev);
			}
		}
	}
}

static void check_virtual_and_lo(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct used_addr used[NCCL_PREDICT_MAX_IFS + NCCL_FILTER_MAX_ITEMS + 1];
		size_t nu;

		if (!n->probed)
			continue;
		nu = used_addresses(&st->d->pred[i], used, CD_ARRAY_LEN(used));
		for (size_t u = 0; u < nu; u++) {
			const struct nm_iface *f = nm_iface_find(n, used[u].pick.ifname);
			char ev[512];

			if (!virtual_name(used[u].pick.ifname) &&
			    !(f && strcmp(f->kind, "tun") == 0))
				continue;
			snprintf(ev, sizeof(ev), "%s: %s would use %s:%s (%s)", n->host,
			         used[u].who, used[u].pick.ifname, used[u].pick.addr,
			         f && f->kind[0] ? f->kind : "virtual");
			note(st, "virtual-iface-selected", SEV_WARNING, "", i,
			     "%N: NCCL or Gloo would use a virtual interface (container bridge, "
			     "veth, "
			     "VPN or overlay); traffic through it is NATed or not routed between "
			     "nodes",
			     "List the data interfaces explicitly: NCCL_SOCKET_IFNAME and "
			     "GLOO_SOCKET_IFNAME as suggested below.",
			     ev);
		}
	}
}

static void check_hostname(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct gloo_prediction *g = &st->d->pred[i].gloo;
		const char *first = NULL;
		char *ev = NULL;

		if (!n->probed)
			continue;
		for (size_t k = 0; k < n->nhostaddrs && !first; k++) {
			if (n->hostaddrs[k].bindable)
				first = n->hostaddrs[k].addr;
		}
		if (first && !is_loopback_text(first) && !is_link_local_text(first))
			continue;
		if (!first && !n->hostname_error[0] && n->nhostaddrs == 0)
			continue; /* nothing reported */
		sb_addf(&ev, "%s: hostname %s resolves to %s%s", n->host, n->hostname,
		        first ? first : "nothing bindable", n->hostname_error[0] ? " (" : "");
		if (n->hostname_error[0])
			sb_addf(&ev, "%s)", n->hostname_error);
		for (size_t k = 0; k < n->nhosts_lines; k++)
			sb_addf(&ev, "\n%s: /etc/hosts: %s", n->host, n->hosts_lines[k]);
		note(
		    st, "hostname-loopback", g->from_hostname ? SEV_ERROR : SEV_WARNING,
		    g->from_hostname ? "gloo" : "set", i,
		    g->from_hostname
		        ? "%N: the hostname resolves to a loopback (or no usable) address, so Gloo "
		          "binds to it and tells peers to connect there (\"Connection refused\", "
		          "remote=[127.0.1.1])"
		        : "%N: the hostname resolves to a loopback address; GLOO_SOCKET_IFNAME "
		          "avoids it for Gloo, but torchrun's rendezvous advertises the hostname",
		    "Map the hostname to the node's data address in /etc/hosts (replace the "
		    "127.0.1.1 line), or set GLOO_SOCKET_IFNAME as suggested below.",
		    ev);
		free(ev);
	}
}

static int ifname_matches_any(const struct nm_node *n, const char *name)
{
	return nm_iface_find(n, name) != NULL;
}

static void check_stale_env(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct node_prediction *p = &st->d->pred[i];
		const struct nm_var *nv = nm_var_get(n, "NCCL_SOCKET_IFNAME");
		const struct nm_var *gv = nm_var_get(n, "GLOO_SOCKET_IFNAME");
		char ev[768];

		if (!n->probed)
			continue;
		if (nv && strlen(nv->value) > 1 && p->nccl.npicks == 0 && !p->nccl.cannot_predict) {
			snprintf(ev, sizeof(ev),
			         "%s: NCCL_SOCKET_IFNAME=%s (from %s) matches no usable "
			         "interface: NCCL fails with \"%s\"",
			         n->host, nv->value, nv->source, p->nccl.error);
			note(st, "stale-ifname-env", SEV_ERROR, "nccl", i,
			     "%N: NCCL_SOCKET_IFNAME is set to a value that matches no interface "
			     "there",
			     "Remove the stale value (environment, ~/.nccl.conf or /etc/nccl.conf) "
			     "and "
			     "use the suggested NCCL_SOCKET_IFNAME.",
			     ev);
		}
		if (gv && strlen(gv->value) > 1) {
			char *copy = cd_strdup(gv->value), *save = NULL;
			int missing = 0;

			for (char *it = strtok_r(copy, ",", &save); it;
			     it = strtok_r(NULL, ",", &save))
				missing |= !ifname_matches_any(n, it);
			free(copy);
			if (missing || p->gloo.npicks == 0) {
				snprintf(ev, sizeof(ev), "%s: GLOO_SOCKET_IFNAME=%s (from %s): %s",
				         n->host, gv->value, gv->source,
				         p->gloo.error[0] ? p->gloo.error
				                          : "names a missing interface");
				note(st, "stale-ifname-env", SEV_ERROR, "gloo", i,
				     "%N: GLOO_SOCKET_IFNAME names an interface that does not "
				     "exist there "
				     "(Gloo takes exact names only, no ^ or prefixes)",
				     "Set GLOO_SOCKET_IFNAME to this node's own interface name, as "
				     "suggested below (names may differ per node, the count may "
				     "not).",
				     ev);
			}
		}
	}
}

static void check_gloo_count(struct dstate *st)
{
	const struct netmodel *m = st->m;
	int first = -1, differ = 0;
	char *ev = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct gloo_prediction *g = &st->d->pred[i].gloo;

		if (!m->nodes[i].probed || g->from_hostname || g->npicks == 0)
			continue;
		if (first < 0)
			first = g->npicks;
		differ |= g->npicks != first;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct gloo_prediction *g = &st->d->pred[i].gloo;

		if (!m->nodes[i].probed)
			continue;
		sb_addf(&ev, "%s%s: %d Gloo device(s) (%s)", ev ? "\n" : "", m->nodes[i].host,
		        g->from_hostname ? 1 : g->npicks, g->rule);
		note(st, "gloo-count-mismatch", SEV_ERROR, "", i,
		     "%N: Gloo would create different numbers of devices on different nodes; "
		     "PyTorch requires the same count everywhere",
		     "Give every node the same number of names in GLOO_SOCKET_IFNAME.", NULL);
	}
	note(st, "gloo-count-mismatch", SEV_ERROR, "", SIZE_MAX, "", "", ev);
	free(ev);
}

static void check_duplicates(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *a = &m->nodes[i];

		for (size_t k = 0; k < a->naddrs; k++) {
			const struct nm_addr *x = &a->addrs[k];
			int used = 0;
			char ev[512];

			if (!a->probed || nm_addr_is_loopback(x) || nm_addr_is_link_local(x))
				continue;
			for (size_t j = i + 1; j < m->nnodes; j++) {
				const struct nm_node *b = &m->nodes[j];

				for (size_t l = 0; l < b->naddrs; l++) {
					if (strcmp(b->addrs[l].addr, x->addr) != 0)
						continue;
					for (size_t q = 0; q < m->nnodes; q++) {
						struct used_addr u[NCCL_PREDICT_MAX_IFS +
						                   NCCL_FILTER_MAX_ITEMS + 1];
						size_t nu = m->nodes[q].probed
						                ? used_addresses(&st->d->pred[q], u,
						                                 CD_ARRAY_LEN(u))
						                : 0;

						for (size_t r = 0; r < nu; r++)
							used |=
							    strcmp(u[r].pick.addr, x->addr) == 0;
					}
					snprintf(ev, sizeof(ev), "%s: %s on %s", b->host, x->addr,
					         b->addrs[l].ifname);
					note(
					    st, "duplicate-address", used ? SEV_ERROR : SEV_WARNING,
					    x->addr, j,
					    "%N: the same address is configured on several nodes "
					    "(a "
					    "container bridge such as docker0, or a cloned "
					    "config); a "
					    "peer that connects to it reaches the wrong machine",
					    "Make sure NCCL and Gloo never use it: keep it out of "
					    "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME (the "
					    "suggestions "
					    "below do); give the nodes distinct addresses if it is "
					    "meant to carry traffic.",
					    ev);
					snprintf(ev, sizeof(ev), "%s: %s on %s", a->host, x->addr,
					         x->ifname);
					note(st, "duplicate-address",
					     used ? SEV_ERROR : SEV_WARNING, x->addr, i, "", "",
					     ev);
				}
			}
		}
	}
}

static void check_master_port(struct dstate *st)
{
	const struct netmodel *m = st->m;
	size_t mi = m->master;
	const struct nm_node *mn = &m->nodes[mi];

	if (!m->matrix_done || mi >= m->nnodes || !mn->probed)
		return;
	for (size_t i = 0; i < m->nlisteners; i++) {
		const struct nm_listener *l = &m->listeners[i];
		char ev[256];

		if (l->node != mi || !l->fixed_port || l->port != m->master_port || !l->error[0])
			continue;
		snprintf(ev, sizeof(ev), "%s: bind to port %d failed: %s", mn->host, l->port,
		         l->error);
		note(st, "master-port-in-use", SEV_ERROR, "", mi,
		     "%N: MASTER_PORT is already in use on the master (\"Address already in use\", "
		     "errno 98, from the TCPStore)",
		     "Stop the stale job holding the port (ss -ltnp), or use the MASTER_PORT "
		     "suggested below.",
		     ev);
	}
}

/* Fixed-port listeners: on the master, a blocked MASTER_PORT is an error;
 * on other nodes it is evidence that the port cannot move there. */
static void check_fixed_ports(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t to = 0; to < m->nnodes; to++) {
		const struct nm_node *n = &m->nodes[to];
		const char *addr = st->d->pred[to].data_addr;
		int seen_addr = 0;

		if (!n->probed)
			continue;
		/* Judge on the address peers would use: the data address, else any
		 * address fixed-port attempts went to. */
		for (size_t k = 0; k < m->nattempts && !addr[0]; k++) {
			if (m->attempts[k].to == to && m->attempts[k].fixed_port)
				addr = m->attempts[k].addr;
		}
		for (size_t k = 0; k < m->nattempts; k++)
			seen_addr |= m->attempts[k].to == to && m->attempts[k].fixed_port &&
			             strcmp(m->attempts[k].addr, addr) == 0;
		if (!seen_addr)
			continue;
		{
			char worst[24], ev[1024];
			enum reach_status rs = diagnose_addr_reach(m, to, addr, 1, m->master_port,
			                                           worst, sizeof(worst));
			char *fails;
			const struct nm_fwrule *r;
			const char *how;

			if (rs != REACH_SOME_BAD)
				continue;
			fails = failed_attempts(m, to, addr, 1, m->master_port);
			r = NULL;
			for (size_t q = 0; q < n->nfwrules && !r; q++) {
				if (n->fwrules[q].port_lo <= m->master_port &&
				    m->master_port <= n->fwrules[q].port_hi)
					r = &n->fwrules[q];
			}
			how = strcmp(worst, "timeout") == 0 ? "dropped (no answer)"
			      : strcmp(worst, "refused") == 0
			          ? "rejected (connection refused)"
			          : "rejected (host unreachable / administratively prohibited)";
			snprintf(ev, sizeof(ev), "%s: TCP port %d %s; %s%s%s%s", n->host,
			         m->master_port, how, fails, r ? "\n" : "", r ? r->tool : "",
			         r ? ": " : "");
			if (r)
				snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "%s", r->text);
			free(fails);
			if (to == m->master)
				note(st, "master-port-blocked", SEV_ERROR, "", to,
				     "%N (the master): MASTER_PORT is blocked, so no worker can "
				     "join the "
				     "rendezvous (\"The client socket has timed out ... while "
				     "trying to "
				     "connect\")",
				     "Open MASTER_PORT for the cluster's nodes on the master (a "
				     "least-"
				     "privilege rule: TCP from the data subnet to that port), or "
				     "use the "
				     "MASTER_PORT suggested below.",
				     ev);
			else
				note(st, "firewall-blocks-port", SEV_WARNING, "", to,
				     "%N: a firewall blocks the MASTER_PORT candidate; this node "
				     "cannot "
				     "be the master with that port",
				     "Keep the master on another node, or allow that TCP port from "
				     "the "
				     "cluster's data subnet on this node.",
				     ev);
		}
	}
}

/* Static evidence: a rule that drops part of the ephemeral range while the
 * active test happened to pick an open port. */
static void check_fw_rules(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; n->probed && n->port_lo && k < n->nfwrules; k++) {
			const struct nm_fwrule *r = &n->fwrules[k];
			char ev[512];

			if (r->port_hi < n->port_lo || r->port_lo > n->port_hi)
				continue;
			if (r->port_lo == 0 && r->port_hi == 65535)
				continue; /* a policy: the matrix says what passes */
			snprintf(ev, sizeof(ev),
			         "%s: %s %s TCP %d-%d, inside ip_local_port_range %d-%d: %s",
			         n->host, r->tool, r->verdict, r->port_lo, r->port_hi, n->port_lo,
			         n->port_hi, r->text);
			note(
			    st, "firewall-blocks-port", SEV_WARNING, "ephemeral", i,
			    "%N: a firewall rule drops or rejects part of the ephemeral port range "
			    "NCCL and Gloo listen on; connections fail at random",
			    "Allow the whole ip_local_port_range between the cluster's nodes, or "
			    "shrink the range to ports the firewall allows.",
			    ev);
		}
	}
}

static void check_mtu(struct dstate *st)
{
	const struct netmodel *m = st->m;
	int first = 0, differ = 0;
	char *ev = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_iface *f = nm_iface_find(&m->nodes[i], st->d->pred[i].data_iface);

		if (!m->nodes[i].probed || !f || !f->mtu)
			continue;
		if (!first)
			first = f->mtu;
		differ |= f->mtu != first;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_iface *f = nm_iface_find(&m->nodes[i], st->d->pred[i].data_iface);

		if (!m->nodes[i].probed || !f || !f->mtu)
			continue;
		sb_addf(&ev, "%s%s: %s mtu %d", ev ? "\n" : "", m->nodes[i].host, f->name, f->mtu);
		note(st, "mtu-mismatch", SEV_WARNING, "", i,
		     "%N: the data interfaces have different MTUs; large transfers can stall "
		     "(RDMA: \"local length error\"), small ones pass",
		     "Set one MTU on every node's data interface (and the switch ports).", NULL);
	}
	note(st, "mtu-mismatch", SEV_WARNING, "", SIZE_MAX, "", "", ev);
	free(ev);
}

static void check_nic_names(struct dstate *st)
{
	const struct netmodel *m = st->m;
	const char *first = NULL;
	int differ = 0;
	char *ev = NULL;

	for (size_t i = 0; i < m->nnodes; i++) {
		const char *name = st->d->pred[i].data_iface;

		if (!name[0])
			continue;
		if (!first)
			first = name;
		differ |= strcmp(first, name) != 0;
	}
	if (!differ)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		if (!st->d->pred[i].data_iface[0])
			continue;
		sb_addf(&ev, "%s%s: %s %s", ev ? "\n" : "", m->nodes[i].host,
		        st->d->pred[i].data_iface, st->d->pred[i].data_addr);
		note(
		    st, "nic-name-mismatch", SEV_WARNING, "", i,
		    "%N: the data interface has different names on different nodes, so one "
		    "GLOO_SOCKET_IFNAME cannot fit all and NCCL_SOCKET_IFNAME must list every name",
		    "Use the per-node GLOO_SOCKET_IFNAME and the NCCL_SOCKET_IFNAME suggested "
		    "below (or rename the NICs consistently with udev rules).",
		    NULL);
	}
	note(st, "nic-name-mismatch", SEV_WARNING, "", SIZE_MAX, "", "", ev);
	free(ev);
}

static void check_routes(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct node_prediction *p = &st->d->pred[i];

		for (size_t k = 0; n->probed && k < n->nroutes; k++) {
			const struct nm_route *r = &n->routes[k];
			const char *expect = NULL;
			char ev[512];

			if (r->error[0] || !r->dev[0] || !r->from[0])
				continue;
			for (int q = 0; q < p->nccl.npicks && !expect; q++) {
				if (strcmp(p->nccl.picks[q].addr, r->from) == 0)
					expect = p->nccl.picks[q].ifname;
			}
			for (int q = 0; q < p->gloo.npicks && !expect; q++) {
				if (strcmp(p->gloo.picks[q].addr, r->from) == 0)
					expect = p->gloo.picks[q].ifname;
			}
			if (!expect || strcmp(expect, r->dev) == 0 || strcmp(r->dev, "lo") == 0)
				continue;
			snprintf(ev, sizeof(ev),
			         "%s: ip route get %s from %s -> dev %s, but %s belongs to %s",
			         n->host, r->to, r->from, r->dev, r->from, expect);
			note(st, "route-egress-mismatch", SEV_WARNING, "", i,
			     "%N: traffic to peers would leave through another interface than the "
			     "one "
			     "NCCL/Gloo chose (setting NCCL_SOCKET_IFNAME \"has no effect\"): two "
			     "NICs "
			     "share a subnet or the routes prefer the other one",
			     "Give each NIC its own subnet, adjust route metrics, or add policy "
			     "routing "
			     "(ip rule from <address> table <n>).",
			     ev);
		}
	}
}

static void check_software(struct dstate *st)
{
	const struct netmodel *m = st->m;
	static const struct {
		const char *what;
		size_t off;
		enum severity sev;
	} comps[] = {
	    {"torch", offsetof(struct nm_node, torch_version), SEV_ERROR},
	    {"NCCL", offsetof(struct nm_node, nccl_version), SEV_ERROR},
	    {"Python", offsetof(struct nm_node, python_version), SEV_WARNING},
	};
	size_t missing = 0, known = 0;
	char *ev = NULL;

	for (size_t c = 0; c < CD_ARRAY_LEN(comps); c++) {
		const char *first = NULL;
		int differ = 0;

		for (size_t i = 0; i < m->nnodes; i++) {
			const char *v = (const char *)&m->nodes[i] + comps[c].off;

			if (!v[0])
				continue;
			if (!first)
				first = v;
			differ |= strcmp(first, v) != 0;
		}
		if (!differ)
			continue;
		for (size_t i = 0; i < m->nnodes; i++) {
			const char *v = (const char *)&m->nodes[i] + comps[c].off;
			char line[256];

			if (!v[0])
				continue;
			snprintf(line, sizeof(line), "%s: %s %s", m->nodes[i].host, comps[c].what,
			         v);
			note(st, "version-mismatch", comps[c].sev, comps[c].what, i,
			     comps[c].sev == SEV_ERROR
			         ? "%N: versions differ across nodes; mismatched NCCL/torch builds "
			           "hang or fail (\"message truncated\")"
			         : "%N: Python versions differ across nodes",
			     "Install the same versions on every node (one image or one "
			     "environment).",
			     line);
		}
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		if (!n->probed || !n->torch_known)
			continue;
		known++;
		if (!n->torch_version[0]) {
			missing++;
			sb_addf(&ev, "%s%s: python3 %s has no torch", ev ? "\n" : "", n->host,
			        n->python_version[0] ? n->python_version : "(not found)");
		}
	}
	if (missing) {
		for (size_t i = 0; i < m->nnodes; i++) {
			const struct nm_node *n = &m->nodes[i];

			if (n->probed && n->torch_known && !n->torch_version[0])
				note(st, "torch-missing",
				     missing == known ? SEV_WARNING : SEV_ERROR, "", i,
				     missing == known ? "%N: PyTorch is not importable by the "
				                        "login python3 (a job "
				                        "started over SSH uses that one)"
				                      : "%N: PyTorch is missing here but installed "
				                        "on the other nodes",
				     "Install the same torch on every node, or activate its "
				     "environment "
				     "in the non-interactive login (~/.bashrc before the "
				     "interactive "
				     "guard).",
				     NULL);
		}
		note(st, "torch-missing", SEV_WARNING, "", SIZE_MAX, "", "", ev);
	}
	free(ev);
}

static void check_shm_and_versions(struct dstate *st)
{
	const struct netmodel *m = st->m;

	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		char ev[256];

		if (!n->probed)
			continue;
		if (n->shm_bytes >= 0 && n->shm_bytes < GIB) {
			snprintf(ev, sizeof(ev), "%s: /dev/shm is %lld MiB", n->host,
			         (long long)(n->shm_bytes / (1024 * 1024)));
			note(
			    st, "shm-small", SEV_WARNING, "", i,
			    "%N: /dev/shm is smaller than 1 GiB; NCCL and DataLoader workers fail "
			    "with \"failed to extend /dev/shm\" or bus errors (Docker's default is "
			    "64 MiB)",
			    "Enlarge it: docker run --shm-size=16g (or --ipc=host), or a larger "
			    "tmpfs for /dev/shm.",
			    ev);
		}
		if (!n->nccl_version[0] && n->gpus > 0) {
			snprintf(ev, sizeof(ev), "%s: no NCCL version found (torch or libnccl)",
			         n->host);
			note(
			    st, "nccl-version-unknown", SEV_INFO, "", i,
			    "%N: NCCL's version is unknown; the prediction follows NCCL 2.28.3+ "
			    "rules",
			    "Nothing to do unless the predicted NCCL line differs from NCCL's log.",
			    ev);
		}
	}
}

/* ---------------------------------------------------------------- predictions */

static void predict_all(const struct netmodel *m, struct diagnosis *d)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		struct node_prediction *p = &d->pred[i];
		struct net_env e;

		if (!n->probed)
			continue;
		nccl_version_parse(n->nccl_version, &p->version);
		net_env_of(n, &e);
		nccl_predict(n, &e, &p->version, NCCL_PREDICT_MAX_IFS, &p->nccl);
		nccl_predict(n, &e, &p->version, 1, &p->bootstrap);
		gloo_predict(n, &e, &p->gloo);
	}
}

/* Is this address of node i safe to use: every peer reached it, it is not
 * loopback or link-local, and no other node has it. */
static int addr_proved(const struct netmodel *m, size_t i, const char *addr)
{
	char worst[24];

	if (is_loopback_text(addr) || is_link_local_text(addr))
		return 0;
	for (size_t j = 0; j < m->nnodes; j++) {
		for (size_t k = 0; j != i && k < m->nodes[j].naddrs; k++) {
			if (strcmp(m->nodes[j].addrs[k].addr, addr) == 0)
				return 0;
		}
	}
	return diagnose_addr_reach(m, i, addr, 0, 0, worst, sizeof(worst)) == REACH_ALL_OK;
}

/* The first IPv4 address (else IPv6) of an interface, in getifaddrs order. */
static const struct nm_addr *first_addr(const struct nm_node *n, const char *ifname, int family)
{
	for (size_t k = 0; k < n->naddrs; k++) {
		if (strcmp(n->addrs[k].ifname, ifname) == 0 &&
		    (!family || n->addrs[k].family == family))
			return &n->addrs[k];
	}
	return NULL;
}

/*
 * The data interface of each node: an interface whose first IPv4 address
 * every peer reached, not virtual by name. Prefer the one on the master's
 * data subnet, then a physical one, then getifaddrs order.
 */
static void choose_data_ifaces(const struct netmodel *m, struct diagnosis *d)
{
	const struct nm_addr *master_addr = NULL;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->nnodes; i++) {
			const struct nm_node *n = &m->nodes[i];
			const struct nm_addr *best = NULL;
			int best_score = -1;

			if (!n->probed || (pass == 0) != (i == m->master))
				continue;
			for (size_t f = 0; f < n->nifaces; f++) {
				const struct nm_iface *fi = &n->ifaces[f];
				const struct nm_addr *a = first_addr(n, fi->name, AF_INET);
				int score = 0;

				if (fi->loopback || !a || virtual_name(fi->name) ||
				    !addr_proved(m, i, a->addr))
					continue;
				if (master_addr && same_subnet(a->addr, master_addr->addr, AF_INET,
				                               master_addr->prefix))
					score += 4;
				if (strcmp(fi->kind, "physical") == 0 ||
				    strcmp(fi->kind, "ipoib") == 0)
					score += 2;
				if (fi->running)
					score += 1;
				if (score > best_score) {
					best = a;
					best_score = score;
				}
			}
			if (!best)
				continue;
			snprintf(d->pred[i].data_iface, sizeof(d->pred[i].data_iface), "%s",
			         best->ifname);
			snprintf(d->pred[i].data_addr, sizeof(d->pred[i].data_addr), "%s",
			         best->addr);
			if (i == m->master)
				master_addr = best;
		}
	}
}

/* ---------------------------------------------------------------- suggestions */

/* Every address NCCL would pick on node i under env e is proved. */
static int nccl_env_proved(const struct netmodel *m, size_t i, const struct node_prediction *p,
                           const struct net_env *e)
{
	struct nccl_prediction sock, boot;

	nccl_predict(&m->nodes[i], e, &p->version, NCCL_PREDICT_MAX_IFS, &sock);
	nccl_predict(&m->nodes[i], e, &p->version, 1, &boot);
	if (sock.npicks == 0 || boot.npicks == 0)
		return 0;
	for (int k = 0; k < sock.npicks; k++) {
		if (!addr_proved(m, i, sock.picks[k].addr))
			return 0;
	}
	return addr_proved(m, i, boot.picks[0].addr);
}

static void env_with(const struct nm_node *n, struct net_env *e, const char *nccl_ifname,
                     const char *family, const char *gloo_ifname)
{
	net_env_of(n, e);
	if (nccl_ifname)
		e->nccl_socket_ifname = nccl_ifname;
	if (family)
		e->nccl_socket_family = family;
	if (gloo_ifname)
		e->gloo_socket_ifname = gloo_ifname;
	e->nccl_comm_id = NULL; /* torchrun passes the id through the store */
}

static int ipv6_trap_exists(const struct netmodel *m, const struct diagnosis *d)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];

		for (size_t k = 0; n->probed && k < n->naddrs; k++) {
			const struct nm_addr *a = &n->addrs[k];
			const struct nm_iface *f = nm_iface_find(n, a->ifname);

			if (a->family != AF_INET6 || nm_addr_is_loopback(a) || (f && f->loopback))
				continue;
			/* An interface with IPv6 only is what NCCL keeps with its IPv6. */
			if (!first_addr(n, a->ifname, AF_INET) && !virtual_name(a->ifname))
				return 1;
		}
	}
	(void)d;
	return 0;
}

/* Is name one of the comma-separated items of list? */
static int list_has(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && strncmp(p, name, len) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* Try one cluster-wide NCCL_SOCKET_IFNAME value on every node. */
static int nccl_value_works(const struct netmodel *m, const struct diagnosis *d, const char *value,
                            const char *family)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		struct net_env e;

		if (!m->nodes[i].probed)
			continue;
		env_with(&m->nodes[i], &e, value, family, NULL);
		if (!nccl_env_proved(m, i, &d->pred[i], &e))
			return 0;
	}
	return 1;
}

static void suggest(const struct netmodel *m, struct diagnosis *d)
{
	struct suggestions *s = &d->sugg;
	const char *family = NULL;
	char *names = NULL, *exact = NULL;
	int all_have = 1, probed = count_probed(m);
	size_t nn = m->nnodes;

	s->nccl_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->gloo_ifname_per_node = cd_calloc(nn ? nn : 1, sizeof(char *));
	s->torchrun = cd_calloc(nn ? nn : 1, sizeof(char *));
	if (probed < 2 || !m->matrix_done) {
		sb_addf(&s->notes, "%s\n",
		        probed < 2 ? "fewer than two nodes were checked: nothing could be verified "
		                     "between nodes, so nothing is suggested"
		                   : "the reachability matrix did not run: nothing is suggested");
		return;
	}
	for (size_t i = 0; i < nn; i++) {
		const char *name = d->pred[i].data_iface;

		if (!m->nodes[i].probed)
			continue;
		if (!name[0]) {
			all_have = 0;
			sb_addf(
			    &s->notes,
			    "%s: no interface with an IPv4 address that every other node reached; "
			    "no interface is suggested for it\n",
			    m->nodes[i].host);
			continue;
		}
		if (!list_has(names, name)) {
			sb_addf(&names, "%s%s", names ? "," : "", name);
			sb_addf(&exact, "%s%s", exact ? "," : "=", name);
		}
	}
	if (ipv6_trap_exists(m, d)) {
		family = "AF_INET";
		s->nccl_family_inet = 1;
	}
	/* One value for the cluster: the plain list (prefix semantics, what
	 * people write), else the exact list; each verified on every node. */
	if (all_have && names) {
		if (nccl_value_works(m, d, names, family))
			s->nccl_ifname = cd_strdup(names);
		else if (nccl_value_works(m, d, exact, family))
			s->nccl_ifname = cd_strdup(exact);
	}
	for (size_t i = 0; i < nn; i++) {
		const struct nm_node *n = &m->nodes[i];
		const char *name = d->pred[i].data_iface;
		struct gloo_prediction g;
		struct net_env e;
		char value[NM_NAME + 2];

		if (!n->probed || !name[0])
			continue;
		snprintf(value, sizeof(value), "=%s", name);
		env_with(n, &e, s->nccl_ifname ? s->nccl_ifname : value, family, name);
		if (nccl_env_proved(m, i, &d->pred[i], &e))
			s->nccl_ifname_per_node[i] = cd_strdup(e.nccl_socket_ifname);
		else
			sb_addf(&s->notes, "%s: NCCL_SOCKET_IFNAME=%s did not verify\n", n->host,
			        e.nccl_socket_ifname);
		gloo_predict(n, &e, &g);
		if (g.npicks == 1 && addr_proved(m, i, g.picks[0].addr))
			s->gloo_ifname_per_node[i] = cd_strdup(name);
		else
			sb_addf(&s->notes, "%s: GLOO_SOCKET_IFNAME=%s did not verify\n", n->host,
			        name);
	}
	if (s->nccl_ifname) {
		for (size_t i = 0; i < nn; i++) {
			if (m->nodes[i].probed && !s->nccl_ifname_per_node[i]) {
				free(s->nccl_ifname);
				s->nccl_ifname = NULL;
				break;
			}
		}
	}
	free(names);
	free(exact);

	/* MASTER_ADDR: the master's data address; MASTER_PORT: the first
	 * candidate every node reached there. */
	if (d->pred[m->master].data_addr[0]) {
		snprintf(s->master_addr, sizeof(s->master_addr), "%s",
		         d->pred[m->master].data_addr);
		for (size_t k = 0; k < m->nlisteners && !s->master_port; k++) {
			const struct nm_listener *l = &m->listeners[k];
			char worst[24];

			if (l->node != m->master || !l->fixed_port || l->error[0])
				continue;
			if (diagnose_addr_reach(m, m->master, s->master_addr, 1, l->port, worst,
			                        sizeof(worst)) == REACH_ALL_OK)
				s->master_port = l->port;
		}
		if (!s->master_port)
			sb_addf(
			    &s->notes,
			    "%s (master): no MASTER_PORT candidate was reachable from every node\n",
			    m->nodes[m->master].host);
	} else {
		sb_addf(&s->notes, "%s (master): no address every node reached; no MASTER_ADDR\n",
		        m->nodes[m->master].host);
	}
	if (!s->master_port)
		return;
	for (size_t i = 0, rank = 0; i < nn; i++) {
		int nproc = m->nodes[i].gpus > 0 ? m->nodes[i].gpus : 1;

		if (!m->nodes[i].probed)
			continue;
		s->torchrun[i] = cd_asprintf(
		    "torchrun --nnodes=%d --node-rank=%zu --nproc-per-node=%d "
		    "--master-addr=%s --master-port=%d train.py",
		    probed, i == m->master ? 0 : ++rank, nproc, s->master_addr, s->master_port);
	}
}

/* ---------------------------------------------------------------- entry */

struct diagnosis *diagnose(const struct netmodel *m)
{
	struct diagnosis *d = cd_calloc(1, sizeof(*d));
	struct dstate st = {.m = m, .d = d};

	d->nnodes = m->nnodes;
	d->pred = cd_calloc(m->nnodes ? m->nnodes : 1, sizeof(*d->pred));
	predict_all(m, d);
	choose_data_ifaces(m, d);

	check_unreachable_nodes(&st);
	check_used_addresses(&st);
	check_virtual_and_lo(&st);
	check_hostname(&st);
	check_stale_env(&st);
	check_gloo_count(&st);
	check_duplicates(&st);
	check_master_port(&st);
	check_fixed_ports(&st);
	check_fw_rules(&st);
	check_mtu(&st);
	check_nic_names(&st);
	check_routes(&st);
	check_software(&st);
	check_shm_and_versions(&st);
	finish_findings(&st);
	suggest(m, d);
	return d;
}

void diagnosis_free(struct diagnosis *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nfindings; i++) {
		free(d->findings[i].nodes);
		free(d->findings[i].message);
		free(d->findings[i].evidence);
		free(d->findings[i].fix);
	}
	free(d->findings);
	for (size_t i = 0; i < d->nnodes; i++) {
		free(d->sugg.nccl_ifname_per_node[i]);
		free(d->sugg.gloo_ifname_per_node[i]);
		free(d->sugg.torchrun[i]);
	}
	free(d->sugg.nccl_ifname_per_node);
	free(d->sugg.gloo_ifname_per_node);
	free(d->sugg.torchrun);
	free(d->sugg.nccl_ifname);
	free(d->sugg.notes);
	free(d->pred);
	free(d);
}
