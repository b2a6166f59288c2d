/* SPDX-License-Identifier: MIT */
/*
 * test_nccl.c - the NCCL backend (collectives/nccl.h) on the fake NCCL and
 * CUDA runtime of tests/fakes/ (a world of one rank on the host), which this
 * binary loads for all its tests. The libraries are loaded once per process,
 * so the cases about other libraries (the real ones, missing ones) run
 * nccl_backend_available in a fresh copy of this binary (exec'd with
 * --available). Where nccl.h and the CUDA headers are installed at build
 * time, the declarations of nccl_dl.h are checked against them. NCCL reads
 * its debug variables once per process too: the capture of its network
 * lines (nccl_netlog.h) runs in a fresh copy as well (--netlog).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cd.h"
#include "collectives/coll.h"
#include "collectives/nccl.h"
#include "collectives/nccl_dl.h"
#include "collectives/nccl_netlog.h"

#if defined(__has_include)
#if __has_include(<nccl.h>) && __has_include(<cuda_runtime_api.h>)
#define HAVE_CUDA_HEADERS 1
#include <cuda_runtime_api.h>
#include <driver_types.h>
#include <nccl.h>
#endif
#endif

#ifndef FAKES_DIR /* set by the Makefile */
#define FAKES_DIR "build/fakes"
#endif
#define FAKE_NCCL   FAKES_DIR "/libfake_nccl.so"
#define FAKE_CUDART FAKES_DIR "/libfake_cudart.so"

#ifdef HAVE_CUDA_HEADERS
#define SAME(ours, theirs) _Static_assert((ours) == (theirs), #ours " is not " #theirs)
SAME(NCCL_DL_ID_BYTES, NCCL_UNIQUE_ID_BYTES);
SAME(sizeof(struct nccl_dl_id), sizeof(ncclUniqueId));
SAME(sizeof(nccl_result), sizeof(ncclResult_t));
SAME(sizeof(nccl_comm), sizeof(ncclComm_t));
SAME(NCCL_DL_SUCCESS, ncclSuccess);
SAME(NCCL_DL_IN_PROGRESS, ncclInProgress);
SAME(sizeof(int), sizeof(ncclDataType_t));
SAME(sizeof(int), sizeof(ncclRedOp_t));
SAME(NCCL_DL_INT32, ncclInt32);
SAME(NCCL_DL_FLOAT32, ncclFloat32);
SAME(NCCL_DL_FLOAT64, ncclFloat64);
SAME(NCCL_DL_BFLOAT16, ncclBfloat16);
SAME(NCCL_DL_SUM, ncclSum);
SAME(NCCL_DL_CONFIG_VERSION, NCCL_VERSION(2, 14, 0));
SAME(offsetof(struct nccl_dl_config, size), offsetof(ncclConfig_t, size));
SAME(offsetof(struct nccl_dl_config, magic), offsetof(ncclConfig_t, magic));
SAME(offsetof(struct nccl_dl_config, version), offsetof(ncclConfig_t, version));
SAME(offsetof(struct nccl_dl_config, blocking), offsetof(ncclConfig_t, blocking));
SAME(sizeof(cuda_error), sizeof(cudaError_t));
SAME(sizeof(cuda_stream), sizeof(cudaStream_t));
SAME(sizeof(cuda_event), sizeof(cudaEvent_t));
SAME(sizeof(int), sizeof(enum cudaMemcpyKind));
SAME(NCCL_DL_CUDA_SUCCESS, cudaSuccess);
SAME(NCCL_DL_CUDA_STUB_LIBRARY, cudaErrorStubLibrary);
SAME(NCCL_DL_CUDA_INSUFFICIENT_DRIVER, cudaErrorInsufficientDriver);
SAME(NCCL_DL_CUDA_NO_DEVICE, cudaErrorNoDevice);
SAME(NCCL_DL_CUDA_NOT_READY, cudaErrorNotReady);
SAME(NCCL_DL_CUDA_HOST_TO_DEVICE, cudaMemcpyHostToDevice);
SAME(NCCL_DL_CUDA_DEVICE_TO_HOST, cudaMemcpyDeviceToHost);
SAME(NCCL_DL_CUDA_STREAM_NON_BLOCKING, cudaStreamNonBlocking);
SAME(NCCL_DL_CUDA_EVENT_DEFAULT, cudaEventDefault);
SAME(NCCL_DL_CUDA_EVENT_DISABLE_TIMING, cudaEventDisableTiming);
#endif

