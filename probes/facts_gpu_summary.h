/* SPDX-License-Identifier: MIT */
/*
 * facts_gpu_summary.h - one short word for a node's GPU health, for the
 * facts table's HEALTH column (pure: facts JSON in, text out).
 */
#ifndef CD_PROBES_FACTS_GPU_SUMMARY_H
#define CD_PROBES_FACTS_GPU_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

/*
 * The worst of the node's GPUs, from facts (a node's facts object), into
 * buf (at most 6 characters and the NUL fit in len 8):
 *   "-"      no GPUs
 *   "lost"   a GPU NVML answers GPU_IS_LOST for
 *   "ECC!"   an uncorrectable volatile ECC error, a row remap pending or
 *            failed, or retired pages pending (the GPU needs a reset)
 *   "Xid!"   Xid events in this boot's kernel log
 *   "N err"  N GPUs with a health query that failed
 *   "ok"     none of these
 * Returns buf.
 */
const char *facts_gpu_health_word(json_t *facts, char *buf, size_t len);

#endif
