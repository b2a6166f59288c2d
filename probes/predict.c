/* SPDX-License-Identifier: MIT */
/*
 * predict.c - emulate NCCL's network interface selection on one node of the
 * model (predict.h has the rules and their sources), and the helpers the
 * Gloo emulation (predict_gloo.c) shares.
 *
 * Everything here walks the node's addresses in getifaddrs order, exactly as
 * NCCL and Gloo walk getifaddrs(), and never makes a system call: address
 * text is parsed with inet_pton only.
 */
#include "predict.h"
#include "predict_internal.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* NCCL's MAX_IFS: the most items parseStringList reads from a list. */
#define NCCL_LIST_MAX_ITEMS 16

/* The release that added the IFF_RUNNING check and the virbr rules. */
static const struct nccl_version nccl_2_28_3 = {2, 28, 3};

static const char comm_id_format_error[] =
    "Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or [<ipv6>]:<port> or "
    "<hostname>:<port>";

void predict_copy_text(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/*
 * Versions
 */

static int parse_version_number(const char **p, int *out)
{
	long v = 0;

	if (**p < '0' || **p > '9')
		return -1;
	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (**p - '0');
		if (v > 1000000)
			return -1;
		(*p)++;
	}
	*out = (int)v;
	return 0;
}

int nccl_version_parse(const char *s, struct nccl_version *v)
{
	struct nccl_version parsed;
	const char *p = s;

	memset(v, 0, sizeof(*v));
	if (!s || parse_version_number(&p, &parsed.major) < 0 || *p++ != '.' ||
	    parse_version_number(&p, &parsed.minor) < 0 || *p++ != '.' ||
	    parse_version_number(&p, &parsed.patch) < 0 || *p != '\0')
		return CD_ERR_PARSE;
	*v = parsed;
	return 0;
}

static int version_is_unknown(const struct nccl_version *v)
{
	return v->major == 0 && v->minor == 0 && v->patch == 0;
}

static int compare_ints(int a, int b)
{
	return a < b ? -1 : a > b;
}

int nccl_version_cmp(const struct nccl_version *a, const struct nccl_version *b)
{
	int ua = version_is_unknown(a), ub = version_is_unknown(b);

	if (ua || ub)
		return ua - ub;
	if (a->major != b->major)
		return compare_ints(a->major, b->major);
	if (a->minor != b->minor)
		return compare_ints(a->minor, b->minor);
	return compare_ints(a->patch, b->patch);
}

/* NULL and {0,0,0} both stand for the newest NCCL. */
static int version_at_least(const struct nccl_version *v, const struct nccl_version *min)
{
	return !v || nccl_version_cmp(v, min) >= 0;
}

/*
 * NCCL_SOCKET_IFNAME
 */

void nccl_filter_parse(const char *value, struct nccl_list *f)
{
	nccl_list_parse(value && strlen(value) > 1 ? value : NULL, NCCL_LIST_MAX_ITEMS, f);
}

/*
 * Environment
 */

static const char *var_value(const struct nm_node *n, const char *name)
{
	const struct nm_var *v = nm_var_get(n, name);

	return v ? v->value : NULL;
}

void net_env_of(const struct nm_node *n, struct net_env *e)
{
	e->nccl_socket_ifname = var_value(n, "NCCL_SOCKET_IFNAME");
	e->nccl_socket_family = var_value(n, "NCCL_SOCKET_FAMILY");
	e->nccl_comm_id = var_value(n, "NCCL_COMM_ID");
	e->gloo_socket_ifname = var_value(n, "GLOO_SOCKET_IFNAME");
}

/* "NAME=value (from <source>)", the source only when value is the node's
 * own effective value (a caller may predict with a proposed one). */
void predict_append_variable(char *buf, size_t len, const struct nm_node *n, const char *name,
                             const char *value)
{
	const struct nm_var *v = nm_var_get(n, name);

	cd_appendf(buf, len, "%s=%s", name, value);
	if (v && v->value && strcmp(v->value, value) == 0 && v->source[0])
		cd_appendf(buf, len, " (from %s)", v->source);
}

/*
 * Addresses
 */

