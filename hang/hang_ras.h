/* SPDX-License-Identifier: MIT */
/*
 * hang_ras.h - a client of NCCL's RAS service (NCCL >= 2.24), for
 * `clusterdoc hang`: the agent asks the RAS thread of a local NCCL process
 * for the job-wide view (per communicator, how many collectives each rank
 * launched, which ranks are missing, unresponsive or dead) and compares two
 * such views taken seconds apart.
 *
 * The protocol and both output formats are those of NVIDIA/nccl:
 * docs/userguide/source/troubleshooting/ras.rst ("RAS Queries", "Sample
 * Output", "JSON Output") and src/ras/client.cc + src/ras/client_support.cc
 * (the handshake "CLIENT PROTOCOL 2" -> "SERVER PROTOCOL N", "TIMEOUT <s>",
 * "SET FORMAT json" (2.28.7+) -> "OK" or "ERROR: ...", then "VERBOSE
 * STATUS", whose answer runs until the server closes). docs/hang.md, "NCCL
 * RAS", says what is read and what is not.
 */
#ifndef CD_COLLECTIVES_HANG_RAS_H
#define CD_COLLECTIVES_HANG_RAS_H

#include <jansson.h>
#include <stddef.h>

/* NCCL's defaults: NCCL_RAS_CLIENT_PORT and NCCL_RAS_CLIENT_PROTOCOL. */
#define HANG_RAS_PORT     28028
#define HANG_RAS_PROTOCOL 2
/* The most a status answer may hold; more is the error "toobig". */
#define HANG_RAS_MAX_REPLY (4u << 20)
/* The most of the answer kept in the result's "raw" (then "raw_truncated"). */
#define HANG_RAS_RAW_CAP (64u << 10)

/*
 * Query the NCCL RAS server at addr:port within deadline_ms (connect,
 * handshake, status, all of it). addr NULL or port 0: NCCL_RAS_ADDR from
 * the environment ("host:port", as NCCL reads it), else localhost:28028.
 * Asks for JSON (SET FORMAT json) and falls back to the text VERBOSE STATUS
 * when the server answers the command with an error (NCCL < 2.28.7).
 *
 * Returns a new object (never NULL):
 *   {"ok":true,"format":"json"|"text","nccl_version":"...","server_protocol":N,
 *    "communicators":[...as hang_ras_parse_json/_text...],"raw":"...",
 *    "raw_truncated":bool, "elapsed_ms":N}
 * or {"ok":false,"error_code":"refused|timeout|garbage|toobig|io|resolve",
 *     "error":"what happened, naming host:port", "elapsed_ms":N}.
 * Blocks at most deadline_ms (plus the name resolution of addr, which is
 * meant to be a local name or a number).
 */
json_t *hang_ras_query(const char *addr, int port, int deadline_ms);

/*
 * Parse a JSON status (ras.rst "JSON Output"; client_support.cc's JSON
 * printer) of len bytes. Returns a new object
 *   {"nccl_version":"...","communicators":[{"hash":"0x...","ranks":N,
 *     "collectives":{"<rank>":count,...},"missing":[R...],"dead":[R...],
 *     "unresponsive":[R...],"outliers":[{"rank":R,"gpu":G,"pid":P,
 *     "node":"ip","what":"..."}]}]}
 * where a rank's count is the sum of its per-operation counts; or NULL
 * with a message in err when the bytes are not such a status.
 */
json_t *hang_ras_parse_json(const char *buf, size_t len, char *err, size_t errlen);

/*
 * Parse a text (VERBOSE) STATUS (ras.rst "Sample Output"; the text printer
 * of client_support.cc). The text names only the communicators that have
 * errors or warnings, and only the outlier ranks: each communicator holds
 * the keys above for what the text says, plus "group" ("#g-c"), "errors"
 * (["INCOMPLETE","MISMATCH",...]) and "count_groups" ([{"count":C,
 * "ranks":n}] of "n ranks have launched up to operation C"). The object
 * also holds "groups" (the summary table: [{"group","comms","ranks_per_comm",
 * "status","errors"}]) and "dead_processes"/"missing_processes" ([{"pid",
 * "node","gpu"}]). Returns NULL with a message in err when the text has
 * neither a version line nor a communicator table.
 */
json_t *hang_ras_parse_text(const char *buf, size_t len, char *err, size_t errlen);

/*
 * Compare two hang_ras_query results taken seconds apart (either may be
 * a failed one). Per communicator of after: "stuck" (counts disagree, or
 * ranks are missing, and nothing moved), "progressing" (some count moved,
 * or it appears only in after), or "idle" (all agree and nothing moved).
 * Returns a new array of {"hash","state","behind":[R...],"missing":[R...],
 * "dead":[R...],"max_count":C}; empty when after failed or has none.
 */
json_t *hang_ras_compare(const json_t *before, const json_t *after);

#endif
