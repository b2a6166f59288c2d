/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rdma_findings.c - libFuzzer harness for the RDMA findings
 * (probes/diagnose_rdma.c): whatever RDMA facts a node's agent sends (the
 * netprobe's "rdma" ports and "rdma_node", probes/netprobe.h), the head must
 * never crash on them. The input is a netprobe answer's JSON with those
 * keys, given to two nodes with GPUs and diagnosed; the same bytes are then
 * read as an NCCL_IB_HCA value and matched against a few HCA names.
 * Seeds: tests/fuzz/corpus/rdma_findings/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/diagnose.h"
#include "probes/nccl_ib.h"

static void hca_value(const uint8_t *data, size_t size)
{
	static const char *const devs[] = {"mlx5_0", "mlx5_10", "", "irdma1"};
	char *value = cd_malloc(size + 1);
	struct nccl_list l;

	memcpy(value, data, size);
	value[size] = '\0';
	nccl_list_parse(value, NCCL_IB_MAX_DEVS, &l);
	if (l.nitems < 0 || l.nitems > NCCL_IB_MAX_DEVS)
		abort();
	for (int e = 0; e < l.nitems; e++) {
		if (!memchr(l.items[e].prefix, '\0', sizeof(l.items[e].prefix)) ||
		    !l.items[e].prefix[0])
			abort();
		for (size_t k = 0; k < sizeof(devs) / sizeof(devs[0]); k++)
			nccl_list_item_matches(&l, e, devs[k], (int)k - 1);
	}
	free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *probe = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL), *fx;
	struct netmodel *m;
	struct diagnosis *d;
	char err[CD_ERRLEN];

	hca_value(data, size);
	if (!probe)
		return 0;
	fx = json_pack("{s:[{s:s, s:O, s:{s:[{}]}}, {s:s, s:O, s:{s:[{}, {}]}}]}", "nodes", "host",
	               "a", "probe", probe, "facts", "gpus", "host", "b", "probe", probe, "facts",
	               "gpus");
	m = fx ? netmodel_load_json(fx, err, sizeof(err)) : NULL;
	if (m) {
		d = diagnose(m);
		for (size_t k = 0; k < d->nfindings; k++)
			if (!d->findings[k].message || !d->findings[k].evidence)
				abort();
		diagnosis_free(d);
		netmodel_free(m);
	}
	json_decref(fx);
	json_decref(probe);
	return 0;
}