/* The variables the fakes read at every call: none outlives its test. */
static int clear_fake_env(void **state)
{
	unsetenv("FAKE_NCCL_CORRUPT");
	unsetenv("FAKE_CUDA_HANG");
	unsetenv("FAKE_CUDA_DEVICES");
	unsetenv("FAKE_CUDA_STEP_MS");
	return 0;
}

/* ------------------------------------------------ in a fresh process */

struct available {
	int rc, ngpus;
	char why[CD_ERRLEN];
};

/* The --available mode of this binary: nccl_backend_available's answer on
 * one line, "rc ngpus why". */
static int print_available(void)
{
	char why[CD_ERRLEN] = "";
	int ngpus = -1, rc = nccl_backend_available(&ngpus, why, sizeof(why));

	printf("%d %d %s\n", rc, ngpus, why);
	return 0;
}

/* What a fresh copy inherits: not the library overrides, the fakes'
 * variables nor NCCL's debug settings of whoever runs the test. */
static int inherited(const char *var)
{
	return strncmp(var, "CLUSTERDOC_NCCL_LIB=", 20) != 0 &&
	       strncmp(var, "CLUSTERDOC_CUDART_LIB=", 22) != 0 && strncmp(var, "FAKE_", 5) != 0 &&
	       strncmp(var, "NCCL_DEBUG", 10) != 0;
}

/* This binary in mode (--available, --netlog), in a new process whose
 * environment is this one's without the library overrides and the fakes'
 * variables, plus the "NAME=value" strings of env (NULL-terminated); what it
 * wrote on stdout into out (len bytes). keep_libs keeps the overrides. */
