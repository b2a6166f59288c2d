/* SPDX-License-Identifier: MIT */
/*
 * backauth.h - the connect-back handshake (docs/protocol.md, "Connect-back
 * handshake"): an agent started by a launcher (srun, or local processes)
 * connects to the head, and both prove that they know the key of the node
 * the agent names before a single protocol line is sent. Pure: no I/O, no
 * randomness of its own (the caller gives the nonces), so every case is
 * testable.
 *
 *   agent -> head   "CDBACK2 NAME NONCE_A\n"
 *   head  -> agent  "CDBACK2 NONCE_H PROOF_HEAD\n"
 *   agent -> head   "PROOF_AGENT\n"
 *
 * KEY(NAME) = hex HMAC-SHA256(secret, "clusterdoc-back2 node " NAME): the
 * node's own key, derived from the run's secret. PROOF_x = hex
 * HMAC-SHA256(KEY(NAME), "clusterdoc-back2 " ROLE " " NAME " " NONCE_A " "
 * NONCE_H), ROLE "head" or "agent". A process that holds one node's key
 * (and not the run's secret) can prove that node only. Both nonces are
 * fresh per connection, so a proof recorded from one connection is worth
 * nothing on the next; the roles differ, so the head's proof cannot be
 * sent back as the agent's. Any failure: the side that saw it closes the
 * connection without an answer.
 */
#ifndef CD_BACKAUTH_H
#define CD_BACKAUTH_H

#include <stddef.h>

#define BACKAUTH_SECRET_ENV "CLUSTERDOC_BACK_SECRET" /* srun: the run's secret, every task */
#define BACKAUTH_KEY_ENV    "CLUSTERDOC_BACK_KEY"    /* local-connect: the node's own key */
#define BACKAUTH_NAME_ENV   "CLUSTERDOC_BACK_NAME"   /* local-connect: the node's name */
#define BACKAUTH_NONCE_HEX  33                       /* 32 hex digits + NUL */
#define BACKAUTH_PROOF_HEX  65                       /* 64 hex digits + NUL */
#define BACKAUTH_NAME_MAX   128                      /* with its NUL */
#define BACKAUTH_SECRET_MIN 32                       /* hex digits */
#define BACKAUTH_LINE_MAX   256                      /* any handshake line, with its newline */

struct backauth {
	char name[BACKAUTH_NAME_MAX];
	char nonce_a[BACKAUTH_NONCE_HEX];
	char nonce_h[BACKAUTH_NONCE_HEX];
};

/* HMAC-SHA256 (RFC 2104) of msg under key. */
void backauth_hmac(const void *key, size_t keylen, const void *msg, size_t len,
                   unsigned char out[32]);

/* A secret (or key) the handshake accepts: at least BACKAUTH_SECRET_MIN hex
 * digits. */
int backauth_secret_ok(const char *secret);

/* The key of node name under the run's secret, as 64 lowercase hex digits
 * into out (see above). Returns 0, or -1 for a secret backauth_secret_ok
 * refuses or a name that is not a node name. */
int backauth_node_key(const char *secret, const char *name, char out[BACKAUTH_PROOF_HEX]);

/* Agent: the first line (with its newline) into out. Returns its length,
 * or -1 when name is not a node name ([A-Za-z0-9._-], 1-127 characters). */
int backauth_agent_hello(struct backauth *a, const char *name, const char *nonce_a, char *out,
                         size_t outlen);

/* Head: read the agent's first line (without its newline) and write the
 * challenge line into out with nonce_h, proven with the key of the node
 * the hello names under the run's secret. Returns its length, or -1 for a
 * line that is not a well-formed hello. a->name is the node that claims
 * to be there (not proven yet). */
int backauth_head_challenge(struct backauth *a, const char *secret, const char *line,
                            const char *nonce_h, char *out, size_t outlen);

/* Agent: check the head's challenge line (without its newline) with key,
 * the key of the node named in the hello, and write the agent's proof line
 * into out. Returns its length, or -1 when the head did not prove that key
 * (or the line is malformed). */
int backauth_agent_answer(struct backauth *a, const char *key, const char *line, char *out,
                          size_t outlen);

/* Head: check the agent's proof line (without its newline). 0 when the
 * agent knows the key of the node it named, -1 when not. */
int backauth_head_verify(const struct backauth *a, const char *secret, const char *line);

#endif
