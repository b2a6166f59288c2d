/* SPDX-License-Identifier: MIT */
/*
 * hang_fr.c - a Flight Recorder dump read into clusterdoc's shape, the
 * ranks' dumps compared, and a rank asked for its dump (hang_fr.h).
 *
 * The pipe and the dump file are torch's (torch/csrc/distributed/c10d/
 * ProcessGroupNCCL.cpp, DumpPipe and DebugInfoWriter): the rank makes the
 * FIFO <TORCH_NCCL_DEBUG_INFO_PIPE_FILE><rank>.pipe, holds it open for
 * reading (non-blocking) and, from its heartbeat monitor thread, dumps when
 * it reads any byte there, writing <TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>.
 */
#include "hang/hang_fr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cd.h"

/* ============================================================ one dump */

/* "nccl:all_reduce" -> "allreduce": the backend prefix and the underscores
 * go, so that the name reads like NCCL's and the ("allreduce"). */
static json_t *op_name(const char *profiling)
{
	const char *colon = strchr(profiling, ':');
	char buf[64];
	size_t n = 0;

	for (const char *p = colon ? colon + 1 : profiling; *p && n < sizeof(buf) - 1; p++)
		if (*p != '_')
			buf[n++] = *p;
	buf[n] = '\0';
	return json_string(buf);
}

/* The entry's stack, as the dump lists it: [{"name","filename","line"}],
 * at most HANG_FR_MAX_FRAMES; NULL when the entry has none. */
static json_t *frames_of(const json_t *e)
{
	const json_t *list = json_object_get(e, "frames"), *f;
	json_t *out;
	size_t i;

	if (!json_is_array(list) || !json_array_size(list))
		return NULL;
	out = json_array();
	json_array_foreach(list, i, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *file = json_string_value(json_object_get(f, "filename"));

		if (i >= HANG_FR_MAX_FRAMES)
			break;
		json_array_append_new(out,
		                      json_pack("{s:s, s:s, s:I}", "name", name ? name : "?",
		                                "filename", file ? file : "?", "line",
		                                json_integer_value(json_object_get(f, "line"))));
	}
	return out;
}

static json_t *entry_of(const json_t *e)
{
	const json_t *pg = json_object_get(e, "process_group");
	const json_t *seq = json_object_get(e, "collective_seq_id");
	const char *prof = json_string_value(json_object_get(e, "profiling_name"));
	const char *state = json_string_value(json_object_get(e, "state"));
	json_t *out, *frames;

	if (!json_is_integer(seq) || !prof || !state)
		return NULL;
	out = json_pack(
	    "{s:O, s:o, s:s, s:O, s:O, s:b}", "seq", seq, "op", op_name(prof), "state", state,
	    "sizes",
	    json_object_get(e, "input_sizes") ? json_object_get(e, "input_sizes") : json_null(),
	    "record_id",
	    json_object_get(e, "record_id") ? json_object_get(e, "record_id") : json_null(), "p2p",
	    json_is_true(json_object_get(e, "is_p2p")));
	/* process_group is the tuple (name, desc); older dumps have pg_id only */
	if (json_is_string(json_array_get(pg, 0))) {
		json_object_set(out, "pg", json_array_get(pg, 0));
		if (json_is_string(json_array_get(pg, 1)))
			json_object_set(out, "pg_desc", json_array_get(pg, 1));
	} else {
		char id[24];
		snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(e, "pg_id")));
		json_object_set_new(out, "pg", json_string(id));
	}
	if (json_is_integer(json_object_get(e, "p2p_seq_id")))
		json_object_set(out, "p2p_seq", json_object_get(e, "p2p_seq_id"));
	frames = frames_of(e);
	if (frames)
		json_object_set_new(out, "frames", frames);
	return out;
}

