/* SPDX-License-Identifier: MIT */
/*
 * facts_ascend.h - the Ascend NPU part of the node facts, and the pure
 * parsers of what Huawei's tools print (npu-smi, hccn_tool) and of the files
 * an Ascend install leaves (CANN's install info, the driver's and
 * firmware's version.info, torch_npu's version.py, /etc/hccn.conf).
 *
 * A node without Ascend (no npu-smi on PATH and no install directory) gets
 * facts["npus"] = [] and no error. npu-smi runs as a child with a deadline
 * (FACTS_ASCEND_TOOL_MS); a tool that times out, fails or prints a format
 * the parser does not know sets errors["npus"] quoting the tool's words and
 * leaves facts["npus"] null, never an empty (healthy-looking) list.
 *
 * Output formats: docs/ascend.md, with the stand-ins that replay them
 * (tests/fakes/npu-smi, tests/fakes/hccn_tool).
 */
#ifndef CD_PROBES_FACTS_ASCEND_H
#define CD_PROBES_FACTS_ASCEND_H

#include <jansson.h>
#include <stddef.h>

#define FACTS_ASCEND_TOOL_MS 5000
#define ASCEND_MAX_NPUS      64
/* The install root; CLUSTERDOC_ASCEND_ROOT replaces it (the tests' stand-in
 * install: the agent honours the variable only for these file lookups). */
#define ASCEND_DEFAULT_ROOT "/usr/local/Ascend"

struct ascend_npu {
	int id;          /* the NPU id npu-smi shows (hccn_tool's -i) */
	char name[32];   /* "910B3" */
	char health[24]; /* "OK", "Warning", "Alarm", "Critical", ... */
	char bus_id[24]; /* "0000:C1:00.0" or "NA" */
};

struct ascend_smi {
	char version[48]; /* the banner's "Version:" (the driver's), "" when absent */
	size_t n;
	struct ascend_npu npu[ASCEND_MAX_NPUS];
};

/*
 * Parse `npu-smi info`: the banner and the two table lines per NPU (the
 * second gives the bus id). The process table after the devices is ignored.
 * Returns 0 (n may be 0 when the table has no device), CD_ERR_PARSE when no
 * device table header is found (an unknown format: message in errbuf), or
 * CD_ERR_TOOBIG past ASCEND_MAX_NPUS devices.
 */
int ascend_parse_npu_smi(const char *buf, size_t len, struct ascend_smi *out, char *errbuf,
                         size_t errlen);

/*
 * The value after "label:" on the first line that starts with label
 * (whitespace around the value trimmed), as in "link status: UP" or
 * "net health status: Success". Returns 0, CD_ERR_NOTFOUND when no line has
 * the label, CD_ERR_TOOBIG when the value does not fit vlen (with its NUL).
 */
int ascend_parse_labelled(const char *buf, size_t len, const char *label, char *val, size_t vlen);

/*
 * `hccn_tool -i N -ip -g`: "ipaddr:A" and "netmask:M". Returns 0 with both
 * set (dotted quads, validated), CD_ERR_NOTFOUND when the lines are there
 * but empty (no address configured), CD_ERR_PARSE otherwise.
 */
int ascend_parse_ip(const char *buf, size_t len, char addr[16], char mask[16]);

/*
 * `hccn_tool -i N -tls -g`: the "tls switch[S]" value (0 or 1). Returns 0,
 * CD_ERR_PARSE when it is missing or not a small integer.
 */
int ascend_parse_tls(const char *buf, size_t len, int *tls_switch);

/*
 * `hccn_tool -i N -lldp -g`: the neighbour's port ("Port ID TLV" then a
 * tab-indented "Ifname: X" or value) and system name ("System Name TLV"
 * then its value). Either may come back ""; returns CD_ERR_PARSE when the
 * text has no TLV header at all.
 */
int ascend_parse_lldp(const char *buf, size_t len, char *port, size_t plen, char *sysname,
                      size_t slen);

/*
 * "key=value" files (CANN's ascend_toolkit_install.info, the driver's and
 * firmware's version.info, /etc/hccn.conf): the value of key, compared
 * without case. Returns 0, CD_ERR_NOTFOUND, CD_ERR_TOOBIG (vlen).
 */
int ascend_parse_keyval(const char *buf, size_t len, const char *key, char *val, size_t vlen);

/*
 * /etc/hccn.conf (address_N=, netmask_N=, netdetect_N=, gateway_N=, ...):
 * a new array [{"device": N, "address": A, "netmask": M, ...}] ordered by
 * device, the other keys with their "_N" removed. Lines without "_N" are
 * skipped. Never NULL.
 */
json_t *ascend_parse_hccn_conf(const char *buf, size_t len);

/*
 * torch_npu's version.py ("__version__ = '2.1.0.post3'", either quote).
 * Returns 0, CD_ERR_NOTFOUND.
 */
int ascend_parse_py_version(const char *buf, size_t len, char *val, size_t vlen);

/*
 * Set facts["npus"] (array of {"id","name","health","bus_id"}, [] without
 * Ascend, null when npu-smi failed), facts["ascend"] ({"driver",
 * "firmware", "cann", "torch_npu", "hccn_conf"}, each null when absent;
 * the whole key null without Ascend) and facts["ascend_env"] (the HCCL_*
 * and ASCEND_* variables of envp). python_path is the interpreter the
 * python facts found (or NULL): torch_npu is looked up next to it. Errors
 * go to errors["npus"] or errors["ascend"].
 */
void facts_ascend_collect(json_t *facts, json_t *errors, const char *python_path,
                          const char *python_version, char *const *envp);

/* The install root: $CLUSTERDOC_ASCEND_ROOT, else ASCEND_DEFAULT_ROOT. */
const char *ascend_root(void);

struct buf;
/* A tool's words for a message: at most cap - 1 bytes of b, trimmed, with
 * newlines and tabs as spaces. */
void ascend_quote(char *dst, size_t cap, const struct buf *b);

/* Whether prog is an executable file in a directory of $PATH; its path in
 * path (len bytes) when it is. */
int ascend_on_path(const char *prog, char *path, size_t len);

/* The HCCL_* and ASCEND_* entries of envp, as facts_env_filter does. */
json_t *facts_ascend_env(char *const *envp);

#endif
