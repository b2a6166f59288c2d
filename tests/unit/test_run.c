/* SPDX-License-Identifier: MIT */
/* test_run.c - the pure side of `clusterdoc run`: placeholders, --env
 * values, each node's argv and environment, the exit status, the shell
 * quoting of --dry-run and the orphan check's reading of an environ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "jobs/hangready.h"
#include "jobs/run.h"
#include "jobs/run_agent.h"
#include "report/run_render.h"

static const struct run_vars vars = {
    .node_rank = 1,
    .nnodes = 2,
    .nproc_per_node = 4,
    .world_size = 8,
    .master_port = 29600,
    .master_addr = "10.0.0.11",
    .host = "node2",
    .iface = "ens5",
};

/* run_plan_node with a plan of v's nodes in which v's node took v->iface
 * and addr as its probe picked them, and v's master (as run plans it). */
static int plan_node(const struct run_opts *o, const char *run_id, const struct run_vars *v,
                     const char *python, const char *torch_version, const char *addr, json_t **argv,
                     json_t **env, char *err, size_t errlen)
{
	static const char *const hosts[] = {"node1", "node2", "node3", "node4"};
	struct job_plan *p = job_plan_new(hosts, (size_t)v->nnodes, 0);
	struct run_vars with = *v;
	int rc;

	assert_true(v->nnodes <= 4);
	if (v->iface && v->iface[0])
		job_plan_take_pick(p, (size_t)v->node_rank, v->iface, addr, "test");
	snprintf(p->master_addr, sizeof(p->master_addr), "%s", v->master_addr);
	p->master_port = v->master_port;
	with.plan = p;
	rc = run_plan_node(o, run_id, &with, python, torch_version, addr, argv, env, err, errlen);
	job_plan_free(p);
	return rc;
}

static void expand_replaces_every_placeholder(void **state)
{
	char err[CD_ERRLEN];
	char *s = run_expand("tcp://{master_addr}:{master_port} {node_rank}/{nnodes} "
	                     "{nproc_per_node} {world_size} {host} {iface}",
	                     &vars, err, sizeof(err));

	assert_non_null(s);
	assert_string_equal(s, "tcp://10.0.0.11:29600 1/2 4 8 node2 ens5");
	free(s);
}

static void expand_keeps_doubled_braces_as_one(void **state)
{
	char err[CD_ERRLEN];
	char *s = run_expand("{{\"a\": {node_rank}}}", &vars, err, sizeof(err));

	assert_non_null(s);
	assert_string_equal(s, "{\"a\": 1}");
	free(s);
}

static void expand_passes_a_shell_parameter_expansion_on(void **state)
{
	char err[CD_ERRLEN];
	char *s = run_expand("echo ${HOME:-/} $X {host}", &vars, err, sizeof(err));

	assert_non_null(s);
	assert_string_equal(s, "echo ${HOME:-/} $X node2");
	free(s);
}

static void expand_refuses_an_unknown_placeholder_naming_it(void **state)
{
	char err[CD_ERRLEN];

	assert_null(run_expand("--rank {rank}", &vars, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown placeholder {rank} in \"--rank {rank}\""));
}

static void expand_refuses_an_unclosed_brace(void **state)
{
	char err[CD_ERRLEN];

	assert_null(run_expand("{node_rank", &vars, err, sizeof(err)));
	assert_non_null(strstr(err, "unclosed {"));
}

static void check_placeholders_finds_the_bad_argument(void **state)
{
	const char *argv[] = {"python3", "main.py", "--rank", "{node_rank}", "--x", "{nope}"};
	char err[CD_ERRLEN];

	assert_int_equal(run_check_placeholders(argv, 4, err, sizeof(err)), 0);
	assert_int_equal(run_check_placeholders(argv, 6, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "{nope}"));
}

