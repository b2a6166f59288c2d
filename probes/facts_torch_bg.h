/* SPDX-License-Identifier: MIT */
/*
 * facts_torch_bg.h - a torch import that outlives the request, in a detached
 * finisher process.
 *
 * A cold `import torch` (torch on NFS or in conda, a node loaded by the
 * check itself) can take longer than a facts request may wait. Killing it at
 * the deadline would leave the cache cold for ever: every request would start
 * the same import again. So on a cache miss the import runs in a finisher
 * that is not the agent's child and that nothing of the agent keeps alive:
 *
 *   agent --fork--> middle --fork--> finisher
 *                     `- exits at once; the agent reaps it, so the finisher
 *                        is re-parented and never a zombie of the agent.
 *
 * The finisher calls setsid(), takes the name FACTS_TORCH_BG_NAME, puts
 * /dev/null on stdin, stdout and stderr and closes every other descriptor
 * but the result pipe's write end and the lock: the agent's stdout is the
 * SSH channel (or the connect-back socket), and sshd would wait for any
 * process that holds it. Then it writes its pid to
 * the pipe, calls the work function (which imports torch under its own long
 * cap and stores the cache), writes the record the work returned and exits.
 *
 * One import at a time per cache file: the finisher holds flock(LOCK_EX) on
 * "<cache>.lock" until it exits. The lock is taken in the agent
 * (facts_torch_bg_lock) before the fork, so that two requests cannot both
 * start one; the finisher inherits the open file description, which also
 * records its pid for a request that finds the lock busy.
 *
 * The finisher is a fork of a process that may have threads (the agent's
 * stdin reader): it uses only what glibc keeps usable after fork (malloc,
 * which glibc resets in the child, and system calls) and never stdio.
 *
 * Why not the child runner (core/childrun.h), as every other program the
 * agent starts: the finisher is not a program but a C function (it runs the
 * interpreter itself, through facts_pyrun, and stores the cache file), and it
 * must outlive the request, detached from the agent's session and
 * descriptors, which a childrun (killed and reaped at its deadline, its
 * pipes read by the caller) by design never does. It is one of the files
 * tests/integration/test_house.sh allows to fork.
 */
#ifndef CD_PROBES_FACTS_TORCH_BG_H
#define CD_PROBES_FACTS_TORCH_BG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most the agent reads of a finisher's record, in bytes; more is an
 * error (CD_ERR_TOOBIG). */
#define FACTS_TORCH_BG_RECORD_MAX (80 * 1024)

/* The finisher's process name (/proc/PID/comm), set with PR_SET_NAME, so
 * that it is not taken for an agent. */
#define FACTS_TORCH_BG_NAME "cd-torch-import"

/* How often a request that found the lock busy tries it again. */
#define FACTS_TORCH_BG_POLL_MS 50

/*
 * The finisher's work: runs in the finisher, after its descriptors are
 * closed. Returns the record, a new NUL-terminated string (malloc'd; the
 * finisher exits without freeing it), or NULL when there is nothing to say.
 */
typedef char *(*facts_torch_bg_work_fn)(void *arg);

/*
 * Open "<cache_path>.lock" (creating it and its directory) and take
 * flock(LOCK_EX) on it without blocking; while an earlier import holds it,
 * try again every FACTS_TORCH_BG_POLL_MS until deadline (cd_now_ms).
 * Returns:
 *   0               taken at once; *lock_fd is the caller's (pass it to
 *                   facts_torch_bg_run, or close it);
 *   1               taken after waiting: an earlier import has ended, so
 *                   the cache is worth reading again before importing;
 *   CD_ERR_TIMEOUT  still held at the deadline; *holder is the pid of the
 *                   import that holds it, 0 when it is not known;
 *   CD_ERR_IO       the lock file cannot be opened or locked (message in
 *                   errbuf): nothing can be cached there either.
 * *lock_fd is -1 except after 0 and 1.
 */
int facts_torch_bg_lock(const char *cache_path, int64_t deadline, int *lock_fd, pid_t *holder,
                        char *errbuf, size_t errlen);

/*
 * Start a finisher that holds lock_fd (taken: the agent's copy is closed
 * here, whatever happens) and runs work(arg), then wait for its record until
 * deadline. work and arg are copied into the finisher by the fork, so arg
 * may point at the caller's stack.
 * Returns:
 *   0               the record came in time: *record (new, NUL-terminated,
 *                   caller frees);
 *   CD_ERR_TIMEOUT  the finisher is still working at the deadline: it goes
 *                   on alone; *pid is its pid (0 when it had not said yet);
 *   CD_ERR_IO       it could not be started, or it ended without a record;
 *   CD_ERR_TOOBIG   its record is longer than FACTS_TORCH_BG_RECORD_MAX.
 * *record is NULL except after 0. Returns by the deadline, plus the moment
 * that reaping the middle process takes (it exits at once; it is waited for
 * at most 1 s and then left).
 */
int facts_torch_bg_run(int lock_fd, int64_t deadline, facts_torch_bg_work_fn work, void *arg,
                       char **record, pid_t *pid, char *errbuf, size_t errlen);

#endif
