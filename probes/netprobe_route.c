/* SPDX-License-Identifier: MIT */
/* netprobe_route.c - the network probe's route queries (see netprobe.h):
 * netprobe_routes asks the kernel over netlink (RTM_GETROUTE) which device,
 * source and gateway it would use toward each address. */
#include "probes/netprobe.h"
#include "probes/netprobe_internal.h"
#include "cd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define ROUTE_TIMEOUT_MS 1000
#define NL_BUF_SIZE      16384

/* "ENETUNREACH" for ENETUNREACH; "errno N" for a number glibc cannot name. */
static json_t *errno_name(int e)
{
	const char *name = strerrorname_np(e);
	char buf[32];

	if (!name) {
		snprintf(buf, sizeof(buf), "errno %d", e);
		name = buf;
	}
	return netprobe_text(name);
}

struct route_query {
	int family; /* AF_INET or AF_INET6 */
	unsigned char to[16], from[16];
	int has_from;
	uint32_t oif; /* 0: none */
};

/* Text -> family and bytes; 0 or -1 when it is not an IP address. */
static int parse_ip(const char *s, int *family, unsigned char *bytes)
{
	if (inet_pton(AF_INET, s, bytes) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, bytes) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

/* A pair -> query; 0 or EINVAL. */
static int route_query_from(json_t *pair, struct route_query *q)
{
	json_t *to = json_object_get(pair, "to"), *from = json_object_get(pair, "from");
	json_t *scope = json_object_get(pair, "scope_id");
	int from_family;

	memset(q, 0, sizeof(*q));
	if (!json_is_object(pair) || !json_is_string(to) ||
	    parse_ip(json_string_value(to), &q->family, q->to) < 0)
		return EINVAL;
	if (from && !json_is_null(from)) {
		if (!json_is_string(from) ||
		    parse_ip(json_string_value(from), &from_family, q->from) < 0 ||
		    from_family != q->family)
			return EINVAL;
		q->has_from = 1;
	}
	if (scope && !json_is_null(scope)) {
		if (!json_is_integer(scope) || json_integer_value(scope) < 0 ||
		    json_integer_value(scope) > UINT32_MAX)
			return EINVAL;
		q->oif = (uint32_t)json_integer_value(scope);
	}
	return 0;
}

/* A netlink socket whose every recv gives up after ROUTE_TIMEOUT_MS; -1 with
 * errno. */
static int route_socket(void)
{
	struct timeval tv = {.tv_sec = ROUTE_TIMEOUT_MS / 1000,
	                     .tv_usec = ROUTE_TIMEOUT_MS % 1000 * 1000};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), e;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Append one attribute; the request buffer has room for the three a query
 * can carry. */
static void add_attr(struct nlmsghdr *nh, unsigned short type, const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)(void *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_SPACE(len);
}

/* What `ip route get TO [from FROM] [oif N]` sends. 0 or errno. */
static int route_send(int fd, const struct route_query *q, uint32_t seq)
{
	union {
		struct nlmsghdr nh;
		char buf[NLMSG_SPACE(sizeof(struct rtmsg)) + 3 * RTA_SPACE(16)];
	} req;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	size_t alen = q->family == AF_INET ? 4 : 16;
	struct rtmsg *rt;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = seq;
	rt = NLMSG_DATA(&req.nh);
	rt->rtm_family = (unsigned char)q->family;
	rt->rtm_dst_len = (unsigned char)(alen * 8);
	add_attr(&req.nh, RTA_DST, q->to, alen);
	if (q->has_from) {
		rt->rtm_src_len = (unsigned char)(alen * 8);
		add_attr(&req.nh, RTA_SRC, q->from, alen);
	}
	if (q->oif)
		add_attr(&req.nh, RTA_OIF, &q->oif, sizeof(q->oif));
	while (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) <
	       0)
		if (errno != EINTR)
			return errno;
	return 0;
}

static const char *route_type_name(unsigned type)
{
	static const char *const names[] = {
	    [RTN_UNSPEC] = "unspec",
	    [RTN_UNICAST] = "unicast",
	    [RTN_LOCAL] = "local",
	    [RTN_BROADCAST] = "broadcast",
	    [RTN_ANYCAST] = "anycast",
	    [RTN_MULTICAST] = "multicast",
	    [RTN_BLACKHOLE] = "blackhole",
	    [RTN_UNREACHABLE] = "unreachable",
	    [RTN_PROHIBIT] = "prohibit",
	    [RTN_THROW] = "throw",
	    [RTN_NAT] = "nat",
	    [RTN_XRESOLVE] = "xresolve",
	};

	return type < CD_ARRAY_LEN(names) && names[type] ? names[type] : "unknown";
}

/* An address attribute as text, null unless it has the family's size. */
static json_t *attr_addr_json(const struct rtattr *rta, int family)
{
	char buf[INET6_ADDRSTRLEN];
	size_t want = family == AF_INET ? 4 : 16;

	if (RTA_PAYLOAD(rta) != want || !inet_ntop(family, RTA_DATA(rta), buf, sizeof(buf)))
		return json_null();
	return netprobe_text(buf);
}

/*
 * The walks of <linux/rtnetlink.h> and <linux/netlink.h> (RTA_OK, RTA_NEXT,
 * NLMSG_OK, NLMSG_NEXT) as functions: the macros cast char * to the header
 * types, which -Wcast-align flags under clang. Netlink keeps every header
 * 4-byte aligned within the (aligned) buffers used here.
 */
static const struct rtattr *rta_first(const struct rtmsg *rt)
{
	return (const void *)((const char *)rt + NLMSG_ALIGN(sizeof(*rt)));
}

