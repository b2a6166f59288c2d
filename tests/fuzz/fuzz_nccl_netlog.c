/* SPDX-License-Identifier: MIT */
/*
 * fuzz_nccl_netlog.c - libFuzzer harness for NCCL's network lines on their
 * way from a node's debug file to the bench's report: the agent's pick
 * (collectives/nccl_netlog.h, nccl_netlog_pick) of whatever the file holds,
 * then the head's reading of what the agent sent (collectives/bench_net.h:
 * nccl_ib_parse_log, the comparison with a prediction, the line and the
 * JSON). Nothing may crash; the pick stays within its caps.
 *
 * The input is the file's bytes, not NUL-terminated. Seeds:
 * tests/fuzz/corpus/nccl_netlog/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/bench_net.h"
#include "collectives/nccl_netlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bench_net net;
	json_t *lines = json_array(), *v, *sent, *j;
	char line[4096];
	size_t k;

	nccl_netlog_pick((const char *)data, size, lines);
	if (json_array_size(lines) > NCCL_NETLOG_LINES_MAX)
		abort();
	json_array_foreach(lines, k, v)
	{
		if (!json_is_string(v) || json_string_length(v) > NCCL_NETLOG_LINE_MAX)
			abort();
	}
	/* predicted: IB on mlx5_0:1, as a node with one ACTIVE RoCE port */
	memset(&net, 0, sizeof(net));
	net.predicted.transport = NCCL_IB_IB;
	net.predicted.ndevs = 1;
	strcpy(net.predicted.devs[0].dev, "mlx5_0");
	net.predicted.devs[0].port = 1;
	net.predicted.devs[0].roce = 1;
	sent = json_pack("{so}", "lines", lines);
	bench_net_judge(sent, &net);
	bench_net_line(&net, "node1", line, sizeof(line));
	if (!memchr(line, 0, sizeof(line)) || net.agrees < -1 || net.agrees > 1)
		abort();
	j = bench_net_json(&net);
	if (!j)
		abort();
	json_decref(j);
	json_decref(sent);
	bench_net_fini(&net);
	return 0;
}
