/* SPDX-License-Identifier: MIT */
/*
 * diagnose_rdma_pair.c - rdma-pair-failed: the matrix's RDMA proof
 * (reach.h, rdma_matrix.h) wrote between two nodes and the write failed,
 * although both ends had an ACTIVE port, a verbs library and the GID
 * index NCCL would use under the environment run and mnist set (the plan's
 * NCCL_IB_GID_INDEX and NCCL_IB_HCA where the check suggests them): NCCL's
 * IB transport would fail or hang on that pair the same way. One finding per pair, on both of its
 * nodes, with the verbs status in words.
 */
#include "diagnose_internal.h"
#include "probes/rdma_matrix.h"

#include <stdio.h>
#include <string.h>

static const char pair_fix[] =
    "Check the RDMA path between the two nodes: both ports `ACTIVE` (`ibv_devinfo`), one "
    "subnet and partition on InfiniBand, and on RoCE the GIDs' IP addresses reachable from "
    "each other with UDP port 4791 passed by every firewall and switch ACL on the way (`nft "
    "list ruleset`), the same GID type (RoCE v2) and a lossless or ECN-marked class on the "
    "switches. `ib_write_bw -d DEV -x GID_INDEX` between the two nodes repeats the test.";

static void note_pair(struct dstate *st, const struct nm_attempt *a)
{
	const struct nm_node *from = &st->m->nodes[a->from], *to = &st->m->nodes[a->to];
	char msg[2048], ev[2048], key[160], text[512], gids[512];

	/* the ends are the plan's where it sets them (rdma_matrix.h): the job
	 * would fail with exactly these values */
	rdma_matrix_gid_text(a, from->host, to->host, gids, sizeof(gids));
	snprintf(
	    msg, sizeof(msg),
	    "%%N: an RDMA write from %s (%s:%d, GID index %d) to %s (%s:%d, GID index %d) "
	    "failed: %s; NCCL's IB transport between them would fail or hang the same way%s%s%s",
	    from->host, a->rdma_local.device, a->rdma_local.port, a->rdma_local.gid_index, to->host,
	    a->rdma_peer.device[0] ? a->rdma_peer.device : "?", a->rdma_peer.port,
	    a->rdma_peer.gid_index, a->rdma_why, gids[0] ? " (" : "", gids, gids[0] ? ")" : "");
	snprintf(ev, sizeof(ev), "%s -> %s: TCP %s, RDMA %s%s%s", from->host, to->host, a->result,
	         rdma_matrix_text(a, text, sizeof(text)), gids[0] ? "; " : "", gids);
	snprintf(key, sizeof(key), "%zu-%zu", a->from, a->to);
	diagnose_note(st, "rdma-pair-failed", SEV_ERROR, key, a->from, msg, pair_fix, ev);
	diagnose_note(st, "rdma-pair-failed", SEV_ERROR, key, a->to, msg, pair_fix, NULL);
}

void diagnose_check_rdma_pairs(struct dstate *st)
{
	for (size_t k = 0; k < st->m->nattempts; k++) {
		const struct nm_attempt *a = &st->m->attempts[k];

		if (strcmp(a->rdma, "failed") == 0)
			note_pair(st, a);
	}
}
