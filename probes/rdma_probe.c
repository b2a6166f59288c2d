/* SPDX-License-Identifier: MIT */
/* rdma_probe.c - the RDMA facts of a node from sysfs and procfs (see
 * rdma_probe.h). Reads files only; the words in them are parsed by
 * rdma_parse.c. */
#include "probes/rdma_probe.h"
#include "probes/rdma_libs.h"
#include "probes/rdma_parse.h"
#include "probes/facts.h"
#include "cd.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define ATTR_MAX       4096 /* one sysfs attribute: a page at most */
#define ERROR_TEXT_MAX 512  /* the problems of one errors key, joined */
#define SMALL_MAX      (64u << 10)

const char *rdma_probe_root(const char *sysfs_root)
{
	const char *env = getenv("CLUSTERDOC_SYSFS_ROOT");

	if (sysfs_root)
		return sysfs_root;
	return env && *env ? env : "";
}

/* --- errors and files ------------------------------------------------------ */

/* s as JSON text: bytes that are not UTF-8 become U+FFFD. */
static json_t *text(const char *s)
{
	return facts_json_text(s, strlen(s));
}

/* Adds a problem to errors[key]: the first one as it is, later ones joined
 * with "; " while the text stays under ERROR_TEXT_MAX. */
__attribute__((format(printf, 3, 4))) static void note(json_t *errors, const char *key,
                                                       const char *fmt, ...)
{
	const char *old = json_string_value(json_object_get(errors, key));
	char msg[CD_ERRLEN];
	char *joined;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!old) {
		facts_set_error(errors, key, msg);
		return;
	}
	if (strlen(old) + strlen(msg) + 2 >= ERROR_TEXT_MAX)
		return;
	joined = cd_asprintf("%s; %s", old, msg);
	facts_set_error(errors, key, joined);
	free(joined);
}

/* A small file without its trailing whitespace, as a new string. NULL when
 * it cannot be read: *missing is 1 when it does not exist (no error noted),
 * else the reason is noted in errors[key] naming what (a short file name). */
static char *read_attr(const char *path, const char *what, json_t *errors, const char *key,
                       int *missing)
{
	char *data = NULL, err[CD_ERRLEN];
	size_t len;
	int rc = scan_read_file(path, ATTR_MAX, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err));

	*missing = rc == CD_ERR_NOTFOUND;
	if (rc < 0) {
		if (!*missing)
			note(errors, key, "%s: %s", what, err);
		return NULL;
	}
	while (len && scan_is_space(data[len - 1]))
		data[--len] = '\0';
	return data;
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int is_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 6;
}

/* --- one port -------------------------------------------------------------- */

struct port {
	const char *root;
	const char *dev_dir; /* <root>/sys/class/infiniband/<dev> */
	char *dir;           /* dev_dir/ports/<n> */
	char key[320];       /* "rdma:<dev>/<n>" */
	int num;             /* n */
	json_t *errors;
	const json_t *providers; /* rdma_node's verbs_providers */
};

/* ports/N/<leaf> read, parsed by parse into a word; null when it cannot be
 * (noted: a missing file too, unless optional). */
static json_t *port_word(struct port *p, const char *leaf, int optional,
                         int (*parse)(const char *, char *, size_t))
{
	char *path = cd_asprintf("%s/%s", p->dir, leaf), word[RDMA_WORD_MAX];
	int missing;
	char *v = read_attr(path, leaf, p->errors, p->key, &missing);
	json_t *j = json_null();

	if (!v && missing && !optional)
		note(p->errors, p->key, "%s: no such file", leaf);
	if (v && (!parse || parse(v, word, sizeof(word)) == 0))
		j = text(parse ? word : v);
	else if (v)
		note(p->errors, p->key, "%s: not in the kernel's format: \"%.40s\"", leaf, v);
	free(v);
	free(path);
	return j;
}

static int parse_any(const char *text, char *out, size_t outlen)
{
	size_t n = strlen(text);

	if (n == 0 || n >= outlen)
		return CD_ERR_PARSE;
	memcpy(out, text, n + 1);
	return 0;
}

static void set_rate(json_t *o, struct port *p)
{
	json_t *rate = port_word(p, "rate", 0, parse_any);
	char width[RDMA_WORD_MAX];
	double gbps;

	json_object_set_new(o, "rate", rate);
	if (json_is_string(rate) &&
	    rdma_parse_rate(json_string_value(rate), &gbps, width, sizeof(width)) == 0) {
		json_object_set_new(o, "rate_gbps",
		                    gbps == (double)(json_int_t)gbps
		                        ? json_integer((json_int_t)gbps)
		                        : json_real(gbps));
		json_object_set_new(o, "width", json_string(width));
		return;
	}
	if (json_is_string(rate))
		note(p->errors, p->key, "rate: not in the kernel's format: \"%.40s\"",
		     json_string_value(rate));
	json_object_set_new(o, "rate_gbps", json_null());
	json_object_set_new(o, "width", json_null());
}

