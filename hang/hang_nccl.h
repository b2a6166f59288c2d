/* SPDX-License-Identifier: MIT */
/*
 * hang_nccl.h - the NCCL parts of `clusterdoc hang`'s verdict: the NCCL RAS
 * answers of the nodes compared across samples (hang/hang_ras.h)
 * and the Flight Recorder dumps of the ranks compared across ranks
 * (hang/hang_fr.h). Pure, JSON in, JSON out.
 */
#ifndef CD_COLLECTIVES_HANG_NCCL_H
#define CD_COLLECTIVES_HANG_NCCL_H

#include <jansson.h>

/*
 * Add to verdict (hang_analyze's object, for samples as hang_analyze.h
 * describes them) "ras": [{"host", "communicators": hang_ras_compare of
 * the node's first and last answer}] (nodes whose ranks use NCCL), and
 * "flight_recorder": hang_fr_analyze of the dumps of the last sample, plus
 * "errors": [{"host","rank","error"}] of the ranks that gave none, or null
 * when no rank was asked; each rank's "last" collective there also has the
 * "node" and "pid" of the rank that dumped it. A communicator RAS calls
 * "stuck" and a Flight Recorder message ("not all ranks joined collective
 * N") become suspects, after the others; a job found progressing is then
 * hung (exit 1). A Flight Recorder suspect is the first rank its message
 * names (node, rank, pid), each named rank's last collective and innermost
 * frame of the job's own code its evidence.
 */
void hang_nccl_verdict(const json_t *samples, json_t *verdict);

#endif
