/* SPDX-License-Identifier: MIT */
/*
 * netprobe.h - the agent's network probe: what a node's kernel says about its
 * interfaces, addresses, routes, name resolution and firewall. Runs on the
 * node (agent side); answers the `netprobe` and `route` requests
 * (docs/protocol.md). Native C where the kernel answers directly
 * (getifaddrs, /sys/class/net, netlink RTM_GETROUTE, getaddrinfo, bind);
 * firewall tools (nft, iptables-save, ufw, firewall-cmd) are run as
 * children with a deadline, and only read.
 *
 * netprobe_collect result, keys in this order (a part that cannot be read
 * is left empty and "errors": {"<key>": "<message>"} says why):
 *   hostname       gethostname()
 *   interfaces     [{"name", "index", "up", "running", "loopback",
 *                    "operstate" ("up", "down", "unknown", ...), "mtu",
 *                    "mac" (or null), "speed_mbps" (or null when unknown or
 *                    negative), "driver" (or null), "kind", "master" (the
 *                    bridge/bond it is enslaved to, or null), "rp_filter",
 *                    "arp_ignore", "arp_announce" (the effective IPv4
 *                    value: the larger of conf/all and the link's own, read
 *                    from /proc/sys/net/ipv4/conf; null when unreadable or
 *                    under a fake root)}]
 *                  in if_nameindex() order. kind is one of: "loopback",
 *                  "physical" (has /sys/class/net/<if>/device), "bridge",
 *                  "bond", "vlan", "veth", "tun", "ipoib" (type 32),
 *                  "virtual" (anything else without a device); see
 *                  netprobe_iface_kind. up/running/loopback are null when
 *                  the flags cannot be read, operstate and mtu when their
 *                  sysfs files cannot. When /sys/class/net shows another
 *                  network namespace (/sys was not remounted after entering
 *                  one: its ifindex for the name differs, or the real /sys
 *                  has no such link), every sysfs-based field of that link
 *                  is null, its kind comes from its driver name alone (see
 *                  netprobe_iface_kind) and errors["interfaces"] says so.
 *   addresses      [{"ifname" (as getifaddrs names it: an IPv4 label
 *                    such as "eth0:1" included), "family" ("inet"|"inet6"),
 *                    "address" (no "%scope" suffix), "prefix" (or null
 *                    without a netmask), "scope" ("host", "link", "global",
 *                    "ula", "site"), "scope_id" (the interface index for
 *                    link-local IPv6, else 0)}]
 *                  exactly in getifaddrs() order, AF_INET and AF_INET6 only:
 *                  NCCL and Gloo walk this order, so the predictors do too.
 *   hostname_addrs [{"family", "address", "scope_id", "bindable" (bool),
 *                    "bind_error" (strerror, only when not bindable)}]
 *                  getaddrinfo(hostname, NULL, AF_UNSPEC, SOCK_STREAM) in
 *                  its order; bindable = bind() to port 0 succeeded (what
 *                  Gloo and PyTorch test). "hostname_error" (gai_strerror)
 *                  replaces it when resolution fails.
 *   hosts_lines    ["127.0.1.1 node1", ...]: /etc/hosts lines (comments
 *                  stripped, whitespace collapsed) naming the hostname or its
 *                  short form (see netprobe_hosts_lines)
 *   port_range     [lo, hi] from /proc/sys/net/ipv4/ip_local_port_range, or null
 *   shm_bytes      total size of the filesystem at /dev/shm (statvfs), or null
 *   neigh_gc_thresh3 {"inet": n, "inet6": n}: the hard limit of the kernel's
 *                  neighbour (ARP/NDP) table, net.ipv{4,6}.neigh.default.
 *                  gc_thresh3; a member is null where the file cannot be read
 *                  (a network namespace other than the first has none)
 *   rdma, rdma_node the RDMA ports (one object per HCA port: states,
 *                  link layer, rate, LIDs, GIDs, netdev, MTU, PCI path) and the
 *                  node's verbs library, providers, peer-memory module, memlock
 *                  limit and NCCL_IB_ and NCCL_NET variables: see rdma_probe.h.
 *                  They read under sysfs_root, else $CLUSTERDOC_SYSFS_ROOT.
 *   nccl_conf      [{"path", "vars": {"KEY": "VALUE"}}] for the files NCCL
 *                  reads, in NCCL's precedence order: $NCCL_CONF_FILE if set,
 *                  else ~/.nccl.conf; then /etc/nccl.conf. Files that do not
 *                  exist are left out. KEY=VALUE lines; '#' comments.
 *   env            the job-relevant variables of the agent's (login)
 *                  environment: facts_env_filter(environ)
 *   firewall       {"nft": {"ruleset": <`nft -j list ruleset` JSON> | null,
 *                           "error": "..."},
 *                   "iptables": {"rules": "<iptables-save text>" | null,
 *                                "error"},
 *                   "ip6tables": likewise,
 *                   "ufw": "active"|"inactive"|"absent",
 *                   "firewalld": "running"|"not running"|"absent"}
 *                  or null when opts->no_firewall. Each text is capped at
 *                  NETPROBE_FIREWALL_MAX bytes ("truncated": true then; the
 *                  iptables text keeps its whole lines up to the cap, an nft
 *                  ruleset over the cap is dropped: null). A tool that is not
 *                  installed ("not installed"), not permitted, fails or
 *                  misses the deadline gives null plus "error"; "error" and
 *                  "truncated" are present only then. The tools run at the
 *                  same time, under one 3 s deadline, with stdin /dev/null and
 *                  LC_ALL=C; the first line of their stderr goes into
 *                  "error". ufw: "active" when the ufw binary exists and
 *                  /etc/ufw/ufw.conf says ENABLED=yes. firewalld: "running"
 *                  when the process in /run/firewalld/firewalld.pid is alive
 *                  or `firewall-cmd --state` says so, "not running" when
 *                  firewall-cmd is installed (errors["firewall"] says why
 *                  when firewall-cmd itself fails to answer).
 *   errors         {"<key>": "<message>"}
 *
 * Never fails as a whole; blocks at most a few seconds (the firewall tools
 * have a 3 s deadline, name resolution the resolver's own).
 */