json_t *hang_fr_parse(const unsigned char *data, size_t len, char *err, size_t errlen)
{
	json_t *dump = NULL, *out = NULL, *entries;
	const json_t *e, *list;
	size_t i;

	if (len > HANG_FR_MAX_DUMP) {
		cd_errf(err, errlen, CD_ERR_TOOBIG, "a dump of %zu bytes, more than %u", len,
		        HANG_FR_MAX_DUMP);
		return NULL;
	}
	if (len && data[0] == '{') {
		json_error_t je;
		dump = json_loadb((const char *)data, len, 0, &je);
		if (!dump) {
			cd_errf(err, errlen, CD_ERR_PARSE, "a JSON dump that does not read (%s%s)",
			        je.position >= (int)len ? "truncated: " : "", je.text);
			return NULL;
		}
	} else {
		dump = hang_fr_pickle_load(data, len, err, errlen);
		if (!dump)
			return NULL;
	}
	list = json_object_get(dump, "entries");
	if (!json_is_object(dump) || !json_is_string(json_object_get(dump, "version")) ||
	    (list && !json_is_array(list))) {
		cd_errf(err, errlen, CD_ERR_PARSE,
		        "not a Flight Recorder dump: no \"version\" string or \"entries\" list");
		goto out;
	}
	entries = json_array();
	json_array_foreach(list, i, e)
	{
		json_t *x = entry_of(e);
		if (!x) {
			json_decref(entries);
			cd_errf(err, errlen, CD_ERR_PARSE,
			        "entry %zu has no collective_seq_id, profiling_name or state", i);
			goto out;
		}
		json_array_append_new(entries, x);
	}
	out = json_pack("{s:i, s:O, s:o}", "rank", -1, "version", json_object_get(dump, "version"),
	                "entries", entries);
	if (json_is_object(json_object_get(dump, "pg_status")))
		json_object_set(out, "pg_status", json_object_get(dump, "pg_status"));
out:
	json_decref(dump);
	return out;
}

/* ============================================================ across ranks */

static json_t *pg_find(json_t *pgs, const char *name)
{
	json_t *p;
	size_t i;

	json_array_foreach(pgs, i, p)
	{
		if (strcmp(json_string_value(json_object_get(p, "pg")), name) == 0)
			return p;
	}
	p = json_pack("{s:s, s:I, s:s, s:{}, s:[], s:[]}", "pg", name, "max_seq", (json_int_t)-1,
	              "op", "", "last", "missing", "not_completed");
	json_array_append_new(pgs, p);
	return p;
}

/* "{1, 5}" of an array of ranks, into buf. */
static const char *rank_set(const json_t *ranks, char *buf, size_t len)
{
	size_t off = 0, i;
	const json_t *r;

	off += (size_t)snprintf(buf, len, "{");
	json_array_foreach(ranks, i, r)
	{
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%" JSON_INTEGER_FORMAT,
			                        i ? ", " : "", json_integer_value(r));
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
	return buf;
}

json_t *hang_fr_analyze(json_t *const *dumps, size_t n)
{
	json_t *pgs = json_array(), *msgs = json_array(), *p;
	size_t i, j;

	/* each rank's last collective per process group */
	for (i = 0; i < n; i++) {
		const json_t *e;
		char rank[24];

		if (!dumps[i])
			continue;
		snprintf(rank, sizeof(rank), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(dumps[i], "rank")));
		json_array_foreach(json_object_get(dumps[i], "entries"), j, e)
		{
			json_t *pg, *last;
			json_int_t seq = json_integer_value(json_object_get(e, "seq"));

			if (json_is_true(json_object_get(e, "p2p")))
				continue;
			pg = pg_find(pgs, json_string_value(json_object_get(e, "pg"))
			                      ? json_string_value(json_object_get(e, "pg"))
			                      : "?");
			last = json_object_get(json_object_get(pg, "last"), rank);
			if (last && json_integer_value(json_object_get(last, "seq")) > seq)
				continue;
			json_object_set_new(json_object_get(pg, "last"), rank,
			                    json_pack("{s:I, s:O, s:O}", "seq", seq, "op",
			                              json_object_get(e, "op"), "state",
			                              json_object_get(e, "state")));
			if (json_object_get(e, "frames"))
				json_object_set(json_object_get(json_object_get(pg, "last"), rank),
				                "frames", json_object_get(e, "frames"));
			if (seq > json_integer_value(json_object_get(pg, "max_seq"))) {
				json_object_set_new(pg, "max_seq", json_integer(seq));
				json_object_set(pg, "op", json_object_get(e, "op"));
			}
		}
	}
	/* who is behind the furthest rank, and who has not finished it */
	json_array_foreach(pgs, i, p)
	{
		json_int_t max = json_integer_value(json_object_get(p, "max_seq"));
		const char *rank;
		const json_t *last;
		char set[256];

		json_object_foreach(json_object_get(p, "last"), rank, last)
		{
			json_int_t seq = json_integer_value(json_object_get(last, "seq"));
			json_t *r = json_integer(strtoll(rank, NULL, 10));

			if (seq < max)
				json_array_append_new(json_object_get(p, "missing"), r);
			else if (strcmp(json_string_value(json_object_get(last, "state")),
			                "completed"))
				json_array_append_new(json_object_get(p, "not_completed"), r);
			else
				json_decref(r);
		}
		if (json_array_size(json_object_get(p, "missing")))
			json_array_append_new(
			    msgs, json_sprintf(
			              "pg %s: not all ranks joined collective %" JSON_INTEGER_FORMAT
			              " (%s): missing ranks %s",
			              json_string_value(json_object_get(p, "pg")), max,
			              json_string_value(json_object_get(p, "op")),
			              rank_set(json_object_get(p, "missing"), set, sizeof(set))));
		else if (json_array_size(json_object_get(p, "not_completed")))
			json_array_append_new(
			    msgs,
			    json_sprintf(
			        "pg %s: every rank entered collective %" JSON_INTEGER_FORMAT
			        " (%s); not completed on ranks %s",
			        json_string_value(json_object_get(p, "pg")), max,
			        json_string_value(json_object_get(p, "op")),
			        rank_set(json_object_get(p, "not_completed"), set, sizeof(set))));
	}
	return json_pack("{s:o, s:o}", "process_groups", pgs, "messages", msgs);
}

