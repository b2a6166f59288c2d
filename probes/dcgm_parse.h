/* SPDX-License-Identifier: MIT */
/*
 * dcgm_parse.h - the parser of `dcgmi diag -r N -j` (DCGM's GPU diagnostic,
 * JSON output) into the results that are not a pass.
 *
 * The format is what dcgmi itself prints (github.com/NVIDIA/DCGM,
 * dcgmi/Diag.cpp, HelperJsonBuildOutput and HelperDisplayFailureMessage; the
 * key names in nvvs/include/NvvsJsonStrings.h), checked at tags v3.3.9,
 * v4.0.0 and v4.6.0:
 *
 * DCGM 3.x (v3.3.9):
 *   {"version": "3.3.9", "Driver Version Detected": ..., "GPU Device IDs": [...],
 *    "DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment",
 *      "tests": [{"name": "Persistence Mode",
 *        "results": [{"status": "Pass|Skip|Fail",
 *                     "gpu_id": 1 (an integer, -1 for none; only with an error),
 *                     "warnings": [{"warnings": "<text>", "error_id": N,
 *                                   "error_category": N, "error_severity": N}]}]}]},
 *      {"category": "Integration|Hardware|Stress",
 *       "tests": [{"name": "PCIe", "results": [{"gpu_id": "1" (a string),
 *         "status": ..., "warnings": [{"warning": "<text>", "error_id": N, ...}],
 *         "info": "<text>"}]}]}]}}
 *   The deployment tests' warnings carry their text under "warnings", the
 *   others under "warning". The CPU EUD test names its entity "cpu_id".
 *
 * DCGM 4.x (v4.0.0 onwards):
 *   {"entity_groups": [...], "metadata": {"version": "4.0.0", ...},
 *    "DCGM Diagnostic": {"test_categories": [{"category": "Hardware",
 *      "tests": [{"name": "memory",
 *        "results": [{"entity_group_id": 1, "entity_group": "GPU",
 *                     "entity_id": 0, "status": "Pass|Skip|Fail",
 *                     "warnings": [{"warning": "<text>", "error_id": N,
 *                                   "error_category": N, "error_severity": N}],
 *                     "info": ["<text>"]}],
 *        "test_summary": {"status": ..., "warnings": [...]}}]}]}}
 *   An entity is a GPU only when its entity_group_id is 1 (DCGM_FE_GPU in
 *   dcgmlib/dcgm_fields.h; or, without an id, its entity_group is "GPU").
 *   Errors tied to no entity appear only in "test_summary" (v4.5 onwards
 *   its warnings hold the test's entity errors too).
 *
 * When dcgmi cannot run the diagnostic (the GPUs in use, DCGM paused, the
 * diagnostic's own system error), both print
 *   {"DCGM Diagnostic" (3.x: "DCGM GPU Diagnostic"):
 *     {"version": "...", "runtime_error": "<DCGM's message>"}}
 * A host engine that cannot be reached is plain text, not JSON
 * ("Error: Unable to connect to host engine. ...", dcgmi/Command.cpp).
 *
 * Grading. With -j, dcgmi prints every DCGM warning as "Fail"
 * (HelperDisplayDiagResult: WARN falls through to "Fail"), so a "Fail" is
 * graded by the error_severity of its warnings (dcgmErrorSeverity_t in
 * dcgmlib/dcgm_errors.h, same values at v3.3.9, v4.0.0 and v4.6.0):
 *   1 DCGM_ERROR_MONITOR "Can perform workload, but needs to be monitored" -> WARN
 *   5 DCGM_ERROR_CONFIG  "This error can be configured"                    -> WARN
 *   2 DCGM_ERROR_ISOLATE "Cannot perform workload. GPU should be isolated." -> FAIL
 *   6 DCGM_ERROR_RESET   "Drain and reset GPU"                              -> FAIL
 *   4 DCGM_ERROR_TRIAGE  "This error should be triaged"                     -> FAIL
 *   3 DCGM_ERROR_UNKNOWN "This error code is not recognized"                -> FAIL
 *   0 DCGM_ERROR_NONE, another value, or no severity                        -> FAIL
 * A "Fail" is a WARN only when it has warnings and every one of them is
 * MONITOR or CONFIG: the GPU can still run work. A "Warn" (what dcgmi's
 * table output says; not printed with -j) is read as WARN.
 *
 * dcgmi may print text before the document: the text from the first '{' to
 * the last '}' is parsed.
 */
#ifndef CD_PROBES_DCGM_PARSE_H
#define CD_PROBES_DCGM_PARSE_H

#include <stddef.h>

#define DCGM_RESULTS_MAX 256 /* results kept; more are counted in dropped */
#define DCGM_TEXT_MAX    256 /* a test name's or a message's bytes kept */

enum dcgm_status { DCGM_FAIL = 0, DCGM_WARN };

/* One result that is not a pass or a skip. */
struct dcgm_result {
	enum dcgm_status status;
	int gpu;                     /* the GPU's index; -1: no one GPU (a deployment
	                                test of all of them, another entity such as a
	                                CPU, or a 4.x test_summary) */
	char test[64];               /* the test's name, as DCGM spells it */
	char message[DCGM_TEXT_MAX]; /* "CPU 0: " for an entity that is not a GPU,
	                                then its warnings joined by "; "; else "" */
};

struct dcgm_report {
	struct dcgm_result results[DCGM_RESULTS_MAX];
	size_t n;         /* results kept */
	size_t dropped;   /* results past DCGM_RESULTS_MAX */
	size_t tests;     /* results read in all (passes and skips included; a
	                     test_summary only when it is kept) */
	char version[32]; /* DCGM's version, "" when not said */
};

/*
 * Parse len bytes of buf (not NUL-terminated) into *out (zeroed first).
 * Each result that is not a pass or a skip is kept; a 4.x test whose
 * test_summary says "Fail" while none of its entity results does is kept as
 * one result with gpu -1 carrying the summary's warnings.
 * Returns 0, or -1 with why in err: no JSON document (then with dcgmi's
 * text, line breaks made spaces, when it printed any), neither root object,
 * no "test_categories", or a "runtime_error" (err is then "dcgmi could not
 * run the diagnostic: " and DCGM's own message, its line breaks made spaces).
 * A result of a shape not understood is skipped, never invented.
 * Pure: no I/O, nothing kept.
 */
int dcgm_parse(const char *buf, size_t len, struct dcgm_report *out, char *err, size_t errlen);

#endif