static int rta_ok(const struct rtattr *rta, int len)
{
	return len >= (int)sizeof(*rta) && rta->rta_len >= sizeof(*rta) && rta->rta_len <= len;
}

static const struct rtattr *rta_next(const struct rtattr *rta, int *len)
{
	*len -= (int)RTA_ALIGN(rta->rta_len);
	return (const void *)((const char *)rta + RTA_ALIGN(rta->rta_len));
}

static int nlmsg_ok(const struct nlmsghdr *nh, int len)
{
	return len >= (int)sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) &&
	       nh->nlmsg_len <= (unsigned)len;
}

static const struct nlmsghdr *nlmsg_next(const struct nlmsghdr *nh, int *len)
{
	*len -= (int)NLMSG_ALIGN(nh->nlmsg_len);
	return (const void *)((const char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
}

/* Fill dev, src, gateway and type from an RTM_NEWROUTE answer. 0 or EPROTO. */
static int route_parse(const struct nlmsghdr *nh, json_t *entry)
{
	const struct rtmsg *rt = NLMSG_DATA(nh);
	json_t *src = NULL, *gw = NULL;
	char dev[IF_NAMESIZE];
	uint32_t oif = 0;
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*rt));

	if (len < 0)
		return EPROTO;
	for (const struct rtattr *rta = rta_first(rt); rta_ok(rta, len);
	     rta = rta_next(rta, &len)) {
		if (rta->rta_type == RTA_OIF && RTA_PAYLOAD(rta) == sizeof(oif))
			memcpy(&oif, RTA_DATA(rta), sizeof(oif));
		else if (rta->rta_type == RTA_PREFSRC && !src)
			src = attr_addr_json(rta, rt->rtm_family);
		else if (rta->rta_type == RTA_GATEWAY && !gw)
			gw = attr_addr_json(rta, rt->rtm_family);
	}
	json_object_set_new(entry, "dev",
	                    oif && if_indextoname(oif, dev) ? netprobe_text(dev) : json_null());
	json_object_set_new(entry, "src", src ? src : json_null());
	json_object_set_new(entry, "gateway", gw ? gw : json_null());
	json_object_set_new(entry, "type", netprobe_text(route_type_name(rt->rtm_type)));
	return 0;
}

/* Go through one datagram from the kernel: 0 when the answer to seq was in
 * it and parsed, an errno for an error answer, -1 when it was not there. */
static int route_scan(const struct nlmsghdr *nh, int len, uint32_t seq, json_t *entry)
{
	for (; nlmsg_ok(nh, len); nh = nlmsg_next(nh, &len)) {
		if (nh->nlmsg_seq != seq)
			continue; /* a late answer to an earlier, timed-out query */
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return EPROTO;
			if (e->error == 0)
				continue; /* an acknowledgement, not the answer */
			return e->error < 0 ? -e->error : EPROTO;
		}
		if (nh->nlmsg_type == RTM_NEWROUTE)
			return route_parse(nh, entry);
	}
	return -1;
}

/* Wait for the kernel's answer to seq, at most ROUTE_TIMEOUT_MS. 0 or errno. */
static int route_receive(int fd, uint32_t seq, json_t *entry)
{
	union {
		struct nlmsghdr nh;
		char buf[NL_BUF_SIZE];
	} reply;
	int64_t deadline = cd_now_ms() + ROUTE_TIMEOUT_MS;

	while (cd_now_ms() < deadline) {
		struct sockaddr_nl from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, reply.buf, sizeof(reply.buf), MSG_TRUNC,
		                     (struct sockaddr *)&from, &from_len);
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
		if ((size_t)n > sizeof(reply.buf))
			return EMSGSIZE;
		if (from.nl_pid != 0)
			continue; /* only the kernel answers route queries */
		if ((rc = route_scan(&reply.nh, (int)n, seq, entry)) >= 0)
			return rc;
	}
	return ETIMEDOUT;
}

static void set_route_error(json_t *entry, int e)
{
	json_object_set_new(entry, "error", netprobe_text(strerror(e)));
	json_object_set_new(entry, "errno_name", errno_name(e));
}

static json_t *string_or_null(json_t *v)
{
	return json_is_string(v) ? json_incref(v) : json_null();
}

static json_t *route_one(int fd, int fd_errno, json_t *pair, uint32_t seq)
{
	json_t *entry = json_object();
	struct route_query q;
	int e;

	json_object_set_new(entry, "to", string_or_null(json_object_get(pair, "to")));
	json_object_set_new(entry, "from", string_or_null(json_object_get(pair, "from")));
	e = route_query_from(pair, &q);
	if (!e && fd < 0)
		e = fd_errno;
	if (!e)
		e = route_send(fd, &q, seq);
	if (!e)
		e = route_receive(fd, seq, entry);
	if (e)
		set_route_error(entry, e);
	return entry;
}

json_t *netprobe_routes(json_t *pairs, char *err, size_t errlen)
{
	json_t *routes, *pair;
	int fd = -1, fd_errno = 0;
	size_t i;

	if (!json_is_array(pairs)) {
		cd_errf(err, errlen, CD_ERR_PARSE,
		        "\"pairs\" must be an array of {\"to\", \"from\", \"scope_id\"} objects");
		return NULL;
	}
	routes = json_array();
	if (json_array_size(pairs) > 0 && (fd = route_socket()) < 0)
		fd_errno = errno;
	json_array_foreach(pairs, i, pair)
	{
		json_array_append_new(routes, route_one(fd, fd_errno, pair, (uint32_t)i + 1));
	}
	netprobe_close_fd(&fd);
	return routes;
}
