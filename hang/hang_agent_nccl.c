/* SPDX-License-Identifier: MIT */
/*
 * hang_agent_nccl.c - the NCCL parts of `hang_sample` (hang_agent.h): the
 * NCCL RAS query of this node and the Flight Recorder dumps of its ranks,
 * through hang/hang_ras.h and hang/hang_fr.h.
 */
#include "cd.h"
#include "hang/hang_fr.h"
#include "hang/hang_ras.h"
#include "hang/hang_agent_internal.h"
#include "scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPS_CAP (8u << 20)

/* 1 when pid maps a libnccl (its /proc/PID/maps names one). */
static int maps_nccl(long pid)
{
	char path[64], *data = NULL, err[CD_ERRLEN];
	size_t len = 0;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	if (scan_read_file(path, MAPS_CAP, SCAN_FILE_TO_EOF, &data, &len, err, sizeof(err)) < 0)
		return 0;
	for (size_t i = 0; i + 7 <= len && !found; i++)
		found = memcmp(data + i, "libnccl", 7) == 0;
	free(data);
	return found;
}

/* "host:port" (NCCL_RAS_ADDR's form) into host and *port; 0, or -1 when
 * it is not that. */
static int split_addr(const char *addr, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(addr, ':');
	char *end;
	long p;

	if (!colon || colon == addr || (size_t)(colon - addr) >= hostlen)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end || p <= 0 || p > 65535)
		return -1;
	snprintf(host, hostlen, "%.*s", (int)(colon - addr), addr);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6]:port */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	*port = (int)p;
	return 0;
}

static const char *pstr(const json_t *p, const char *k)
{
	const char *s = json_string_value(json_object_get(p, k));

	return s ? s : "";
}

/* The RAS query: once, when a rank maps libnccl, at the address of that
 * rank's NCCL_RAS_ADDR (else localhost:28028). */
static json_t *ras_part(const json_t *procs, int deadline_ms)
{
	size_t i;
	json_t *p, *res;
	char host[256] = "localhost";
	int port = HANG_RAS_PORT;

	json_array_foreach(procs, i, p)
	{
		const char *addr = pstr(p, "_ras_addr");

		if (strcmp(pstr(p, "role"), "rank") != 0 ||
		    !maps_nccl((long)json_integer_value(json_object_get(p, "pid"))))
			continue;
		if (*addr && split_addr(addr, host, sizeof(host), &port) < 0)
			return json_pack("{sbssss}", "ok", 0, "error_code", "bad_addr", "error",
			                 "NCCL_RAS_ADDR of the rank is not host:port");
		res = hang_ras_query(host, port, deadline_ms);
		json_object_set_new(res, "rank_pid",
		                    json_integer(json_integer_value(json_object_get(p, "pid"))));
		return res;
	}
	return json_null(); /* no rank uses NCCL here */
}

/* The entries kept of one dump (the newest): enough for "the last
 * collective each rank entered", small enough for the answer. */
#define FR_KEEP 256
/* The newest entries whose stack frames are kept: the last collective a
 * rank entered is among them unless point-to-point entries came after it. */
#define FR_KEEP_FRAMES 16

static json_t *fr_one(const json_t *p, int deadline_ms)
{
	const char *pipe = pstr(p, "_fr_pipe"), *temp = pstr(p, "_fr_temp");
	long rank = (long)json_integer_value(json_object_get(p, "rank"));
	json_int_t pid = json_integer_value(json_object_get(p, "pid"));
	char msg[CD_ERRLEN], path[600], *data = NULL;
	size_t len = 0;
	json_t *d, *entries;
	int rc;

	if (!*temp)
		return json_pack("{sIsisbss}", "pid", pid, "rank", (int)rank, "ok", 0, "error",
		                 "TORCH_NCCL_DEBUG_INFO_TEMP_FILE is not set: no place to dump");
	rc = hang_fr_trigger(pipe, temp, (int)rank, deadline_ms, msg, sizeof(msg));
	if (rc < 0)
		return json_pack("{sIsisbssss}", "pid", pid, "rank", (int)rank, "ok", 0,
		                 "error_code",
		                 rc == CD_ERR_TIMEOUT    ? "timeout"
		                 : rc == CD_ERR_NOTFOUND ? "not_enabled"
		                                         : "failed",
		                 "error", msg);
	snprintf(path, sizeof(path), "%s%ld", temp, rank);
	if (scan_read_file(path, HANG_FR_MAX_DUMP, SCAN_FILE_TO_EOF, &data, &len, msg,
	                   sizeof(msg)) < 0)
		return json_pack("{sIsisbssss}", "pid", pid, "rank", (int)rank, "ok", 0,
		                 "error_code", "io", "error", msg);
	d = hang_fr_parse((const unsigned char *)data, len, msg, sizeof(msg));
	free(data);
	if (!d)
		return json_pack("{sIsisbssss}", "pid", pid, "rank", (int)rank, "ok", 0,
		                 "error_code", "garbage", "error", msg);
	json_object_set_new(d, "rank", json_integer(rank));
	json_object_set_new(d, "pid", json_integer(pid));
	json_object_set_new(d, "ok", json_true());
	json_object_del(d, "pg_status");
	entries = json_object_get(d, "entries");
	if (json_array_size(entries) > FR_KEEP) {
		while (json_array_size(entries) > FR_KEEP)
			json_array_remove(entries, 0);
		json_object_set_new(d, "entries_truncated", json_true());
	}
	for (size_t k = 0; k + FR_KEEP_FRAMES < json_array_size(entries); k++)
		json_object_del(json_array_get(entries, k), "frames");
	return d;
}

/* The dumps of the ranks whose environment names a pipe file, one after
 * the other within budget_ms all together. */
static json_t *fr_part(const json_t *procs, int budget_ms)
{
	size_t i;
	json_t *p, *dumps = NULL;
	int64_t end = cd_now_ms() + budget_ms;

	json_array_foreach(procs, i, p)
	{
		int64_t left = end - cd_now_ms();

		if (strcmp(pstr(p, "role"), "rank") != 0 || !*pstr(p, "_fr_pipe") ||
		    json_integer_value(json_object_get(p, "rank")) < 0)
			continue;
		if (!dumps)
			dumps = json_array();
		if (left < 100) {
			json_array_append_new(
			    dumps, json_pack("{sIsIsbssss}", "pid",
			                     json_integer_value(json_object_get(p, "pid")), "rank",
			                     json_integer_value(json_object_get(p, "rank")), "ok",
			                     0, "error_code", "timeout", "error",
			                     "no time left for this rank's dump"));
			continue;
		}
		json_array_append_new(dumps, fr_one(p, (int)left));
	}
	return dumps ? json_pack("{so}", "dumps", dumps) : json_null();
}

void hang_agent_nccl(json_t *out, const json_t *procs, int flight_recorder)
{
	json_object_set_new(out, "ras", ras_part(procs, HANG_AGENT_RAS_MS));
	json_object_set_new(out, "flight_recorder",
	                    flight_recorder ? fr_part(procs, HANG_AGENT_FR_MS) : json_null());
}