static void env_refuses_a_newline_a_nul_and_a_bad_name(void **state)
{
	char err[CD_ERRLEN];

	assert_int_equal(run_check_env("A=1", 3, err, sizeof(err)), 0);
	assert_int_equal(run_check_env("A=", 2, err, sizeof(err)), 0);
	assert_int_equal(run_check_env("A=x\ny", 5, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "newline"));
	assert_int_equal(run_check_env("A=x\0y", 5, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL"));
	assert_int_equal(run_check_env("1A=x", 4, err, sizeof(err)), -1);
	assert_int_equal(run_check_env("A-B=x", 5, err, sizeof(err)), -1);
	assert_int_equal(run_check_env("noequals", 8, err, sizeof(err)), -1);
}

static void plan_without_launcher_runs_the_command_expanded(void **state)
{
	const char *argv[] = {"python3", "main.py", "--rank", "{node_rank}"};
	const char *env[] = {"FOO=bar"};
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN];

	run_opts_init(&o);
	o.launcher = RUN_NONE;
	o.argv = argv;
	o.argc = 4;
	o.env = env;
	o.nenv = 1;
	assert_int_equal(plan_node(&o, "20260101-000000-abcd", &vars, NULL, "", "10.0.0.12", &a, &e,
	                           err, sizeof(err)),
	                 0);
	assert_int_equal(json_array_size(a), 4);
	assert_string_equal(json_string_value(json_array_get(a, 3)), "1");
	assert_string_equal(json_string_value(json_object_get(e, "GLOO_SOCKET_IFNAME")), "ens5");
	assert_string_equal(json_string_value(json_object_get(e, "NCCL_SOCKET_IFNAME")), "=ens5");
	assert_null(json_object_get(e, "NCCL_SOCKET_FAMILY"));
	assert_string_equal(json_string_value(json_object_get(e, "MASTER_ADDR")), "10.0.0.11");
	assert_string_equal(json_string_value(json_object_get(e, "MASTER_PORT")), "29600");
	assert_string_equal(json_string_value(json_object_get(e, "NODE_RANK")), "1");
	assert_string_equal(json_string_value(json_object_get(e, "NNODES")), "2");
	assert_string_equal(json_string_value(json_object_get(e, "NPROC_PER_NODE")), "4");
	assert_string_equal(json_string_value(json_object_get(e, "WORLD_SIZE")), "8");
	assert_string_equal(json_string_value(json_object_get(e, "CLUSTERDOC_RUN")),
	                    "20260101-000000-abcd");
	assert_string_equal(json_string_value(json_object_get(e, "FOO")), "bar");
	json_decref(a);
	json_decref(e);
}

static const char *const mpi_hosts[] = {"node1", "node2"};
static const int mpi_nranks[] = {2, 1};
static const char *const mpi_ifaces[] = {"eth0", "eth0"};

/* --launcher mpirun: node 0 writes the hostfile and execs mpirun with -x
 * for every planned variable but NODE_RANK; the command follows. */
static void plan_with_mpirun_starts_it_on_the_first_node(void **state)
{
	const char *argv[] = {"./a.out", "{world_size}"};
	const char *env[] = {"FOO=bar"};
	struct run_vars v = {.node_rank = 0,
	                     .nnodes = 2,
	                     .nproc_per_node = 2,
	                     .world_size = 3,
	                     .master_port = 29500,
	                     .master_addr = "10.0.0.11",
	                     .host = "node1",
	                     .iface = "eth0",
	                     .hosts = mpi_hosts,
	                     .nranks = mpi_nranks,
	                     .ifaces = mpi_ifaces,
	                     .run_dir = "~/.cache/clusterdoc/runs/R"};
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN], *s;

	run_opts_init(&o);
	o.launcher = RUN_MPIRUN;
	o.argv = argv;
	o.argc = 2;
	o.env = env;
	o.nenv = 1;
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.11", &a, &e, err, sizeof(err)),
	                 0);
	/* the shell script itself (a[2]) is left out of the comparison */
	json_array_remove(a, 2);
	s = json_dumps(a, JSON_COMPACT);
	assert_string_equal(
	    s,
	    "[\"sh\",\"-c\",\"clusterdoc-mpirun\",\"~/.cache/clusterdoc/runs/R/hostfile\",\"2\","
	    "\"node1 slots=2\",\"node2 slots=1\",\"-np\",\"3\",\"--mca\",\"btl_tcp_if_include\","
	    "\"eth0\",\"--mca\",\"oob_tcp_if_include\",\"eth0\",\"-x\",\"NCCL_SOCKET_IFNAME\","
	    "\"-x\",\"GLOO_SOCKET_IFNAME\",\"-x\",\"MASTER_ADDR\",\"-x\",\"MASTER_PORT\",\"-x\","
	    "\"NNODES\",\"-x\",\"NPROC_PER_NODE\",\"-x\",\"WORLD_SIZE\",\"-x\",\"CLUSTERDOC_RUN\","
	    "\"-x\",\"PYTHONUNBUFFERED\",\"-x\",\"FOO\",\"./a.out\",\"3\"]");
	free(s);
	json_decref(a);
	json_decref(e);

	/* every other node: nothing of its own to run */
	v.node_rank = 1;
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.12", &a, &e, err, sizeof(err)),
	                 0);
	s = json_dumps(a, JSON_COMPACT);
	assert_string_equal(s, "[\"true\"]");
	free(s);
	json_decref(a);
	json_decref(e);
}