#ifndef CD_PROBES_NETPROBE_H
#define CD_PROBES_NETPROBE_H

#include <jansson.h>
#include <stddef.h>

#define NETPROBE_FIREWALL_MAX (256 * 1024)

struct netprobe_opts {
	const char *sysfs_root; /* prefix for /sys paths (tests); NULL = "" */
	const char *etc_root;   /* prefix for /etc paths (tests); NULL = "" */
	int no_firewall;        /* 1 = skip the firewall tools */
	const char *tool_dirs;  /* ':'-separated directories searched for the
	                           firewall tools (tests); NULL =
	                           "/usr/sbin:/sbin:/usr/bin:/bin" */
};

void netprobe_opts_init(struct netprobe_opts *o);

json_t *netprobe_collect(const struct netprobe_opts *o);

/*
 * The kernel's route toward each destination (netlink RTM_GETROUTE, what
 * `ip route get TO [from FROM]` prints). pairs: [{"to": addr, "scope_id": n
 * (optional), "from": addr (optional)}]. Returns a new array, one entry per
 * pair in order: {"to", "from", "dev", "src", "gateway" (or null), "type"
 * ("unicast", "local", "unreachable", ...)} or {"to", "from", "error":
 * strerror, "errno_name": "ENETUNREACH"}. "from" is null when not given,
 * "dev" and "src" null when the kernel names none. A pair that is not an
 * object, or whose "to" or "from" is not an IP address, gets the error
 * EINVAL. Each answer is awaited at most 1 s (ETIMEDOUT then). NULL only
 * when pairs is not an array (message in err).
 */
json_t *netprobe_routes(json_t *pairs, char *err, size_t errlen);

/*
 * How often the kernel found its neighbour table full (the "table_fulls"
 * column of /proc/net/stat/arp_cache plus ndisc_cache, summed over CPUs):
 * a packet to a peer whose address could not be resolved then is dropped.
 * -1 when neither file can be read (they exist only in the first network
 * namespace). The connect request reports how much it grew.
 */
long long netprobe_neigh_table_fulls(void);

/*
 * Pure parsers, unit tested and fuzzed.
 */

/* /proc/net/stat/{arp,ndisc}_cache text -> the sum of its "table_fulls"
 * column (hexadecimal, one row per CPU) in *fulls, 0; CD_ERR_PARSE when the
 * header has no such column or a row is short or not hexadecimal. */
int netprobe_parse_neigh_stat(const char *text, size_t len, long long *fulls);

/* "32768\t60999\n" -> 0 and *lo, *hi; CD_ERR_PARSE otherwise (anything
 * but two whitespace-separated decimals 0 <= lo <= hi <= 65535). */
int netprobe_parse_port_range(const char *text, int *lo, int *hi);

/* /etc/hosts text -> new array of the lines (comments stripped, whitespace
 * collapsed to one space) that name `hostname` or its short form (the part
 * before the first dot) among their names (not the address field), compared
 * without case as the resolver does. */
json_t *netprobe_hosts_lines(const char *text, size_t len, const char *hostname);

/* nccl.conf text -> new object {"KEY": "VALUE"}: NCCL's own reading: lines
 * "KEY=VALUE" (split at the first '='), '#' as the first non-blank character
 * makes a comment line, whitespace around KEY and VALUE trimmed; lines
 * without '=' or with an empty KEY are skipped; the first occurrence of a
 * key wins. */
json_t *netprobe_parse_nccl_conf(const char *text, size_t len);

/* The address scope name for an address: "host" (127/8, ::1), "link"
 * (169.254/16, fe80::/10), "ula" (fc00::/7), "site" (fec0::/10),
 * "global" otherwise. family is AF_INET or AF_INET6, addr points to a
 * struct in_addr / in6_addr. */
const char *netprobe_addr_scope(int family, const void *addr);

/*
 * The kind of interface ifname (see "interfaces" above) from what
 * <sysfs_root>/sys/class/net/<ifname>/ holds; sysfs_root NULL = "". In
 * this order: is_loopback -> "loopback"; type 32 -> "ipoib"; uevent
 * DEVTYPE=vlan/bridge/bond; a bridge/ or bonding/ directory; tun_flags ->
 * "tun"; device -> "physical"; no device, type 1 (Ethernet) and an iflink
 * other than its own ifindex -> "veth"; else "virtual". sysfs cannot tell a
 * veth from a macvlan or ipvlan (both have a lower link), so when it reads
 * the real /sys netprobe_collect asks the kernel for the driver name
 * (ETHTOOL_GDRVINFO) of a link this function calls "veth" or "virtual" and
 * goes by it: "veth", "bridge", "bonding", "tun" and "802.1Q VLAN Support"
 * give their kinds, any other driver "virtual". Always returns a static
 * string.
 */
const char *netprobe_iface_kind(const char *sysfs_root, const char *ifname, int is_loopback);

#endif