int predict_text_is_loopback(int family, const char *addr)
{
	struct nm_addr a = {.family = family};

	predict_copy_text(a.addr, sizeof(a.addr), addr);
	return nm_addr_is_loopback(&a);
}

static int text_is_ipv6_loopback(const struct nm_addr *a)
{
	return a->family == AF_INET6 && nm_addr_is_loopback(a);
}

const char *predict_iface_of_addr(const struct nm_node *n, const char *addr)
{
	for (size_t i = 0; i < n->naddrs; i++)
		if (strcmp(n->addrs[i].addr, addr) == 0)
			return n->addrs[i].ifname;
	return "";
}

void predict_pick_from_addr(struct net_pick *p, const struct nm_addr *a)
{
	predict_copy_text(p->ifname, sizeof(p->ifname), a->ifname);
	predict_copy_text(p->addr, sizeof(p->addr), a->addr);
	p->family = a->family;
	p->scope_id = a->scope_id;
}

/*
 * NCCL
 */

/* getifaddrs reports IFF_RUNNING per entry; an IPv4 label ("eth0:1") has
 * its interface's flags. An interface the model does not know counts as
 * running: there is nothing to say otherwise. */
static int addr_iface_running(const struct nm_node *n, const struct nm_addr *a)
{
	char base[NM_NAME];
	const struct nm_iface *f;

	predict_copy_text(base, sizeof(base), a->ifname);
	base[strcspn(base, ":")] = '\0';
	f = nm_iface_find(n, base);
	return !f || f->running;
}

/* NCCL_SOCKET_FAMILY: only the exact strings force a family; -1 = any. */
static int socket_family_of(const char *value)
{
	if (value && strcmp(value, "AF_INET") == 0)
		return AF_INET;
	if (value && strcmp(value, "AF_INET6") == 0)
		return AF_INET6;
	return -1;
}

static int already_picked(const struct nccl_prediction *out, const char *ifname)
{
	for (int i = 0; i < out->npicks; i++)
		if (strcmp(out->picks[i].ifname, ifname) == 0)
			return 1;
	return 0;
}

struct find_opts {
	int family;          /* -1 = any */
	int require_running; /* NCCL 2.28.3 and later */
	int max_ifs;
};

/* NCCL's interface search over getifaddrs with one name filter: the steps
 * run in NCCL's order, and the first address per interface name wins. */
static void find_interfaces(const struct nm_node *n, const char *list, const struct find_opts *o,
                            struct nccl_prediction *out)
{
	struct nccl_list f;

	nccl_filter_parse(list, &f);
	out->npicks = 0;
	for (size_t i = 0; i < n->naddrs && out->npicks < o->max_ifs; i++) {
		const struct nm_addr *a = &n->addrs[i];

		if (a->family != AF_INET && a->family != AF_INET6)
			continue;
		if (o->require_running && !addr_iface_running(n, a))
			continue;
		if (o->family != -1 && a->family != o->family)
			continue;
		/* only "::1" among IPv6 addresses: link-local stays in */
		if (text_is_ipv6_loopback(a))
			continue;
		if (!nccl_list_match(&f, a->ifname, -1) || already_picked(out, a->ifname))
			continue;
		predict_pick_from_addr(&out->picks[out->npicks++], a);
	}
}

/* An NCCL_COMM_ID address as ncclSocketGetAddrFromString reads it. */
struct comm_addr {
	int family;
	unsigned char bytes[16];
	unsigned scope_id;
};

enum comm_parse { COMM_ADDR_OK, COMM_ADDR_HOSTNAME, COMM_ADDR_INVALID, COMM_ADDR_UNREADABLE };

/* "[addr]:port" or "[addr%ifname]:port": the scope is that interface's
 * index on this node (if_nametoindex), 0 when it has no such interface. */
static enum comm_parse parse_comm_id_ipv6(const struct nm_node *n, const char *s,
                                          struct comm_addr *ca)
{
	const char *close = strchr(s, ']'), *percent;
	char ip[NM_ADDR], ifname[NM_NAME];
	const struct nm_iface *f;
	size_t iplen;

