/* SPDX-License-Identifier: MIT */
/*
 * rdma_pair.h - the pure parts of the matrix's RDMA proof (reach.h, "the
 * RDMA proof"): the CDRDMA1 lines two agents exchange over the matrix's TCP
 * connection, the byte pattern the write carries, and the names of the
 * verbs completion statuses. No I/O, no verbs call: the agent's side is
 * probes/reach_rdma.c, the head's probes/netcheck_rdma.c.
 *
 * The exchange, as ib_write_bw (linux-rdma/perftest) does over its TCP
 * socket, after the CDREACH1 answer (the connector's line ends in " rdma"):
 *   connector -> listener  "CDRDMA1 write <bytes> <endpoint>"
 *   listener  -> connector "CDRDMA1 ep <endpoint>" (its buffer of <bytes>
 *                          registered, its QP at RTR), "CDRDMA1 no <why>"
 *                          (it cannot take part: not tested) or
 *                          "CDRDMA1 error <why>" (its setup failed)
 *   connector: QP to RTR and RTS, one RDMA WRITE of <bytes>, its completion
 *   connector -> listener  "CDRDMA1 done <bytes>" (or "CDRDMA1 failed")
 *   listener  -> connector "CDRDMA1 verified" or "CDRDMA1 bad <offset>"
 * An endpoint is "<device> <port> <lid> <gid_index> <gid> <qpn> <psn>
 * <addr> <rkey> <mtu>": the device name, its port number, the port's LID
 * (0x hex), the GID index used (-1: none, InfiniBand addressed by LID), the
 * GID as sysfs writes it (eight groups of four hex digits; all zero with
 * index -1), the QP number and first packet sequence number (0x hex, 24
 * bits), the buffer's address and rkey (0x hex) and the port's active MTU
 * in bytes (256..4096).
 */
#ifndef CD_PROBES_RDMA_PAIR_H
#define CD_PROBES_RDMA_PAIR_H

#include <stddef.h>
#include <stdint.h>

#define RDMA_MAGIC     "CDRDMA1"
#define RDMA_LINE_MAX  256               /* a CDRDMA1 line, newline included */
#define RDMA_BYTES_MAX (4 * 1024 * 1024) /* what one write may move, as bulk */
#define RDMA_DEV_MAX   64

struct rdma_endpoint {
	char device[RDMA_DEV_MAX];
	int port;      /* 1..255 */
	unsigned lid;  /* 0..0xffff */
	int gid_index; /* -1..255 */
	unsigned char gid[16];
	uint32_t qpn, psn; /* 24 bits each */
	uint64_t addr;
	uint32_t rkey;
	int mtu; /* bytes: 256, 512, 1024, 2048 or 4096 */
};

enum rdma_line_kind {
	RDMA_LINE_WRITE,    /* "write <bytes> <endpoint>" */
	RDMA_LINE_EP,       /* "ep <endpoint>" */
	RDMA_LINE_NO,       /* "no <why>": the listener cannot take part */
	RDMA_LINE_ERROR,    /* "error <why>": its setup failed */
	RDMA_LINE_DONE,     /* "done <bytes>" */
	RDMA_LINE_FAILED,   /* "failed" */
	RDMA_LINE_VERIFIED, /* "verified" */
	RDMA_LINE_BAD,      /* "bad <offset>" */
};

struct rdma_line {
	enum rdma_line_kind kind;
	struct rdma_endpoint ep; /* WRITE, EP */
	long bytes;              /* WRITE, DONE: 1..RDMA_BYTES_MAX */
	long offset;             /* BAD: 0..RDMA_BYTES_MAX - 1 */
	char why[128];           /* NO, ERROR: the words, printable ASCII */
};

/* Writes "<endpoint>" (no magic, no newline) into buf. Returns the length,
 * or -1 when it does not fit or e holds a value the line cannot carry (a
 * device name with a space, a port or MTU out of range). */
int rdma_endpoint_format(const struct rdma_endpoint *e, char *buf, size_t len);

/* Parses one CDRDMA1 line (buf, len bytes, without its newline; not
 * NUL-terminated). 0 and *out filled, or -1 when it is not exactly one of
 * the forms above with every field in range. */
int rdma_line_parse(const char *buf, size_t len, struct rdma_line *out);

/* The MTU in bytes of verbs' enum ibv_mtu value (1..5), 0 for others; and
 * back: the enum value of 256..4096 bytes, 0 for others. */
int rdma_mtu_bytes(int ibv_mtu);
int rdma_mtu_enum(int bytes);

/* The words ibv_wc_status_str(3) gives a completion status (rdma-core's
 * libibverbs/enum_strs.c), "unknown" outside the table. */
const char *rdma_wc_status_name(int status);

/* The bytes a write carries: a pattern that depends on the run's token and
 * on each byte's offset, so a write into the wrong place, a short one or a
 * stale buffer shows. Fill buf, len bytes. */
void rdma_pattern_fill(unsigned char *buf, size_t len, const char *token);

/* The first offset where buf differs from the pattern, or -1. */
long rdma_pattern_check(const unsigned char *buf, size_t len, const char *token);

#endif
