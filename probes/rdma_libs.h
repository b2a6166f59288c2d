/* SPDX-License-Identifier: MIT */
/*
 * rdma_libs.h - where a node's verbs library and its providers are, for the
 * RDMA facts (rdma_probe.h): files only, nothing is loaded.
 *
 * libibverbs is looked for as the dynamic loader would find it: the
 * directories of $LD_LIBRARY_PATH (only on the node itself, root ""), then
 * those <root>/etc/ld.so.conf names (its "include" globs expanded in place
 * and in name order, relative patterns against the including file's
 * directory, as glibc's ldconfig does; at most RDMA_LIBS_CONF_DEPTH deep and
 * RDMA_LIBS_CONF_DIRS directories), then the default directories
 * (/usr/lib/<multiarch>, /usr/lib64, /usr/lib, /lib/<multiarch>, /lib64,
 * /lib, /usr/local/lib), which ldconfig adds after the configured ones.
 *
 * The provider of an HCA: rdma-core's libibverbs lists only the devices a
 * provider of /etc/libibverbs.d claims, so an HCA whose provider is not
 * installed does not exist for NCCL. The HCA's kernel driver is the name of
 * <dev>/device/driver; rdma_provider_of_driver (rdma_parse.h) names the
 * provider that serves it. A device without a driver link (rxe, siw: no
 * parent device) or with a driver no provider is known for matches a
 * provider whose name starts its device name ("rxe" for rxe0, "mlx5" for
 * mlx5_0), as rdma-core names its devices after their provider.
 */
#ifndef CD_PROBES_RDMA_LIBS_H
#define CD_PROBES_RDMA_LIBS_H

#include <jansson.h>

#define RDMA_LIBS_CONF_DEPTH 8  /* nested includes followed */
#define RDMA_LIBS_CONF_DIRS  64 /* directories kept from ld.so.conf */

/* The directories <root>/etc/ld.so.conf names, in order (paths without
 * root), appended to dirs. A file that exists but cannot be read, or an
 * include deeper than RDMA_LIBS_CONF_DEPTH, is noted in errors["rdma_node"]. */
void rdma_libs_conf_dirs(const char *root, json_t *dirs, json_t *errors);

/* The first libibverbs.so.1 (a regular file or a link to one) in the order
 * above, as a string without root, or null. */
json_t *rdma_libs_verbs_lib(const char *root, json_t *errors);

/* The "driver NAME" names of <root>/etc/libibverbs.d/ *.driver, files in
 * name order (a new array). */
json_t *rdma_libs_providers(const char *root, json_t *errors);

/* Sets "driver" (the kernel driver of dev_dir/device, or null) and
 * "provider" (the entry of providers that serves the HCA device, or null)
 * of the port object o. */
void rdma_libs_set_provider(json_t *o, const char *dev_dir, const char *device,
                            const json_t *providers);

#endif