static void run_mode(const char *mode, const char *const *env, int keep_libs, char *out,
                     size_t outlen)
{
	extern char **environ;
	char *argv[] = {"/proc/self/exe", (char *)mode, NULL};
	size_t n = 0, len = 0;
	char **envp;
	int fds[2], status;
	ssize_t got;
	pid_t pid;

	for (char **e = environ; *e; e++)
		n++;
	for (const char *const *e = env; *e; e++)
		n++;
	envp = cd_calloc(n + 1, sizeof(*envp));
	n = 0;
	for (char **e = environ; *e; e++) {
		if (inherited(*e) || (keep_libs && strncmp(*e, "CLUSTERDOC_", 11) == 0))
			envp[n++] = *e;
	}
	for (const char *const *e = env; *e; e++)
		envp[n++] = (char *)*e;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	free(envp);
	close(fds[1]);
	while (len < outlen - 1 && (got = read(fds[0], out + len, outlen - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void available_in_new_process(const char *const *env, struct available *a)
{
	char out[CD_ERRLEN + 64], *end;

	run_mode("--available", env, 0, out, sizeof(out));
	a->rc = (int)strtol(out, &end, 10);
	a->ngpus = (int)strtol(end, &end, 10);
	if (*end == ' ')
		end++;
	end[strcspn(end, "\n")] = '\0';
	snprintf(a->why, sizeof(a->why), "%s", end);
}

/* ------------------------------------------------ NCCL's network lines, in a fresh process */

static json_t *env_value(const char *name)
{
	const char *v = getenv(name);

	return v ? json_string(v) : json_null();
}

/* The --netlog mode of this binary, on the fakes: the id and one rank's
 * sweep, each inside a capture scope as bench_agent.c opens them, then one
 * line of JSON: {"read": nccl_netlog_read's object, "after": the three
 * variables after the scopes (null: unset), "rc": the sweep's}. */
static int print_netlog(void)
{
	static const size_t sizes[] = {4096};
	struct coll_sweep p = {.dtype = COLL_FLOAT32, .sizes = sizes, .nsizes = 1, .iters = 1};
	char hex[NCCL_ID_HEX_LEN + 1], err[CD_ERRLEN];
	struct nccl_netlog_scope s;
	struct coll_result res;
	size_t done;
	json_t *out;
	int rc;

	nccl_netlog_begin(&s);
	rc = nccl_backend_unique_id(hex, sizeof(hex), err, sizeof(err));
	nccl_netlog_end(&s);
	nccl_netlog_begin(&s);
	if (rc == 0)
		rc = nccl_backend_sweep(hex, 0, 1, 0, 5000, &p, &res, &done, err, sizeof(err));
	nccl_netlog_end(&s);
	out = json_pack("{s:o, s:{s:o, s:o, s:o}, s:i}", "read", nccl_netlog_read(), "after",
	                "NCCL_DEBUG", env_value("NCCL_DEBUG"), "NCCL_DEBUG_SUBSYS",
	                env_value("NCCL_DEBUG_SUBSYS"), "NCCL_DEBUG_FILE",
	                env_value("NCCL_DEBUG_FILE"), "rc", rc);
	fflush(stdout);
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	return 0;
}

/* The --netlog answer in a fresh process with env; asserts that stdout is
 * that one line and nothing else (NCCL's lines never reach stdout). */
static json_t *netlog_in_new_process(const char *const *env)
{
	static char out[1 << 16];
	json_error_t jerr;
	json_t *j;

	run_mode("--netlog", env, 1, out, sizeof(out));
	assert_int_equal(out[0], '{');
	assert_non_null(strchr(out, '\n'));
	assert_int_equal(strchr(out, '\n')[1], '\0');
	j = json_loads(out, 0, &jerr);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "rc")), 0);
	return j;
}

static const char *line_of(json_t *j, size_t k)
{
	return json_string_value(
	    json_array_get(json_object_get(json_object_get(j, "read"), "lines"), k));
}

static void nccls_ib_line_comes_back_from_a_private_debug_file(void **state)
{
	const char *env[] = {"FAKE_NCCL_NET=IB mlx5_0:1/RoCE mlx5_1:1/IB", NULL};
	json_t *j = netlog_in_new_process(env), *read = json_object_get(j, "read");

	assert_string_equal(json_string_value(json_object_get(read, "file")), "private");
	assert_int_equal(json_array_size(json_object_get(read, "lines")), 2);
	assert_string_equal(line_of(j, 0), "NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE "
	                                   "[1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>");
	assert_string_equal(line_of(j, 1), "NCCL INFO Using network IB");
	/* the scope is closed: the agent's environment is the user's again */
	assert_true(json_is_null(json_object_get(json_object_get(j, "after"), "NCCL_DEBUG")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "after"), "NCCL_DEBUG_FILE")));
	json_decref(j);
}

