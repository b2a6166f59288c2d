/* SPDX-License-Identifier: MIT */
/*
 * transport_back_internal.h - what the files of the connect-back transport
 * share (transport_back.h): the listener's state, the unproven connections,
 * the table of launchers, and the functions one file gives the others.
 *
 *   transport_back.c         a node's conn (the transport's ops), the
 *                            listener's life, the launchers' table and
 *                            their stderr
 *   transport_back_accept.c  the listening socket, the queue of unproven
 *                            connections and the handshake (backauth.h)
 *   transport_back_srun.c    the srun launcher: one step for every node
 *   transport_back_local.c   the local-connect launcher: one local process
 *                            per node (measurement)
 */
#ifndef CD_CORE_TRANSPORT_BACK_INTERNAL_H
#define CD_CORE_TRANSPORT_BACK_INTERNAL_H

#include "backauth.h"
#include "buf.h"
#include "child.h"
#include "loop.h"
#include "transport.h"
#include "transport_back.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BACK_SECRET_HEX   64
#define LAUNCHER_ERR_MAX  8192 /* the launcher's stderr kept (its newest bytes) */
#define REAP_BUSY_MS      200  /* local agents are looked at this often while some are awaited */
#define REAP_IDLE_MS      2000 /* ...and this often once all have connected */
#define LAUNCHER_EXIT_MS  3000 /* how long backlisten_free waits for the launched processes */
#define SPAWN_BATCH       32   /* local agents started per loop turn (accepts go on between) */
#define LOCAL_TERM_MS     1000 /* a local agent's time to end its children on SIGTERM */
#define SRUN_TERM_MS      5000 /* srun's time to revoke its allocation or end its step on SIGTERM */
#define SBCAST_TIMEOUT_MS 120000 /* sbcast of the agent to every node of the allocation */
#define EXITED_GRACE_MS   500  /* how long srun's "task exited" line waits for the agent's words */
#define SRUN_WAIT_MAX     400  /* srun's words while it waits for Slurm: kept up to this length */
#define PEND_SPARE        256  /* unproven connections beyond one per node */
#define PEND_HELLO_MS     3000 /* a real agent says hello as soon as it connects */
#define ACCEPT_PAUSE_MS   100  /* the listener rests this long when no descriptor is left */
#define FLOOD_MIN         16   /* dropped unproven connections that make a flood */

struct backlisten;

/* A launcher: how the agents of a run are started. One row per enum
 * launcher (transport_back.c's table); ssh has no launch (sshpool starts
 * its agents). line: each line of the launcher's stderr (after it is kept),
 * or NULL. fini: wait for what it started until `until` (cd_now_ms), then
 * end it and free its part of b. waiting: the launcher's own words while it
 * has not started the agents yet (srun waiting for Slurm), or NULL; NULL
 * for a launcher that never waits. */
struct back_launcher {
	enum launcher kind;
	const char *name;
	int (*launch)(struct backlisten *b, const char *agent, char *err, size_t errlen);
	void (*line)(struct backlisten *b, const char *line);
	void (*fini)(struct backlisten *b, int64_t until);
	const char *(*waiting)(const struct backlisten *b);
};

/* An accepted connection: handshake under way (in b's queue of unproven
 * connections, oldest first), or proven and parked until its node waits
 * for it (out of the queue). */
struct pend {
	struct backlisten *b;
	int fd;
	int proven;
	int queued; /* in b->pends */
	char line[BACKAUTH_LINE_MAX];
	size_t len;
	struct backauth a;
	uint64_t timer;
	struct pend *prev, *next;
};

/* c->priv of a node's conn */
struct backconn {
	size_t host; /* index into b->hosts */
	int fd;      /* the agent's socket, -1 until it connected */
	int failed;
	int started; /* told the owner the launcher started the agent (ev->connected) */
};

