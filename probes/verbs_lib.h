/* SPDX-License-Identifier: MIT */
/*
 * verbs_lib.h - libibverbs through dlopen, for the matrix's RDMA proof
 * (probes/reach_rdma.c). Agent side: the agent links libc only, so the
 * library is loaded at run time and every call looked up by name; the
 * declarations are clusterdoc's own (probes/verbs_abi.h).
 *
 * A verbs provider runs inside the process that opens a device, and a
 * broken one can crash or hang there. So the library is first loaded and
 * the device opened in a child process under a deadline; only when that
 * child says the device opens is the library loaded in the agent. The
 * last library and device that opened so are not checked again in the
 * same agent.
 */
#ifndef CD_PROBES_VERBS_LIB_H
#define CD_PROBES_VERBS_LIB_H

#include <stddef.h>

#include "probes/verbs_abi.h"

struct verbs_lib {
	void *handle;
	cd_ibv_get_device_list_fn get_device_list;
	cd_ibv_free_device_list_fn free_device_list;
	cd_ibv_get_device_name_fn get_device_name;
	cd_ibv_open_device_fn open_device;
	cd_ibv_close_device_fn close_device;
	cd_ibv_query_port_fn query_port;
	cd_ibv_query_gid_fn query_gid;
	cd_ibv_alloc_pd_fn alloc_pd;
	cd_ibv_dealloc_pd_fn dealloc_pd;
	cd_ibv_reg_mr_fn reg_mr;
	cd_ibv_dereg_mr_fn dereg_mr;
	cd_ibv_create_cq_fn create_cq;
	cd_ibv_destroy_cq_fn destroy_cq;
	cd_ibv_create_qp_fn create_qp;
	cd_ibv_modify_qp_fn modify_qp;
	cd_ibv_destroy_qp_fn destroy_qp;
	cd_ibv_wc_status_str_fn wc_status_str; /* may be NULL: rdma_wc_status_name */
};

/* The libibverbs.so.1 the RDMA facts find under root (rdma_probe_root:
 * $CLUSTERDOC_SYSFS_ROOT in the tests, "" on a real node), with root in
 * front: the same file the facts' "verbs_lib" names. NULL when there is
 * none. The caller frees it. */
char *verbs_lib_path(const char *root);

#define VERBS_OPEN_WAIT_MS 3000

/*
 * Load path and check that device opens, first in a child process (at
 * most VERBS_OPEN_WAIT_MS), then here; look up every call above. 0 on
 * success (v filled; verbs_lib_close it), or -1 with why in the words the
 * proof reports ("not tested: ..."): "no libibverbs" (path NULL),
 * "libibverbs does not load: <dlerror>", "libibverbs lacks ibv_xxx",
 * "no RDMA device" (the device list is empty), "no device <name>",
 * "<name> does not open: <strerror>", "the verbs provider crashed opening
 * <name> (signal N)", "opening <name> did not finish within N ms".
 */
int verbs_lib_open(struct verbs_lib *v, const char *path, const char *device, char *why,
                   size_t len);

/* dlclose and clear; a cleared or failed v is a no-op. */
void verbs_lib_close(struct verbs_lib *v);

/* The device named name from the library's list, opened; NULL with why. */
struct cd_ibv_context *verbs_lib_open_device(const struct verbs_lib *v, const char *name, char *why,
                                             size_t len);

#endif
