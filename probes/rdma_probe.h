/* SPDX-License-Identifier: MIT */
/*
 * rdma_probe.h - the RDMA facts of a node, read from sysfs and procfs only
 * (the agent stays libc-only: libibverbs is looked for as a file, never
 * loaded). Part of the `netprobe` answer (keys "rdma" and "rdma_node") and of
 * the `facts` answer (the same keys), docs/protocol.md. The words of the
 * files are parsed by probes/rdma_parse.h.
 *
 * "rdma": one object per HCA port, devices and ports in name order, from
 * <root>/sys/class/infiniband/<dev>/ (Documentation/ABI/stable/
 * sysfs-class-infiniband):
 *   device, port        the directory names (port as an integer)
 *   state, phys_state   the word of ports/N/state ("4: ACTIVE" -> "ACTIVE")
 *                       and phys_state ("5: LinkUp" -> "LinkUp")
 *   link_layer          "InfiniBand" | "Ethernet" (RoCE), as sysfs says it
 *   rate                ports/N/rate as sysfs says it ("200 Gb/sec (4X HDR)")
 *   rate_gbps, width    parsed from rate: 200 (an integer; 2.5 a real), "4X"
 *   lid, sm_lid         "0x12": InfiniBand only (null on Ethernet)
 *   netdev              the ndev of the port's first GID that has one, else
 *                       the first entry of the HCA's device/net/ (in name
 *                       order) whose dev_port is the port's number - 1 or
 *                       that has no dev_port
 *   mtu                 <root>/sys/class/net/<netdev>/mtu
 *   active_mtu          ports/N/active_mtu where sysfs has it (the kernel's
 *                       ABI documents none: null, with no error, without it)
 *   pci, pci_path       the HCA's PCI address (the last BDF of the realpath of
 *                       <dev>/device) and every BDF from the root to it
 *   numa_node           <dev>/device/numa_node (null when -1)
 *   driver              the HCA's kernel driver, the name <dev>/device/driver
 *                       leads to ("mlx5_core"), or null
 *   provider            the verbs provider of rdma_node's verbs_providers
 *                       that serves the HCA ("mlx5"), or null: without one
 *                       libibverbs does not list the HCA (rdma_libs.h)
 *   gids                [{"index", "gid", "type", "ndev", "family",
 *                         "address"}]: the non-zero entries of ports/N/gids/
 *                       in index order, the first RDMA_GIDS_MAX (gid as the
 *                       kernel writes it, lowercase); type from
 *                       gid_attrs/types/<i> ("RoCE v2" | "IB/RoCE v1"), ndev
 *                       from gid_attrs/ndevs/<i>, family and address from the
 *                       GID (rdma_gid_family, rdma_gid_address; address null
 *                       for "ib")
 * A field no file could give is null. Where a file exists but cannot be read
 * or does not have the documented shape, errors["rdma:<dev>/<port>"] (or
 * "rdma:<dev>" for the HCA's own files, "rdma" for the class directory) names
 * the file and why; the first problem of each key is kept, the others are
 * counted ("and N more"). An HCA without a ports directory gives no entry and
 * errors["rdma:<dev>"] = "no ports". Files the kernel leaves out by design
 * (lid on Ethernet, ndevs on InfiniBand, active_mtu) give null without error.
 *
 * "rdma_node": {"verbs_lib", "verbs_providers", "peermem", "memlock_bytes",
 *   "memlock_unlimited", "nccl_vars"}:
 *   verbs_lib           the first libibverbs.so.1 found (a regular file or a
 *                       link to one) where the dynamic loader looks:
 *                       $LD_LIBRARY_PATH's directories (only when root is
 *                       ""), those of <root>/etc/ld.so.conf and its
 *                       includes, then the default ones (rdma_libs.h); the
 *                       path without root; or null
 *   verbs_providers     the "driver NAME" lines of <root>/etc/libibverbs.d/
 *                       *.driver, files in name order
 *   peermem             "nvidia_peermem" | "nv_peer_mem" (<root>/proc/modules)
 *   memlock_bytes       getrlimit(RLIMIT_MEMLOCK) soft limit of this process
 *                       (the login a job gets); null when unlimited
 *   memlock_unlimited   true when it is RLIM_INFINITY
 *   nccl_vars           {"NCCL_IB_...": "...", "NCCL_NET...": "..."} of env
 * Problems with those go to errors["rdma_node"].
 */
#ifndef CD_PROBES_RDMA_PROBE_H
#define CD_PROBES_RDMA_PROBE_H

#include <jansson.h>

#define RDMA_GIDS_MAX 256 /* GID entries kept per port */

/* The root the RDMA facts read under: sysfs_root when it is not NULL (the
 * probe's own option, for unit tests), else $CLUSTERDOC_SYSFS_ROOT when set
 * and not empty (fixture trees in the tests), else "" (the node itself).
 * Only the RDMA facts honour the variable. */
const char *rdma_probe_root(const char *sysfs_root);

/* The "rdma" list under root (see above). Returns a new array; problems go
 * into errors (an object). Never fails. */
json_t *rdma_probe_ports(const char *root, json_t *errors);

/* The "rdma_node" object under root; env is the environment (NULL-ended
 * "KEY=VALUE" strings) whose NCCL variables are kept. Returns a new object;
 * problems go into errors. Never fails. */
json_t *rdma_probe_node(const char *root, char **env, json_t *errors);

/* Sets "rdma" and "rdma_node" of answer (what netprobe and facts share). */
void rdma_probe_collect(json_t *answer, const char *sysfs_root, char **env, json_t *errors);

#endif
