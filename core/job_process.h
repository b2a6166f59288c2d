/* SPDX-License-Identifier: MIT */
/*
 * job_process.h - a process tree as the agent's background job (job.h),
 * for `clusterdoc mnist --mode torch` (torchrun and its workers).
 *
 *   proc_start {"argv": [...], "env": {"NAME": "value"...}, "cwd": "~/...",
 *               "grace_ms": 3000}
 *              -> {"pid": <the reaper's pid: the job's session>,
 *                  "pgid": <the command's process group>}
 *
 * "pgid" is absent when the reaper did not say it within 2 s. The head keeps
 * both: when this agent stops answering it ends them itself, through a fresh
 * SSH session (sshpool.h, sshpool_node_set_job).
 *
 * argv[0] is searched in PATH; env is added to the agent's environment (a
 * value starting with "~/" gets the agent's $HOME, as in a shell's
 * assignment); cwd (optional) is created if missing. stdin is /dev/null; stdout and
 * stderr become the job's "out" and "err" lines. The job ends with the
 * command's exit code or signal.
 *
 * Nothing is left behind: the command runs in its own process group under
 * a small reaper process (a fork of the agent in its own session). When the
 * command exits, the reaper kills what is left of its group (torchrun's
 * workers); when asked to stop (job_stop), it sends SIGTERM to the group and
 * SIGKILL grace_ms later (default JOB_PROCESS_GRACE_MS); and when the agent dies, even by
 * SIGKILL, the kernel tells the reaper (PR_SET_PDEATHSIG), which does the
 * same.
 */
#ifndef CD_JOB_PROCESS_H
#define CD_JOB_PROCESS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define JOB_PROCESS_MAX_ARGS     256
#define JOB_PROCESS_GRACE_MS     3000   /* from SIGTERM to SIGKILL */
#define JOB_PROCESS_GRACE_MAX_MS 600000 /* the most "grace_ms" a start takes */

json_t *job_process_start(json_t *req, const char **code, char *msg, size_t msglen);

/* The session of the running job's processes (its reaper's pid: every
 * process of the job that did not call setsid has it), or 0 when no job
 * started by proc_start runs. Main thread only, as the requests are. */
pid_t job_process_session(void);

#endif