static void users_nccl_debug_file_is_kept_and_read_back(void **state)
{
	char dir[] = "/tmp/test_nccl_XXXXXX", var[128], want[512], host[256];
	const char *env[] = {var, "FAKE_NCCL_NET=Socket eth1", "NCCL_DEBUG=WARN", NULL};
	json_t *j, *read, *after;
	const char *file;

	assert_non_null(mkdtemp(dir));
	snprintf(var, sizeof(var), "NCCL_DEBUG_FILE=%s/nccl.%%h.%%p", dir);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[strcspn(host, ".")] = '\0';
	snprintf(want, sizeof(want), "%s/nccl.%s.", dir, host);
	j = netlog_in_new_process(env);
	read = json_object_get(j, "read");
	after = json_object_get(j, "after");
	file = json_string_value(json_object_get(read, "file"));
	assert_non_null(file);
	assert_memory_equal(file, want, strlen(want)); /* then the pid */
	assert_int_equal(access(file, R_OK), 0);
	assert_string_equal(line_of(j, 0), "NCCL INFO NET/IB : No device found.");
	assert_string_equal(line_of(j, 1), "NCCL INFO NET/Socket : Using [0]eth1:10.0.0.1<0>");
	assert_string_equal(line_of(j, 2), "NCCL INFO Using network Socket");
	assert_string_equal(json_string_value(json_object_get(after, "NCCL_DEBUG")), "WARN");
	assert_string_equal(json_string_value(json_object_get(after, "NCCL_DEBUG_FILE")), var + 16);
	unlink(file);
	rmdir(dir);
	json_decref(j);
}

static void users_nccl_debug_info_without_a_file_does_not_reach_stdout(void **state)
{
	const char *env[] = {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=COLL",
	                     "FAKE_NCCL_NET=Socket eth0 noverbs", NULL};
	json_t *j = netlog_in_new_process(env), *after = json_object_get(j, "after");

	/* INIT and NET were added to the user's subsystems for the run */
	assert_string_equal(line_of(j, 0), "NCCL INFO Failed to open libibverbs.so[.1]");
	assert_string_equal(line_of(j, 1), "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>");
	assert_string_equal(json_string_value(json_object_get(after, "NCCL_DEBUG")), "INFO");
	assert_string_equal(json_string_value(json_object_get(after, "NCCL_DEBUG_SUBSYS")), "COLL");
	assert_true(json_is_null(json_object_get(after, "NCCL_DEBUG_FILE")));
	json_decref(j);
}

/* ------------------------------------------------ the pure parts of nccl_netlog */

static void network_lines_are_picked_without_their_prefix_once_per_text(void **state)
{
	static const char log[] =
	    "gpu1:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
	    "gpu1:4242:4250 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\n"
	    "gpu1:4242:4250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB "
	    "eth0:10.0.0.1<0>\r\n"
	    "gpu1:4242:4250 [0] NCCL INFO Using network IB\n"
	    "gpu1:4242:4251 [1] NCCL INFO Using network IB\n"
	    "gpu1:4242:4250 [0] NCCL INFO ncclCommInitRank comm 0x55 rank 0 nranks 2\n"
	    "NET/Socket : Using [0]eth0:10.0.0.1<0>"; /* no prefix, no newline */
	json_t *lines = json_array();

	assert_int_equal(nccl_netlog_pick(log, sizeof(log) - 1, lines), 0);
	assert_int_equal(json_array_size(lines), 4);
	assert_string_equal(json_string_value(json_array_get(lines, 0)),
	                    "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)");
	assert_string_equal(json_string_value(json_array_get(lines, 1)),
	                    "NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>");
	assert_string_equal(json_string_value(json_array_get(lines, 2)),
	                    "NCCL INFO Using network IB");
	assert_string_equal(json_string_value(json_array_get(lines, 3)),
	                    "NET/Socket : Using [0]eth0:10.0.0.1<0>");
	json_decref(lines);
}

static void lines_past_the_caps_or_not_utf8_are_counted_as_dropped(void **state)
{
	char *log = cd_malloc(64 * 1100), *p = log;
	json_t *lines = json_array();

	for (int k = 0; k < NCCL_NETLOG_LINES_MAX + 3; k++)
		p += sprintf(p, "h:1:1 [0] NCCL INFO Using network X%d\n", k);
	p += sprintf(p, "NET/IB : \xff\xfe\n");
	memset(p, 'a', NCCL_NETLOG_LINE_MAX + 1);
	memcpy(p, "NET/", 4);
	p += NCCL_NETLOG_LINE_MAX + 1;
	assert_int_equal(nccl_netlog_pick(log, (size_t)(p - log), lines), 5);
	assert_int_equal(json_array_size(lines), NCCL_NETLOG_LINES_MAX);
	json_decref(lines);
	free(log);
}

