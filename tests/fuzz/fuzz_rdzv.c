/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rdzv.c - libFuzzer harness for the rendezvous watch's readers: the
 * job's sockets in /proc/net/tcp{,6} against MASTER_ADDR:PORT
 * (jobs/rdzv_agent.h) and the root-cause reading of a job's lines
 * (jobs/run_cause.h). Whatever the bytes, nothing crashes, the counts
 * stay within the sockets read and a failed worker's local rank within its
 * bounds. Seeds: tests/fuzz/corpus/rdzv/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "jobs/rdzv_agent.h"
#include "jobs/run_cause.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void sockets(const char *buf, size_t size)
{
	struct procscan_tcp t[16];
	uint64_t inodes[16];
	struct rdzv_sockets s;
	char err[CD_ERRLEN];

	for (int v6 = 0; v6 < 2; v6++) {
		size_t n = 0;

		if (procscan_tcp_parse(buf, size, v6, t, 16, &n, err, sizeof(err)) < 0 && n > 16)
			abort();
		for (size_t i = 0; i < n; i++)
			inodes[i] = t[i].inode;
		qsort(inodes, n, sizeof(*inodes), cmp_u64);
		rdzv_agent_classify(t, n, inodes, n, "10.1.2.11:29500", 29500, &s);
		if (s.established < 0 || (size_t)(s.established + s.connecting) > n ||
		    (s.listening != 0 && s.listening != 1))
			abort();
	}
}

static void lines(const char *buf, size_t size)
{
	struct run_cause_node n[2];
	char *text = malloc(size + 1), *p, *nl;
	int local, code, rank;

	if (!text)
		return;
	memcpy(text, buf, size);
	text[size] = '\0';
	run_cause_init(&n[0]);
	run_cause_init(&n[1]);
	for (p = text; p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		(void)run_cause_strip(p, &local);
		if (run_cause_torchrun_failed(p, &local, &code) && local < 0)
			abort();
		if (run_cause_table_rank(p, &rank, &local) && local < 0)
			abort();
		(void)run_cause_table_exit(p, &code);
		(void)run_cause_line(&n[p[0] & 1], p, run_cause_peer_lost(p));
	}
	for (int k = 0; k < 2; k++) {
		int l = run_cause_worker(&n[k], &code);

		if (l < -1 || l >= RUN_CAUSE_LOCALS || (l >= 0 && !(n[k].failed >> l & 1)))
			abort();
		(void)run_cause_is_victim(&n[k]);
	}
	if (run_cause_pick(n, 2) >= 2)
		abort();
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sockets((const char *)data, size);
	lines((const char *)data, size);
	return 0;
}
