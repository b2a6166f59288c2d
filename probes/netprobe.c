/* netprobe.c - the agent's network probe (see netprobe.h): interfaces and
 * addresses as the kernel lists them, name resolution, routes over netlink,
 * and the firewall as the installed tools print it. */
#include "probes/netprobe.h"
#include "probes/facts.h"
#include "cd.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

extern char **environ;

#define SMALL_FILE_MAX    (64u << 10) /* /etc/hosts, nccl.conf, ufw.conf */
#define ATTR_MAX          4096        /* one sysfs or /proc attribute: a page at most */
#define DEFAULT_TOOL_DIRS "/usr/sbin:/sbin:/usr/bin:/bin"
#define TOOL_DEADLINE_MS  3000
#define TOOL_ERR_MAX      512   /* the start of a tool's stderr, for its error message */
#define TOOL_OUT_START    16384 /* first stdout buffer; grows to NETPROBE_FIREWALL_MAX + 1 */
#define MAX_TOOLS         4
#define REAP_GRACE_MS     1000
#define ROUTE_TIMEOUT_MS  1000
#define NL_BUF_SIZE       16384
#define FIREWALLD_PIDFILE "/run/firewalld/firewalld.pid"

void netprobe_opts_init(struct netprobe_opts *o)
{
	o->sysfs_root = NULL;
	o->etc_root = NULL;
	o->no_firewall = 0;
	o->tool_dirs = NULL;
}

/* --- small helpers --------------------------------------------------------- */

static json_t *text(const char *s)
{
	return facts_json_text(s, strlen(s));
}

static json_t *text_or_null(const char *s)
{
	return s ? text(s) : json_null();
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s))
		(*s)++, (*n)--;
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

/* Line cursor over [*p, end): sets *line and *n to the next line without its
 * '\n' and advances *p. Returns 0 at the end. */
static int next_line(const char **p, const char *end, const char **line, size_t *n)
{
	const char *nl;

	if (*p >= end)
		return 0;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*n = (size_t)((nl ? nl : end) - *p);
	*p = nl ? nl + 1 : end;
	return 1;
}

/* Field cursor over [*p, end): sets *f and *n to the next run of non-blanks
 * and advances *p. Returns 0 when none is left. */
static int next_field(const char **p, const char *end, const char **f, size_t *n)
{
	const char *s = *p;

	while (s < end && is_space(*s))
		s++;
	if (s == end) {
		*p = s;
		return 0;
	}
	*f = s;
	while (s < end && !is_space(*s))
		s++;
	*n = (size_t)(s - *f);
	*p = s;
	return 1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* "ENETUNREACH" for ENETUNREACH; "errno N" for a number glibc cannot name. */
static json_t *errno_name(int e)
{
	const char *name = strerrorname_np(e);
	char buf[32];

	if (!name) {
		snprintf(buf, sizeof(buf), "errno %d", e);
		name = buf;
	}
	return text(name);
}

/* --- pure parsers ---------------------------------------------------------- */

/* A decimal of at most 65535 at *p; advances *p past it. */
static int parse_port(const char **p, int *out)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -1;
	}
	*p = s;
	*out = (int)v;
	return 0;
}

static const char *skip_spaces(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

int netprobe_parse_port_range(const char *text_in, int *lo, int *hi)
{
	const char *s;
	int a, b;

	if (!text_in)
		return CD_ERR_PARSE;
	s = skip_spaces(text_in);
	if (parse_port(&s, &a) < 0 || !is_space(*s))
		return CD_ERR_PARSE;
	s = skip_spaces(s);
	if (parse_port(&s, &b) < 0 || *skip_spaces(s) != '\0' || a > b)
		return CD_ERR_PARSE;
	*lo = a;
	*hi = b;
	return 0;
}

/* Whether field f (n bytes) is the name want (want_n bytes), without case. */
static int name_is(const char *f, size_t n, const char *want, size_t want_n)
{
	return want_n && n == want_n && strncasecmp(f, want, n) == 0 && !memchr(f, '\0', n);
}

/* Whether a hosts line (comment already cut) lists the host among its names;
 * the first field is the address and does not count. */
static int hosts_line_names(const char *line, size_t n, const char *host, size_t host_n,
                            size_t short_n)
{
	const char *p = line, *end = line + n, *f;
	size_t fn;
	int first = 1;

	while (next_field(&p, end, &f, &fn)) {
		if (!first && (name_is(f, fn, host, host_n) || name_is(f, fn, host, short_n)))
			return 1;
		first = 0;
	}
	return 0;
}

/* The fields of a line joined by single spaces, as a JSON string. */
static json_t *collapsed_line(const char *line, size_t n)
{
	const char *p = line, *end = line + n, *f;
	char *buf = cd_malloc(n + 1);
	size_t out = 0, fn;
	json_t *j;

	while (next_field(&p, end, &f, &fn)) {
		if (out)
			buf[out++] = ' ';
		memcpy(buf + out, f, fn);
		out += fn;
	}
	j = facts_json_text(buf, out);
	free(buf);
	return j;
}

json_t *netprobe_hosts_lines(const char *text_in, size_t len, const char *hostname)
{
	json_t *lines = json_array();
	const char *p = text_in, *end, *line, *hash;
	size_t n, host_n, short_n;

	if (!text_in || !hostname || !*hostname)
		return lines;
	end = text_in + len;
	host_n = strlen(hostname);
	short_n = strcspn(hostname, ".");
	while (next_line(&p, end, &line, &n)) {
		if ((hash = memchr(line, '#', n)))
			n = (size_t)(hash - line);
		if (hosts_line_names(line, n, hostname, host_n, short_n))
			json_array_append_new(lines, collapsed_line(line, n));
	}
	return lines;
}

/* vars[key] = value unless key is already there (the first one wins). */
static void set_first(json_t *vars, const char *key, size_t key_n, const char *val, size_t val_n)
{
	json_t *name = facts_json_text(key, key_n);

	if (!json_object_get(vars, json_string_value(name)))
		json_object_set_new(vars, json_string_value(name), facts_json_text(val, val_n));
	json_decref(name);
}

json_t *netprobe_parse_nccl_conf(const char *text_in, size_t len)
{
	json_t *vars = json_object();
	const char *p = text_in, *end, *line, *eq, *key, *val;
	size_t n, key_n, val_n;

	if (!text_in)
		return vars;
	end = text_in + len;
	while (next_line(&p, end, &line, &n)) {
		trim(&line, &n);
		if (!n || line[0] == '#' || !(eq = memchr(line, '=', n)))
			continue;
		key = line;
		key_n = (size_t)(eq - line);
		val = eq + 1;
		val_n = n - key_n - 1;
		trim(&key, &key_n);
		trim(&val, &val_n);
		if (key_n)
			set_first(vars, key, key_n, val, val_n);
	}
	return vars;
}

const char *netprobe_addr_scope(int family, const void *addr)
{
	const unsigned char *b = addr;

	if (family == AF_INET) {
		if (b[0] == 127)
			return "host";
		if (b[0] == 169 && b[1] == 254)
			return "link";
		return "global";
	}
	if (family != AF_INET6)
		return "global";
	if (IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)addr))
		return "host";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "site";
	if ((b[0] & 0xfe) == 0xfc)
		return "ula";
	return "global";
}

