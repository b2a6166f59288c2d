/* SPDX-License-Identifier: MIT */
/*
 * expect.h - what a node declares it should have (the configuration's
 * [expect] section, docs/slurm.md; as NHC's nhc.conf declares a node's
 * hardware), and the table of its keys:
 *
 *	[expect]
 *	gpus = 8                 NVIDIA GPUs NVML lists (expect-gpus)
 *	ib-rate = 200            Gb/s of every ACTIVE RDMA port (expect-ib-rate)
 *	mtu = 9000               MTU of the data interfaces and RoCE netdevs (expect-mtu)
 *	driver = 550.54.15       the NVIDIA driver version NVML gives (expect-driver)
 *
 * One row of expect_keys per key: its name, what it says, and its parser.
 * Parsers are pure: text in, a field of struct expect out, or an error
 * naming the key and the value in the caller's buffer. The findings are
 * probes/diagnose_expect.c's, one per unmet row, each an error.
 */
#ifndef CD_PROBES_EXPECT_H
#define CD_PROBES_EXPECT_H

#include <getopt.h>
#include <stddef.h>

#define EXPECT_SECTION    "expect" /* the configuration's section */
#define EXPECT_DRIVER_LEN 64

/* What is declared; 0 or "" is "not declared". */
struct expect {
	int gpus;    /* 1..1024 */
	int ib_rate; /* Gb/s, 1..100000 */
	int mtu;     /* 68..65536 */
	char driver[EXPECT_DRIVER_LEN];
};

struct expect_key {
	const char *key;  /* as the file spells it: "ib-rate" */
	const char *id;   /* its finding: "expect-ib-rate" */
	const char *what; /* for --help and errors: "Gb/s of every ACTIVE RDMA port" */
	int (*parse)(struct expect *e, const char *value, char *err, size_t errlen);
};

extern const struct expect_key expect_keys[];
extern const size_t expect_keys_len;

/* The row of key, or NULL. */
const struct expect_key *expect_key_named(const char *key);

/*
 * key = value into e: 0, or CD_ERR_PARSE with "KEY = VALUE: WHY" in err
 * (an unknown key: "unknown key KEY in [expect]; the keys are ...").
 */
int expect_set(struct expect *e, const char *key, const char *value, char *err, size_t errlen);

/* Whether anything is declared. */
int expect_declared(const struct expect *e);

/* The keys as a {0}-ended getopt_long table (required_argument), for the
 * configuration's schema; static, valid for the process's life. */
const struct option *expect_options(void);

#endif
