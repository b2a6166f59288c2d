/* SPDX-License-Identifier: MIT */
/*
 * facts_pyrun.h - run an interpreter (or any program) as a child process of
 * the Python probe (facts_python.h), under a deadline and with capped output.
 *
 * The child runs in its own process group with stdin from /dev/null; on the
 * deadline the whole group is killed with SIGKILL and the child is reaped.
 * Stdout is capped at FACTS_PYTHON_OUT_MAX (more is an error), stderr is read
 * to the end but only its last FACTS_PYRUN_ERR_TAIL bytes are kept, for
 * error messages. Waits for its child by PID only: it is one childrun
 * (core/childrun.h) on a private loop, with own_group, a FAIL cap on stdout
 * and a TAIL cap on stderr.
 */
#ifndef CD_PROBES_FACTS_PYRUN_H
#define CD_PROBES_FACTS_PYRUN_H

#include "probes/facts_python.h"

#include <stddef.h>
#include <stdint.h>

#define FACTS_PYRUN_ERR_TAIL 2048

/* What a finished child left behind. */
struct facts_pyrun {
	char *out; /* stdout, NUL-terminated, at most FACTS_PYTHON_OUT_MAX bytes */
	size_t out_len;
	char err[FACTS_PYRUN_ERR_TAIL + 1]; /* the last FACTS_PYRUN_ERR_TAIL bytes of stderr */
	size_t err_len;
	int status; /* waitpid status */
};

/*
 * Run argv (argv[0] searched in PATH) with stdin from /dev/null until it
 * exits or deadline (cd_now_ms) passes. Returns 0 with r filled (r->out is
 * the caller's to free) whatever the exit status; CD_ERR_NOTFOUND when
 * argv[0] does not exist; CD_ERR_TIMEOUT; CD_ERR_TOOBIG; CD_ERR_IO. On every
 * error the child has been killed and reaped.
 */
int facts_pyrun_child(char *const argv[], int64_t deadline, struct facts_pyrun *r, char *errbuf,
                      size_t errlen);

#endif
