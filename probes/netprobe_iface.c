/* SPDX-License-Identifier: MIT */
/* netprobe_iface.c - the network probe's interface list (see netprobe.h):
 * links in if_nameindex order, their flags, what /sys/class/net says about
 * them, and the kind of each link (netprobe_iface_kind). */
#include "probes/netprobe.h"
#include "probes/netprobe_internal.h"
#include "probes/facts.h"
#include "cd.h"

#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

/* --- sysfs ----------------------------------------------------------------- */

/* A decimal integer file; 0 and *v, or -1 when unreadable or not a number. */
static int read_attr_long(const char *path, long *v)
{
	char *s = netprobe_read_attr(path), *end;
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
	char *path = net_path(root, ifname, leaf), *v = netprobe_read_attr(path);

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
	const char *root = netprobe_or_empty(sysfs_root), *kind;
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
	json_t *j = v && *v ? netprobe_text(v) : json_null();

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
	json_t *j = netprobe_text_or_null(v);

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

/*
 * The kernel's effective IPv4 setting of a link: the larger of
 * conf/all/LEAF and conf/NAME/LEAF (how rp_filter, arp_ignore and
 * arp_announce are applied). /proc/sys/net is the reader's namespace's, so
 * it is read only for the real root; null when unreadable.
 */
static json_t *ipv4_conf_json(const char *root, const char *name, const char *leaf)
{
	char *path;
	long all = -1, own = -1;

	if (*root)
		return json_null();
	path = cd_asprintf("/proc/sys/net/ipv4/conf/all/%s", leaf);
	if (read_attr_long(path, &all) < 0)
		all = -1;
	free(path);
	path = cd_asprintf("/proc/sys/net/ipv4/conf/%s/%s", name, leaf);
	if (read_attr_long(path, &own) < 0)
		own = -1;
	free(path);
	if (own < 0)
		return json_null();
	return json_integer(own > all ? own : all);
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
	json_object_set_new(o, "name", netprobe_text(name));
	json_object_set_new(o, "index", json_integer(ni->if_index));
	set_flag(o, "up", known, flags, IFF_UP);
	set_flag(o, "running", known, flags, IFF_RUNNING);
	set_flag(o, "loopback", known, flags, IFF_LOOPBACK);
	json_object_set_new(o, "operstate", a.operstate);
	json_object_set_new(o, "mtu", a.mtu);
	json_object_set_new(o, "mac", a.mac);
	json_object_set_new(o, "speed_mbps", a.speed);
	json_object_set_new(o, "driver", a.driver);
	json_object_set_new(o, "kind", netprobe_text(kind));
	json_object_set_new(o, "master", a.master);
	json_object_set_new(o, "rp_filter", ipv4_conf_json(c->root, name, "rp_filter"));
	json_object_set_new(o, "arp_ignore", ipv4_conf_json(c->root, name, "arp_ignore"));
	json_object_set_new(o, "arp_announce", ipv4_conf_json(c->root, name, "arp_announce"));
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

json_t *netprobe_collect_interfaces(const char *root, const struct ifaddrs *addrs, json_t *errors)
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
	netprobe_close_fd(&c.ctl);
	if_freenameindex(names);
	return list;
}
