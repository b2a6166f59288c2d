/* SPDX-License-Identifier: MIT */
/*
 * opt_check.c - the check's option group (optgroups.h): the knobs of
 * probes/netcheck.h as check, env, fix and the TUI take them.
 */
#include "optgroups.h"
#include "targets.h"

static const struct optdef defs[] = {
    {"master", required_argument, CHECKOPT_MASTER, "--master",
     "      --master HOST        the node that will be rank 0 (default: the first)\n"},
    {"port", required_argument, CHECKOPT_PORT, "--port",
     "      --port N             the MASTER_PORT candidate (default 29500)\n"},
    {"probe-timeout", required_argument, CHECKOPT_PROBE_TIMEOUT, "--probe-timeout",
     "      --probe-timeout MS   deadline of each TCP attempt (default 3000)\n"},
    {"no-firewall", no_argument, CHECKOPT_NO_FIREWALL, "--no-firewall",
     "      --no-firewall        do not read the nodes' firewall rules\n"},
    {"full-matrix-max", required_argument, CHECKOPT_FULL_MATRIX_MAX, "--full-matrix-max",
     "      --full-matrix-max N  test every pair up to N nodes (default 64)\n"},
    {"python", required_argument, CHECKOPT_PYTHON, "--python",
     "      --python PATH        the interpreter on every node for the torch facts\n"
     "                           (a conda env or venv; default: python3 in the login PATH)\n"},
    {"deadline", required_argument, CHECKOPT_DEADLINE, "--deadline",
     "      --deadline S         end the check after S seconds (default: none)\n"},
    {"expect-gpus", required_argument, CHECKOPT_EXPECT_GPUS, "--expect-gpus",
     "      --expect-gpus N      a node with fewer GPUs is gpu-missing (an error)\n"},
    {"dcgm-level", required_argument, CHECKOPT_DCGM_LEVEL, "--dcgm-level",
     "      --dcgm-level 1|2     run DCGM's diagnostic (dcgmi diag) at this level on\n"
     "                           every GPU node that has dcgmi (with\n"
     "                           --slurm-prolog, the default deadline grows by\n"
     "                           the level's own: 60 s, 300 s)\n"},
    {"seed", required_argument, CHECKOPT_SEED, "--seed", NULL},
};

static int parse(void *dst, int id, const char *arg, const char *shown, char *err, size_t errlen)
{
	struct checkopt_dst *d = dst;
	int v;

	switch (id) {
	case CHECKOPT_MASTER:
		*d->master = arg;
		return 0;
	case CHECKOPT_PORT:
		return opt_port(shown, arg, &d->o->master_port, err, errlen);
	case CHECKOPT_PROBE_TIMEOUT:
		return opt_int(shown, arg, 50, 600000, &d->o->probe_timeout_ms, err, errlen);
	case CHECKOPT_NO_FIREWALL:
		d->o->no_firewall = 1;
		return 0;
	case CHECKOPT_FULL_MATRIX_MAX:
		return opt_int(shown, arg, 2, 100000, &d->o->full_matrix_max, err, errlen);
	case CHECKOPT_PYTHON:
		d->o->python = arg;
		return 0;
	case CHECKOPT_DEADLINE:
		return opt_int(shown, arg, 1, 86400, d->deadline_s, err, errlen);
	case CHECKOPT_EXPECT_GPUS:
		return opt_int(shown, arg, 1, 1024, &d->o->expect_gpus, err, errlen);
	case CHECKOPT_DCGM_LEVEL:
		return opt_int(shown, arg, 1, 2, &d->o->dcgm_level, err, errlen);
	case CHECKOPT_SEED:
		if (opt_int(shown, arg, 0, 1 << 30, &v, err, errlen) < 0)
			return -1;
		d->o->seed = (unsigned)v;
		return 0;
	}
	return cd_errf(err, errlen, CD_ERR_PARSE, "%s is not an option of this group", shown);
}

static const struct optvalues values[] = {
    {CHECKOPT_DCGM_LEVEL, "1 2"},
    {0},
};

const struct optgroup checkopt_group = {
    .defs = defs,
    .ndefs = CD_ARRAY_LEN(defs),
    .parse = parse,
    .values = values,
};