/* One environment reaches every rank: different interfaces need --iface. */
static void plan_with_mpirun_refuses_different_interfaces(void **state)
{
	static const char *const ifaces[] = {"eth0", "enp1s0"};
	const char *argv[] = {"./a.out"};
	struct run_vars v = {.nnodes = 2,
	                     .world_size = 2,
	                     .master_addr = "10.0.0.11",
	                     .host = "node1",
	                     .iface = "eth0",
	                     .hosts = mpi_hosts,
	                     .nranks = mpi_nranks,
	                     .ifaces = ifaces};
	struct run_opts o;
	json_t *a = NULL, *e = NULL;
	char err[CD_ERRLEN];

	run_opts_init(&o);
	o.launcher = RUN_MPIRUN;
	o.argv = argv;
	o.argc = 1;
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.11", &a, &e, err, sizeof(err)),
	                 -1);
	assert_string_equal(err, "mpirun passes one environment to every rank, and the data "
	                         "interface is eth0 on node1 but enp1s0 on node2: give --iface");
}

static void plan_with_torchrun_puts_the_launcher_first(void **state)
{
	const char *argv[] = {"train.py", "--epochs", "3"};
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN];
	size_t n;

	run_opts_init(&o);
	o.argv = argv;
	o.argc = 3;
	assert_int_equal(plan_node(&o, "r", &vars, "/opt/py/bin/python", "1.13.1", "10.0.0.12", &a,
	                           &e, err, sizeof(err)),
	                 0);
	n = json_array_size(a);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "/opt/py/bin/python");
	assert_string_equal(json_string_value(json_array_get(a, 1)), "-c");
	assert_string_equal(json_string_value(json_array_get(a, n - 3)), "train.py");
	assert_string_equal(json_string_value(json_array_get(a, n - 4)), "29600");
	assert_string_equal(json_string_value(json_array_get(a, n - 6)), "10.0.0.11");
	json_decref(a);
	json_decref(e);
}

static const char *env_of(json_t *e, const char *name)
{
	return json_string_value(json_object_get(e, name));
}

static void plan_tees_torchruns_workers_into_the_run_directory(void **state)
{
	const char *argv[] = {"train.py"};
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN];

	run_opts_init(&o);
	o.argv = argv;
	o.argc = 1;
	assert_int_equal(
	    plan_node(&o, "RUN", &vars, NULL, "1.13.1", "10.0.0.12", &a, &e, err, sizeof(err)), 0);
	assert_string_equal(env_of(e, "PET_TEE"), "3");
	assert_string_equal(env_of(e, "PET_LOG_DIR"), RUN_REMOTE_ROOT "/RUN/torchrun");
	json_decref(a);
	json_decref(e);
	/* launch (torch < 1.10) has no --tee; --launcher none no torchrun */
	assert_int_equal(
	    plan_node(&o, "RUN", &vars, NULL, "1.9.0", "10.0.0.12", &a, &e, err, sizeof(err)), 0);
	assert_null(env_of(e, "PET_TEE"));
	json_decref(a);
	json_decref(e);
	o.launcher = RUN_NONE;
	o.remote_dir = "/scratch/r";
	assert_int_equal(
	    plan_node(&o, "RUN", &vars, NULL, "", "10.0.0.12", &a, &e, err, sizeof(err)), 0);
	assert_null(env_of(e, "PET_TEE"));
	json_decref(a);
	json_decref(e);
}

