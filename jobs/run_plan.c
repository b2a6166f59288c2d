/* SPDX-License-Identifier: MIT */
/*
 * run_plan.c - the pure part of `clusterdoc run` (run.h): run ids,
 * placeholders, --env values, each node's argv and environment.
 */
#include "jobs/run.h"
#include "jobs/hangready.h"
#include "jobs/torchrun.h"
#include "buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUN_ARG_MAX (128 * 1024) /* one argument, expanded (the kernel's own limit) */

void run_id_make(char out[RUN_ID_LEN])
{
	char hex[5], stamp[32];
	struct tm tm;
	time_t now = time(NULL);

	gmtime_r(&now, &tm);
	cd_random_token(hex, sizeof(hex));
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, RUN_ID_LEN, "%.15s-%.4s", stamp, hex);
}

enum var {
	V_NODE_RANK,
	V_NNODES,
	V_NPROC,
	V_WORLD,
	V_MADDR,
	V_MPORT,
	V_HOST,
	V_IFACE,
};

static const struct {
	const char *name;
	enum var v;
} placeholders[] = {
    {"node_rank", V_NODE_RANK}, {"nnodes", V_NNODES},     {"nproc_per_node", V_NPROC},
    {"world_size", V_WORLD},    {"master_addr", V_MADDR}, {"master_port", V_MPORT},
    {"host", V_HOST},           {"iface", V_IFACE},
};

static void var_value(const struct run_vars *v, enum var which, struct buf *out)
{
	char n[32];

	switch (which) {
	case V_MADDR:
		buf_append_str(out, v->master_addr ? v->master_addr : "");
		return;
	case V_HOST:
		buf_append_str(out, v->host ? v->host : "");
		return;
	case V_IFACE:
		buf_append_str(out, v->iface ? v->iface : "");
		return;
	case V_NODE_RANK:
		snprintf(n, sizeof(n), "%d", v->node_rank);
		break;
	case V_NNODES:
		snprintf(n, sizeof(n), "%d", v->nnodes);
		break;
	case V_NPROC:
		snprintf(n, sizeof(n), "%d", v->nproc_per_node);
		break;
	case V_WORLD:
		snprintf(n, sizeof(n), "%d", v->world_size);
		break;
	case V_MPORT:
		snprintf(n, sizeof(n), "%d", v->master_port);
		break;
	}
	buf_append_str(out, n);
}

char *run_expand(const char *s, const struct run_vars *v, char *err, size_t errlen)
{
	struct buf out;
	const char *p = s;

	buf_init(&out, RUN_ARG_MAX);
	while (*p) {
		const char *close;
		size_t k, len;

		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			buf_append(&out, p, 1);
			p += 2;
			continue;
		}
		if (p[0] == '$' && p[1] == '{' && (close = strchr(p, '}'))) {
			/* a shell's ${NAME...}: never a placeholder, passed on as it is */
			buf_append(&out, p, (size_t)(close + 1 - p));
			p = close + 1;
			continue;
		}
		if (*p != '{') {
			buf_append(&out, p++, 1);
			continue;
		}
		close = strchr(p, '}');
		if (!close) {
			snprintf(err, errlen, "an unclosed { in \"%.200s\" (write {{ for a brace)",
			         s);
			goto fail;
		}
		len = (size_t)(close - p - 1);
		for (k = 0; k < CD_ARRAY_LEN(placeholders); k++) {
			if (strlen(placeholders[k].name) == len &&
			    strncmp(placeholders[k].name, p + 1, len) == 0)
				break;
		}
		if (k == CD_ARRAY_LEN(placeholders)) {
			snprintf(
			    err, errlen,
			    "unknown placeholder {%.*s} in \"%.200s\": known are {node_rank} "
			    "{nnodes} {nproc_per_node} {world_size} {master_addr} {master_port} "
			    "{host} {iface} (write {{ for a brace)",
			    (int)(len > 64 ? 64 : len), p + 1, s);
			goto fail;
		}
		if (v)
			var_value(v, placeholders[k].v, &out);
		p = close + 1;
	}
	if (out.len >= RUN_ARG_MAX - 1) {
		snprintf(err, errlen, "\"%.100s...\" is over %d bytes once expanded", s,
		         RUN_ARG_MAX);
		goto fail;
	}
	{
		char *r = cd_strdup(out.data ? out.data : "");

		buf_fini(&out);
		return r;
	}
fail:
	buf_fini(&out);
	return NULL;
}

