/* SPDX-License-Identifier: MIT */
/* diagnose_gpu_dcgm.c - DCGM's GPU diagnostic (`check --dcgm-level`): each
 * result of `dcgmi diag -j` that dcgm_parse grades FAIL (by DCGM's error
 * severity: the GPU cannot run work, or DCGM says nothing) is gpu-dcgm-fail
 * (an error), each it grades WARN (monitor, configuration) gpu-dcgm-warn,
 * keyed NODE/gpuN (NODE for a test of all its GPUs, another entity such as
 * a CPU, or a test's summary) with DCGM's own message as evidence. A node
 * without dcgmi is named in gpu-dcgm-absent (info: DCGM is optional); a
 * dcgmi that hangs, could not run the diagnostic (its runtime_error, in
 * DCGM's words), fails without results or prints what dcgm_parse does not
 * read is a probe-incomplete, never taken for a pass. */
#include "probes/dcgm_parse.h"
#include "probes/diagnose_internal.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV 800

static void note_incomplete(struct dstate *st, size_t i, const char *why)
{
	char ev[EV];

	snprintf(ev, sizeof(ev), "%s: DCGM diagnostic: %s", st->m->nodes[i].host, why);
	diagnose_note(st, "probe-incomplete", SEV_WARNING, "gpu-dcgm", i,
	              "part of the probe did not answer on %N",
	              "Run `dcgmi diag -r 1` on the node: a host engine that is not running "
	              "(nv-hostengine), GPUs held by another process or a diagnostic that "
	              "hangs needs a look; until then DCGM's verdict on its GPUs is unknown.",
	              ev);
}

static void note_result(struct dstate *st, size_t i, const struct dcgm_result *r)
{
	const char *host = st->m->nodes[i].host;
	char key[300], ev[EV];
	int fail = r->status == DCGM_FAIL;

	if (r->gpu >= 0)
		snprintf(key, sizeof(key), "%s/gpu%d", host, r->gpu);
	else
		snprintf(key, sizeof(key), "%s", host);
	snprintf(ev, sizeof(ev), "%s: DCGM test %s: %s%s%s", key, r->test, fail ? "FAIL" : "WARN",
	         r->message[0] ? ": " : "", r->message);
	diagnose_note(st, fail ? "gpu-dcgm-fail" : "gpu-dcgm-warn", fail ? SEV_ERROR : SEV_WARNING,
	              key, i,
	              fail ? "DCGM's diagnostic fails a GPU test on %N"
	                   : "DCGM's diagnostic warns about a GPU test on %N",
	              fail ? "Drain the node and act on DCGM's message (`dcgmi diag -r 3` for "
	                     "more); a GPU that fails again needs a reset or a replacement."
	                   : "Read DCGM's message; DCGM rates it as one to monitor or a setting "
	                     "to correct (persistence mode, clocks, temperature), the GPU still "
	                     "able to run work.",
	              ev);
}

void diagnose_gpu_dcgm(struct dstate *st, size_t i)
{
	json_t *d = json_object_get(st->m->nodes[i].nvidia, "dcgm");
	const char *err = json_string_value(json_object_get(d, "error"));
	const char *out = json_string_value(json_object_get(d, "output"));
	json_t *ex = json_object_get(d, "exit");
	struct dcgm_report *rep;
	char why[EV];

	if (!json_is_object(d))
		return;
	if (json_is_false(json_object_get(d, "present"))) {
		snprintf(why, sizeof(why), "%s: dcgmi is not on PATH", st->m->nodes[i].host);
		diagnose_note(st, "gpu-dcgm-absent", SEV_INFO, "", i,
		              "DCGM is not installed on %N: its diagnostic did not run there",
		              "Nothing to do for the check; install DCGM (datacenter-gpu-manager) "
		              "for --dcgm-level to test these GPUs too.",
		              why);
		return;
	}
	if (err) {
		note_incomplete(st, i, err);
		return;
	}
	rep = cd_calloc(1, sizeof(*rep));
	if (dcgm_parse(out ? out : "", out ? strlen(out) : 0, rep, why, sizeof(why)) != 0) {
		char both[EV];

		snprintf(both, sizeof(both), "%s (exit %lld)", why,
		         json_is_integer(ex) ? (long long)json_integer_value(ex) : -1LL);
		note_incomplete(st, i, both);
	} else {
		for (size_t k = 0; k < rep->n; k++)
			note_result(st, i, &rep->results[k]);
		if (rep->dropped) {
			snprintf(why, sizeof(why), "%zu more results not kept", rep->dropped);
			note_incomplete(st, i, why);
		}
	}
	free(rep);
}
