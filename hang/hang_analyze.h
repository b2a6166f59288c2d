/* SPDX-License-Identifier: MIT */
/*
 * hang_analyze.h - the verdict of `clusterdoc hang` from its samples: pure,
 * JSON in, JSON out, so that it is tested on synthetic samples.
 *
 * samples: [{"t_ms": N (head's clock), "nodes": [{"host", "result": the
 * node's hang_sample answer (hang/hang_agent.h) or null, "error": why
 * not, or absent}]}...], oldest first, at least one.
 *
 * Returns a new object:
 *   {"version": 1, "status": "progressing" | "hung" | "not_inspected" |
 *    "rendezvous", "exit": 0 | 1 | 2 | 3, "summary": "<one line>", "elapsed_ms", "samples",
 *    "world_size", "searched": "<what the agents looked for>",
 *    "nodes": [{"host", "error" | null, "processes", "denied": [...]}],
 *    "ranks": [{"rank", "node", "pid", "state", "activity", "syscall",
 *               "cpu_ms_delta", "advancing", "gone", "frame", "stacks",
 *               "stacks_how", "stacks_note", "connections": [{"local",
 *               "remote", "state", "tx_queue", "rx_queue", "peer_rank",
 *               "peer_node"}], "gpu": hang_gpu.h's {"index", "uuid", "util",
 *               "util_memory"} or null}],
 *    "groups": [{"what", "ranks": [..], "ranks_text": "0-3,5"}] (smallest first),
 *    "suspects": [{"node", "rank", "pid", "reason", "evidence": [...]}]}
 *
 * Rules: a rank is advancing when its main thread's CPU time ("main"'s
 * "cpu_ms"; the process's "cpu_ms" from an agent that does not give it)
 * grew by at least HANG_ADVANCE_PCT % of the time between the first and
 * the last sample, when its innermost Python frame differs between the two
 * (only where both samples carry stacks), or when its collective count in
 * the NCCL RAS communicator of the world's size grew. World size: the processes'
 * "world_size", else their WORLD_SIZE.
 * The job is progressing when every rank of the world was seen, none is
 * gone, every rank advances, no link holds a send queue that does not
 * drain and no GPU stands out; hung otherwise, with suspects, in this order: stopped ranks
 * (the process's "state" T or t: SIGSTOP, job control, a tracer); gone or missing
 * ranks; links whose send queue did not drain (tx_queue non-zero in the
 * first and the last sample and not smaller); ranks whose main thread is
 * not waiting (sleeping, running, elsewhere) while others wait; a GPU that
 * stands out (hang/hang_gpu.h: idle among busy ones, or the only
 * busy one, even when every rank's CPU time advances); ranks whose
 * stack differs from the others' (the minority group); else one suspect
 * saying that every rank waits and none stands out. rendezvous (exit 3)
 * when no rank was found but launchers were ("role": "launcher": torchrun
 * waiting for its rendezvous; the summary names the launcher, its nodes and
 * the MASTER_ADDR:MASTER_PORT of its environment, else the address of a
 * connection it has not got an answer to). not_inspected (exit 2) when
 * neither was found on any node (the summary says what was searched where)
 * or no node could be sampled.
 */
#ifndef CD_COLLECTIVES_HANG_ANALYZE_H
#define CD_COLLECTIVES_HANG_ANALYZE_H

#include <jansson.h>

#define HANG_ADVANCE_PCT 3
/* The exit status of a job whose launchers wait in their rendezvous with
 * no rank started ("status": "rendezvous"). */
#define HANG_EXIT_RENDEZVOUS 3

json_t *hang_analyze(const json_t *samples);

#endif