int run_check_placeholders(const char *const *argv, size_t argc, char *err, size_t errlen)
{
	for (size_t i = 0; i < argc; i++) {
		char *s = run_expand(argv[i], NULL, err, errlen);

		if (!s)
			return -1;
		free(s);
	}
	return 0;
}

int run_check_env(const char *kv, size_t len, char *err, size_t errlen)
{
	const char *eq = memchr(kv, '=', len);

	if (!eq || eq == kv || !(isalpha((unsigned char)kv[0]) || kv[0] == '_')) {
		snprintf(err, errlen, "--env %.*s: want NAME=value with NAME a variable name",
		         (int)(len > 100 ? 100 : len), kv);
		return -1;
	}
	for (const char *p = kv; p < eq; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_') {
			snprintf(err, errlen, "--env %.*s: \"%.*s\" is not a variable name",
			         (int)(eq - kv > 100 ? 100 : eq - kv), kv,
			         (int)(eq - kv > 100 ? 100 : eq - kv), kv);
			return -1;
		}
	}
	for (const char *p = eq + 1; p < kv + len; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\0') {
			snprintf(err, errlen,
			         "--env %.*s: its value holds a %s, which a node's environment "
			         "cannot carry safely",
			         (int)(eq - kv > 100 ? 100 : eq - kv), kv,
			         *p == '\0' ? "NUL byte" : "newline");
			return -1;
		}
	}
	return 0;
}

static void set_int(json_t *env, const char *name, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	json_object_set_new(env, name, json_string(s));
}

/* The shell that writes the hostfile and execs mpirun: $1 the file ("~/"
 * is the home), $2 its number of lines, then the lines, then mpirun's
 * arguments. Positional arguments, so no name needs quoting. */
static const char mpirun_sh[] =
    "f=$1; n=$2; shift 2; case $f in '~/'*) f=$HOME/${f#'~/'};; esac; "
    "mkdir -p \"${f%/*}\" && : >\"$f\" || exit 127; "
    "while [ \"$n\" -gt 0 ]; do printf '%s\\n' \"$1\" >>\"$f\"; shift; n=$((n - 1)); done; "
    "exec mpirun --hostfile \"$f\" \"$@\"";

/* Node 0's argv for --launcher mpirun around cmd (the command as planned). */
static json_t *mpirun_argv(const struct run_opts *o, const struct run_vars *v, json_t *env,
                           json_t *cmd, char *err, size_t errlen)
{
	json_t *argv, *x;
	const char *name;
	char file[600];
	size_t k;

	if (!v->hosts || !v->nranks) {
		snprintf(err, errlen, "mpirun: the nodes are not known");
		return NULL;
	}
	if (!o->iface && v->ifaces)
		for (int i = 1; i < v->nnodes; i++)
			if (strcmp(v->ifaces[i] ? v->ifaces[i] : "",
			           v->ifaces[0] ? v->ifaces[0] : "") != 0) {
				snprintf(
				    err, errlen,
				    "mpirun passes one environment to every rank, and the data "
				    "interface is %s on %s but %s on %s: give --iface",
				    v->ifaces[0] ? v->ifaces[0] : "unknown", v->hosts[0],
				    v->ifaces[i] ? v->ifaces[i] : "unknown", v->hosts[i]);
				return NULL;
			}
	snprintf(file, sizeof(file), "%s/hostfile", v->run_dir ? v->run_dir : "~");
	argv = json_pack("[sssss]", "sh", "-c", mpirun_sh, "clusterdoc-mpirun", file);
	json_array_append_new(argv, json_sprintf("%d", v->nnodes));
	for (int i = 0; i < v->nnodes; i++)
		json_array_append_new(argv, json_sprintf("%s slots=%d", v->hosts[i], v->nranks[i]));
	json_array_append_new(argv, json_string("-np"));
	json_array_append_new(argv, json_sprintf("%d", v->world_size));
	if (v->iface && v->iface[0]) {
		/* the interface the check proved, for MPI's own TCP too */
		const char *const mca[] = {"btl_tcp_if_include", "oob_tcp_if_include"};

		for (size_t m = 0; m < CD_ARRAY_LEN(mca); m++) {
			json_array_append_new(argv, json_string("--mca"));
			json_array_append_new(argv, json_string(mca[m]));
			json_array_append_new(argv, json_string(v->iface));
		}
	}
	json_object_foreach(env, name, x)
	{
		if (strcmp(name, "NODE_RANK") == 0)
			continue;
		json_array_append_new(argv, json_string("-x"));
		json_array_append_new(argv, json_string(name));
	}
	json_array_foreach(cmd, k, x) json_array_append(argv, x);
	return argv;
}