static void every_run_has_a_directory_of_its_own_under_the_remote_dir(void **state)
{
	struct run_opts o;
	char dir[512];

	run_opts_init(&o);
	o.remote_dir = "~/proj";
	run_plan_dir(&o, "RUN1", dir, sizeof(dir));
	assert_string_equal(dir, "~/proj/RUN1");
	o.remote_dir = "/scratch/proj//";
	run_plan_dir(&o, "RUN2", dir, sizeof(dir));
	assert_string_equal(dir, "/scratch/proj/RUN2");
	o.remote_dir = "/";
	run_plan_dir(&o, "RUN3", dir, sizeof(dir));
	assert_string_equal(dir, "/RUN3");
}

static void hang_ready_chains_a_users_pythonpath_after_its_own(void **state)
{
	const char *env[] = {"PYTHONPATH=/opt/lib"};
	struct run_opts o;
	struct hangready h;
	json_t *e = json_object();
	char err[CD_ERRLEN], dir[512];

	run_opts_init(&o);
	o.env = env;
	o.nenv = 1;
	run_plan_dir(&o, "RUN", dir, sizeof(dir));
	assert_string_equal(dir, RUN_REMOTE_ROOT "/RUN");
	assert_int_equal(run_plan_hang_ready(&o, dir, "1.13.1", e, &h, err, sizeof(err)), 0);
	assert_string_equal(env_of(e, "PYTHONPATH"), RUN_REMOTE_ROOT "/RUN/hang:/opt/lib");
	assert_string_equal(env_of(e, "CLUSTERDOC_DUMP_SIGNAL"), "SIGUSR2");
	assert_null(env_of(e, "TORCH_NCCL_TRACE_BUFFER_SIZE")); /* torch 1.13 < 2.2 */
	assert_string_equal(h.site.rel, "hang/sitecustomize.py");
	hangready_free(&h);
	json_decref(e);
	e = json_object();
	assert_int_equal(run_plan_hang_ready(&o, "/scratch/r", "2.4.0", e, NULL, err, sizeof(err)),
	                 0);
	assert_string_equal(env_of(e, "TORCH_NCCL_TRACE_BUFFER_SIZE"), "2000");
	assert_string_equal(env_of(e, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"),
	                    "/scratch/r/hang/nccl_trace_rank_");
	json_decref(e);
	/* a run directory PYTHONPATH cannot hold */
	e = json_object();
	assert_int_equal(run_plan_hang_ready(&o, "/a:b", "", e, NULL, err, sizeof(err)), -1);
	json_decref(e);
}

static void plan_sets_the_ipv6_family_for_an_ipv6_address(void **state)
{
	const char *argv[] = {"x"};
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN];

	run_opts_init(&o);
	o.launcher = RUN_NONE;
	o.argv = argv;
	o.argc = 1;
	assert_int_equal(plan_node(&o, "r", &vars, NULL, "", "fd00::2", &a, &e, err, sizeof(err)),
	                 0);
	assert_string_equal(json_string_value(json_object_get(e, "NCCL_SOCKET_FAMILY")),
	                    "AF_INET6");
	json_decref(a);
	json_decref(e);
}

static void exit_status_is_the_root_cause_code(void **state)
{
	struct run_node nodes[2] = {{.exit_code = 0, .signal = 15, .stopped = 1}, {.exit_code = 3}};
	struct run_report rep = {.nodes = nodes, .nnodes = 2, .failed = 1, .root_cause = 1};

	assert_int_equal(run_exit_status(&rep), 3);
	nodes[1].exit_code = 0;
	nodes[1].signal = 9;
	assert_int_equal(run_exit_status(&rep), 137);
	rep.could_not_start = 1;
	assert_int_equal(run_exit_status(&rep), 2);
	rep.could_not_start = 0;
	rep.root_cause = -1;
	assert_int_equal(run_exit_status(&rep), 1);
	rep.failed = 0;
	assert_int_equal(run_exit_status(&rep), 0);
}

