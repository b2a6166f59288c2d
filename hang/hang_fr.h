/* SPDX-License-Identifier: MIT */
/*
 * hang_fr.h - PyTorch's NCCL Flight Recorder, read by clusterdoc in C for
 * `clusterdoc hang`: trigger a rank's dump through its pipe file, read the
 * dump, and find across ranks the last collective each one entered.
 *
 * The dump is what pytorch's torch/csrc/distributed/c10d/
 * FlightRecorderDetail.hpp writes: dump() = pickle_str(dump_dict(...)), a
 * pickle (protocol 2, torch's C++ jit Pickler without type tags) of a dict
 * {"version","pg_config","comm_lib_version","pg_status","entries":[...],
 * "nccl_comm_state"}, each entry a dict with the keys FlightRecorder.hpp
 * defines (record_id, pg_id, process_group (name, desc), collective_seq_id,
 * p2p_seq_id, op_id, profiling_name, time_created_ns, input_sizes,
 * input_dtypes, output_sizes, output_dtypes, state, retired, timeout_ms,
 * is_p2p, frames...). dump_json() writes the same keys as JSON; both are
 * read. docs/hang.md, "Flight Recorder", says what is supported.
 */
#ifndef CD_COLLECTIVES_HANG_FR_H
#define CD_COLLECTIVES_HANG_FR_H

#include <jansson.h>
#include <stddef.h>

/* The largest dump read (torch's default ring holds 2000 entries, far less). */
#define HANG_FR_MAX_DUMP (64u << 20)
/* The frames kept of an entry's stack. */
#define HANG_FR_MAX_FRAMES 16

/*
 * Read a pickle of len bytes into JSON: the subset of opcodes (protocol 2
 * to 5) that dicts, lists, tuples (as arrays), strings, ints, floats,
 * bools and None need, and torch's specialised lists (GLOBAL
 * torch.jit._pickle build_intlist/build_doublelist/build_boollist/
 * build_list + REDUCE). Dict keys must be strings or ints (ints become
 * their decimal string). Anything else (other GLOBALs, objects, bytes,
 * DUP, a container changed after it was stored) is refused, and so is a
 * pickle that ends before its STOP opcode ("truncated"). Returns a new
 * value, or NULL with a message naming the byte offset in err.
 */
json_t *hang_fr_pickle_load(const unsigned char *data, size_t len, char *err, size_t errlen);

/*
 * Parse one Flight Recorder dump (pickle, or JSON when it starts with
 * '{'). Returns a new object {"rank":-1,"version":"...","entries":[{"seq":
 * collective_seq_id,"op":"allreduce","state":"scheduled|started|completed",
 * "sizes":input_sizes,"pg":"<pg name>","pg_desc":"...","record_id":N,
 * "p2p":bool,"p2p_seq":N,"frames":[{"name","filename","line"}] (the entry's
 * stack as the dump lists it, at most HANG_FR_MAX_FRAMES; absent when it has
 * none)}], "pg_status":{...as dumped}}: "rank" is not in
 * the dump (torch's loader takes it from the file name), so the caller
 * sets it. NULL with err when the bytes are not a dump or are truncated.
 */
json_t *hang_fr_parse(const unsigned char *data, size_t len, char *err, size_t errlen);

/*
 * Across n parsed dumps (each with its "rank" set): per process group, the
 * last collective each rank entered (its largest collective_seq_id among
 * the collectives, not the point-to-point entries) and the ranks that did
 * not enter the last one any rank entered. Returns a new object
 * {"process_groups":[{"pg":"0","max_seq":N,"op":"allreduce","last":{"<rank>":
 * {"seq":N,"op":"...","state":"...","frames":[...] (when the entry has them)}},
 * "missing":[R...],"not_completed":[R...]}],
 * "messages":["pg 0: not all ranks joined collective 6650 (allreduce):
 * missing ranks {5}", ...]}. NULL dumps are skipped.
 */
json_t *hang_fr_analyze(json_t *const *dumps, size_t n);

/*
 * Ask a rank for a dump: write to the FIFO <pipe_prefix><rank>.pipe
 * (opened non-blocking: no reader means the rank does not watch it), then
 * wait up to deadline_ms for <temp_prefix><rank> to be written anew (a file
 * that was there before must change) and to stop growing. Returns 0; or
 * CD_ERR_NOTFOUND (no pipe: the Flight Recorder pipe is not enabled),
 * CD_ERR_UNSUPPORTED (the pipe is not a FIFO, or no process reads it),
 * CD_ERR_TIMEOUT (no dump in time), CD_ERR_IO; the detail in msg.
 */
int hang_fr_trigger(const char *pipe_prefix, const char *temp_prefix, int rank, int deadline_ms,
                    char *msg, size_t msglen);

#endif