static void debug_file_name_is_expanded_as_nccl_does(void **state)
{
	char out[64];

	assert_int_equal(nccl_netlog_expand("/l/%h-%p-%%-%x-%", "gpu1", 77, out, sizeof(out)), 0);
	assert_string_equal(out, "/l/gpu1-77-%-%x-%");
	assert_int_equal(nccl_netlog_expand("/l/%h.log", "gpu1", 77, out, 9), -1);
	assert_int_equal(nccl_netlog_expand("/l/%h.log", "gpu1", 77, out, 14), 0);
}

static void real_libraries_say_why_they_cannot_run_here(void **state)
{
	const char *env[] = {NULL};
	struct available a;

	available_in_new_process(env, &a);
	if (a.rc == 0)
		skip(); /* a GPU is really here */
	assert_int_equal(a.rc, CD_ERR_UNSUPPORTED);
	assert_int_equal(a.ngpus, 0);
	assert_true(a.why[0] != '\0');
}

static void missing_nccl_library_is_named(void **state)
{
	const char *env[] = {"CLUSTERDOC_NCCL_LIB=/nonexistent/libnccl-missing.so.2", NULL};
	struct available a;

	available_in_new_process(env, &a);
	assert_int_equal(a.rc, CD_ERR_UNSUPPORTED);
	assert_non_null(strstr(a.why, "/nonexistent/libnccl-missing.so.2 not found (dlopen: "));
}

static void missing_cuda_runtime_is_named(void **state)
{
	const char *env[] = {"CLUSTERDOC_NCCL_LIB=" FAKE_NCCL,
	                     "CLUSTERDOC_CUDART_LIB=/nonexistent/libcudart-missing.so", NULL};
	struct available a;

	available_in_new_process(env, &a);
	assert_int_equal(a.rc, CD_ERR_UNSUPPORTED);
	assert_non_null(strstr(a.why, "/nonexistent/libcudart-missing.so not found (dlopen: "));
}

/* ------------------------------------------------ on the fakes */

static void fakes_are_available_with_one_gpu(void **state)
{
	char why[CD_ERRLEN] = "";
	int ngpus = -1;

	assert_int_equal(nccl_backend_available(&ngpus, why, sizeof(why)), 0);
	assert_int_equal(ngpus, 1);
}

static void no_device_is_unsupported_with_no_cuda_device(void **state)
{
	char why[CD_ERRLEN] = "";
	int ngpus = -1;

	setenv("FAKE_CUDA_DEVICES", "0", 1);
	assert_int_equal(nccl_backend_available(&ngpus, why, sizeof(why)), CD_ERR_UNSUPPORTED);
	assert_int_equal(ngpus, 0);
	assert_string_equal(
	    why, "no CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected)");
}

static void version_is_ncclGetVersion_dotted(void **state)
{
	char v[16], err[CD_ERRLEN];

	assert_int_equal(nccl_backend_version(v, sizeof(v), err, sizeof(err)), 0);
	assert_string_equal(v, "2.28.9");
}

static void unique_id_is_256_lowercase_hex_characters(void **state)
{
	char hex[NCCL_ID_HEX_LEN + 1], err[CD_ERRLEN];

	assert_int_equal(nccl_backend_unique_id(hex, sizeof(hex), err, sizeof(err)), 0);
	assert_int_equal(strlen(hex), 256);
	assert_int_equal(strspn(hex, "0123456789abcdef"), 256);
	/* the fake's first bytes are 0x00 0x02 and its last 0xff */
	assert_memory_equal(hex, "0002", 4);
	assert_string_equal(hex + 254, "ff");
}

