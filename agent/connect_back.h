/* SPDX-License-Identifier: MIT */
/*
 * connect_back.h - the agent's --connect mode: started by a launcher (srun,
 * or the head itself for local-connect), it connects to the head, proves
 * its node's key (core/backauth.h) and then serves the agent protocol
 * over that socket exactly as over stdin/stdout.
 */
#ifndef CD_AGENT_CONNECT_BACK_H
#define CD_AGENT_CONNECT_BACK_H

/* Connect to hostport ("HOST:PORT", "[V6]:PORT"), run the handshake, and
 * put the socket on stdin and stdout; a connection the head closes before
 * its answer is tried again (4 times in all, 250 ms to 1 s apart). Returns
 * 0, or -1 after printing why on stderr. The node's key
 * ($CLUSTERDOC_BACK_KEY) or the run's secret ($CLUSTERDOC_BACK_SECRET, the
 * key then derived from it and the node's name) is taken from the
 * environment and wiped there, so nothing the agent runs inherits it. */
int agent_connect_back(const char *hostport);

#endif
