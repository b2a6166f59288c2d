/* SPDX-License-Identifier: MIT */
/* netprobe.c - the agent's network probe (see netprobe.h): netprobe_collect,
 * which gathers every part of the answer, and the parts that need no module of
 * their own: addresses, hostname resolution and bindability, /etc/hosts, the
 * port range, /dev/shm and NCCL conf files. Interfaces are in
 * netprobe_iface.c, the firewall in netprobe_firewall.c, routes in
 * netprobe_route.c, the pure parsers in netprobe_parse.c, the RDMA facts in
 * rdma_probe.c. */
#include "probes/netprobe.h"
#include "probes/netprobe_internal.h"
#include "probes/facts.h"
#include "probes/rdma_probe.h"
#include "cd.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

extern char **environ;

#define ATTR_MAX 4096 /* one sysfs or /proc attribute: a page at most */

void netprobe_opts_init(struct netprobe_opts *o)
{
	o->sysfs_root = NULL;
	o->etc_root = NULL;
	o->no_firewall = 0;
	o->tool_dirs = NULL;
}

/* --- small helpers --------------------------------------------------------- */

json_t *netprobe_text(const char *s)
{
	return facts_json_text(s, strlen(s));
}

json_t *netprobe_text_or_null(const char *s)
{
	return s ? netprobe_text(s) : json_null();
}

const char *netprobe_or_empty(const char *s)
{
	return s ? s : "";
}

void netprobe_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A small file without trailing whitespace, as a new string; NULL when it
 * cannot be read (`speed` of a virtual link fails with EINVAL, for one). */
char *netprobe_read_attr(const char *path)
{
	char *data;
	size_t len;

	if (scan_read_file(path, ATTR_MAX, SCAN_FILE_TO_EOF, &data, &len, NULL, 0) < 0)
		return NULL;
	while (len && scan_is_space(data[len - 1]))
		data[--len] = '\0';
	return data;
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
		json_object_set_new(o, "ifname", netprobe_text(netprobe_or_empty(a->ifa_name)));
		json_object_set_new(o, "family", netprobe_text(ai.family));
		json_object_set_new(o, "address", netprobe_text(ai.text));
		json_object_set_new(o, "prefix",
		                    prefix_json(a->ifa_netmask, a->ifa_addr->sa_family));
		json_object_set_new(o, "scope", netprobe_text(ai.scope));
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
	json_object_set_new(o, "family", netprobe_text(ai.family));
	json_object_set_new(o, "address", netprobe_text(ai.text));
	json_object_set_new(o, "scope_id", json_integer(ai.scope_id));
	e = bind_test(res);
	json_object_set_new(o, "bindable", json_boolean(e == 0));
	if (e)
		json_object_set_new(o, "bind_error", netprobe_text(strerror(e)));
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
		json_object_set_new(
		    probe, "hostname_error",
		    netprobe_text(rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc)));
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

	if (scan_read_file(path, SMALL_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) <
	    0) {
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

	if (scan_read_file(path, ATTR_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
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

static json_t *read_gc_thresh3(const char *family)
{
	char *path = cd_asprintf("/proc/sys/net/%s/neigh/default/gc_thresh3", family);
	char *v = netprobe_read_attr(path), *end;
	long long n = v ? strtoll(v, &end, 10) : -1;
	json_t *j = v && end != v && n >= 0 ? json_integer(n) : json_null();

	free(v);
	free(path);
	return j;
}

static json_t *collect_neigh_gc_thresh3(void)
{
	return json_pack("{soso}", "inet", read_gc_thresh3("ipv4"), "inet6",
	                 read_gc_thresh3("ipv6"));
}

long long netprobe_neigh_table_fulls(void)
{
	static const char *const files[] = {"/proc/net/stat/arp_cache",
	                                    "/proc/net/stat/ndisc_cache"};
	long long total = -1, fulls;
	char *data, err[CD_ERRLEN];
	size_t len;

	for (size_t i = 0; i < CD_ARRAY_LEN(files); i++) {
		data = NULL;
		if (scan_read_file(files[i], 64 * 1024, SCAN_FILE_TO_EOF, &data, &len, err,
		                   sizeof(err)) == 0 &&
		    netprobe_parse_neigh_stat(data, len, &fulls) == 0)
			total = (total < 0 ? 0 : total) + fulls;
		free(data);
	}
	return total;
}

static void add_nccl_conf(json_t *list, const char *path, json_t *errors)
{
	char *data = NULL, err[CD_ERRLEN];
	size_t len;
	int rc =
	    scan_read_file(path, SMALL_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err));

	if (rc == CD_ERR_NOTFOUND)
		return;
	if (rc < 0)
		facts_set_error(errors, "nccl_conf", err);
	else
		json_array_append_new(list, json_pack("{s:o, s:o}", "path", netprobe_text(path),
		                                      "vars", netprobe_parse_nccl_conf(data, len)));
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
	json_object_set_new(probe, "hostname", netprobe_text_or_null(hostname));
	/* one snapshot for both lists */
	if (getifaddrs(&ifa) < 0) {
		ifa_errno = errno;
		ifa = NULL;
	}
	json_object_set_new(
	    probe, "interfaces",
	    netprobe_collect_interfaces(netprobe_or_empty(o->sysfs_root), ifa, errors));
	json_object_set_new(probe, "addresses", collect_addresses(ifa, ifa_errno, errors));
	if (ifa)
		freeifaddrs(ifa);
	collect_hostname_addrs(probe, hostname);
	json_object_set_new(probe, "hosts_lines",
	                    collect_hosts_lines(netprobe_or_empty(o->etc_root), hostname, errors));
	json_object_set_new(probe, "port_range", collect_port_range(errors));
	json_object_set_new(probe, "shm_bytes", collect_shm_bytes(errors));
	json_object_set_new(probe, "neigh_gc_thresh3", collect_neigh_gc_thresh3());
	rdma_probe_collect(probe, o->sysfs_root, environ, errors);
	json_object_set_new(probe, "nccl_conf",
	                    collect_nccl_conf(netprobe_or_empty(o->etc_root), errors));
	json_object_set_new(probe, "env", facts_env_filter(environ));
	json_object_set_new(probe, "firewall",
	                    o->no_firewall ? json_null() : netprobe_collect_firewall(o, errors));
	json_object_set_new(probe, "errors", errors);
	return probe;
}