/* gid_attrs/<what>/<index> parsed into ndev or type; null when the file
 * is missing (the kernel answers EINVAL where an entry has none). */
static json_t *gid_attr(struct port *p, const char *what, const char *index)
{
	char *path = cd_asprintf("%s/gid_attrs/%s/%s", p->dir, what, index),
	     *name = cd_asprintf("gid_attrs/%s/%s", what, index), word[RDMA_WORD_MAX];
	const char *type;
	int missing, ok;
	char *v = read_attr(path, name, p->errors, p->key, &missing);
	json_t *j = json_null();

	if (v) {
		ok = strcmp(what, "types") == 0 ? rdma_parse_gid_type(v, &type) == 0
		                                : rdma_parse_ndev(v, word, sizeof(word)) == 0;
		if (ok)
			j = text(strcmp(what, "types") == 0 ? type : word);
		else
			note(p->errors, p->key, "%s: not in the kernel's format: \"%.40s\"", name,
			     v);
	}
	free(v);
	free(name);
	free(path);
	return j;
}

/* gid as the kernel writes it: eight groups of four lowercase hex digits. */
static void gid_text(const unsigned char gid[RDMA_GID_LEN], char out[40])
{
	for (int g = 0; g < 8; g++)
		snprintf(out + g * 5, 6, "%02x%02x%s", gid[2 * g], gid[2 * g + 1],
		         g < 7 ? ":" : "");
}

/* The GID entry of file gids/<index>, or NULL (zero, unreadable, garbled). */
static json_t *gid_json(struct port *p, const char *index, int is_ib)
{
	char *path = cd_asprintf("%s/gids/%s", p->dir, index),
	     *name = cd_asprintf("gids/%s", index), addr[INET6_ADDRSTRLEN], text_buf[40];
	unsigned char gid[RDMA_GID_LEN];
	int missing;
	char *v = read_attr(path, name, p->errors, p->key, &missing);
	const char *family;
	json_t *o = NULL;

	if (v && rdma_parse_gid(v, gid) < 0)
		note(p->errors, p->key, "%s: not a GID: \"%.40s\"", name, v);
	else if (v && !rdma_gid_is_zero(gid)) {
		family = rdma_gid_family(gid, is_ib);
		gid_text(gid, text_buf);
		o = json_pack(
		    "{s:i, s:s, s:o, s:o, s:s, s:o}", "index", atoi(index), "gid", text_buf, "type",
		    gid_attr(p, "types", index), "ndev",
		    is_ib ? json_null() : gid_attr(p, "ndevs", index), "family", family, "address",
		    rdma_gid_address(gid, family, addr, sizeof(addr)) == 0 ? json_string(addr)
		                                                           : json_null());
	}
	free(v);
	free(name);
	free(path);
	return o;
}

static json_t *port_gids(struct port *p, int is_ib)
{
	char *dir = cd_asprintf("%s/gids", p->dir);
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, not_dot, versionsort);
	json_t *list = json_array(), *g;

	if (n < 0 && errno != ENOENT)
		note(p->errors, p->key, "gids: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		if (is_number(ents[i]->d_name) && json_array_size(list) < RDMA_GIDS_MAX &&
		    (g = gid_json(p, ents[i]->d_name, is_ib)))
			json_array_append_new(list, g);
		free(ents[i]);
	}
	free(ents);
	free(dir);
	return list;
}

/* Whether netdev name of the HCA's device/net/ serves port number port: its
 * dev_port (0-based, what a multi-port function such as mlx4's sets) is
 * port - 1; a netdev without the file serves every port. */
static int serves_port(const char *net_dir, const char *name, int port)
{
	char *path = cd_asprintf("%s/%s/dev_port", net_dir, name), *v = NULL;
	size_t len;
	int ok = 1;

	if (scan_read_file(path, ATTR_MAX, SCAN_FILE_TO_EOF, &v, &len, NULL, 0) == 0)
		ok = atoi(v) == port - 1;
	free(v);
	free(path);
	return ok;
}

/* The port's netdev: the first GID's ndev, else the first entry of the
 * HCA's device/net/ that serves the port (a name, new string), else NULL. */
static char *port_netdev(const struct port *p, json_t *gids)
{
	char *dir = cd_asprintf("%s/device/net", p->dev_dir), *name = NULL;
	struct dirent **ents = NULL;
	size_t i;
	json_t *g;
	int n;

	json_array_foreach(gids, i, g)
	{
		if (json_is_string(json_object_get(g, "ndev"))) {
			free(dir);
			return cd_strdup(json_string_value(json_object_get(g, "ndev")));
		}
	}
	n = scandir(dir, &ents, not_dot, alphasort);
	for (int k = 0; k < n; k++) {
		if (!name && serves_port(dir, ents[k]->d_name, p->num))
			name = cd_strdup(ents[k]->d_name);
		free(ents[k]);
	}
	free(ents);
	free(dir);
	return name;
}