	if (!close)
		return COMM_ADDR_INVALID;
	percent = memrchr(s, '%', (size_t)(close - s));
	iplen = (size_t)((percent ? percent : close) - (s + 1));
	/* NCCL does not check inet_pton: an unreadable address is garbage */
	if (iplen >= sizeof(ip))
		return COMM_ADDR_UNREADABLE;
	memcpy(ip, s + 1, iplen);
	ip[iplen] = '\0';
	if (inet_pton(AF_INET6, ip, ca->bytes) != 1)
		return COMM_ADDR_UNREADABLE;
	ca->family = AF_INET6;
	ca->scope_id = 0;
	if (percent) {
		snprintf(ifname, sizeof(ifname), "%.*s", (int)(close - percent - 1), percent + 1);
		f = nm_iface_find(n, ifname);
		ca->scope_id = f ? (unsigned)f->index : 0;
	}
	return COMM_ADDR_OK;
}

/* "host:port": NCCL resolves the part before ':' or ',' with getaddrinfo
 * and takes the first answer. Only a literal IPv4 address can be followed
 * here; a name is resolved on the node at run time. */
static enum comm_parse parse_comm_id_ipv4(const char *s, struct comm_addr *ca)
{
	size_t len = strcspn(s, ":,");
	char host[NM_ADDR];

	if (len == 0)
		return COMM_ADDR_INVALID;
	if (len >= sizeof(host))
		return COMM_ADDR_HOSTNAME;
	memcpy(host, s, len);
	host[len] = '\0';
	if (inet_pton(AF_INET, host, ca->bytes) != 1)
		return COMM_ADDR_HOSTNAME;
	ca->family = AF_INET;
	ca->scope_id = 0;
	return COMM_ADDR_OK;
}

static enum comm_parse parse_comm_id(const struct nm_node *n, const char *s, struct comm_addr *ca)
{
	memset(ca, 0, sizeof(*ca));
	if (strlen(s) <= 1)
		return COMM_ADDR_INVALID;
	if (s[0] == '[')
		return parse_comm_id_ipv6(n, s, ca);
	return parse_comm_id_ipv4(s, ca);
}

static int prefix_equal(const unsigned char *a, const unsigned char *b, int bits)
{
	int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((a[whole] ^ b[whole]) & (0xff << (8 - rest)) & 0xff) == 0;
}

/* NCCL's matchSubnet: same family, same network under the local netmask,
 * and for IPv6 the same scope id (two link-local networks look alike). */
static int addr_subnet_holds(const struct nm_addr *a, const struct comm_addr *ca)
{
	unsigned char local[16];
	int maxbits = a->family == AF_INET ? 32 : 128;

	if (a->family != ca->family || a->prefix < 0 || a->prefix > maxbits)
		return 0;
	if (inet_pton(a->family, a->addr, local) != 1)
		return 0;
	if (!prefix_equal(local, ca->bytes, a->prefix))
		return 0;
	return a->family == AF_INET || a->scope_id == ca->scope_id;
}

/* ncclFindInterfaceMatchSubnet: the first address whose subnet holds the
 * COMM_ID address; no RUNNING, family or loopback test. */
static void find_subnet_match(const struct nm_node *n, const struct comm_addr *ca,
                              struct nccl_prediction *out)
{
	out->npicks = 0;
	for (size_t i = 0; i < n->naddrs; i++) {
		if (addr_subnet_holds(&n->addrs[i], ca)) {
			predict_pick_from_addr(&out->picks[0], &n->addrs[i]);
			out->npicks = 1;
			return;
		}
	}
}

/* A host name is resolved by NCCL on the node; an unreadable "[...]" leaves
 * NCCL comparing an uninitialised address. Neither can be followed here. */
