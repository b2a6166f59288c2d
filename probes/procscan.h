/* SPDX-License-Identifier: MIT */
/*
 * procscan.h - pure parsers of the /proc files `clusterdoc hang` reads on a
 * node (hang/hang_agent.c): a process's stat line, a thread's syscall
 * line, /proc/net/tcp{,6}, a socket fd's link, and the rank variables of a
 * process's environment. Each takes the bytes read (buf, len; no NUL needed)
 * and fills a struct; nothing here touches the file system.
 *
 * Formats: proc(5) ("/proc/pid/stat", "/proc/pid/syscall", "/proc/net/tcp")
 * and the kernel's net/ipv4/tcp_ipv4.c get_tcp4_sock, net/ipv6/tcp_ipv6.c
 * get_tcp6_sock (addresses are the in-memory words printed as %08X).
 */
#ifndef CD_PROBES_PROCSCAN_H
#define CD_PROBES_PROCSCAN_H

#include <stddef.h>
#include <stdint.h>

#define PROCSCAN_COMM  64
#define PROCSCAN_ADDR  64 /* "a.b.c.d:port" or "[v6]:port" */
#define PROCSCAN_VALUE 64 /* a rank variable's value, capped */

/* /proc/PID/stat, the fields hang needs. */
struct procscan_stat {
	long pid;
	char comm[PROCSCAN_COMM]; /* between the first '(' and the last ')' */
	char state;               /* R, S, D, Z, T, t, X, I */
	long ppid;
	uint64_t utime, stime; /* clock ticks */
	long num_threads;
	uint64_t starttime; /* clock ticks after boot */
};

/* 0, or CD_ERR_PARSE with err. */
int procscan_stat_parse(const char *buf, size_t len, struct procscan_stat *st, char *err,
                        size_t errlen);

/* /proc/PID/task/TID/syscall: "running", "-1 SP PC" (blocked, not in a
 * system call), or "NR A0 A1 A2 A3 A4 A5 SP PC". */
enum procscan_sys_kind { PROCSCAN_SYS_RUNNING, PROCSCAN_SYS_NONE, PROCSCAN_SYS_CALL };

struct procscan_syscall {
	enum procscan_sys_kind kind;
	long nr;         /* PROCSCAN_SYS_CALL */
	uint64_t arg[6]; /* PROCSCAN_SYS_CALL */
};

/* 0, or CD_ERR_PARSE with err. */
int procscan_syscall_parse(const char *buf, size_t len, struct procscan_syscall *sc, char *err,
                           size_t errlen);

/* The name of system call nr on this machine's architecture (x86_64,
 * aarch64) for the calls a waiting or sleeping process sits in, or NULL.
 * fd_arg (not NULL): the index of the argument that is a file descriptor
 * (read, recvfrom, epoll_wait, ...), or -1 (futex, poll, nanosleep...). */
const char *procscan_syscall_name(long nr, int *fd_arg);

/* What a thread's system call says it does: "running" (on a CPU or
 * runnable), "sleep" (nanosleep, clock_nanosleep, select/pselect6 with no
 * fds: Python's time.sleep), "wait" (futex, poll, epoll, socket and pipe
 * reads and writes, accept, wait4), or "other". */
const char *procscan_syscall_class(const struct procscan_syscall *sc);

/* One line of /proc/net/tcp or tcp6. */
struct procscan_tcp {
	char local[PROCSCAN_ADDR], remote[PROCSCAN_ADDR];
	int state; /* 1 ESTABLISHED ... 10 LISTEN (include/net/tcp_states.h) */
	uint64_t tx_queue, rx_queue;
	/* The timer pending ("tr": 1 retransmit, 2 keepalive, 4 zero-window probe), the
	 * retransmission timeouts since the peer last acknowledged new data ("retrnsmt",
	 * icsk_retransmits) and the zero-window probes the peer left unanswered ("timeout",
	 * icsk_probes_out): what tells a link that delivers nothing from a busy one. */
	int timer;
	uint64_t retransmits, probes;
	uint64_t inode;
};

/* The name of a TCP state ("ESTABLISHED", "CLOSE_WAIT"...), "?" when unknown. */
const char *procscan_tcp_state_name(int state);

/*
 * The sockets of a /proc/net/tcp or tcp6 text (the header line skipped),
 * at most max into out; *n is how many. ipv6 picks the address format.
 * 0; CD_ERR_PARSE with err naming the line on a malformed line; CD_ERR_TOOBIG
 * when more than max sockets are listed (out then holds the first max).
 */
int procscan_tcp_parse(const char *buf, size_t len, int ipv6, struct procscan_tcp *out, size_t max,
                       size_t *n, char *err, size_t errlen);

/* The inode of a "socket:[INODE]" link target, or 0 when it is not one. */
uint64_t procscan_socket_inode(const char *target, size_t len);