/* A decimal in a file (mtu, numa_node) as JSON, null below min. */
static json_t *file_int(const char *path, const char *what, long min, json_t *errors,
                        const char *key)
{
	int missing;
	char *v = read_attr(path, what, errors, key, &missing), *end;
	long n;
	json_t *j = json_null();

	if (v) {
		n = strtol(v, &end, 10);
		if (end == v || *end)
			note(errors, key, "%s: not a number: \"%.40s\"", what, v);
		else if (n >= min)
			j = json_integer(n);
	}
	free(v);
	return j;
}

static void set_netdev(json_t *o, struct port *p, json_t *gids)
{
	char *ndev = port_netdev(p, gids), *path, *what;

	json_object_set_new(o, "netdev", ndev ? text(ndev) : json_null());
	if (!ndev) {
		json_object_set_new(o, "mtu", json_null());
		return;
	}
	path = cd_asprintf("%s/sys/class/net/%s/mtu", p->root, ndev);
	what = cd_asprintf("net/%s/mtu", ndev);
	json_object_set_new(o, "mtu", file_int(path, what, 1, p->errors, p->key));
	free(what);
	free(path);
	free(ndev);
}

static int is_bdf(const char *s, size_t n)
{
	static const char shape[] = "hhhh:hh:hh.h";

	if (n != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (shape[i] == 'h' ? !strchr("0123456789abcdef", s[i]) || !s[i] : s[i] != shape[i])
			return 0;
	return 1;
}

/* pci and pci_path of the HCA: the BDFs of realpath(<dev>/device). */
static void set_pci(json_t *o, const char *dev_dir)
{
	char *link = cd_asprintf("%s/device", dev_dir), real[PATH_MAX];
	json_t *path = json_array();
	const char *s, *slash;

	if (realpath(link, real)) {
		for (s = real; *s; s = *slash ? slash + 1 : slash) {
			slash = strchr(s, '/');
			if (!slash)
				slash = s + strlen(s);
			if (is_bdf(s, (size_t)(slash - s)))
				json_array_append_new(path, json_stringn(s, (size_t)(slash - s)));
		}
	}
	free(link);
	if (!json_array_size(path)) {
		json_decref(path);
		json_object_set_new(o, "pci", json_null());
		json_object_set_new(o, "pci_path", json_null());
		return;
	}
	json_object_set_new(o, "pci", json_incref(json_array_get(path, json_array_size(path) - 1)));
	json_object_set_new(o, "pci_path", path);
}

static json_t *port_json(struct port *p, const char *device, const char *port)
{
	json_t *o = json_object(), *ll, *gids;
	char *numa = cd_asprintf("%s/device/numa_node", p->dev_dir);
	int is_ib, missing;
	char *mtu_path = cd_asprintf("%s/active_mtu", p->dir), *v;

	json_object_set_new(o, "device", text(device));
	json_object_set_new(o, "port", json_integer(atoi(port)));
	json_object_set_new(o, "state", port_word(p, "state", 0, rdma_parse_state));
	json_object_set_new(o, "phys_state", port_word(p, "phys_state", 0, rdma_parse_state));
	json_object_set_new(o, "link_layer", ll = port_word(p, "link_layer", 0, parse_any));
	is_ib = json_is_string(ll) && strcmp(json_string_value(ll), "InfiniBand") == 0;
	set_rate(o, p);
	json_object_set_new(o, "lid", is_ib ? port_word(p, "lid", 0, rdma_parse_lid) : json_null());
	json_object_set_new(o, "sm_lid",
	                    is_ib ? port_word(p, "sm_lid", 0, rdma_parse_lid) : json_null());
	gids = port_gids(p, is_ib);
	set_netdev(o, p, gids);
	/* no such attribute in the kernel's ABI: only a file that is there counts */
	v = read_attr(mtu_path, "active_mtu", p->errors, p->key, &missing);
	json_object_set_new(o, "active_mtu",
	                    v && atoi(v) > 0 ? json_integer(atoi(v)) : json_null());
	free(v);
	set_pci(o, p->dev_dir);
	rdma_libs_set_provider(o, p->dev_dir, device, p->providers);
	json_object_set_new(o, "numa_node",
	                    file_int(numa, "device/numa_node", 0, p->errors, p->key));
	json_object_set_new(o, "gids", gids);
	free(mtu_path);
	free(numa);
	return o;
}

/* --- devices --------------------------------------------------------------- */

static void add_device(json_t *list, const char *root, const char *class_dir, const char *device,
                       const json_t *providers, json_t *errors)
{
	char *dev_dir = cd_asprintf("%s/%s", class_dir, device);
	char *ports_dir = cd_asprintf("%s/ports", dev_dir),
	     *dev_key = cd_asprintf("rdma:%s", device);
	struct dirent **ports = NULL;
	int n = scandir(ports_dir, &ports, not_dot, versionsort), added = 0;

	for (int i = 0; i < n; i++) {
		if (is_number(ports[i]->d_name)) {
			struct port p = {.root = root,
			                 .dev_dir = dev_dir,
			                 .errors = errors,
			                 .providers = providers};

			p.dir = cd_asprintf("%s/%s", ports_dir, ports[i]->d_name);
			p.num = atoi(ports[i]->d_name);
			snprintf(p.key, sizeof(p.key), "rdma:%s/%s", device, ports[i]->d_name);
			json_array_append_new(list, port_json(&p, device, ports[i]->d_name));
			free(p.dir);
			added++;
		}
		free(ports[i]);
	}
	if (n < 0 && errno != ENOENT)
		note(errors, dev_key, "ports: %s", strerror(errno));
	else if (!added)
		note(errors, dev_key, "no ports");
	free(ports);
	free(dev_key);
	free(ports_dir);
	free(dev_dir);
}

json_t *rdma_probe_ports(const char *root, json_t *errors)
{
	char *class_dir = cd_asprintf("%s/sys/class/infiniband", root);
	struct dirent **devs = NULL;
	json_t *list = json_array(), *scratch = json_object(), *providers;
	int n = scandir(class_dir, &devs, not_dot, alphasort);

	if (n < 0 && errno != ENOENT)
		note(errors, "rdma", "cannot list %s: %s", class_dir, strerror(errno));
	/* rdma_node names the problems of /etc/libibverbs.d */
	providers = n > 0 ? rdma_libs_providers(root, scratch) : json_array();
	for (int i = 0; i < n; i++) {
		add_device(list, root, class_dir, devs[i]->d_name, providers, errors);
		free(devs[i]);
	}
	json_decref(providers);
	json_decref(scratch);
	free(devs);
	free(class_dir);
	return list;
}

/* --- the node -------------------------------------------------------------- */

static json_t *peermem(const char *root, json_t *errors)
{
	char *path = cd_asprintf("%s/proc/modules", root), *data = NULL, err[CD_ERRLEN];
	const char *name = NULL;
	size_t len;
	int rc = scan_read_file(path, 1u << 20, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err));

	if (rc == 0)
		name = rdma_parse_peermem(data, len);
	else if (rc != CD_ERR_NOTFOUND)
		note(errors, "rdma_node", "%s", err);
	free(data);
	free(path);
	return name ? json_string(name) : json_null();
}

