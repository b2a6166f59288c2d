/* SPDX-License-Identifier: MIT */
/*
 * fix_internal.h - the fixers, for fix_plan.c's table. Each plans one
 * node's actions from the check's model and diagnosis and the gathered
 * state (fix.h), and says in a note what it left alone and why.
 */
#ifndef CD_FIXERS_FIX_INTERNAL_H
#define CD_FIXERS_FIX_INTERNAL_H

#include "fix.h"

extern const char *const fix_sshkey_findings[];
extern const char *const fix_env_findings[];
extern const char *const fix_hosts_findings[];
extern const char *const fix_firewall_findings[];
extern const char *const fix_ports_findings[];
/* env's answers predicate (struct fixer). */
int fix_env_answers(const struct finding *fd);

/* HCCL's host ports on an Ascend node (its netmodel "ascend" object): from
 * HCCL_IF_BASE_PORT of its login environment (else FIX_HCCL_BASE_PORT), one
 * per device. 0 with lo-hi, -1 when the base is not a port HCCL takes. */
#define FIX_HCCL_BASE_PORT 60000
int fix_hccl_ports(json_t *ascend, int *lo, int *hi);

/* ssh-key: the head's public key in a marked block of the node's
 * ~/.ssh/authorized_keys, for nodes that refused the head's keys. */
void fix_sshkey_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p);
/* env: ~/.config/clusterdoc/env.sh, ~/.nccl.conf and the rc file's block. */
void fix_env_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p);
/* hosts: /etc/hosts maps the hostname to the data address. */
void fix_hosts_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p);
/* firewall: an accept rule for TCP from the cluster's subnets on the data
 * interface, through firewalld, ufw, nftables or iptables. */
void fix_firewall_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p);
/* port-range (only with --only): net.ipv4.ip_local_port_range narrowed to
 * fix_opts' range, now (sysctl -w) and, for a root login only, at boot
 * (FIX_SYSCTL_PORTS); through sudo a note says how to keep it. */
void fix_ports_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p);
/* port-range's verification: the new check reads the plan's target range. */
int fix_ports_verify(const struct netmodel *m2, const struct fix_plan *p, size_t i, char *still,
                     size_t len);

/* Frees what an action holds (fix_plan.c, fix_share.c). */
void fix_action_fini(struct fix_action *a);

/* Root is needed unless the node's user is root. */
int fix_needs_sudo(const struct fix_ctx *c, size_t i);

#endif