int run_plan_node(const struct run_opts *o, const char *run_id, const struct run_vars *v,
                  const char *python, const char *torch_version, const char *addr, json_t **argvp,
                  json_t **envp, char *err, size_t errlen)
{
	json_t *argv, *env = json_object();

	if (o->launcher == RUN_MPIRUN && v->node_rank > 0) {
		/* mpirun on node 0 starts this node's ranks */
		*argvp = json_pack("[s]", "true");
		*envp = env;
		json_object_set_new(env, "CLUSTERDOC_RUN", json_string(run_id));
		return 0;
	}
	if (o->launcher == RUN_TORCHRUN)
		argv = torchrun_argv(python, torch_version, v->nnodes, v->node_rank,
		                     v->nproc_per_node, v->master_addr, v->master_port);
	else
		argv = json_array();
	for (size_t i = 0; i < o->argc; i++) {
		char *s = run_expand(o->argv[i], v, err, errlen);

		if (!s) {
			json_decref(argv);
			json_decref(env);
			return -1;
		}
		torchrun_arg(argv, s);
		free(s);
	}
	if (v->plan) {
		job_plan_env(v->plan, (size_t)v->node_rank, env);
	} else {
		json_object_set_new(env, "MASTER_ADDR", json_string(v->master_addr));
		set_int(env, "MASTER_PORT", v->master_port);
	}
	set_int(env, "NODE_RANK", v->node_rank);
	set_int(env, "NNODES", v->nnodes);
	set_int(env, "NPROC_PER_NODE", v->nproc_per_node);
	set_int(env, "WORLD_SIZE", v->world_size);
	json_object_set_new(env, "CLUSTERDOC_RUN", json_string(run_id));
	json_object_set_new(env, "PYTHONUNBUFFERED", json_string("1"));
	/* torchrun (not torch < 1.10's launch): every worker's lines prefixed
	 * "[default<local rank>]:", its logs under the run directory, through
	 * torchrun's own PET_* variables (the by-hand line stays as typed) */
	if (o->launcher == RUN_TORCHRUN &&
	    strcmp(json_string_value(json_array_get(argv, 1)) ?: "", "-c") == 0) {
		json_object_set_new(env, "PET_TEE", json_string("3"));
		char dir[512];

		run_plan_dir(o, run_id, dir, sizeof(dir));
		json_object_set_new(env, "PET_LOG_DIR", json_sprintf("%s/torchrun", dir));
	}
	if (o->hccl) {
		char ifname[NM_NAME];

		run_hccl_ifname(v->ifaces, v->ifaces ? (size_t)v->nnodes : 0, ifname,
		                sizeof(ifname));
		/* mpirun passes node 0's environment to every rank: the interface
		 * name then stands for each node's own address */
		run_hccl_env(env, o->launcher == RUN_MPIRUN ? NULL : addr, ifname,
		             (size_t)v->nnodes);
	}
	for (size_t i = 0; i < o->nenv; i++) {
		const char *eq = strchr(o->env[i], '=');
		char name[256];

		if (!eq || (size_t)(eq - o->env[i]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - o->env[i]), o->env[i]);
		json_object_set_new(env, name, json_string(eq + 1));
	}
	if (o->launcher == RUN_MPIRUN) {
		json_t *m = mpirun_argv(o, v, env, argv, err, errlen);

		json_decref(argv);
		if (!m) {
			json_decref(env);
			return -1;
		}
		argv = m;
	}
	*argvp = argv;
	*envp = env;
	return 0;
}

int run_plan_host_nproc(const struct run_opts *o, const char *host, json_t *facts)
{
	int slots = o->nproc_given ? 0 : hostslots_get(o->slots, host);

	return slots > 0 ? slots : run_plan_nproc(o, facts);
}

int run_plan_nproc(const struct run_opts *o, json_t *facts)
{
	json_t *gpus = json_object_get(facts, "gpus");
	int n = json_is_array(gpus) ? (int)json_array_size(gpus) : 0;

	if (o->nproc_per_node > 0)
		return o->nproc_per_node;
	return n > 0 ? n : 1;
}

void run_plan_dir(const struct run_opts *o, const char *run_id, char *out, size_t len)
{
	const char *parent = o->remote_dir ? o->remote_dir : RUN_REMOTE_ROOT;
	size_t n = strlen(parent);

	/* a directory of its own per run: a later or concurrent run never
	 * touches what an earlier job wrote into its tree */
	while (n > 1 && parent[n - 1] == '/')
		n--;
	snprintf(out, len, "%.*s%s%s", (int)n, parent, parent[n - 1] == '/' ? "" : "/", run_id);
}