/* --- sysfs ----------------------------------------------------------------- */

/* A small file without trailing whitespace, as a new string; NULL when it
 * cannot be read (`speed` of a virtual link fails with EINVAL, for one). */
static char *read_attr(const char *path)
{
	char *data;
	size_t len;

	if (facts_read_file(path, ATTR_MAX, &data, &len, NULL, 0) < 0)
		return NULL;
	while (len && is_space(data[len - 1]))
		data[--len] = '\0';
	return data;
}

/* A decimal integer file; 0 and *v, or -1 when unreadable or not a number. */
static int read_attr_long(const char *path, long *v)
{
	char *s = read_attr(path), *end;
	long x;
	int rc = -1;

	if (!s)
		return -1;
	errno = 0;
	x = strtol(s, &end, 10);
	if (!errno && end != s && *end == '\0') {
		*v = x;
		rc = 0;
	}
	free(s);
	return rc;
}

/* The last component of a symlink's target, as a new string, or NULL. */
static char *read_link_name(const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *base;

	if (n <= 0)
		return NULL;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return *base ? cd_strdup(base) : NULL;
}

static int path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* "<root>/sys/class/net/<ifname>/<leaf>" */
static char *net_path(const char *root, const char *ifname, const char *leaf)
{
	return cd_asprintf("%s/sys/class/net/%s/%s", root, ifname, leaf);
}

static char *net_attr(const char *root, const char *ifname, const char *leaf)
{
	char *path = net_path(root, ifname, leaf), *v = read_attr(path);

	free(path);
	return v;
}

static int net_attr_long(const char *root, const char *ifname, const char *leaf, long *v)
{
	char *path = net_path(root, ifname, leaf);
	int rc = read_attr_long(path, v);

	free(path);
	return rc;
}

static int net_has(const char *root, const char *ifname, const char *leaf)
{
	char *path = net_path(root, ifname, leaf);
	int yes = path_exists(path);

	free(path);
	return yes;
}

static char *net_link_name(const char *root, const char *ifname, const char *leaf)
{
	char *path = net_path(root, ifname, leaf), *name = read_link_name(path);

	free(path);
	return name;
}

/* The kernel never names an interface "", ".", ".." or with a '/'; the
 * classification helper is public, so it refuses names that would leave the
 * interface's directory. */
static int ifname_is_safe(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/* The kind a uevent DEVTYPE= line names, or NULL when it names none of the
 * kinds that can only be told this way (a vlan has no other sysfs sign). */
static const char *devtype_kind(const char *root, const char *ifname)
{
	static const char *const kinds[] = {"vlan", "bridge", "bond"};
	char *uevent = net_attr(root, ifname, "uevent"), *line, *save = NULL;
	const char *kind = NULL;

	if (!uevent)
		return NULL;
	for (line = strtok_r(uevent, "\n", &save); line && !kind;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "DEVTYPE=", 8) != 0)
			continue;
		for (size_t k = 0; k < CD_ARRAY_LEN(kinds); k++)
			if (strcmp(line + 8, kinds[k]) == 0)
				kind = kinds[k];
		break;
	}
	free(uevent);
	return kind;
}

/* A link stacked on another (iflink names a different interface): a veth's
 * iflink is its peer, a macvlan's or ipvlan's the lower device. */
static int has_lower_link(const char *root, const char *ifname)
{
	long index, link;

	return net_attr_long(root, ifname, "ifindex", &index) == 0 &&
	       net_attr_long(root, ifname, "iflink", &link) == 0 && link > 0 && link != index;
}

const char *netprobe_iface_kind(const char *sysfs_root, const char *ifname, int is_loopback)
{
	const char *root = or_empty(sysfs_root), *kind;
	long type = -1;

	if (is_loopback)
		return "loopback";
	if (!ifname_is_safe(ifname))
		return "virtual";
	if (net_attr_long(root, ifname, "type", &type) < 0)
		type = -1;
	/* an IPoIB link has a device too: test its type first */
	if (type == ARPHRD_INFINIBAND)
		return "ipoib";
	if ((kind = devtype_kind(root, ifname)))
		return kind;
	if (net_has(root, ifname, "bridge"))
		return "bridge";
	if (net_has(root, ifname, "bonding"))
		return "bond";
	if (net_has(root, ifname, "tun_flags"))
		return "tun";
	if (net_has(root, ifname, "device"))
		return "physical";
	if (type == ARPHRD_ETHER && has_lower_link(root, ifname))
		return "veth";
	return "virtual";
}

/* --- interfaces ------------------------------------------------------------ */

