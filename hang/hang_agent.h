/* SPDX-License-Identifier: MIT */
/*
 * hang_agent.h - the agent's side of `clusterdoc hang`: one sample of the
 * job's processes on this node, read from /proc (procscan.h). Nothing is
 * changed and nothing is traced; the only signal ever sent is a hang-ready
 * `clusterdoc run` job's own dump signal (CLUSTERDOC_DUMP_SIGNAL, SIGUSR2),
 * to the exact PID of a rank whose /proc/PID/status SigCgt shows a handler
 * for it (never to a launcher), when the head asks for stacks.
 *
 *   hang_sample {"run": "<run id>" (optional), "stacks": true|false,
 *                "stack_wait_ms": N (default 1000, at most 5000),
 *                "flight_recorder": true|false (default false)}
 *     -> {"host", "user", "uid", "searched": "<what was looked for>",
 *         "clk_tck", "processes": [PROCESS...], "denied": [DENIED...],
 *         "pyspy": "<path>" | null, "truncated": true|false, "vanished": N,
 *         "other_netns": N, "ras": {...} | null, "flight_recorder": {...} | null,
 *         "gpus": [...] | null, "gpu_error" (only when NVML fails)}
 * ("gpus": each GPU's utilisation and compute PIDs through NVML, null
 * without it; "ras": the node's NCCL RAS answer when a rank maps libnccl;
 * "flight_recorder": the ranks' dumps when asked; hang_agent_internal.h's
 * hang_agent_nccl and hang_agent_gpus say what they hold)
 *
 * Which processes: with "run", those whose environment holds
 * CLUSTERDOC_RUN=<run>; else every process whose environment holds RANK,
 * LOCAL_RANK, WORLD_SIZE, OMPI_COMM_WORLD_RANK or NODE_RANK with NNODES (a
 * rank, procscan.h's rules) or only TORCHELASTIC_* variables. A launcher is
 * kept apart ("role":"launcher", "rank": -1, "launcher": "torchrun",
 * "mpirun" or its comm): only TORCHELASTIC_* variables, a launcher's command
 * line (procscan_cmdline_launcher), or a rank by its node's variables alone
 * with a child that names its own RANK. Only the agent's own
 * user's processes are read (all when it runs as root); the agent and its
 * ancestors are left out, and so are processes of another network namespace
 * ("other_netns" counts them: nodes that share one process table, as
 * containers on one host may, each see only their own). A rank whose parent is a rank of the same
 * RANK (a DataLoader worker) is "role":"child".
 *
 * PROCESS: {"pid", "ppid", "comm", "cmdline" (capped), "role", "rank" (global,
 *   -1 unknown or a launcher), "launcher": null for a rank, "world_size"
 *   (-1 unknown), "env": {RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK,
 *   LOCAL_WORLD_SIZE, NODE_RANK, NNODES, NPROC_PER_NODE, OMPI_COMM_WORLD_RANK,
 *   OMPI_COMM_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID,
 *   CLUSTERDOC_RUN}, "state", "cpu_ms" (utime+stime), "rchar", "wchar",
 *   "threads": [{"tid", "comm", "state", "wchan", "syscall", "class", "fd",
 *   "cpu_ms"}] (at most HANG_AGENT_MAX_THREADS),
 *   "main": the main thread's entry, "sockets": [{"fd", "local", "remote",
 *   "state", "tx_queue", "rx_queue"}] (TCP connections other than LISTEN, from
 *   the process's own network namespace), "blocked_socket": the socket the
 *   main thread blocks on or null, "gpu": {"index", "uuid", "util_gpu",
 *   "util_memory", "used_memory_bytes"} of the GPU NVML runs it on, or null,
 *   "stacks": text | null, "stacks_how":
 *   "hang-ready" | "py-spy" | "none", "stacks_note": why not, or ""}
 * DENIED: {"pid", "uid", "user", "comm", "cmdline", "need"}: processes of
 *   another user that look like torch (torchrun, pt_main_thread, ...):
 *   their environment and fds are readable only by their owner or root.
 * A process that exits while it is read is left out ("vanished" counts it).
 */
#ifndef CD_PROBES_HANG_AGENT_H
#define CD_PROBES_HANG_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define HANG_AGENT_MAX_PROCS   64
#define HANG_AGENT_MAX_THREADS 96
#define HANG_AGENT_MAX_SOCKETS 64
#define HANG_AGENT_MAX_DENIED  16
#define HANG_AGENT_STACKS_CAP  16384

json_t *hang_agent_sample(json_t *req, const char **code, char *msg, size_t msglen);

#endif
