/* SPDX-License-Identifier: MIT */
/*
 * facts.h - the node-facts probe: what the agent answers to a `facts` request.
 *
 * facts_collect gathers, on the node it runs on, everything the head needs to
 * know about that node before any network test: identity (hostname, kernel,
 * OS, CPU, memory), the clock, the Python/torch/NCCL stack a job would use,
 * the GPUs, and the job-relevant part of the environment. It uses libc,
 * POSIX and jansson only; NVML and NCCL are dlopen()ed (facts_gpu.h), Python
 * is run as a child process (facts_python.h).
 *
 * The parsers below are pure functions on captured text, so they are unit
 * tested and fuzzed without touching /proc.
 */
#ifndef CD_PROBES_FACTS_H
#define CD_PROBES_FACTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FACTS_PYTHON_TIMEOUT_MS 20000

struct facts_opts {
	int python_timeout_ms; /* deadline for the python/torch probe, default 20000 */
	const char
	    *cache_dir; /* where to cache the python/torch result; NULL = $HOME/.cache/clusterdoc */
	int no_cache;   /* 1 = always re-run the python probe */
	const char *python; /* interpreter to probe; NULL = "python3" from PATH */
};

/* Fill o with the defaults above (every pointer NULL, no_cache 0). */
void facts_opts_init(struct facts_opts *o);

/*
 * Collect everything; never fails as a whole: a fact that cannot be read is
 * left out (or null, for the keys documented as nullable) and an entry
 * "<field>": "<message>" is added to the "errors" object. opts may be NULL
 * for the defaults. Returns a new reference (the caller json_decref()s it).
 *
 * Keys, in this order:
 *   hostname            string, gethostname()
 *   kernel              string, uname release
 *   os                  string, PRETTY_NAME of /etc/os-release (or /usr/lib/os-release)
 *   os_short            string, the same distribution for tables (facts_os_short);
 *                       absent when os-release has neither ID nor NAME
 *   arch                string, uname machine
 *   cpus                integer, online CPUs (sysconf)
 *   cpu_model           string, see facts_parse_cpuinfo; uname machine as a last resort
 *   mem_total_bytes     integer, /proc/meminfo MemTotal
 *   mem_available_bytes integer, /proc/meminfo MemAvailable
 *   uptime_s            real, /proc/uptime
 *   python, torch       see facts_python.h
 *   python_candidates   see facts_python.h; only when the login python3 has no torch
 *   nccl                {"version", "library"} or null, see facts_gpu.h
 *   npus, ascend, ascend_env   array ([] without Ascend; null when npu-smi failed),
 *                       object or null, object: see facts_ascend.h
 *   gpus, gpu_driver    array (possibly empty) and string or null, see facts_gpu.h
 *   rdma, rdma_node     array and object, see rdma_probe.h (the same keys
 *                       as in the netprobe answer)
 *   env                 object, see facts_env_filter
 *   wall_clock_ms       integer, CLOCK_REALTIME in ms, read last so that it is
 *                       as close as possible to the moment the answer is sent
 *                       (the head compares it with its own clock for skew)
 *   errors              object "<field>": "<message>", possibly empty
 *
 * Blocks for at most opts->python_timeout_ms plus a few milliseconds (the
 * Python probe is the only slow part; see facts_python.h for the bound). Waits for its own
 * children by PID: a SIGCHLD handler that reaps every child (waitpid(-1))
 * would steal them.
 */
json_t *facts_collect(const struct facts_opts *opts);

/*
 * Parse /proc/cpuinfo text into a CPU model name, taken from the first of
 * these that is present:
 *   "model name" (x86, some ARM),
 *   "Hardware" (32-bit ARM boards),
 *   "CPU implementer" + "CPU part" (arm64): a name from a table of known
 *       parts ("ARM Neoverse-N1"), else "CPU implementer 0x41 part 0xd0c",
 *   "cpu" (POWER).
 * Only the first value of each key counts. On success *model is a new
 * string (caller frees) and 0 is returned; CD_ERR_NOTFOUND when none of the
 * keys is present (*model is then NULL).
 */