/* A datagram socket for interface ioctls; -1 when none can be had. */
static int control_socket(void)
{
	static const int families[] = {AF_INET, AF_INET6, AF_UNIX};

	for (size_t i = 0; i < CD_ARRAY_LEN(families); i++) {
		int fd = socket(families[i], SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* The interface flags: from any getifaddrs entry of the interface (they all
 * carry the link's flags), else SIOCGIFFLAGS. 0 and *flags, or -1. */
static int iface_flags(const char *name, const struct ifaddrs *list, int ctl, unsigned *flags)
{
	struct ifreq ifr;

	for (const struct ifaddrs *a = list; a; a = a->ifa_next) {
		if (a->ifa_name && strcmp(a->ifa_name, name) == 0) {
			*flags = a->ifa_flags;
			return 0;
		}
	}
	if (ctl < 0 || strlen(name) >= sizeof(ifr.ifr_name))
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	*flags = (unsigned short)ifr.ifr_flags;
	return 0;
}

/* The driver the kernel names for a link (ETHTOOL_GDRVINFO, which needs no
 * privilege): "veth", "macvlan", "bridge", ... 0 or -1. */
static int ethtool_driver(int ctl, const char *name, char *driver, size_t len)
{
	struct ethtool_drvinfo info;
	struct ifreq ifr;

	if (ctl < 0 || strlen(name) >= sizeof(ifr.ifr_name))
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memset(&info, 0, sizeof(info));
	memcpy(ifr.ifr_name, name, strlen(name));
	info.cmd = ETHTOOL_GDRVINFO;
	ifr.ifr_data = (void *)&info;
	if (ioctl(ctl, SIOCETHTOOL, &ifr) < 0)
		return -1;
	snprintf(driver, len, "%.*s", (int)sizeof(info.driver), info.driver);
	return 0;
}

/*
 * sysfs cannot tell a veth from a macvlan or ipvlan, and says nothing when
 * it shows another namespace; the driver name the kernel reports can. Only
 * the sysfs guesses "veth" and "virtual" are refined.
 */
static const char *refine_kind(const char *kind, int ctl, const char *name)
{
	static const struct {
		const char *driver, *kind;
	} drivers[] = {
	    {.driver = "veth", .kind = "veth"},
	    {.driver = "bridge", .kind = "bridge"},
	    {.driver = "bonding", .kind = "bond"},
	    {.driver = "802.1Q VLAN Support", .kind = "vlan"},
	    {.driver = "tun", .kind = "tun"},
	};
	char driver[64];

	if (strcmp(kind, "veth") != 0 && strcmp(kind, "virtual") != 0)
		return kind;
	if (ethtool_driver(ctl, name, driver, sizeof(driver)) < 0)
		return kind;
	for (size_t i = 0; i < CD_ARRAY_LEN(drivers); i++)
		if (strcmp(driver, drivers[i].driver) == 0)
			return drivers[i].kind;
	return "virtual";
}

static void set_flag(json_t *o, const char *key, int known, unsigned flags, unsigned bit)
{
	json_object_set_new(o, key, known ? json_boolean(flags & bit) : json_null());
}

/* An attribute as a string, null when unreadable or empty. */
static json_t *attr_json(const char *root, const char *name, const char *leaf)
{
	char *v = net_attr(root, name, leaf);
	json_t *j = v && *v ? text(v) : json_null();

	free(v);
	return j;
}

/* speed in Mb/s; null when unreadable (EINVAL for virtual links, or a down
 * link) or negative (-1: "unknown" for some drivers). */
static json_t *speed_json(const char *root, const char *name)
{
	long speed;

	if (net_attr_long(root, name, "speed", &speed) < 0 || speed < 0)
		return json_null();
	return json_integer(speed);
}

static json_t *link_name_json(const char *root, const char *name, const char *leaf)
{
	char *v = net_link_name(root, name, leaf);
	json_t *j = text_or_null(v);

	free(v);
	return j;
}

/* What sysfs says about a link; each value is JSON null when unknown. */
struct link_attrs {
	json_t *operstate, *mtu, *mac, *speed, *driver, *master;
};

static void read_link_attrs(const char *root, const char *name, struct link_attrs *a)
{
	long mtu;

	a->operstate = attr_json(root, name, "operstate");
	a->mtu = net_attr_long(root, name, "mtu", &mtu) == 0 ? json_integer(mtu) : json_null();
	a->mac = attr_json(root, name, "address");
	a->speed = speed_json(root, name);
	a->driver = link_name_json(root, name, "device/driver");
	a->master = link_name_json(root, name, "master");
}

static void null_link_attrs(struct link_attrs *a)
{
	a->operstate = json_null();
	a->mtu = json_null();
	a->mac = json_null();
	a->speed = json_null();
	a->driver = json_null();
	a->master = json_null();
}

/*
 * A process that entered a network namespace without remounting /sys sees
 * the sysfs of the namespace that mounted it: the same name may be another
 * link there (its ifindex differs), or no link at all, and nothing it says
 * holds for ours. Under a fake root (tests) a link may have no directory or
 * no ifindex: it is taken as shown.
 */
static int sysfs_shows_link(const char *root, const char *name, unsigned index)
{
	long sys_index;

	if (net_attr_long(root, name, "ifindex", &sys_index) == 0)
		return sys_index == (long)index;
	return *root || net_has(root, name, "");
}

struct iface_ctx {
	const char *root;            /* sysfs root prefix, "" for the real one */
	const struct ifaddrs *addrs; /* getifaddrs list, or NULL */
	int ctl;                     /* control socket, or -1 */
	size_t foreign;              /* links sysfs shows from another namespace */
	char first_foreign[IF_NAMESIZE + 1];
};

static json_t *interface_json(struct iface_ctx *c, const struct if_nameindex *ni)
{
	const char *name = ni->if_name, *kind;
	json_t *o = json_object();
	unsigned flags = 0;
	int known = iface_flags(name, c->addrs, c->ctl, &flags) == 0;
	int is_loopback = known && (flags & IFF_LOOPBACK);
	int shown = sysfs_shows_link(c->root, name, ni->if_index);
	struct link_attrs a;

	if (shown) {
		read_link_attrs(c->root, name, &a);
		kind = netprobe_iface_kind(c->root, name, is_loopback);
	} else {
		if (c->foreign++ == 0)
			snprintf(c->first_foreign, sizeof(c->first_foreign), "%s", name);
		null_link_attrs(&a);
		kind = is_loopback ? "loopback" : "virtual";
	}
	if (!*c->root)
		kind = refine_kind(kind, c->ctl, name);
	json_object_set_new(o, "name", text(name));
	json_object_set_new(o, "index", json_integer(ni->if_index));
	set_flag(o, "up", known, flags, IFF_UP);
	set_flag(o, "running", known, flags, IFF_RUNNING);
	set_flag(o, "loopback", known, flags, IFF_LOOPBACK);
	json_object_set_new(o, "operstate", a.operstate);
	json_object_set_new(o, "mtu", a.mtu);
	json_object_set_new(o, "mac", a.mac);
	json_object_set_new(o, "speed_mbps", a.speed);
	json_object_set_new(o, "driver", a.driver);
	json_object_set_new(o, "kind", text(kind));
	json_object_set_new(o, "master", a.master);
	return o;
}

static void report_foreign_sysfs(const struct iface_ctx *c, json_t *errors)
{
	char *msg;

	if (!c->foreign)
		return;
	msg = cd_asprintf("%s/sys/class/net shows another network namespace: %zu link%s of this "
	                  "one (%s first) %s absent there or another link's name; their sysfs "
	                  "facts are left null (remount /sys inside this namespace)",
	                  c->root, c->foreign, c->foreign == 1 ? "" : "s", c->first_foreign,
	                  c->foreign == 1 ? "is" : "are");
	facts_set_error(errors, "interfaces", msg);
	free(msg);
}

static json_t *collect_interfaces(const char *root, const struct ifaddrs *addrs, json_t *errors)
{
	struct if_nameindex *names = if_nameindex();
	struct iface_ctx c = {.root = root, .addrs = addrs, .ctl = -1};
	json_t *list = json_array();

	if (!names) {
		facts_set_error(errors, "interfaces", strerror(errno));
		return list;
	}
	c.ctl = control_socket();
	for (struct if_nameindex *ni = names; ni->if_index != 0 && ni->if_name; ni++)
		json_array_append_new(list, interface_json(&c, ni));
	report_foreign_sysfs(&c, errors);
	close_fd(&c.ctl);
	if_freenameindex(names);
	return list;
}

/* --- addresses ------------------------------------------------------------- */

/* The leading one bits of a netmask of n bytes. */
static int mask_bits(const unsigned char *m, size_t n)
{
	int bits = 0;

	for (size_t i = 0; i < n; i++) {
		for (unsigned b = m[i]; b & 0x80; b = (b << 1) & 0xff)
			bits++;
		if (m[i] != 0xff)
			break;
	}
	return bits;
}

/* An inet or inet6 address as the probe reports it. */
struct addr_info {
	const char *family; /* "inet", "inet6" */
	char text[INET6_ADDRSTRLEN];
	const char *scope;
	unsigned scope_id;
};

/* Fill ai from sa; 0, or -1 for a family other than inet and inet6. */
static int sockaddr_info(const struct sockaddr *sa, struct addr_info *ai)
{
	const void *raw;

	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		raw = &in->sin_addr;
		ai->family = "inet";
		ai->scope_id = 0;
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		raw = &in6->sin6_addr;
		ai->family = "inet6";
		ai->scope_id = in6->sin6_scope_id;
	} else {
		return -1;
	}
	if (!inet_ntop(sa->sa_family, raw, ai->text, sizeof(ai->text)))
		return -1;
	ai->scope = netprobe_addr_scope(sa->sa_family, raw);
	return 0;
}

/* The prefix length of a netmask; null without one. */
static json_t *prefix_json(const struct sockaddr *mask, int family)
{
	const void *bytes;

	if (!mask)
		return json_null();
	if (family == AF_INET)
		bytes = &((const struct sockaddr_in *)(const void *)mask)->sin_addr;
	else
		bytes = ((const struct sockaddr_in6 *)(const void *)mask)->sin6_addr.s6_addr;
	return json_integer(mask_bits(bytes, family == AF_INET ? 4 : 16));
}

static json_t *collect_addresses(const struct ifaddrs *list, int list_errno, json_t *errors)
{
	json_t *out = json_array();
	struct addr_info ai;

	if (list_errno) {
		facts_set_error(errors, "addresses", strerror(list_errno));
		return out;
	}
	/* exactly getifaddrs order: NCCL and Gloo pick by walking it */
	for (const struct ifaddrs *a = list; a; a = a->ifa_next) {
		json_t *o;

		if (sockaddr_info(a->ifa_addr, &ai) < 0)
			continue;
		o = json_object();
		json_object_set_new(o, "ifname", text(or_empty(a->ifa_name)));
		json_object_set_new(o, "family", text(ai.family));
		json_object_set_new(o, "address", text(ai.text));
		json_object_set_new(o, "prefix",
		                    prefix_json(a->ifa_netmask, a->ifa_addr->sa_family));
		json_object_set_new(o, "scope", text(ai.scope));
		json_object_set_new(o, "scope_id", json_integer(ai.scope_id));
		json_array_append_new(out, o);
	}
	return out;
}

/* --- hostname -------------------------------------------------------------- */

/* gethostname into host (len bytes); 0, or -1 with errors["hostname"] set. */
static int read_hostname(char *host, size_t len, json_t *errors)
{
	host[len - 1] = '\0';
	if (gethostname(host, len - 1) < 0) {
		facts_set_error(errors, "hostname", strerror(errno));
		return -1;
	}
	return 0;
}

/* What Gloo and PyTorch try: bind a stream socket to the address, port 0.
 * Returns 0 or the errno. */
static int bind_test(const struct addrinfo *ai)
{
	struct sockaddr_storage ss;
	int fd, e = 0;

	if (ai->ai_addrlen > sizeof(ss))
		return EINVAL;
	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)(void *)&ss)->sin_port = 0;
	else if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)&ss)->sin6_port = 0;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (const struct sockaddr *)&ss, ai->ai_addrlen) < 0)
		e = errno;
	close(fd);
	return e;
}

