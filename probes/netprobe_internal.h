/* SPDX-License-Identifier: MIT */
/*
 * netprobe_internal.h - what the files of the network probe share and nothing
 * else uses: small JSON and file helpers (defined in netprobe.c) and the parts
 * of netprobe_collect that live in their own files. Not a public interface:
 * include it only from probes/netprobe*.c.
 */
#ifndef CD_PROBES_NETPROBE_INTERNAL_H
#define CD_PROBES_NETPROBE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "probes/netprobe.h"
#include "scan.h" /* the text cursors and the file reader every netprobe file uses */

#define SMALL_FILE_MAX (64u << 10) /* /etc/hosts, nccl.conf, ufw.conf */

struct ifaddrs;

/* s (NUL-terminated) as a JSON string, via facts_json_text (bytes that are
 * not UTF-8 become U+FFFD). */
json_t *netprobe_text(const char *s);

/* netprobe_text(s), or JSON null when s is NULL. */
json_t *netprobe_text_or_null(const char *s);

/* s, or "" when s is NULL. */
const char *netprobe_or_empty(const char *s);

/* close(*fd) unless it is -1; *fd becomes -1. */
void netprobe_close_fd(int *fd);

/* A small file (sysfs or /proc attribute) without trailing whitespace, as a
 * new string the caller frees; NULL when it cannot be read. */
char *netprobe_read_attr(const char *path);

/* The "interfaces" list (netprobe_iface.c): root is the sysfs root prefix
 * ("" for the real one), addrs the getifaddrs list or NULL; problems go to
 * errors["interfaces"]. Returns a new array. */
json_t *netprobe_collect_interfaces(const char *root, const struct ifaddrs *addrs, json_t *errors);

/* The "firewall" object (netprobe_firewall.c): runs the tools under one
 * deadline; problems go to errors["firewall"]. Returns a new object. */
json_t *netprobe_collect_firewall(const struct netprobe_opts *o, json_t *errors);

#endif