/* ============================================================ the trigger */

/* Whether two stats of the dump differ: a new file or a rewritten one. */
static int changed(const struct stat *a, int had, const struct stat *b)
{
	return !had || a->st_ino != b->st_ino || a->st_size != b->st_size ||
	       a->st_mtim.tv_sec != b->st_mtim.tv_sec || a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

int hang_fr_trigger(const char *pipe_prefix, const char *temp_prefix, int rank, int deadline_ms,
                    char *msg, size_t msglen)
{
	char pipe[4096], dump[4096];
	struct stat before, st, last = {0};
	int64_t deadline = cd_now_ms() + deadline_ms;
	int had, fd, seen = 0;

	if ((size_t)snprintf(pipe, sizeof(pipe), "%s%d.pipe", pipe_prefix, rank) >= sizeof(pipe) ||
	    (size_t)snprintf(dump, sizeof(dump), "%s%d", temp_prefix, rank) >= sizeof(dump))
		return cd_errf(msg, msglen, CD_ERR_TOOBIG, "a Flight Recorder path too long");
	if (lstat(pipe, &st) < 0) {
		if (errno == ENOENT)
			return cd_errf(msg, msglen, CD_ERR_NOTFOUND,
			               "%s does not exist: the Flight Recorder pipe is not enabled "
			               "(TORCH_NCCL_DEBUG_INFO_PIPE_FILE and TORCH_FR_BUFFER_SIZE, "
			               "before torch 2.8 "
			               "TORCH_NCCL_TRACE_BUFFER_SIZE, "
			               "at launch, torch >= 2.3)",
			               pipe);
		return cd_errf(msg, msglen, CD_ERR_IO, "%s: %s", pipe, strerror(errno));
	}
	if (!S_ISFIFO(st.st_mode))
		return cd_errf(msg, msglen, CD_ERR_UNSUPPORTED, "%s is not a FIFO: not written to",
		               pipe);
	had = stat(dump, &before) == 0;
	fd = open(pipe, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO)
			return cd_errf(
			    msg, msglen, CD_ERR_UNSUPPORTED,
			    "%s: no process reads it (the rank is gone, or its torch does not "
			    "watch the pipe)",
			    pipe);
		return cd_errf(msg, msglen, CD_ERR_IO, "%s: %s", pipe, strerror(errno));
	}
	if (write(fd, "1\n", 2) != 2) {
		int e = errno;
		close(fd);
		return cd_errf(msg, msglen, CD_ERR_IO, "%s: write: %s", pipe, strerror(e));
	}
	close(fd);
	/* torch writes the file in place, not by rename: it is done when it
	 * has changed and then stays the same over one poll interval */
	for (;;) {
		if (stat(dump, &st) == 0 && changed(&before, had, &st)) {
			if (seen && !changed(&last, 1, &st) && st.st_size > 0)
				return 0;
			seen = 1;
			last = st;
		}
		if (cd_now_ms() >= deadline)
			break;
		poll(NULL, 0, 50);
	}
	return cd_errf(msg, msglen, CD_ERR_TIMEOUT,
	               "asked rank %d for its Flight Recorder dump through %s; %s %s within %d ms",
	               rank, pipe, dump, seen ? "was still being written" : "did not appear",
	               deadline_ms);
}