static json_t *hostname_addr_json(const struct addrinfo *res)
{
	struct addr_info ai;
	json_t *o;
	int e;

	if (sockaddr_info(res->ai_addr, &ai) < 0)
		return NULL;
	o = json_object();
	json_object_set_new(o, "family", text(ai.family));
	json_object_set_new(o, "address", text(ai.text));
	json_object_set_new(o, "scope_id", json_integer(ai.scope_id));
	e = bind_test(res);
	json_object_set_new(o, "bindable", json_boolean(e == 0));
	if (e)
		json_object_set_new(o, "bind_error", text(strerror(e)));
	return o;
}

/* "hostname_addrs", or "hostname_error" when the name does not resolve. */
static void collect_hostname_addrs(json_t *probe, const char *host)
{
	struct addrinfo hints, *res = NULL;
	json_t *list = json_array(), *o;
	int rc;

	if (!host) {
		json_object_set_new(probe, "hostname_addrs", list);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		json_decref(list);
		json_object_set_new(probe, "hostname_error",
		                    text(rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc)));
		return;
	}
	for (const struct addrinfo *r = res; r; r = r->ai_next)
		if ((o = hostname_addr_json(r)))
			json_array_append_new(list, o);
	freeaddrinfo(res);
	json_object_set_new(probe, "hostname_addrs", list);
}

