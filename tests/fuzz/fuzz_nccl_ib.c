/* SPDX-License-Identifier: MIT */
/*
 * fuzz_nccl_ib.c - libFuzzer harness for the NCCL IB prediction and the
 * reader of NCCL's network lines (probes/nccl_ib.h): whatever a node's
 * facts or NCCL's log hold must never crash the head, and every pick is
 * well formed.
 *
 * The first input byte picks the input (even: NCCL_DEBUG=INFO text for
 * nccl_ib_parse_log; odd: a JSON object {"rdma": [...], "rdma_node": {...},
 * "nccl_conf": [...], "version": "2.21.5"} for nccl_ib_predict); the rest is
 * that input, not NUL-terminated. Each pick is also compared with the
 * other kind made from the same bytes. Seeds: tests/fuzz/corpus/nccl_ib/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probes/nccl_ib.h"

/* parsed: from NCCL's lines, where "Using network IB" alone says IB
 * without naming a device. */
static void check_pick(const struct nccl_ib_pick *p, int parsed)
{
	if (p->ndevs < 0 || p->ndevs > NCCL_IB_MAX_DEVS)
		abort();
	if (p->ndevs > 0 && p->transport != NCCL_IB_IB)
		abort();
	if (!parsed && p->transport == NCCL_IB_IB && p->ndevs == 0)
		abort();
	if (p->transport == NCCL_IB_SOCKET && p->ndevs)
		abort();
	if (memchr(p->reason, 0, sizeof(p->reason)) == NULL ||
	    memchr(p->errors, 0, sizeof(p->errors)) == NULL ||
	    memchr(p->socket, 0, sizeof(p->socket)) == NULL)
		abort();
	for (int i = 0; i < p->ndevs; i++) {
		const struct nccl_ib_dev *d = &p->devs[i];

		if (!d->dev[0] || memchr(d->dev, 0, sizeof(d->dev)) == NULL || d->gid_index < -1 ||
		    (!d->roce && d->gid_index != -1) || d->gid_type < -1 || d->gid_type > 2)
			abort();
	}
}

static void predict(const uint8_t *data, size_t size, struct nccl_ib_pick *p)
{
	json_t *in = json_loadb((const char *)data, size, 0, NULL);
	struct nccl_ib_env e;

	nccl_ib_env_from_json(json_object_get(in, "rdma_node"), json_object_get(in, "nccl_conf"),
	                      &e);
	nccl_ib_predict(json_object_get(in, "rdma"), json_object_get(in, "rdma_node"), &e,
	                json_string_value(json_object_get(in, "version")), p);
	json_decref(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nccl_ib_pick a, b;
	char why[512];
	int rc;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		predict(data + 1, size - 1, &a);
		nccl_ib_parse_log((const char *)data + 1, size - 1, &b);
	} else {
		rc = nccl_ib_parse_log((const char *)data + 1, size - 1, &a);
		if ((rc == 0) != (a.transport != NCCL_IB_UNKNOWN))
			abort();
		predict(data + 1, size - 1, &b);
	}
	check_pick(&a, !(data[0] & 1));
	check_pick(&b, data[0] & 1);
	rc = nccl_ib_compare(&b, &a, why, sizeof(why));
	if (rc < -1 || rc > 1 || memchr(why, 0, sizeof(why)) == NULL || (rc != 0 && !why[0]))
		abort();
	return 0;
}