static json_t *nccl_vars(char **env)
{
	json_t *o = json_object();
	const char *eq;

	for (char **e = env; e && *e; e++) {
		if ((strncmp(*e, "NCCL_IB_", 8) != 0 && strncmp(*e, "NCCL_NET", 8) != 0) ||
		    !(eq = strchr(*e, '=')))
			continue;
		char *key = cd_strndup(*e, (size_t)(eq - *e));

		json_object_set_new(o, key, facts_json_text(eq + 1, strlen(eq + 1)));
		free(key);
	}
	return o;
}

json_t *rdma_probe_node(const char *root, char **env, json_t *errors)
{
	json_t *o = json_object();
	struct rlimit rl;
	int ok = getrlimit(RLIMIT_MEMLOCK, &rl) == 0;

	json_object_set_new(o, "verbs_lib", rdma_libs_verbs_lib(root, errors));
	json_object_set_new(o, "verbs_providers", rdma_libs_providers(root, errors));
	json_object_set_new(o, "peermem", peermem(root, errors));
	if (!ok)
		note(errors, "rdma_node", "getrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));
	json_object_set_new(o, "memlock_bytes",
	                    ok && rl.rlim_cur != RLIM_INFINITY
	                        ? json_integer((json_int_t)rl.rlim_cur)
	                        : json_null());
	json_object_set_new(o, "memlock_unlimited",
	                    json_boolean(ok && rl.rlim_cur == RLIM_INFINITY));
	json_object_set_new(o, "nccl_vars", nccl_vars(env));
	return o;
}

void rdma_probe_collect(json_t *answer, const char *sysfs_root, char **env, json_t *errors)
{
	const char *root = rdma_probe_root(sysfs_root);

	json_object_set_new(answer, "rdma", rdma_probe_ports(root, errors));
	json_object_set_new(answer, "rdma_node", rdma_probe_node(root, env, errors));
}