/* fault-run-3 case 19: a failed --sync no longer reads as done */
static void a_failed_sync_is_not_summed_up_as_sent(void **state)
{
	struct run_node nodes[2] = {{.host = "node1", .files_sent = 5},
	                            {.host = "node2", .files_sent = 4}};
	struct run_report rep = {.run_id = "RUN",
	                         .nodes = nodes,
	                         .nnodes = 2,
	                         .failed = 1,
	                         .could_not_start = 1,
	                         .exit_status = 2,
	                         .root_cause = -1,
	                         .run_dir = "~/.cache/clusterdoc/runs/RUN",
	                         .synced = 1,
	                         .sync_files = 5,
	                         .sync_failed = 1};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	run_print_text(f, &rep);
	fclose(f);
	if (!strstr(text, "sync: FAILED: 5 file(s) for ~/.cache/clusterdoc/runs/RUN, not on every "
	                  "node (9 sent)\n") ||
	    strstr(text, "sync: 5 file(s)"))
		fail_msg("got: %s", text);
	free(text);
}

static void run_id_has_the_conventional_shape(void **state)
{
	char id[RUN_ID_LEN];

	run_id_make(id);
	assert_int_equal(strlen(id), 20);
	assert_int_equal(id[8], '-');
	assert_int_equal(id[15], '-');
}

static void shell_quote_leaves_plain_words_and_quotes_the_rest(void **state)
{
	char out[128];

	run_shell_quote("GLOO_SOCKET_IFNAME=eth0", out, sizeof(out));
	assert_string_equal(out, "GLOO_SOCKET_IFNAME=eth0");
	run_shell_quote("a b", out, sizeof(out));
	assert_string_equal(out, "'a b'");
	run_shell_quote("it's", out, sizeof(out));
	assert_string_equal(out, "'it'\\''s'");
	run_shell_quote("", out, sizeof(out));
	assert_string_equal(out, "''");
}

static void environ_has_matches_the_exact_run_only(void **state)
{
	static const char env[] = "HOME=/root\0CLUSTERDOC_RUN=20260101-000000-abcd\0X=1";

	assert_true(run_agent_environ_has(env, sizeof(env) - 1, "20260101-000000-abcd"));
	assert_false(run_agent_environ_has(env, sizeof(env) - 1, "20260101-000000-abc"));
	assert_false(run_agent_environ_has(env, sizeof(env) - 1, "20260101-000000-abcde"));
	assert_false(run_agent_environ_has("", 0, "x"));
	assert_true(run_agent_environ_has_var(env, sizeof(env) - 1, "X=1"));
	assert_false(run_agent_environ_has_var(env, sizeof(env) - 1, "X=12"));
}

static void nproc_gpu_is_the_nodes_gpu_count_at_least_one(void **state)
{
	struct run_opts o;
	json_t *eight = json_pack("{s[{}{}{}{}{}{}{}{}]}", "gpus"),
	       *none = json_pack("{s[]}", "gpus");
	json_t *unknown = json_object();

	(void)state;
	run_opts_init(&o);
	assert_int_equal(run_plan_nproc(&o, eight), 1); /* the default: 1 */
	o.nproc_per_node = 3;
	assert_int_equal(run_plan_nproc(&o, eight), 3);
	o.nproc_per_node = 0; /* --nproc-per-node gpu */
	assert_int_equal(run_plan_nproc(&o, eight), 8);
	assert_int_equal(run_plan_nproc(&o, none), 1);
	assert_int_equal(run_plan_nproc(&o, unknown), 1);
	assert_int_equal(run_plan_nproc(&o, NULL), 1);
	json_decref(eight);
	json_decref(none);
	json_decref(unknown);
}

