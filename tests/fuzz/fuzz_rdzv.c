/*
 * fuzz_rdzv.c - libFuzzer harness for the rendezvous watch's reader: the
 * job's sockets in /proc/net/tcp{,6} against MASTER_ADDR:PORT
 * (collectives/rdzv_agent.h). Whatever the bytes, nothing crashes and the
 * counts stay within the sockets read. Seeds: tests/fuzz/corpus/rdzv/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "collectives/rdzv_agent.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sockets((const char *)data, size);
	return 0;
}