static void unique_id_needs_257_bytes(void **state)
{
	char hex[NCCL_ID_HEX_LEN], err[CD_ERRLEN];

	assert_int_equal(nccl_backend_unique_id(hex, sizeof(hex), err, sizeof(err)), CD_ERR_TOOBIG);
}

static void new_id(char *hex)
{
	char err[CD_ERRLEN];

	assert_int_equal(nccl_backend_unique_id(hex, NCCL_ID_HEX_LEN + 1, err, sizeof(err)), 0);
}

/* Sizes of 1, 1000 and 65537 bytes: at least one element, and whole ones. */
static void sweep_three_sizes(enum coll_dtype t, size_t esize)
{
	static const size_t sizes[] = {1, 1000, 65537};
	struct coll_sweep p = {
	    .dtype = t, .sizes = sizes, .nsizes = 3, .warmup = 2, .iters = 5, .check = 1};
	struct coll_result out[3];
	char hex[NCCL_ID_HEX_LEN + 1], err[CD_ERRLEN] = "";
	size_t done = 99;

	new_id(hex);
	assert_int_equal(nccl_backend_sweep(hex, 0, 1, 0, 5000, &p, out, &done, err, sizeof(err)),
	                 0);
	assert_int_equal(done, 3);
	for (size_t k = 0; k < 3; k++) {
		size_t count = sizes[k] / esize ? sizes[k] / esize : 1;

		assert_int_equal(out[k].count, count);
		assert_int_equal(out[k].bytes, count * esize);
		assert_int_equal(out[k].wrong, 0);
		assert_true(out[k].time_us > 0);
	}
}

static void float32_sweep_counts_sizes_and_finds_no_wrong_element(void **state)
{
	sweep_three_sizes(COLL_FLOAT32, 4);
}

static void float64_sweep_counts_sizes_and_finds_no_wrong_element(void **state)
{
	sweep_three_sizes(COLL_FLOAT64, 8);
}

static void int32_sweep_counts_sizes_and_finds_no_wrong_element(void **state)
{
	sweep_three_sizes(COLL_INT32, 4);
}

static void bfloat16_sweep_counts_sizes_and_finds_no_wrong_element(void **state)
{
	sweep_three_sizes(COLL_BFLOAT16, 2);
}

/* A sweep of one size of float (bytes per rank) on a new id; its result in *res. */
static int sweep_one(int rank, int nranks, int gpu, int timeout_ms, int check, size_t bytes,
                     struct coll_result *res, size_t *done, char *err, size_t errlen)
{
	struct coll_sweep p = {.dtype = COLL_FLOAT32,
	                       .sizes = &bytes,
	                       .nsizes = 1,
	                       .warmup = 1,
	                       .iters = 3,
	                       .check = check};
	char hex[NCCL_ID_HEX_LEN + 1];

	new_id(hex);
	return nccl_backend_sweep(hex, rank, nranks, gpu, timeout_ms, &p, res, done, err, errlen);
}

static void corrupted_element_is_counted_wrong(void **state)
{
	struct coll_result res;
	char err[CD_ERRLEN] = "";
	size_t done;

	setenv("FAKE_NCCL_CORRUPT", "1", 1);
	assert_int_equal(sweep_one(0, 1, 0, 5000, 1, 4096, &res, &done, err, sizeof(err)), 0);
	assert_int_equal(done, 1);
	assert_int_equal(res.wrong, 1);
}

static void unchecked_sweep_reports_wrong_as_minus_one(void **state)
{
	struct coll_result res;
	char err[CD_ERRLEN] = "";
	size_t done;

	setenv("FAKE_NCCL_CORRUPT", "1", 1);
	assert_int_equal(sweep_one(0, 1, 0, 5000, 0, 4096, &res, &done, err, sizeof(err)), 0);
	assert_int_equal(res.wrong, -1);
}