/*
 * The one walk of /proc/PID/fd (it reads /proc: not pure). fn(fd, target,
 * len, arg) for each open fd, target its link ("socket:[123]", a path; len
 * bytes, NUL-terminated), at most max of them (0: every one), in the
 * directory's order; the walk stops at the first fn that returns nonzero,
 * and that is what it returns. 0 when pid's fds cannot be read (gone, not
 * ours).
 */
int procscan_fds(long pid, size_t max,
                 int (*fn)(long fd, const char *target, size_t len, void *arg), void *arg);

/* The rank variables of a process's environment (NUL-separated
 * "NAME=value"). A value absent is "". */
struct procscan_rank {
	char rank[PROCSCAN_VALUE], local_rank[PROCSCAN_VALUE], world_size[PROCSCAN_VALUE];
	char group_rank[PROCSCAN_VALUE], local_world_size[PROCSCAN_VALUE];
	/* what `clusterdoc run`, torch.distributed.launch and scripts that take
	 * their rank from argv carry: NODE_RANK, NNODES, NPROC_PER_NODE */
	char node_rank[PROCSCAN_VALUE], nnodes[PROCSCAN_VALUE], nproc_per_node[PROCSCAN_VALUE];
	/* Open MPI's ranks: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE */
	char ompi_rank[PROCSCAN_VALUE], ompi_size[PROCSCAN_VALUE];
	char master_addr[PROCSCAN_VALUE], master_port[PROCSCAN_VALUE];
	char torchelastic_run_id[PROCSCAN_VALUE], clusterdoc_run[PROCSCAN_VALUE];
	char pythonpath[256];
	/* NCCL RAS and PyTorch's Flight Recorder: NCCL_RAS_ADDR,
	 * TORCH_NCCL_DEBUG_INFO_PIPE_FILE, TORCH_NCCL_DEBUG_INFO_TEMP_FILE and
	 * the newer name of the latter, TORCH_FR_DUMP_TEMP_FILE, which torch reads
	 * first where it knows it */
	char nccl_ras_addr[PROCSCAN_VALUE], fr_pipe[256], fr_temp[256], fr_temp_new[256];
	int torchelastic; /* some TORCHELASTIC_* variable is set */
};

/* Fill r from environ. Returns 1 when the process looks like a rank (RANK,
 * LOCAL_RANK, WORLD_SIZE or OMPI_COMM_WORLD_RANK set, or NODE_RANK with
 * NNODES), 2 when only TORCHELASTIC_* variables are (a torchrun launcher),
 * 0 otherwise. */
int procscan_environ_rank(const char *environ, size_t len, struct procscan_rank *r);

/* 1 when the environment names the process's rank itself (RANK or
 * OMPI_COMM_WORLD_RANK), as a launcher gives each of its ranks. */
int procscan_rank_explicit(const struct procscan_rank *r);

/* The global rank: RANK; else OMPI_COMM_WORLD_RANK; else GROUP_RANK *
 * LOCAL_WORLD_SIZE + LOCAL_RANK; else NODE_RANK * (NPROC_PER_NODE, else
 * LOCAL_WORLD_SIZE, else 1) + (LOCAL_RANK, else 0); else -1. */
long procscan_global_rank(const struct procscan_rank *r);

/* The world size: WORLD_SIZE; else OMPI_COMM_WORLD_SIZE; else NNODES *
 * (NPROC_PER_NODE, else 1); else -1. */
long procscan_world_size(const struct procscan_rank *r);

/* What a command line (/proc/PID/cmdline: NUL-separated arguments) says a
 * process is: a launcher that starts ranks and is none itself. */
enum procscan_launcher {
	PROCSCAN_NOT_LAUNCHER,
	PROCSCAN_TORCHRUN, /* torchrun, python -m torch.distributed.run|launch, or
	                    * python -c with a program that runs torch.distributed.run
	                    * (clusterdoc run's torchrun, jobs/torchrun.c) */
	PROCSCAN_MPIRUN,   /* mpirun, mpiexec, orterun, prterun */
};

enum procscan_launcher procscan_cmdline_launcher(const char *cmdline, size_t len);

/* "torchrun", "mpirun", or "" for PROCSCAN_NOT_LAUNCHER. */
const char *procscan_launcher_name(enum procscan_launcher l);

/* The SigCgt mask of a /proc/PID/status text (bit N-1 set: signal N has a
 * handler installed) into *mask. 0, or CD_ERR_PARSE with err when the line
 * is missing or is not 16 hex digits or fewer. */
int procscan_status_sigcgt(const char *buf, size_t len, uint64_t *mask, char *err, size_t errlen);

/* 1 when mask (procscan_status_sigcgt) holds a handler for signal signo. */
int procscan_sig_caught(uint64_t mask, int signo);

#endif
