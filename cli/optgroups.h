/* SPDX-License-Identifier: MIT */
/*
 * optgroups.h - the option groups commands share (core/optgroup.h): the check's
 * knobs (probes/netcheck.h: check, env, fix, tui), the bench's
 * (collectives/bench.h: bench, tui), the MNIST job's (jobs/mnist.h:
 * mnist, tui) and the reports' (report/report.h: check, bench). Each is
 * defined once, in opt_check.c, opt_bench.c, opt_job.c and opt_report.c:
 * its long options, its help lines, its bounds and its errors.
 *
 * Option ids: the targets' are below OPT_TARGETS_END (targets.h), each
 * command's own from there; the groups' from 1100.
 */
#ifndef CD_OPTGROUPS_H
#define CD_OPTGROUPS_H

#include "collectives/bench.h"
#include "jobs/mnist.h"
#include "optgroup.h"
#include "probes/netcheck.h"
#include "report/report.h"

/* ---------------------------------------------------------------- reports */

enum {
	REPORTOPT_PROM = 1100, /* --prom FILE */
	REPORTOPT_PUSH,        /* --push URL */
	REPORTOPT_JUNIT,       /* --junit FILE */
};

/* dst: struct report_opts. */
extern const struct optgroup reportopt_group;

/* ---------------------------------------------------------------- check */

enum {
	CHECKOPT_MASTER = 1200, /* --master HOST */
	CHECKOPT_PORT,          /* --port N, 1 .. OPT_PORT_MAX */
	CHECKOPT_PROBE_TIMEOUT, /* --probe-timeout MS */
	CHECKOPT_NO_FIREWALL,   /* --no-firewall */
	CHECKOPT_FULL_MATRIX_MAX,
	CHECKOPT_PYTHON,      /* --python PATH */
	CHECKOPT_DEADLINE,    /* --deadline S */
	CHECKOPT_SEED,        /* --seed N (not listed in --help) */
	CHECKOPT_EXPECT_GPUS, /* --expect-gpus N */
	CHECKOPT_DCGM_LEVEL,  /* --dcgm-level 1|2 */
};

/* Where the check group's values go: the check's options, and the two the
 * front end keeps (the master is a name until the nodes are known, the
 * deadline bounds the whole check). */
struct checkopt_dst {
	struct netcheck_opts *o;
	const char **master;
	int *deadline_s;
};

/* dst: struct checkopt_dst. */
extern const struct optgroup checkopt_group;

/* ---------------------------------------------------------------- bench */

/* -b, -e and -f are the bench's short options (nccl-tests' spelling): a
 * command that takes them drops the targets' -f (TARGETS_SHORTOPTS_NOF). */
#define BENCHOPT_SHORTOPTS "b:e:f:"
enum {
	BENCHOPT_BACKEND = 1300,
	BENCHOPT_ITERS,
	BENCHOPT_WARMUP,
	BENCHOPT_DTYPE,
	BENCHOPT_RANKS_PER_NODE,
	BENCHOPT_GPUS_PER_NODE,
	BENCHOPT_IFACE,
	BENCHOPT_CONNS,
	BENCHOPT_PAIRS,
	BENCHOPT_PAIRS_ALL_MAX,
	BENCHOPT_NO_CHECK,
	BENCHOPT_STALL_TIMEOUT,
};

/* dst: struct bench_opts. Its finish refuses a smallest size above the
 * largest. Ids 'b', 'e', 'f': the sizes and the size factor. */
extern const struct optgroup benchopt_group;

/* ---------------------------------------------------------------- job */

enum {
	JOBOPT_MODE = 1400,
	JOBOPT_EPOCHS,
	JOBOPT_BACKEND,
	JOBOPT_NPROC,
	JOBOPT_DATA_URL,
	JOBOPT_DATA_DIR,
	JOBOPT_DATA_MD5,
	JOBOPT_CACHE_DIR,
	JOBOPT_RETRIES,
	JOBOPT_REMOTE_DIR,
	JOBOPT_IFACE,
	JOBOPT_MASTER_PORT,
	JOBOPT_PYTHON,
	JOBOPT_BATCH,
	JOBOPT_LR,
	JOBOPT_SEED,
	JOBOPT_JOB_TIMEOUT,
	JOBOPT_STALL_TIMEOUT,
	JOBOPT_RDZV_TIMEOUT,
};

/* dst: struct mnist_opts. */
extern const struct optgroup jobopt_group;

#endif