/* A host file's slots are a node's ranks, unless --nproc-per-node was given. */
static void a_nodes_slots_are_its_ranks_unless_nproc_per_node_was_given(void **state)
{
	static const char file[] = "n1 slots=4\nn2:2\nn3\n";
	struct hostlist *hl = hostlist_new();
	json_t *eight = json_pack("{s[{}{}{}{}{}{}{}{}]}", "gpus");
	struct hostslots slots;
	struct run_opts o;
	char err[CD_ERRLEN];

	(void)state;
	hostslots_init(&slots);
	assert_int_equal(hostfile_parse(hl, &slots, file, strlen(file), "f", err, sizeof(err)), 0);
	run_opts_init(&o);
	o.slots = &slots;
	assert_int_equal(run_plan_host_nproc(&o, "n1", eight), 4);
	assert_int_equal(run_plan_host_nproc(&o, "n2", eight), 2);
	assert_int_equal(run_plan_host_nproc(&o, "n3", eight), 1); /* no slots: the default */
	o.nproc_per_node = 0;                                      /* --nproc-per-node gpu */
	o.nproc_given = 1;
	assert_int_equal(run_plan_host_nproc(&o, "n1", eight), 8);
	json_decref(eight);
	hostslots_fini(&slots);
	hostlist_free(hl);
}

