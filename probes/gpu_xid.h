/* SPDX-License-Identifier: MIT */
/*
 * gpu_xid.h - what an NVIDIA Xid number means, for the gpu-xid finding
 * (probes/diagnose_gpu.c, docs/findings.md): the common Xids' mnemonic,
 * description and NVIDIA's immediate action, as NVIDIA's "XID Errors"
 * document lists them in its Xid catalog for Ampere and newer GPUs
 * (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html,
 * "Table 1 Xids": Code, Mnemonic, Description, Resolution Bucket
 * (Immediate Action)).
 *
 * Fatal is clusterdoc's reading of that action, as DCGM's and NHC's GPU
 * checks read it: an Xid whose immediate action resets the GPU
 * (RESET_GPU), restarts the machine (RESTART_BM) or follows NVIDIA's
 * double-bit ECC or NVLink workflow leaves the GPU unusable until then, so
 * the node must not take a job; one whose action is to restart the
 * application (RESTART_APP), to ignore it (IGNORE) or to follow the other
 * Xids (45) is the application's or already handled, and only warns.
 */
#ifndef CD_PROBES_GPU_XID_H
#define CD_PROBES_GPU_XID_H

struct gpu_xid_def {
	int xid;
	const char *mnemonic;    /* NVIDIA's, e.g. "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS" */
	const char *description; /* NVIDIA's, e.g. "GPU has fallen off the bus" */
	const char *action;      /* NVIDIA's immediate action, e.g. "RESTART_BM" */
	const char *what_to_do;  /* that action in words */
	int fatal;               /* 1: the node must not take a job (above) */
};

/* The entry for Xid xid, or NULL for an Xid outside the common ones (the
 * finding then points at NVIDIA's catalog and only warns). */
const struct gpu_xid_def *gpu_xid_lookup(int xid);

#endif