static json_t *collect_hosts_lines(const char *etc_root, const char *host, json_t *errors)
{
	char *path = cd_asprintf("%s/etc/hosts", etc_root), *data = NULL, err[CD_ERRLEN];
	json_t *lines;
	size_t len;

	if (facts_read_file(path, SMALL_FILE_MAX, &data, &len, err, sizeof(err)) < 0) {
		facts_set_error(errors, "hosts_lines", err);
		lines = json_array();
	} else {
		lines = netprobe_hosts_lines(data, len, host);
	}
	free(data);
	free(path);
	return lines;
}

/* --- port range, /dev/shm, RDMA, nccl.conf --------------------------------- */

static json_t *collect_port_range(json_t *errors)
{
	static const char path[] = "/proc/sys/net/ipv4/ip_local_port_range";
	char *data = NULL, err[CD_ERRLEN];
	json_t *range = json_null();
	size_t len;
	int lo, hi;

	if (facts_read_file(path, ATTR_MAX, &data, &len, err, sizeof(err)) < 0)
		facts_set_error(errors, "port_range", err);
	else if (netprobe_parse_port_range(data, &lo, &hi) < 0)
		facts_set_error(errors, "port_range", "malformed ip_local_port_range");
	else
		range = json_pack("[ii]", lo, hi);
	free(data);
	return range;
}

static json_t *collect_shm_bytes(json_t *errors)
{
	struct statvfs st;
	unsigned long long bytes;
	char msg[128];

	if (statvfs("/dev/shm", &st) < 0) {
		snprintf(msg, sizeof(msg), "statvfs /dev/shm: %s", strerror(errno));
		facts_set_error(errors, "shm_bytes", msg);
		return json_null();
	}
	bytes = (unsigned long long)st.f_blocks * st.f_frsize;
	return json_integer(bytes > INT64_MAX ? INT64_MAX : (json_int_t)bytes);
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* "4: ACTIVE" -> "ACTIVE"; text without ": " stays as it is. */
static json_t *rdma_state_json(const char *path)
{
	char *v = read_attr(path), *colon;
	json_t *j;

	if (!v)
		return json_null();
	colon = strstr(v, ": ");
	j = text(colon ? colon + 2 : v);
	free(v);
	return j;
}

static json_t *rdma_attr_json(const char *port_dir, const char *leaf)
{
	char *path = cd_asprintf("%s/%s", port_dir, leaf), *v = read_attr(path);
	json_t *j = text_or_null(v);

	free(v);
	free(path);
	return j;
}

static json_t *rdma_port_json(const char *dev_dir, const char *device, const char *port)
{
	char *dir = cd_asprintf("%s/ports/%s", dev_dir, port), *state;
	json_t *o = json_object();
	long n = strtol(port, NULL, 10);

	json_object_set_new(o, "device", text(device));
	json_object_set_new(o, "port", json_integer(n));
	state = cd_asprintf("%s/state", dir);
	json_object_set_new(o, "state", rdma_state_json(state));
	json_object_set_new(o, "link_layer", rdma_attr_json(dir, "link_layer"));
	json_object_set_new(o, "rate", rdma_attr_json(dir, "rate"));
	free(state);
	free(dir);
	return o;
}

static int is_port_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 6;
}

static void add_rdma_device(json_t *list, const char *class_dir, const char *device)
{
	char *dev_dir = cd_asprintf("%s/%s", class_dir, device);
	char *ports_dir = cd_asprintf("%s/ports", dev_dir);
	struct dirent **ports = NULL;
	int n = scandir(ports_dir, &ports, not_dot, versionsort);

	for (int i = 0; i < n; i++) {
		if (is_port_number(ports[i]->d_name))
			json_array_append_new(list,
			                      rdma_port_json(dev_dir, device, ports[i]->d_name));
		free(ports[i]);
	}
	free(ports);
	free(ports_dir);
	free(dev_dir);
}

static json_t *collect_rdma(const char *sysfs_root, json_t *errors)
{
	char *class_dir = cd_asprintf("%s/sys/class/infiniband", sysfs_root), msg[CD_ERRLEN];
	struct dirent **devs = NULL;
	json_t *list = json_array();
	int n = scandir(class_dir, &devs, not_dot, alphasort);

	if (n < 0 && errno != ENOENT) {
		snprintf(msg, sizeof(msg), "cannot list %s: %s", class_dir, strerror(errno));
		facts_set_error(errors, "rdma", msg);
	}
	for (int i = 0; i < n; i++) {
		add_rdma_device(list, class_dir, devs[i]->d_name);
		free(devs[i]);
	}
	free(devs);
	free(class_dir);
	return list;
}