/* --backend hccl: refused naming each node's reason, each reason once. */
static void hccl_refusal_names_the_nodes_by_reason(void **state)
{
	const char *hosts[] = {"node1", "node2", "node3", "node4"};
	const char *none[] = {NULL, NULL, NULL, NULL};
	const char *missing[] = {NULL, "no torch_npu", "no NPU", "no torch_npu"};
	json_t *f;
	char out[CD_ERRLEN];

	assert_int_equal(run_hccl_refusal(hosts, none, 4, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(run_hccl_refusal(hosts, missing, 4, out, sizeof(out)), 1);
	assert_string_equal(out, "unavailable: --backend hccl needs an NPU and torch_npu on every "
	                         "node: no torch_npu on node2, node4; no NPU on node3");

	f = json_pack("{s:[], s:n}", "npus", "ascend"); /* no Ascend install */
	assert_string_equal(run_hccl_missing(f), "no NPU");
	json_decref(f);
	f = json_pack("{s:[{s:i}], s:{s:n}}", "npus", "id", 0, "ascend", "torch_npu");
	assert_string_equal(run_hccl_missing(f), "no torch_npu");
	json_decref(f);
	f = json_pack("{s:[], s:{s:s}}", "npus", "ascend", "torch_npu", "2.1.0");
	assert_string_equal(run_hccl_missing(f), "no NPU"); /* npu-smi lists none */
	json_decref(f);
	/* the NPU probe failed (null): torch_npu decides */
	f = json_pack("{s:n, s:{s:s}}", "npus", "ascend", "torch_npu", "2.1.0");
	assert_null(run_hccl_missing(f));
	json_decref(f);
}

static void hccl_ifname_is_the_common_prefix(void **state)
{
	const char *same[] = {"eth1", "eth1"}, *two[] = {"enp1s0", "enp2s0"},
	           *apart[] = {"eth0", "ib0"}, *unknown[] = {"eth0", ""};
	char out[NM_NAME];

	run_hccl_ifname(same, 2, out, sizeof(out));
	assert_string_equal(out, "eth1");
	run_hccl_ifname(two, 2, out, sizeof(out));
	assert_string_equal(out, "enp");
	run_hccl_ifname(apart, 2, out, sizeof(out));
	assert_string_equal(out, "");
	run_hccl_ifname(unknown, 2, out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(run_hccl_connect_timeout(2), 120);
	assert_int_equal(run_hccl_connect_timeout(64), 184);
}

/* The HCCL variables per node; with mpirun no HCCL_IF_IP (one environment
 * reaches every rank), the interface name instead. */
static void plan_with_hccl_adds_the_hccl_variables(void **state)
{
	static const char *const argv[] = {"python3", "train.py"};
	static const char *const hosts[] = {"node1", "node2"};
	static const char *const ifaces[] = {"eth1", "eth1"};
	static const int nranks[] = {8, 8};
	struct run_vars v = vars;
	struct run_opts o;
	json_t *a, *e;
	char err[CD_ERRLEN], *s;

	v.hosts = hosts;
	v.nranks = nranks;
	v.ifaces = ifaces;
	run_opts_init(&o);
	o.launcher = RUN_NONE;
	o.argv = argv;
	o.argc = 2;
	o.hccl = 1;
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.12", &a, &e, err, sizeof(err)),
	                 0);
	assert_string_equal(json_string_value(json_object_get(e, "HCCL_IF_IP")), "10.0.0.12");
	assert_string_equal(json_string_value(json_object_get(e, "HCCL_SOCKET_IFNAME")), "eth1");
	assert_string_equal(json_string_value(json_object_get(e, "HCCL_CONNECT_TIMEOUT")), "120");
	json_decref(a);
	json_decref(e);

	o.launcher = RUN_MPIRUN;
	v.node_rank = 0;
	v.iface = "eth1";
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.11", &a, &e, err, sizeof(err)),
	                 0);
	assert_null(json_object_get(e, "HCCL_IF_IP"));
	assert_string_equal(json_string_value(json_object_get(e, "HCCL_SOCKET_IFNAME")), "eth1");
	s = json_dumps(a, JSON_COMPACT);
	assert_non_null(strstr(s, "\"-x\",\"HCCL_SOCKET_IFNAME\""));
	free(s);
	json_decref(a);
	json_decref(e);

	/* without --backend hccl: none of them */
	o.hccl = 0;
	o.launcher = RUN_NONE;
	assert_int_equal(plan_node(&o, "R", &v, NULL, "", "10.0.0.11", &a, &e, err, sizeof(err)),
	                 0);
	assert_null(json_object_get(e, "HCCL_CONNECT_TIMEOUT"));
	json_decref(a);
	json_decref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(expand_replaces_every_placeholder),
	    cmocka_unit_test(plan_with_mpirun_starts_it_on_the_first_node),
	    cmocka_unit_test(plan_with_mpirun_refuses_different_interfaces),
	    cmocka_unit_test(expand_keeps_doubled_braces_as_one),
	    cmocka_unit_test(expand_passes_a_shell_parameter_expansion_on),
	    cmocka_unit_test(expand_refuses_an_unknown_placeholder_naming_it),
	    cmocka_unit_test(expand_refuses_an_unclosed_brace),
	    cmocka_unit_test(check_placeholders_finds_the_bad_argument),
	    cmocka_unit_test(env_refuses_a_newline_a_nul_and_a_bad_name),
	    cmocka_unit_test(plan_without_launcher_runs_the_command_expanded),
	    cmocka_unit_test(plan_with_torchrun_puts_the_launcher_first),
	    cmocka_unit_test(plan_sets_the_ipv6_family_for_an_ipv6_address),
	    cmocka_unit_test(nproc_gpu_is_the_nodes_gpu_count_at_least_one),
	    cmocka_unit_test(a_nodes_slots_are_its_ranks_unless_nproc_per_node_was_given),
	    cmocka_unit_test(plan_tees_torchruns_workers_into_the_run_directory),
	    cmocka_unit_test(every_run_has_a_directory_of_its_own_under_the_remote_dir),
	    cmocka_unit_test(hang_ready_chains_a_users_pythonpath_after_its_own),
	    cmocka_unit_test(exit_status_is_the_root_cause_code),
	    cmocka_unit_test(a_failed_sync_is_not_summed_up_as_sent),
	    cmocka_unit_test(run_id_has_the_conventional_shape),
	    cmocka_unit_test(shell_quote_leaves_plain_words_and_quotes_the_rest),
	    cmocka_unit_test(environ_has_matches_the_exact_run_only),
	    cmocka_unit_test(hccl_refusal_names_the_nodes_by_reason),
	    cmocka_unit_test(hccl_ifname_is_the_common_prefix),
	    cmocka_unit_test(plan_with_hccl_adds_the_hccl_variables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