int facts_parse_cpuinfo(const char *buf, size_t len, char **model);

/* /proc/meminfo values in bytes; -1 when the line is missing. */
struct facts_meminfo {
	int64_t total_bytes;     /* MemTotal */
	int64_t available_bytes; /* MemAvailable (absent before Linux 3.14) */
};

/*
 * Parse /proc/meminfo text. Fills *out (missing lines are -1). Returns 0,
 * or CD_ERR_PARSE (message in errbuf) when a wanted line is malformed or
 * overflows.
 */
int facts_parse_meminfo(const char *buf, size_t len, struct facts_meminfo *out, char *errbuf,
                        size_t errlen);

/*
 * Parse os-release text (os-release(5): KEY=value, value optionally in
 * double or single quotes, with \" \\ \$ \` escapes in double quotes) into a
 * display name: PRETTY_NAME, else "NAME VERSION_ID", else NAME. On success
 * *pretty is a new string (caller frees), 0 is returned; CD_ERR_NOTFOUND when
 * none of those keys is present.
 */
int facts_parse_os_release(const char *buf, size_t len, char **pretty);

/*
 * A short display name for a node's distribution from its os-release text,
 * for tables: the distribution's usual short name and VERSION_ID, so
 * "Debian 12", "Ubuntu 22.04", "Rocky 8.9", "RHEL 8.9", "Alma 9.3",
 * "CentOS Stream 9", "SLES 15-SP5" (SUSE's VERSION_ID "15.5" written as its
 * service pack), "openSUSE Leap 15.5", "Amazon Linux 2023", "Fedora 39",
 * "Arch" (rolling: no version). The distribution is recognised by ID; an
 * unknown one gives NAME without a trailing " GNU/Linux" or " Linux", then
 * VERSION_ID ("Foo 3"); without NAME, ID. Debian testing (no VERSION_ID)
 * gives "Debian trixie" from VERSION_CODENAME. Pure; returns a new string
 * (caller frees), NULL when neither ID nor NAME is set (a table then shows
 * PRETTY_NAME).
 */
char *facts_os_short(const char *buf, size_t len);

/*
 * The job-relevant part of an environment: every "NAME=value" of envp (a
 * NULL-terminated array like environ, borrowed) whose NAME starts with
 * NCCL_, GLOO_, MASTER_ or TORCH_, or is exactly CUDA_VISIBLE_DEVICES,
 * WORLD_SIZE, RANK, LOCAL_RANK or OMP_NUM_THREADS. Entries without '=' are
 * skipped; when a name appears twice the first wins (as with getenv).
 * Returns a new object {"NAME": "value"}; bytes that are not UTF-8 are
 * replaced (see facts_json_text).
 */
json_t *facts_env_filter(char *const *envp);

/*
 * Helpers shared by the facts_*.c files.
 */

/* A JSON string for len bytes of s; bytes that are not valid UTF-8 (and NUL)
 * become U+FFFD, because jansson rejects invalid UTF-8. Never NULL. */
json_t *facts_json_text(const char *s, size_t len);

/* The values of the os-release keys keys[0..nkeys) in buf (parsed as
 * facts_parse_os_release says): val[k] is a new string (caller frees) or
 * NULL when the key is absent. */
void facts_os_release_values(const char *buf, size_t len, const char *const *keys, size_t nkeys,
                             char **val);

/* Set errors[field] to the message (replacing an earlier one). */
void facts_set_error(json_t *errors, const char *field, const char *msg);

/*
 * Read a whole file of at most max bytes into a new NUL-terminated buffer
 * (*data, caller frees; *len without the NUL). Returns 0, CD_ERR_IO or
 * CD_ERR_NOTFOUND (message in errbuf), CD_ERR_TOOBIG when the file holds
 * more than max bytes. The same as scan_read_file(path, max,
 * SCAN_FILE_TO_EOF, ...) (scan.h), which the probes call directly.
 */
int facts_read_file(const char *path, size_t max, char **data, size_t *len, char *errbuf,
                    size_t errlen);

#endif
