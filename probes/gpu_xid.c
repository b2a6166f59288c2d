/* SPDX-License-Identifier: MIT */
/*
 * gpu_xid.c - the common Xids (gpu_xid.h). Each row is NVIDIA's Xid catalog
 * row (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html,
 * Table 1): code, mnemonic, description, immediate action.
 */
#include "gpu_xid.h"

#include <stddef.h>

#include "cd.h"

#define RESTART_APP "restart the application; the GPU itself needs nothing"
#define RESET_GPU   "reset the GPU (nvidia-smi -r -i N, no process on it) or reboot the node"

static const struct gpu_xid_def xids[] = {
    {13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP", RESTART_APP, 0},
    {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP",
     RESTART_APP, 0},
    {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE",
     "nothing (the application's channel was reset)", 0},
    {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors",
     "WORKFLOW_XID_45", "follow the Xid logged before it; alone, restart the fabric manager", 0},
    {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48",
     RESET_GPU " (NVIDIA's Xid 48 workflow; check remapped rows after it)", 1},
    {63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE",
     "nothing now; a pending remap needs a GPU reset (gpu-row-remap-pending)", 0},
    {64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU",
     RESET_GPU "; if it comes back, contact support (RMA)", 1},
    {74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR",
     RESET_GPU " (NVIDIA's NVLink error workflow)", 1},
    {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM",
     "reboot the node (power-cycle it if the GPU stays lost); check the riser, cable and power", 1},
    {92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE",
     "nothing now; watch the corrected ECC counts", 0},
    {94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP",
     RESTART_APP " (the error was contained to it)", 0},
    {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU", RESET_GPU, 1},
    {119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", RESET_GPU, 1},
    {120, "GSP_ERROR", "GSP Error", "RESET_GPU", RESET_GPU, 1},
};

const struct gpu_xid_def *gpu_xid_lookup(int xid)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(xids); i++)
		if (xids[i].xid == xid)
			return &xids[i];
	return NULL;
}