static void set_cannot_predict_comm_id(const struct nm_node *n, const char *comm_id,
                                       enum comm_parse why, struct nccl_prediction *out)
{
	out->npicks = 0;
	out->cannot_predict = 1;
	out->rule[0] = '\0';
	predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_COMM_ID", comm_id);
	if (why == COMM_ADDR_HOSTNAME) {
		cd_appendf(out->rule, sizeof(out->rule), ": a host name, resolved on the node");
		predict_copy_text(
		    out->error, sizeof(out->error),
		    "cannot predict: NCCL_COMM_ID names a host that NCCL resolves at run time");
	} else {
		cd_appendf(out->rule, sizeof(out->rule), ": no IPv6 address between []");
		predict_copy_text(out->error, sizeof(out->error),
		                  "cannot predict: NCCL_COMM_ID holds no readable IPv6 address");
	}
}

/* The bootstrap with NCCL_COMM_ID: only the subnet match, whatever
 * NCCL_SOCKET_IFNAME says. */
static void predict_bootstrap_comm_id(const struct nm_node *n, const char *comm_id,
                                      struct nccl_prediction *out)
{
	struct comm_addr ca;

	enum comm_parse parsed = parse_comm_id(n, comm_id, &ca);

	if (parsed == COMM_ADDR_INVALID) {
		predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_COMM_ID", comm_id);
		predict_copy_text(out->error, sizeof(out->error), comm_id_format_error);
		return;
	}
	if (parsed != COMM_ADDR_OK) {
		set_cannot_predict_comm_id(n, comm_id, parsed, out);
		return;
	}
	predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_COMM_ID", comm_id);
	cd_appendf(out->rule, sizeof(out->rule), ": its subnet (NCCL_SOCKET_IFNAME not used)");
	find_subnet_match(n, &ca, out);
	if (out->npicks == 0)
		predict_copy_text(out->error, sizeof(out->error),
		                  "NET/Socket : No usable listening interface found");
}

/* The default path's COMM_ID hint (after "ib"). Returns 1 when it settled
 * the prediction: a match, or a value NCCL fails on or we cannot follow. */
static int try_comm_id_hint(const struct nm_node *n, const char *comm_id,
                            struct nccl_prediction *out)
{
	struct comm_addr ca;
	enum comm_parse parsed;

	if (!comm_id || strlen(comm_id) <= 1)
		return 0;
	parsed = parse_comm_id(n, comm_id, &ca);
	if (parsed == COMM_ADDR_INVALID) {
		/* ncclFindInterfaces fails with the parser's own warning */
		predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_COMM_ID", comm_id);
		predict_copy_text(out->error, sizeof(out->error),
		                  comm_id[0] == '['
		                      ? "Net : No valid [IPv6]:port pair found"
		                      : "Net : No valid <IPv4_or_hostname>:<port> pair found");
		return 1;
	}
	if (parsed != COMM_ADDR_OK) {
		set_cannot_predict_comm_id(n, comm_id, parsed, out);
		return 1;
	}
	find_subnet_match(n, &ca, out);
	if (out->npicks == 0)
		return 0;
	predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_COMM_ID", comm_id);
	cd_appendf(out->rule, sizeof(out->rule), ": its subnet");
	return 1;
}

/* ncclFindInterfaces without NCCL_SOCKET_IFNAME: "ib", the COMM_ID hint,
 * then each fallback list in turn until one finds something. */
static void predict_default(const struct nm_node *n, const struct net_env *e, int newer,
                            const struct find_opts *o, struct nccl_prediction *out)
{
	const char *const newer_lists[] = {"^docker,lo,virbr", "docker", "lo", "virbr"};
	const char *const older_lists[] = {"^docker,lo", "docker", "lo"};
	const char *const *lists = newer ? newer_lists : older_lists;
	size_t nlists = newer ? CD_ARRAY_LEN(newer_lists) : CD_ARRAY_LEN(older_lists);

	find_interfaces(n, "ib", o, out);
	if (out->npicks > 0) {
		cd_appendf(out->rule, sizeof(out->rule), "default: ib");
		return;
	}
	if (try_comm_id_hint(n, e->nccl_comm_id, out))
		return;
	for (size_t i = 0; i < nlists; i++) {
		find_interfaces(n, lists[i], o, out);
		if (out->npicks > 0) {
			cd_appendf(out->rule, sizeof(out->rule), "default: %s", lists[i]);
			return;
		}
	}
	cd_appendf(out->rule, sizeof(out->rule), "default: ib, %s%s all empty",
	           newer ? "^docker,lo,virbr, docker, lo, virbr" : "^docker,lo, docker, lo",
	           e->nccl_comm_id && strlen(e->nccl_comm_id) > 1 ? ", NCCL_COMM_ID subnet" : "");
}

