/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gpu_findings.c - libFuzzer harness for the GPU findings
 * (probes/diagnose_gpu*.c, probes/gpu_topo.h): whatever GPU facts a node's
 * agent sends (docs/protocol.md: gpus[].health, gpu_pci, xid), the head must
 * never crash on them. The input is one node's facts JSON, given to two
 * nodes of a model with --expect-gpus 8 and diagnosed; then every GPU path
 * of gpu_pci.paths is held against every NIC path of gpu_pci.nics.
 * Seeds: tests/fuzz/corpus/gpu_findings/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/diagnose.h"
#include "probes/gpu_topo.h"

static void topo_pairs(json_t *facts)
{
	json_t *pci = json_object_get(facts, "gpu_pci"), *g, *n;
	const char *ka, *kb;
	unsigned long long key;
	char root[64];

	json_object_foreach(json_object_get(pci, "paths"), ka, g)
	{
		gpu_pci_key(ka, &key);
		json_object_foreach(json_object_get(pci, "nics"), kb, n)
		{
			const char *a = json_string_value(g), *b = json_string_value(n);

			if (a && b && gpu_topo_between(a, b, -1, 0) > GPU_TOPO_SYS)
				abort();
			if (b)
				gpu_topo_root(b, root, sizeof(root));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *facts = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL), *fx;
	struct netmodel *m;
	struct diagnosis *d;
	char err[CD_ERRLEN];

	if (!facts)
		return 0;
	fx = json_pack("{s:i, s:[{s:s, s:O}, {s:s, s:O}]}", "expect_gpus", 8, "nodes", "host", "a",
	               "facts", facts, "host", "b", "facts", facts);
	m = fx ? netmodel_load_json(fx, err, sizeof(err)) : NULL;
	if (m) {
		d = diagnose(m);
		for (size_t k = 0; k < d->nfindings; k++)
			if (!d->findings[k].message || !d->findings[k].evidence)
				abort();
		diagnosis_free(d);
		netmodel_free(m);
	}
	topo_pairs(facts);
	json_decref(fx);
	json_decref(facts);
	return 0;
}
