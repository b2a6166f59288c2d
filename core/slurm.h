/* SPDX-License-Identifier: MIT */
/*
 * slurm.h - drain and resume Slurm nodes through `scontrol`, the way a
 * HealthCheckProgram does it, marking what clusterdoc did so that it never
 * undoes somebody else's drain.
 *
 * scontrol is found in PATH (or $CLUSTERDOC_SCONTROL); each call has a 10 s
 * deadline. Node names are passed as one argv element each, never through a
 * shell.
 */
#ifndef CD_SLURM_H
#define CD_SLURM_H

#include <stddef.h>

/* Every reason clusterdoc sets starts with this; --undrain only resumes
 * nodes whose reason does. */
#define SLURM_REASON_PREFIX "clusterdoc:"

struct slurm_node {
	char state[128];  /* "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN"...; "" unknown */
	char reason[512]; /* without the trailing " [user@time]"; "" when none */
	int drained;      /* state holds DRAIN (draining or drained) */
	int down;         /* state holds DOWN */
};

/* `scontrol show node -o NAME`: 0, or a negative cd_err with err saying
 * what scontrol said (CD_ERR_NOTFOUND when Slurm does not know the node). */
int slurm_node_get(const char *name, struct slurm_node *n, char *err, size_t errlen);

/* Parse one line of `scontrol show node -o` (pure; for tests and fuzzing). */
int slurm_node_parse(const char *line, struct slurm_node *n);

/* `scontrol update NodeName=NAME State=DRAIN Reason=REASON`. 0, or a
 * negative cd_err with err holding scontrol's message. */
int slurm_drain(const char *name, const char *reason, char *err, size_t errlen);

/* `scontrol update NodeName=NAME State=RESUME`. */
int slurm_resume(const char *name, char *err, size_t errlen);

#endif