struct backlisten {
	struct loop *loop;
	enum launcher kind;
	const struct back_launcher *launcher; /* the row of kind in the table */
	int fd;
	char secret[BACK_SECRET_HEX + 1];
	char addr[INET6_ADDRSTRLEN + 16];
	int handshake_ms;
	char **hosts; /* the run's nodes, as the pool names them */
	size_t n;
	size_t *order; /* indexes of hosts sorted by name, for lookups */
	struct conn **waiting;
	struct pend **parked;
	unsigned char *taken;      /* the node's agent connected (once per run) */
	unsigned char *spawned_at; /* local-connect: the node's agent process runs */
	char **dead;               /* why the launcher could not start the node's agent */
	/* Unproven connections, oldest first: at most pend_max, each with a
	 * deadline per handshake line; the oldest goes when a new one needs room. */
	struct pend *pends, *pends_last;
	size_t npend, pend_max;
	size_t dropped; /* connections closed unproven: silent, malformed, crowded out */
	long twice;     /* a node two agents proved themselves as (srun), or -1 */
	char note[BACKAUTH_NAME_MAX + 160]; /* said with each node's failure: twice */
	uint64_t pause_timer;               /* the listener rests (no descriptor left) */
	/* srun */
	struct child srun;
	int srun_started;
	struct buf err; /* the launcher's stderr (srun's, or the local agents') */
	char errline[512];
	size_t errline_len;
	char **exited; /* srun's "task N: Exited" line of the node, until the grace ends */
	int sbcast;    /* copy the agent to the nodes' /tmp with sbcast first */
	uint64_t exited_timer;
	char *srun_waiting; /* srun's lines while it waits for Slurm ("...; ..."), or NULL */
	/* local-connect */
	pid_t *pids;
	int err_pipe, err_pipe_w;
	uint64_t reap_timer;
	size_t live;
	size_t spawned; /* agents started so far (a batch per loop turn) */
	uint64_t spawn_timer;
	char *agent;
	char **envp; /* the head's environment, the secret, the name */
	char key_env[sizeof(BACKAUTH_KEY_ENV) + BACKAUTH_PROOF_HEX + 1]; /* the node's own key */
	char name_env[BACKAUTH_NAME_MAX + sizeof(BACKAUTH_NAME_ENV) + 1];
};

/* transport_back.c */
long back_find_host(const struct backlisten *b, const char *name);    /* index, or -1 */
void back_fail_host(struct backlisten *b, size_t i, const char *msg); /* the launcher failed i */
void back_watch(struct conn *c);
void back_started(struct conn *c);
void back_launcher_read(struct backlisten *b, int fd);
const char *back_launcher_last(struct backlisten *b);
const char *back_launcher_said(struct backlisten *b, const char *host);

/* transport_back_accept.c: listen (and watch the listener); take node i's
 * proven connection q into its waiting conn; free a connection; room for
 * n more descriptors */
int back_listen(struct backlisten *b, const char *listen_arg, char *err, size_t errlen);
void back_adopt(struct backlisten *b, size_t i, struct pend *q);
void back_pend_free(struct pend *q, int close_fd);
void back_raise_nofile(size_t n);

/* transport_back_srun.c, transport_back_local.c: their launchers' rows */
int back_srun_launch(struct backlisten *b, const char *agent, char *err, size_t errlen);
void back_srun_line(struct backlisten *b, const char *line);
void back_srun_fini(struct backlisten *b, int64_t until);
const char *back_srun_waiting(const struct backlisten *b);
/* A line of srun's stderr: 1 when srun says it waits for Slurm ("srun: job
 * 10 queued and waiting for resources", "srun: Required node not available
 * (down, drained or reserved)", a step "creation temporarily disabled"), 0
 * when it says the wait is over ("has been allocated resources", "Step
 * created for"), -1 for any other line (its tasks' lines included). Pure. */
int back_srun_waits(const char *line);
int back_local_launch(struct backlisten *b, const char *agent, char *err, size_t errlen);
void back_local_fini(struct backlisten *b, int64_t until);

#endif