static void stream_that_never_completes_times_out_naming_the_size(void **state)
{
	struct coll_result res;
	char err[CD_ERRLEN] = "";
	size_t done = 99;
	int64_t t0;
	int rc;

	setenv("FAKE_CUDA_HANG", "1", 1);
	t0 = cd_now_ms();
	rc = sweep_one(0, 1, 0, 300, 1, 4194304, &res, &done, err, sizeof(err));
	assert_int_equal(rc, CD_ERR_TIMEOUT);
	assert_true(cd_now_ms() - t0 >= 300);
	assert_true(cd_now_ms() - t0 < 1300);
	assert_int_equal(done, 0);
	assert_string_equal(err, "allreduce of 4194304 bytes did not finish within 300 ms");
}

/* 15 calls of 20 ms each on the fake GPU: 300 ms in all, past the timeout of
 * 100 ms that none of them reaches. */
static void slow_calls_that_keep_finishing_are_not_a_stall(void **state)
{
	static const size_t sizes[] = {4096};
	struct coll_sweep p = {.dtype = COLL_FLOAT32,
	                       .sizes = sizes,
	                       .nsizes = 1,
	                       .warmup = 2,
	                       .iters = 10,
	                       .check = 1};
	char hex[NCCL_ID_HEX_LEN + 1], err[CD_ERRLEN] = "";
	struct coll_result res;
	size_t done = 99;
	int64_t t0;

	setenv("FAKE_CUDA_STEP_MS", "20", 1);
	new_id(hex);
	t0 = cd_now_ms();
	assert_int_equal(nccl_backend_sweep(hex, 0, 1, 0, 100, &p, &res, &done, err, sizeof(err)),
	                 0);
	assert_true(cd_now_ms() - t0 >= 250);
	assert_int_equal(done, 1);
	assert_true(res.time_us >= 20000);
}

static void missing_peers_time_out_naming_the_rank(void **state)
{
	struct coll_result res;
	char err[CD_ERRLEN] = "";
	size_t done = 99;
	int64_t t0 = cd_now_ms();

	assert_int_equal(sweep_one(1, 2, 0, 300, 1, 4096, &res, &done, err, sizeof(err)),
	                 CD_ERR_TIMEOUT);
	assert_true(cd_now_ms() - t0 >= 300);
	assert_true(cd_now_ms() - t0 < 1300);
	assert_int_equal(done, 0);
	assert_string_equal(err, "no NCCL peers within 300 ms (rank 1 of 2)");
}

static void missing_gpu_fails_naming_cudaSetDevice(void **state)
{
	struct coll_result res;
	char err[CD_ERRLEN] = "";
	size_t done;

	assert_int_equal(sweep_one(0, 1, 1, 5000, 1, 4096, &res, &done, err, sizeof(err)),
	                 CD_ERR_IO);
	assert_string_equal(err, "rank 0 on GPU 1: cudaSetDevice: invalid device ordinal (CUDA "
	                         "error 101)");
}

static void sweep_with_id(const char *hex, int *rc, char *err)
{
	static const size_t sizes[] = {4096};
	struct coll_sweep p = {.dtype = COLL_FLOAT32, .sizes = sizes, .nsizes = 1, .iters = 1};
	struct coll_result res;
	size_t done = 99;

	*rc = nccl_backend_sweep(hex, 0, 1, 0, 5000, &p, &res, &done, err, CD_ERRLEN);
	assert_int_equal(done, 0);
}

static void id_of_the_wrong_length_is_a_parse_error(void **state)
{
	char hex[NCCL_ID_HEX_LEN + 2], err[CD_ERRLEN];
	int rc;

	new_id(hex);
	strcat(hex, "0");
	sweep_with_id(hex, &rc, err);
	assert_int_equal(rc, CD_ERR_PARSE);
	sweep_with_id("00ff", &rc, err);
	assert_int_equal(rc, CD_ERR_PARSE);
	assert_string_equal(err, "an NCCL id is 256 hex characters, not 4");
}

