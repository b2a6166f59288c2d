/* SPDX-License-Identifier: MIT */
/*
 * hang_probe.c - tests/gpu/run.sh's way to call clusterdoc hang's NCCL
 * RAS and Flight Recorder modules (hang/hang_ras.h, hang_fr.h) on a
 * running NCCL job, before `clusterdoc hang` wires them into its agent
 * request. Built by run.sh against build/libclusterdoc.a; prints JSON.
 *
 *   hang_probe ras ADDR PORT DEADLINE_MS INTERVAL_MS
 *       two queries INTERVAL_MS apart and their comparison:
 *       {"before":...,"after":...,"compare":[...]}
 *   hang_probe fr PIPE_PREFIX TEMP_PREFIX RANK DEADLINE_MS
 *       trigger the rank's dump, read it, analyse it alone:
 *       {"trigger":0|cd_err,"message":"...","dump":{...},"analysis":{...}}
 *   hang_probe sample RUN
 *       the agent's hang_sample of the processes with CLUSTERDOC_RUN=RUN
 *       (hang/hang_agent.h: each rank's "gpu" through NVML, the node's
 *       "gpus"), as the agent answers it
 * Exit status: 0 when the query (ras) or the trigger and the parse (fr)
 * succeeded, 1 otherwise, 2 on bad usage.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "hang/hang_fr.h"
#include "hang/hang_ras.h"
#include "hang/hang_agent.h"
#include "scan.h"

static int probe_ras(char **argv)
{
	json_t *a, *b, *out;
	int ok;

	a = hang_ras_query(argv[0], atoi(argv[1]), atoi(argv[2]));
	poll(NULL, 0, atoi(argv[3]));
	b = hang_ras_query(argv[0], atoi(argv[1]), atoi(argv[2]));
	ok = json_is_true(json_object_get(a, "ok")) && json_is_true(json_object_get(b, "ok"));
	out = json_pack("{s:o, s:o, s:o}", "compare", hang_ras_compare(a, b), "before", a, "after",
	                b);
	json_dumpf(out, stdout, JSON_INDENT(1));
	putchar('\n');
	json_decref(out);
	return ok ? 0 : 1;
}

static int probe_fr(char **argv)
{
	char msg[CD_ERRLEN] = "", path[4200];
	char *buf = NULL;
	size_t len = 0;
	int rank = atoi(argv[2]);
	int r = hang_fr_trigger(argv[0], argv[1], rank, atoi(argv[3]), msg, sizeof(msg));
	json_t *out = json_pack("{s:i, s:s}", "trigger", r, "message", msg), *d = NULL;

	snprintf(path, sizeof(path), "%s%d", argv[1], rank);
	if (r == 0 &&
	    scan_read_file(path, HANG_FR_MAX_DUMP, SCAN_FILE_REGULAR, &buf, &len, msg,
	                   sizeof(msg)) == 0 &&
	    (d = hang_fr_parse((const unsigned char *)buf, len, msg, sizeof(msg)))) {
		json_object_set_new(d, "rank", json_integer(rank));
		json_object_set_new(out, "analysis", hang_fr_analyze(&d, 1));
		json_object_set(out, "dump", d);
	} else {
		json_object_set_new(out, "message", json_string(msg));
	}
	json_dumpf(out, stdout, JSON_INDENT(1));
	putchar('\n');
	free(buf);
	json_decref(out);
	r = d ? 0 : 1;
	json_decref(d);
	return r;
}

static int probe_sample(const char *run)
{
	const char *code = NULL;
	char msg[CD_ERRLEN] = "";
	json_t *req = json_pack("{s:s}", "run", run);
	json_t *out = hang_agent_sample(req, &code, msg, sizeof(msg));

	json_decref(req);
	if (!out) {
		printf("{\"error_code\": \"%s\", \"error\": \"%s\"}\n", code ? code : "", msg);
		return 1;
	}
	json_dumpf(out, stdout, JSON_INDENT(1));
	putchar('\n');
	json_decref(out);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "sample") == 0)
		return probe_sample(argv[2]);
	if (argc == 6 && strcmp(argv[1], "ras") == 0)
		return probe_ras(argv + 2);
	if (argc == 6 && strcmp(argv[1], "fr") == 0)
		return probe_fr(argv + 2);
	fprintf(stderr, "usage: hang_probe ras ADDR PORT DEADLINE_MS INTERVAL_MS\n"
	                "       hang_probe fr PIPE_PREFIX TEMP_PREFIX RANK DEADLINE_MS\n"
	                "       hang_probe sample RUN\n");
	return 2;
}