int run_plan_hang_ready(const struct run_opts *o, const char *run_dir, const char *torch_version,
                        json_t *env, struct hangready *keep, char *err, size_t errlen)
{
	const char *existing = NULL;
	struct hangready h;

	for (size_t k = 0; k < o->nenv; k++) {
		if (strncmp(o->env[k], "PYTHONPATH=", 11) == 0)
			existing = o->env[k] + 11;
	}
	if (hangready_build(run_dir, torch_version, existing, &h, err, errlen) < 0) {
		hangready_free(&h);
		return -1;
	}
	for (size_t k = 0; k < h.nenv; k++) {
		const char *eq = strchr(h.env[k], '=');
		char name[64];

		if (!eq || (size_t)(eq - h.env[k]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - h.env[k]), h.env[k]);
		json_object_set_new(env, name, json_string(eq + 1));
	}
	if (keep)
		*keep = h;
	else
		hangready_free(&h);
	return 0;
}

/* ---------------------------------------------------------------- hccl */

const char *run_hccl_missing(json_t *facts)
{
	json_t *asc = json_object_get(facts, "ascend"), *npus = json_object_get(facts, "npus");

	if (!json_is_object(asc) || (json_is_array(npus) && json_array_size(npus) == 0))
		return "no NPU";
	if (!json_is_string(json_object_get(asc, "torch_npu")))
		return "no torch_npu";
	return NULL;
}

/* Append to out (len bytes, used so far), truncating. */
static void append(char *out, size_t len, size_t *used, const char *a, const char *b)
{
	int w;

	if (*used >= len)
		return;
	w = snprintf(out + *used, len - *used, "%s%s", a, b);
	*used = w < 0 ? len : *used + (size_t)w;
}

int run_hccl_refusal(const char *const *hosts, const char *const *missing, size_t n, char *out,
                     size_t len)
{
	size_t used = 0;
	int any = 0;

	if (len)
		out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int seen = 0;

		if (!missing[i])
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = missing[k] && strcmp(missing[k], missing[i]) == 0;
		if (seen)
			continue;
		if (!any)
			append(
			    out, len, &used,
			    "unavailable: --backend hccl needs an NPU and torch_npu on every node",
			    ":");
		else
			append(out, len, &used, ";", "");
		append(out, len, &used, " ", missing[i]);
		append(out, len, &used, " on ", hosts[i]);
		any = 1;
		for (size_t k = i + 1; k < n; k++)
			if (missing[k] && strcmp(missing[k], missing[i]) == 0)
				append(out, len, &used, ", ", hosts[k]);
	}
	return any;
}

int run_hccl_connect_timeout(size_t nservers)
{
	return nservers <= 32 ? 120 : 120 + 2 * (int)(nservers - 32);
}

void run_hccl_ifname(const char *const *ifnames, size_t n, char *out, size_t len)
{
	size_t common = 0;

	if (len)
		out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *name = ifnames[i] ? ifnames[i] : "";

		if (!name[0]) {
			out[0] = '\0';
			return;
		}
		if (i == 0) {
			snprintf(out, len, "%s", name);
			common = strlen(out);
			continue;
		}
		for (size_t c = 0; c < common; c++)
			if (out[c] != name[c]) {
				common = c;
				break;
			}
		out[common] = '\0';
	}
}

void run_hccl_env(json_t *env, const char *addr, const char *ifname, size_t nservers)
{
	if (addr && addr[0])
		json_object_set_new(env, "HCCL_IF_IP", json_string(addr));
	if (ifname && ifname[0])
		json_object_set_new(env, "HCCL_SOCKET_IFNAME", json_string(ifname));
	set_int(env, "HCCL_CONNECT_TIMEOUT", run_hccl_connect_timeout(nservers));
}

int run_exit_status(const struct run_report *rep)
{
	const struct run_node *n;

	if (rep->could_not_start)
		return 2;
	if (!rep->failed)
		return 0;
	if (rep->root_cause < 0)
		return rep->interrupted ? 130 : 1; /* Ctrl-C, as a shell reports it */
	n = &rep->nodes[rep->root_cause];
	if (n->worker_failed && n->worker_exit != 0) /* the worker's own, not torchrun's */
		return n->worker_exit > 0 ? n->worker_exit : 128 - n->worker_exit;
	if (n->signal)
		return 128 + n->signal;
	return n->exit_code > 0 ? n->exit_code : 1;
}
