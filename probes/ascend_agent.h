/* SPDX-License-Identifier: MIT */
/*
 * ascend_agent.h - the agent's Ascend requests (docs/protocol.md,
 * "ascend_probe" and "ascend_netdetect"): hccn_tool per device, every call a
 * child with its own deadline, all devices at once.
 *
 * A tool that is missing, times out, fails or prints a format the parsers
 * (facts_ascend.h) do not know never fails the request: the device's
 * "incomplete" array gets a line quoting the tool's words, and the value it
 * would have given is left out (null), so the head can never read it as
 * healthy.
 */
#ifndef CD_PROBES_ASCEND_AGENT_H
#define CD_PROBES_ASCEND_AGENT_H

#include <jansson.h>
#include <stddef.h>

#define ASCEND_CALL_MS 5000 /* default deadline of one hccn_tool call */

/*
 * {"type": "ascend_probe", "devices": [0, 1, ...], "timeout_ms": N}
 * -> {"devices": [{"id", "ip": {"address", "netmask"} | null, "link",
 *     "net_health", "tls" (0/1), "lldp": {"port", "system"} | null,
 *     "incomplete": ["..."]}]} (values null when unknown).
 * Errors: code "bad_request" for a missing or malformed "devices".
 */
json_t *ascend_agent_probe(json_t *req, const char **code, char *msg, size_t msglen);

/*
 * {"type": "ascend_netdetect", "targets": [{"device", "address"}],
 *  "timeout_ms": N}: per target, `hccn_tool -i D -netdetect -s address A`
 * then `-net_health -g`; a device's targets one after the other, devices
 * at once. -> {"results": [{"device", "address", "health" | null,
 * "incomplete": "..." (only when health is null)}]} in the targets' order.
 */
json_t *ascend_agent_netdetect(json_t *req, const char **code, char *msg, size_t msglen);

#endif