static void add_nccl_conf(json_t *list, const char *path, json_t *errors)
{
	char *data = NULL, err[CD_ERRLEN];
	size_t len;
	int rc = facts_read_file(path, SMALL_FILE_MAX, &data, &len, err, sizeof(err));

	if (rc == CD_ERR_NOTFOUND)
		return;
	if (rc < 0)
		facts_set_error(errors, "nccl_conf", err);
	else
		json_array_append_new(list, json_pack("{s:o, s:o}", "path", text(path), "vars",
		                                      netprobe_parse_nccl_conf(data, len)));
	free(data);
}

/* The user's own file: $NCCL_CONF_FILE, else ~/.nccl.conf ($HOME, else the
 * password database); NULL when there is no home. */
static char *user_nccl_conf(void)
{
	const char *file = getenv("NCCL_CONF_FILE"), *home = getenv("HOME");
	struct passwd *pw;

	if (file && *file)
		return cd_strdup(file);
	if (!home || !*home) {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	return home && *home ? cd_asprintf("%s/.nccl.conf", home) : NULL;
}

static json_t *collect_nccl_conf(const char *etc_root, json_t *errors)
{
	char *user = user_nccl_conf(), *sys = cd_asprintf("%s/etc/nccl.conf", etc_root);
	json_t *list = json_array();

	if (user)
		add_nccl_conf(list, user, errors);
	add_nccl_conf(list, sys, errors);
	free(user);
	free(sys);
	return list;
}

/* --- firewall tools -------------------------------------------------------- */

enum tool_state {
	TOOL_UNUSED,    /* not wanted */
	TOOL_MISSING,   /* not found in the tool directories */
	TOOL_NO_START,  /* posix_spawn failed: start_errno */
	TOOL_RUNNING,   /* started, not yet reaped */
	TOOL_EXITED,    /* reaped: status */
	TOOL_TIMED_OUT, /* killed at the deadline */
};

struct tool_run {
	const char *name;    /* "nft" */
	const char *args[4]; /* its arguments, NULL-terminated */
	enum tool_state state;
	int start_errno;
	pid_t pid;
	int out_fd, err_fd; /* -1 when closed */
	char *out;          /* stdout, out_len bytes of out_cap (+1) */
	size_t out_len, out_cap;
	int truncated;              /* stdout went past NETPROBE_FIREWALL_MAX */
	char err[TOOL_ERR_MAX + 1]; /* the start of stderr */
	size_t err_len;
	int status; /* waitpid status once TOOL_EXITED */
};

/* Find name in the ':'-separated dirs; 0 with its path, or -1. */
static int find_tool(const char *dirs, const char *name, char *path, size_t len)
{
	const char *d = dirs;

	while (*d) {
		size_t n = strcspn(d, ":");
		struct stat st;

		if (n && snprintf(path, len, "%.*s/%s", (int)n, d, name) < (int)len &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
			return 0;
		d += n;
		if (*d == ':')
			d++;
	}
	return -1;
}

static int tool_installed(const char *dirs, const char *name)
{
	char path[PATH_MAX];

	return find_tool(dirs, name, path, sizeof(path)) == 0;
}

/* posix_spawn the tool: stdin /dev/null, stdout and stderr to pipes, its
 * own process group (a deadline kills its children too), default SIGPIPE
 * (the agent may ignore it, and an ignored signal survives exec), and a
 * fixed environment so that its output does not depend on the login's. */
static int tool_spawn(struct tool_run *t, const char *path, int out_w, int err_w)
{
	static char *const env[] = {(char *)"PATH=" DEFAULT_TOOL_DIRS, (char *)"LC_ALL=C", NULL};
	char *argv[CD_ARRAY_LEN(t->args) + 1];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	size_t i = 0;
	int rc;

	argv[i++] = (char *)t->name;
	for (size_t k = 0; t->args[k] && i < CD_ARRAY_LEN(argv) - 1; k++)
		argv[i++] = (char *)t->args[k];
	argv[i] = NULL;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_w, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err_w, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                    POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	rc = posix_spawn(&t->pid, path, &fa, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static void tool_start(struct tool_run *t, const char *dirs)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;
	char path[PATH_MAX];

	t->out_fd = t->err_fd = -1;
	if (find_tool(dirs, t->name, path, sizeof(path)) < 0) {
		t->state = TOOL_MISSING;
		return;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		rc = errno;
	else
		rc = tool_spawn(t, path, out[1], err[1]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	if (rc) {
		close_fd(&out[0]);
		close_fd(&err[0]);
		t->state = TOOL_NO_START;
		t->start_errno = rc;
		return;
	}
	t->state = TOOL_RUNNING;
	t->out_fd = out[0];
	t->err_fd = err[0];
	fcntl(t->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(t->err_fd, F_SETFL, O_NONBLOCK);
	t->out_cap = TOOL_OUT_START;
	t->out = cd_malloc(t->out_cap + 1);
}

/* SIGKILL the tool's process group. */
static void tool_kill(struct tool_run *t)
{
	kill(-t->pid, SIGKILL);
	kill(t->pid, SIGKILL);
}

/* One read of stdout. Past NETPROBE_FIREWALL_MAX the rest is not wanted:
 * the tool is killed and its pipes closed. */
static void tool_read_out(struct tool_run *t)
{
	ssize_t n;

	if (t->out_len == t->out_cap) {
		t->out_cap = t->out_cap * 2 > NETPROBE_FIREWALL_MAX + 1 ? NETPROBE_FIREWALL_MAX + 1
		                                                        : t->out_cap * 2;
		t->out = cd_realloc(t->out, t->out_cap + 1);
	}
	n = read(t->out_fd, t->out + t->out_len, t->out_cap - t->out_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(&t->out_fd);
		return;
	}
	t->out_len += (size_t)n;
	if (t->out_len > NETPROBE_FIREWALL_MAX) {
		t->truncated = 1;
		tool_kill(t);
		close_fd(&t->out_fd);
		close_fd(&t->err_fd);
	}
}

/* One read of stderr; only its start is kept (the first line says why). */
static void tool_read_err(struct tool_run *t)
{
	char chunk[4096];
	ssize_t n = read(t->err_fd, chunk, sizeof(chunk));
	size_t room = TOOL_ERR_MAX - t->err_len, take;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(&t->err_fd);
		return;
	}
	take = (size_t)n < room ? (size_t)n : room;
	memcpy(t->err + t->err_len, chunk, take);
	t->err_len += take;
	t->err[t->err_len] = '\0';
}

/* Read every running tool's pipes until all are closed or the deadline. */
static void tools_pump(struct tool_run *tools, size_t n, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2 * MAX_TOOLS];
		struct tool_run *owner[2 * MAX_TOOLS];
		int is_out[2 * MAX_TOOLS];
		nfds_t np = 0;
		int64_t left = deadline - cd_now_ms();

		for (size_t i = 0; i < n; i++) {
			int fds[2] = {tools[i].out_fd, tools[i].err_fd};

			for (int k = 0; k < 2; k++) {
				if (fds[k] < 0)
					continue;
				p[np] = (struct pollfd){.fd = fds[k], .events = POLLIN};
				owner[np] = &tools[i];
				is_out[np++] = k == 0;
			}
		}
		if (np == 0 || left <= 0)
			return;
		if (poll(p, np, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (nfds_t k = 0; k < np; k++) {
			/* an earlier read may have closed this tool's fds */
			if (!p[k].revents || (is_out[k] ? owner[k]->out_fd : owner[k]->err_fd) < 0)
				continue;
			if (is_out[k])
				tool_read_out(owner[k]);
			else
				tool_read_err(owner[k]);
		}
	}
}

/* waitpid until deadline; 1 when reaped (status set), 0 when still running.
 * A child that someone else reaped (ECHILD) counts as a clean exit. */
static int wait_until(pid_t pid, int64_t deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno == ECHILD) {
			*status = 0;
			return 1;
		}
		if (cd_now_ms() >= deadline)
			return 0;
		poll(NULL, 0, 2);
	}
}

/* Reap the tool, killing it when its pipes are still open at the deadline
 * or it has not exited by then. A process stuck in uninterruptible sleep
 * cannot die at once: it is left after a short grace. */
static void tool_finish(struct tool_run *t, int64_t deadline)
{
	if (t->state != TOOL_RUNNING)
		return;
	if (t->out_fd < 0 && t->err_fd < 0 && wait_until(t->pid, deadline, &t->status)) {
		t->state = TOOL_EXITED;
		return;
	}
	tool_kill(t);
	wait_until(t->pid, cd_now_ms() + REAP_GRACE_MS, &t->status);
	close_fd(&t->out_fd);
	close_fd(&t->err_fd);
	t->state = t->truncated ? TOOL_EXITED : TOOL_TIMED_OUT;
}

/* What went wrong with a run, as a new string; NULL when the tool exited
 * with status 0 or was stopped on purpose after too much output. */
static char *tool_failure(const struct tool_run *t)
{
	size_t first = strcspn(t->err, "\n");

	switch (t->state) {
	case TOOL_UNUSED:
	case TOOL_MISSING:
		return cd_strdup("not installed");
	case TOOL_NO_START:
		return cd_asprintf("cannot run %s: %s", t->name, strerror(t->start_errno));
	case TOOL_RUNNING:
	case TOOL_TIMED_OUT:
		return cd_asprintf("%s did not finish within %d s", t->name,
		                   TOOL_DEADLINE_MS / 1000);
	case TOOL_EXITED:
		break;
	}
	if (t->truncated || (WIFEXITED(t->status) && WEXITSTATUS(t->status) == 0))
		return NULL;
	if (WIFEXITED(t->status))
		return cd_asprintf("%s exited with status %d%s%.*s", t->name,
		                   WEXITSTATUS(t->status), first ? ": " : "", (int)first, t->err);
	return cd_asprintf("%s was killed by signal %d", t->name, WTERMSIG(t->status));
}

static void tool_fini(struct tool_run *t)
{
	free(t->out);
	t->out = NULL;
}

/* {"ruleset": <nft's JSON> | null, "truncated"?, "error"?} */
static json_t *nft_json(const struct tool_run *t)
{
	char *fail = tool_failure(t);
	json_t *o = json_object(), *ruleset = NULL;
	json_error_t je;

	if (!fail && t->truncated)
		fail = cd_asprintf("the ruleset is larger than %d bytes: left out",
		                   NETPROBE_FIREWALL_MAX);
	else if (!fail && !(ruleset = json_loadb(t->out, t->out_len, 0, &je)))
		fail = cd_asprintf("nft printed something that is not JSON: %s", je.text);
	json_object_set_new(o, "ruleset", ruleset ? ruleset : json_null());
	if (t->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (fail)
		json_object_set_new(o, "error", text(fail));
	free(fail);
	return o;
}

/* {"rules": "<text>" | null, "truncated"?, "error"?}; truncated text keeps
 * its whole lines only. */
static json_t *iptables_json(const struct tool_run *t)
{
	char *fail = tool_failure(t);
	json_t *o = json_object();
	size_t len = t->out_len;

	if (fail) {
		json_object_set_new(o, "rules", json_null());
	} else {
		if (t->truncated) {
			len = NETPROBE_FIREWALL_MAX;
			while (len && t->out[len - 1] != '\n')
				len--;
		}
		json_object_set_new(o, "rules", facts_json_text(t->out, len));
	}
	if (t->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (fail)
		json_object_set_new(o, "error", text(fail));
	free(fail);
	return o;
}

/* ufw.conf says ENABLED=yes (quotes and blanks allowed, as ufw allows). */
static int ufw_conf_enabled(const char *etc_root)
{
	char *path = cd_asprintf("%s/etc/ufw/ufw.conf", etc_root), *data = NULL;
	const char *p, *end, *line;
	size_t len, n;
	int enabled = 0;

	if (facts_read_file(path, SMALL_FILE_MAX, &data, &len, NULL, 0) == 0) {
		p = data;
		end = data + len;
		while (next_line(&p, end, &line, &n)) {
			trim(&line, &n);
			if (n < 8 || strncmp(line, "ENABLED=", 8) != 0)
				continue;
			line += 8, n -= 8;
			if (n >= 2 && (line[0] == '"' || line[0] == '\'') && line[n - 1] == line[0])
				line++, n -= 2;
			enabled = n == 3 && strncasecmp(line, "yes", 3) == 0;
		}
	}
	free(data);
	free(path);
	return enabled;
}

static const char *ufw_state(const char *etc_root, const char *dirs)
{
	if (!tool_installed(dirs, "ufw"))
		return "absent";
	return ufw_conf_enabled(etc_root) ? "active" : "inactive";
}

/* The process named in firewalld's pid file is alive. */
static int firewalld_pid_alive(void)
{
	char *s = read_attr(FIREWALLD_PIDFILE), *end;
	long pid;

	if (!s)
		return 0;
	errno = 0;
	pid = strtol(s, &end, 10);
	free(s);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* firewall-cmd --state: "running" or "not running" on stdout. */
static const char *firewalld_state(int pid_alive, const struct tool_run *cmd, json_t *errors)
{
	const char *s;
	size_t n;
	char *fail;

	if (pid_alive)
		return "running";
	if (cmd->state == TOOL_MISSING || cmd->state == TOOL_UNUSED)
		return "absent";
	if (cmd->state != TOOL_EXITED) {
		fail = tool_failure(cmd);
		facts_set_error(errors, "firewall", fail);
		free(fail);
		return "not running";
	}
	s = cmd->out;
	n = cmd->out_len;
	trim(&s, &n);
	return n == 7 && memcmp(s, "running", 7) == 0 ? "running" : "not running";
}

enum { NFT, IPTABLES, IP6TABLES, FIREWALL_CMD };

static json_t *collect_firewall(const struct netprobe_opts *o, json_t *errors)
{
	struct tool_run tools[MAX_TOOLS] = {
	    [NFT] = {.name = "nft", .args = {"-j", "list", "ruleset", NULL}},
	    [IPTABLES] = {.name = "iptables-save", .args = {NULL}},
	    [IP6TABLES] = {.name = "ip6tables-save", .args = {NULL}},
	    [FIREWALL_CMD] = {.name = "firewall-cmd", .args = {"--state", NULL}},
	};
	const char *dirs = o->tool_dirs ? o->tool_dirs : DEFAULT_TOOL_DIRS;
	const char *etc = or_empty(o->etc_root);
	int pid_alive = firewalld_pid_alive();
	json_t *fw = json_object();
	int64_t deadline;

	/* all at once, under one deadline */
	for (size_t i = 0; i < MAX_TOOLS; i++) {
		tools[i].out_fd = tools[i].err_fd = -1;
		if (i != FIREWALL_CMD || !pid_alive)
			tool_start(&tools[i], dirs);
	}
	deadline = cd_now_ms() + TOOL_DEADLINE_MS;
	tools_pump(tools, MAX_TOOLS, deadline);
	for (size_t i = 0; i < MAX_TOOLS; i++)
		tool_finish(&tools[i], deadline);

	json_object_set_new(fw, "nft", nft_json(&tools[NFT]));
	json_object_set_new(fw, "iptables", iptables_json(&tools[IPTABLES]));
	json_object_set_new(fw, "ip6tables", iptables_json(&tools[IP6TABLES]));
	json_object_set_new(fw, "ufw", text(ufw_state(etc, dirs)));
	json_object_set_new(fw, "firewalld",
	                    text(firewalld_state(pid_alive, &tools[FIREWALL_CMD], errors)));
	for (size_t i = 0; i < MAX_TOOLS; i++)
		tool_fini(&tools[i]);
	return fw;
}

/* --- netprobe_collect ------------------------------------------------------ */

json_t *netprobe_collect(const struct netprobe_opts *o)
{
	json_t *probe = json_object(), *errors = json_object();
	struct netprobe_opts defaults;
	char host[HOST_NAME_MAX + 2];
	struct ifaddrs *ifa = NULL;
	const char *hostname;
	int ifa_errno = 0;

	if (!o) {
		netprobe_opts_init(&defaults);
		o = &defaults;
	}
	hostname = read_hostname(host, sizeof(host), errors) == 0 ? host : NULL;
	json_object_set_new(probe, "hostname", text_or_null(hostname));
	/* one snapshot for both lists */
	if (getifaddrs(&ifa) < 0) {
		ifa_errno = errno;
		ifa = NULL;
	}
	json_object_set_new(probe, "interfaces",
	                    collect_interfaces(or_empty(o->sysfs_root), ifa, errors));
	json_object_set_new(probe, "addresses", collect_addresses(ifa, ifa_errno, errors));
	if (ifa)
		freeifaddrs(ifa);
	collect_hostname_addrs(probe, hostname);
	json_object_set_new(probe, "hosts_lines",
	                    collect_hosts_lines(or_empty(o->etc_root), hostname, errors));
	json_object_set_new(probe, "port_range", collect_port_range(errors));
	json_object_set_new(probe, "shm_bytes", collect_shm_bytes(errors));
	json_object_set_new(probe, "rdma", collect_rdma(or_empty(o->sysfs_root), errors));
	json_object_set_new(probe, "nccl_conf", collect_nccl_conf(or_empty(o->etc_root), errors));
	json_object_set_new(probe, "env", facts_env_filter(environ));
	json_object_set_new(probe, "firewall",
	                    o->no_firewall ? json_null() : collect_firewall(o, errors));
	json_object_set_new(probe, "errors", errors);
	return probe;
}

/* --- routes (netlink RTM_GETROUTE) ----------------------------------------- */

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
	return text(buf);
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
	                    oif && if_indextoname(oif, dev) ? text(dev) : json_null());
	json_object_set_new(entry, "src", src ? src : json_null());
	json_object_set_new(entry, "gateway", gw ? gw : json_null());
	json_object_set_new(entry, "type", text(route_type_name(rt->rtm_type)));
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
	json_object_set_new(entry, "error", text(strerror(e)));
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
	close_fd(&fd);
	return routes;
}
