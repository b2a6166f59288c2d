/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rdma_pair.c - libFuzzer harness for the CDRDMA1 line parser
 * (probes/rdma_pair.h): a peer's line reaches it from the network, so no
 * input may crash it, and every line it accepts formats back to a line it
 * parses the same. Seeds: tests/fuzz/corpus/rdma_pair/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/rdma_pair.h"

static void check_endpoint(const struct rdma_endpoint *e)
{
	char text[RDMA_LINE_MAX], line[RDMA_LINE_MAX + 16];
	struct rdma_line again;
	int n = rdma_endpoint_format(e, text, sizeof(text));

	if (n < 0)
		abort(); /* everything the parser accepts can be written */
	snprintf(line, sizeof(line), RDMA_MAGIC " ep %s", text);
	if (rdma_line_parse(line, strlen(line), &again) != 0 ||
	    memcmp(&again.ep, e, sizeof(*e)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdma_line l;

	if (rdma_line_parse((const char *)data, size, &l) != 0)
		return 0;
	switch (l.kind) {
	case RDMA_LINE_WRITE:
		if (l.bytes < 1 || l.bytes > RDMA_BYTES_MAX)
			abort();
		check_endpoint(&l.ep);
		break;
	case RDMA_LINE_EP:
		check_endpoint(&l.ep);
		break;
	case RDMA_LINE_NO:
	case RDMA_LINE_ERROR:
		if (!l.why[0] || strlen(l.why) >= sizeof(l.why))
			abort();
		break;
	case RDMA_LINE_DONE:
		if (l.bytes < 1 || l.bytes > RDMA_BYTES_MAX)
			abort();
		break;
	case RDMA_LINE_BAD:
		if (l.offset < 0 || l.offset >= RDMA_BYTES_MAX)
			abort();
		break;
	default:
		break;
	}
	return 0;
}