static void id_with_a_non_hex_character_is_a_parse_error(void **state)
{
	char hex[NCCL_ID_HEX_LEN + 1], err[CD_ERRLEN];
	int rc;

	new_id(hex);
	hex[101] = 'g';
	sweep_with_id(hex, &rc, err);
	assert_int_equal(rc, CD_ERR_PARSE);
	assert_string_equal(err, "the NCCL id has a character that is not hex at offset 101");
}

struct thread_sweep {
	int rc;
	long long wrong;
};

static void *sweep_thread(void *arg)
{
	struct thread_sweep *t = arg;
	struct coll_result res = {.wrong = -2};
	char err[CD_ERRLEN];
	size_t done;

	t->rc = sweep_one(0, 1, 0, 5000, 1, 1 << 16, &res, &done, err, sizeof(err));
	t->wrong = res.wrong;
	return NULL;
}

static void two_threads_sweep_at_once(void **state)
{
	struct thread_sweep t[2] = {{.rc = 1}, {.rc = 1}};
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, sweep_thread, &t[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].rc, 0);
		assert_int_equal(t[i].wrong, 0);
	}
}

static void declarations_match_the_real_headers(void **state)
{
#ifdef HAVE_CUDA_HEADERS
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;

	/* the values and layouts are checked at compile time above */
	assert_int_equal(config.magic, NCCL_DL_CONFIG_MAGIC);
#else
	skip(); /* no nccl.h at build time */
#endif
}

#define TEST(f) cmocka_unit_test_teardown(f, clear_fake_env)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    TEST(declarations_match_the_real_headers),
	    TEST(real_libraries_say_why_they_cannot_run_here),
	    TEST(missing_nccl_library_is_named),
	    TEST(missing_cuda_runtime_is_named),
	    TEST(nccls_ib_line_comes_back_from_a_private_debug_file),
	    TEST(users_nccl_debug_file_is_kept_and_read_back),
	    TEST(users_nccl_debug_info_without_a_file_does_not_reach_stdout),
	    TEST(network_lines_are_picked_without_their_prefix_once_per_text),
	    TEST(lines_past_the_caps_or_not_utf8_are_counted_as_dropped),
	    TEST(debug_file_name_is_expanded_as_nccl_does),
	    TEST(fakes_are_available_with_one_gpu),
	    TEST(no_device_is_unsupported_with_no_cuda_device),
	    TEST(version_is_ncclGetVersion_dotted),
	    TEST(unique_id_is_256_lowercase_hex_characters),
	    TEST(unique_id_needs_257_bytes),
	    TEST(float32_sweep_counts_sizes_and_finds_no_wrong_element),
	    TEST(float64_sweep_counts_sizes_and_finds_no_wrong_element),
	    TEST(int32_sweep_counts_sizes_and_finds_no_wrong_element),
	    TEST(bfloat16_sweep_counts_sizes_and_finds_no_wrong_element),
	    TEST(corrupted_element_is_counted_wrong),
	    TEST(unchecked_sweep_reports_wrong_as_minus_one),
	    TEST(stream_that_never_completes_times_out_naming_the_size),
	    TEST(slow_calls_that_keep_finishing_are_not_a_stall),
	    TEST(missing_peers_time_out_naming_the_rank),
	    TEST(missing_gpu_fails_naming_cudaSetDevice),
	    TEST(id_of_the_wrong_length_is_a_parse_error),
	    TEST(id_with_a_non_hex_character_is_a_parse_error),
	    TEST(two_threads_sweep_at_once),
	};

	if (argc == 2 && strcmp(argv[1], "--available") == 0)
		return print_available();
	if (argc == 2 && strcmp(argv[1], "--netlog") == 0)
		return print_netlog();
	setenv("CLUSTERDOC_NCCL_LIB", FAKE_NCCL, 1);
	setenv("CLUSTERDOC_CUDART_LIB", FAKE_CUDART, 1);
	clear_fake_env(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