static void append_family_note(const struct nm_node *n, const struct net_env *e,
                               struct nccl_prediction *out)
{
	if (!e->nccl_socket_family)
		return;
	cd_appendf(out->rule, sizeof(out->rule), "; ");
	predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_SOCKET_FAMILY",
	                        e->nccl_socket_family);
	if (socket_family_of(e->nccl_socket_family) == -1)
		cd_appendf(out->rule, sizeof(out->rule), " ignored");
}

void nccl_predict(const struct nm_node *n, const struct net_env *e,
                  const struct nccl_version *version, int max_ifs, struct nccl_prediction *out)
{
	int newer = version_at_least(version, &nccl_2_28_3);
	const char *ifname = e->nccl_socket_ifname;
	struct find_opts o = {
	    .family = socket_family_of(e->nccl_socket_family),
	    .require_running = newer,
	    .max_ifs = max_ifs < 1                      ? 1
	               : max_ifs > NCCL_PREDICT_MAX_IFS ? NCCL_PREDICT_MAX_IFS
	                                                : max_ifs,
	};

	memset(out, 0, sizeof(*out));
	out->bootstrap = o.max_ifs == 1;
	if (out->bootstrap && e->nccl_comm_id) {
		predict_bootstrap_comm_id(n, e->nccl_comm_id, out);
		return;
	}
	if (ifname && strlen(ifname) > 1) {
		predict_append_variable(out->rule, sizeof(out->rule), n, "NCCL_SOCKET_IFNAME",
		                        ifname);
		find_interfaces(n, ifname, &o, out);
	} else {
		predict_default(n, e, newer, &o, out);
		if (ifname && !out->cannot_predict)
			cd_appendf(out->rule, sizeof(out->rule),
			           " (NCCL_SOCKET_IFNAME=\"%s\" ignored: %zu character%s)", ifname,
			           strlen(ifname), strlen(ifname) == 1 ? "" : "s");
	}
	if (out->cannot_predict || out->error[0])
		return;
	append_family_note(n, e, out);
	if (out->npicks == 0)
		predict_copy_text(out->error, sizeof(out->error),
		                  out->bootstrap ? "Bootstrap : no socket interface found"
		                                 : "NET/Socket : no interface found");
}

/* What getnameinfo(NI_NUMERICHOST) prints: a link-local IPv6 address with
 * its scope as the interface name, any other scope as a number. */
static void format_nccl_addr(char *buf, size_t len, const struct net_pick *p)
{
	struct nm_addr a = {.family = p->family};

	predict_copy_text(a.addr, sizeof(a.addr), p->addr);
	if (p->family != AF_INET6 || p->scope_id == 0)
		snprintf(buf, len, "%s", p->addr);
	else if (nm_addr_is_link_local(&a))
		snprintf(buf, len, "%s%%%s", p->addr, p->ifname);
	else
		snprintf(buf, len, "%s%%%u", p->addr, p->scope_id);
}

void nccl_log_line(const struct nccl_prediction *p, char *buf, size_t len)
{
	char addr[NM_ADDR + NM_NAME + 2];

	if (len == 0)
		return;
	buf[0] = '\0';
	if (p->npicks == 0) {
		cd_appendf(buf, len, "%s", p->error);
		return;
	}
	if (p->bootstrap) {
		format_nccl_addr(addr, sizeof(addr), &p->picks[0]);
		cd_appendf(buf, len, "Bootstrap: Using %s:%s<0>", p->picks[0].ifname, addr);
		return;
	}
	cd_appendf(buf, len, "NET/Socket : Using");
	for (int i = 0; i < p->npicks; i++) {
		format_nccl_addr(addr, sizeof(addr), &p->picks[i]);
		cd_appendf(buf, len, " [%d]%s:%s<0>", i, p->picks[i].ifname, addr);
	}
}
