/*
 * cmd_check.c - `clusterdoc check` and `clusterdoc env`: run the network
 * check (probes/netcheck.h), diagnose it (probes/diagnose.h), and render
 * the findings and the verified environment as text, JSON
 * (docs/report-format.md) or shell `export` lines.
 *
 * Results can also go to Prometheus, a Pushgateway and JUnit (report.h),
 * and to Slurm (check_slurm.h: the Prolog verdict, --drain, --undrain).
 *
 * Exit status: check: 0 no error findings, 1 error findings, 2 a node (or
 * everything) could not be checked, or a report, drain or the deadline
 * failed. With --slurm-prolog: 1 only for error findings on the local node.
 * env: 0 every value verified, 1 some value could not be verified, 2 could
 * not check.
 */
#include "cd.h"
#include "check_slurm.h"
#include "commands.h"
#include "loop.h"
#include "probes/diagnose.h"
#include "probes/netcheck.h"
#include "probes/predict.h"
#include "report.h"
#include "targets.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>

#define REPORT_VERSION 1

enum {
	OPT_MASTER = OPT_TARGETS_END,
	OPT_PORT,
	OPT_PROBE_TIMEOUT,
	OPT_NO_FIREWALL,
	OPT_NODE,
	OPT_FULL_MATRIX_MAX,
	OPT_SEED,
	OPT_SLURM_PROLOG,
	OPT_DRAIN,
	OPT_UNDRAIN,
	OPT_DEADLINE,
};

/* The Prolog's default bound on the whole check, in seconds. */
#define PROLOG_DEADLINE_S 30

struct check_run {
	struct targets t;
	struct report_opts rep_o;
	struct netcheck_opts o;
	const char *master; /* --master HOST */
	const char *only;   /* env --node HOST; check --slurm-prolog: the local node */
	int prolog;         /* --slurm-prolog */
	int drain, undrain; /* --drain, --undrain */
	int deadline_s;     /* --deadline; 0 = none */
	int deadline_hit;
	long long started_at; /* Unix time */
	struct loop *loop;
	struct sshpool *pool;
	struct netmodel *m;
	struct netcheck *nc;
	struct diagnosis *d;
	int64_t started_ms;
};

static void on_done(void *arg)
{
	loop_stop(((struct check_run *)arg)->loop);
}

/* The deadline closes the nodes that still owe an answer; the check then
 * ends with the others. Re-armed for the phases that follow, which get 2 s
 * each. */
static void on_deadline(struct loop *loop, void *arg)
{
	struct check_run *r = arg;
	char why[128];

	snprintf(why, sizeof(why),
	         "no answer within the check's deadline (--deadline %d s); the node or its "
	         "agent may be hung",
	         r->deadline_s);
	r->deadline_hit = 1;
	netcheck_expire(r->nc, why);
	loop_timer_add(loop, 2000, on_deadline, r);
}

/* ---------------------------------------------------------------- suggestions */

static int node_checked(const struct netmodel *m, size_t i)
{
	return m->nodes[i].probed;
}

/* Every variable node i needs, in a fixed order; NULL values are skipped. */
struct node_env {
	const char *name[6];
	char value[6][NM_ADDR + 64];
	int n;
};

static void env_add(struct node_env *e, const char *name, const char *value)
{
	if (!value || !value[0])
		return;
	e->name[e->n] = name;
	snprintf(e->value[e->n], sizeof(e->value[0]), "%s", value);
	e->n++;
}

static void node_env_of(const struct check_run *r, size_t i, struct node_env *e)
{
	const struct suggestions *s = &r->d->sugg;
	char port[16] = "";

	memset(e, 0, sizeof(*e));
	if (s->master_port)
		snprintf(port, sizeof(port), "%d", s->master_port);
	env_add(e, "NCCL_SOCKET_IFNAME", s->nccl_ifname_per_node[i]);
	if (s->nccl_family_inet && s->nccl_ifname_per_node[i])
		env_add(e, "NCCL_SOCKET_FAMILY", "AF_INET");
	env_add(e, "GLOO_SOCKET_IFNAME", s->gloo_ifname_per_node[i]);
	env_add(e, "MASTER_ADDR", s->master_addr);
	env_add(e, "MASTER_PORT", port);
}

static json_t *suggestions_json(const struct check_run *r)
{
	const struct netmodel *m = r->m;
	const struct suggestions *s = &r->d->sugg;
	json_t *o = json_object(), *common = json_object(), *per = json_object(),
	       *tr = json_object(), *notes = json_array();

	if (s->nccl_ifname)
		json_object_set_new(common, "NCCL_SOCKET_IFNAME", json_string(s->nccl_ifname));
	if (s->nccl_family_inet && s->nccl_ifname)
		json_object_set_new(common, "NCCL_SOCKET_FAMILY", json_string("AF_INET"));
	if (s->master_addr[0])
		json_object_set_new(common, "MASTER_ADDR", json_string(s->master_addr));
	if (s->master_port)
		json_object_set_new(common, "MASTER_PORT", json_sprintf("%d", s->master_port));
	for (size_t i = 0; i < m->nnodes; i++) {
		struct node_env e;
		json_t *vars = json_object();

		if (!node_checked(m, i)) {
			json_decref(vars);
			continue;
		}
		node_env_of(r, i, &e);
		for (int k = 0; k < e.n; k++)
			json_object_set_new(vars, e.name[k], json_string(e.value[k]));
		json_object_set_new(per, m->nodes[i].host, vars);
		if (s->torchrun[i])
			json_object_set_new(tr, m->nodes[i].host, json_string(s->torchrun[i]));
	}
	for (char *p = s->notes; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len)
			json_array_append_new(notes, json_stringn(p, len));
		p = nl ? nl + 1 : p + len;
	}
	json_object_set_new(o, "env", common);
	json_object_set_new(o, "per_node", per);
	json_object_set_new(o, "master_addr",
	                    s->master_addr[0] ? json_string(s->master_addr) : json_null());
	json_object_set_new(o, "master_port",
	                    s->master_port ? json_integer(s->master_port) : json_null());
	json_object_set_new(o, "torchrun", tr);
	json_object_set_new(o, "notes", notes);
	return o;
}

/* ---------------------------------------------------------------- JSON report */

static const char *family_name(int family)
{
	return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "unknown";
}

static json_t *picks_json(const struct net_pick *p, int n)
{
	json_t *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{sssssssI}", "name", p[i].ifname, "address",
		                                     p[i].addr, "family", family_name(p[i].family),
		                                     "scope_id", (json_int_t)p[i].scope_id));
	return arr;
}

static json_t *node_json(const struct check_run *r, size_t i)
{
	const struct nm_node *n = &r->m->nodes[i];
	const struct node_prediction *p = &r->d->pred[i];
	json_t *o = json_object(), *ifs = json_array();
	char line[1024];

	json_object_set_new(o, "host", json_string(n->host));
	json_object_set_new(o, "hostname", n->hostname[0] ? json_string(n->hostname) : json_null());
	json_object_set_new(o, "checked", json_boolean(n->probed));
	json_object_set_new(o, "error", n->error[0] ? json_string(n->error) : json_null());
	json_object_set_new(o, "error_code",
	                    n->error_code[0] ? json_string(n->error_code) : json_null());
	if (!n->probed) {
		json_object_set_new(o, "interfaces", ifs);
		return o;
	}
	for (size_t k = 0; k < n->nifaces; k++) {
		const struct nm_iface *f = &n->ifaces[k];
		json_t *addrs = json_array();

		for (size_t a = 0; a < n->naddrs; a++) {
			const struct nm_addr *x = &n->addrs[a];

			if (strcmp(x->ifname, f->name) != 0)
				continue;
			json_array_append_new(
			    addrs, json_pack("{sssssisssI}", "address", x->addr, "family",
			                     family_name(x->family), "prefix", x->prefix, "scope",
			                     x->scope, "scope_id", (json_int_t)x->scope_id));
		}
		json_array_append_new(ifs, json_pack("{sssisssbsbso}", "name", f->name, "mtu",
		                                     f->mtu, "kind", f->kind, "up", f->up,
		                                     "running", f->running, "addresses", addrs));
	}
	json_object_set_new(o, "interfaces", ifs);
	nccl_log_line(&p->nccl, line, sizeof(line));
	json_object_set_new(
	    o, "nccl",
	    json_pack("{sssssosossssss}", "version",
	              n->nccl_version[0] ? n->nccl_version : "unknown", "rule", p->nccl.rule,
	              "interfaces", picks_json(p->nccl.picks, p->nccl.npicks), "bootstrap",
	              picks_json(p->bootstrap.picks, p->bootstrap.npicks), "log_line", line,
	              "error", p->nccl.error, "bootstrap_error", p->bootstrap.error));
	json_object_set_new(o, "gloo",
	                    json_pack("{sssosbsbss}", "rule", p->gloo.rule, "devices",
	                              picks_json(p->gloo.picks, p->gloo.npicks), "from_hostname",
	                              p->gloo.from_hostname, "loopback_fallback",
	                              p->gloo.loopback_fallback, "error", p->gloo.error));
	json_object_set_new(o, "data_interface",
	                    p->data_iface[0] ? json_string(p->data_iface) : json_null());
	return o;
}

static json_t *lines_json(const char *text)
{
	json_t *arr = json_array();

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		json_array_append_new(arr, json_stringn(p, len));
		p = nl ? nl + 1 : p + len;
	}
	return arr;
}

static void print_report_json(const struct check_run *r)
{
	const struct netmodel *m = r->m;
	struct netcheck_stats st;
	json_t *doc = json_object(), *nodes = json_array(), *matrix = json_array(),
	       *findings = json_array();

	netcheck_stats(r->nc, &st);
	json_object_set_new(doc, "version", json_integer(REPORT_VERSION));
	json_object_set_new(doc, "command", json_string("check"));
	json_object_set_new(doc, "master", json_string(m->nodes[m->master].host));
	json_object_set_new(doc, "master_port_candidate", json_integer(m->master_port));
	for (size_t i = 0; i < m->nnodes; i++)
		json_array_append_new(nodes, node_json(r, i));
	json_object_set_new(doc, "nodes", nodes);
	for (size_t k = 0; k < m->nattempts; k++) {
		const struct nm_attempt *a = &m->attempts[k];

		json_array_append_new(
		    matrix,
		    json_pack("{sssssssIsisbsssoso}", "from", m->nodes[a->from].host, "to",
		              m->nodes[a->to].host, "address", a->addr, "scope_id",
		              (json_int_t)a->scope_id, "port", a->port, "fixed_port", a->fixed_port,
		              "result", a->result, "rtt_us",
		              a->rtt_us >= 0 ? json_integer(a->rtt_us) : json_null(), "errno_name",
		              a->errno_name[0] ? json_string(a->errno_name) : json_null()));
	}
	json_object_set_new(doc, "matrix", matrix);
	for (size_t k = 0; k < r->d->nfindings; k++) {
		const struct finding *f = &r->d->findings[k];
		json_t *fn = json_array();

		for (size_t q = 0; q < f->nnodes; q++)
			json_array_append_new(fn, json_string(m->nodes[f->nodes[q]].host));
		json_array_append_new(findings, json_pack("{sssssosssoss}", "id", f->id, "severity",
		                                          severity_name(f->severity), "nodes", fn,
		                                          "message", f->message, "evidence",
		                                          lines_json(f->evidence), "fix", f->fix));
	}
	json_object_set_new(doc, "findings", findings);
	json_object_set_new(doc, "suggestions", suggestions_json(r));
	json_object_set_new(
	    doc, "timing_ms",
	    json_pack("{sIsIsIsIsIsI}", "total", (json_int_t)(cd_now_ms() - r->started_ms), "probe",
	              (json_int_t)st.probe_ms, "listen", (json_int_t)st.listen_ms, "connect",
	              (json_int_t)st.connect_ms, "confirm", (json_int_t)st.confirm_ms, "retried",
	              (json_int_t)st.retried));
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

/* ---------------------------------------------------------------- text report */

static void print_indented(const char *label, const char *text)
{
	int first = 1;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = (int)(nl ? nl - p : (long)strlen(p));

		printf("         %-9s %.*s\n", first ? label : "", len, p);
		first = 0;
		p = nl ? nl + 1 : p + len;
	}
}

static void print_predictions(const struct check_run *r)
{
	const struct netmodel *m = r->m;

	printf("WHAT NCCL AND GLOO WOULD USE (as configured now)\n");
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct nm_node *n = &m->nodes[i];
		const struct node_prediction *p = &r->d->pred[i];
		char line[1024];

		if (!n->probed) {
			printf("  %s: not checked: %s\n", n->host, n->error);
			continue;
		}
		nccl_log_line(&p->nccl, line, sizeof(line));
		printf("  %s (%s, NCCL %s)\n", n->host, n->hostname,
		       n->nccl_version[0] ? n->nccl_version : "unknown: 2.28.3+ rules");
		printf("    NCCL  %s   [%s]\n", line, p->nccl.rule);
		if (p->gloo.npicks)
			printf("    Gloo  %s:%s%s   [%s]\n", p->gloo.picks[0].ifname,
			       p->gloo.picks[0].addr, p->gloo.npicks > 1 ? " ..." : "",
			       p->gloo.rule);
		else
			printf("    Gloo  %s   [%s]\n", p->gloo.error, p->gloo.rule);
	}
	putchar('\n');
}

static void print_findings(const struct check_run *r)
{
	const struct diagnosis *d = r->d;

	printf("FINDINGS: %d error(s), %d warning(s)\n", d->errors, d->warnings);
	if (d->nfindings == 0)
		printf("  none: every address NCCL and Gloo would use was reached by every peer\n");
	for (size_t k = 0; k < d->nfindings; k++) {
		const struct finding *f = &d->findings[k];

		printf("  %-7s %s\n", severity_name(f->severity), f->id);
		print_indented("", f->message);
		print_indented("evidence", f->evidence);
		print_indented("fix", f->fix);
	}
	putchar('\n');
}

static void print_suggestions(const struct check_run *r)
{
	const struct netmodel *m = r->m;
	const struct suggestions *s = &r->d->sugg;

	printf("SUGGESTED ENVIRONMENT (each value verified against the reachability matrix)\n");
	if (s->nccl_ifname)
		printf("  all nodes:  NCCL_SOCKET_IFNAME=%s\n", s->nccl_ifname);
	if (s->nccl_family_inet && s->nccl_ifname)
		printf("  all nodes:  NCCL_SOCKET_FAMILY=AF_INET\n");
	if (s->master_addr[0])
		printf("  all nodes:  MASTER_ADDR=%s\n", s->master_addr);
	if (s->master_port)
		printf("  all nodes:  MASTER_PORT=%d\n", s->master_port);
	for (size_t i = 0; i < m->nnodes; i++) {
		if (!node_checked(m, i))
			continue;
		if (!s->nccl_ifname && s->nccl_ifname_per_node[i])
			printf("  %s:  NCCL_SOCKET_IFNAME=%s%s\n", m->nodes[i].host,
			       s->nccl_ifname_per_node[i],
			       s->nccl_family_inet ? " NCCL_SOCKET_FAMILY=AF_INET" : "");
		if (s->gloo_ifname_per_node[i])
			printf("  %s:  GLOO_SOCKET_IFNAME=%s\n", m->nodes[i].host,
			       s->gloo_ifname_per_node[i]);
	}
	for (size_t i = 0; i < m->nnodes; i++) {
		if (s->torchrun[i])
			printf("  %s:  %s\n", m->nodes[i].host, s->torchrun[i]);
	}
	if (s->notes)
		print_indented("not shown", s->notes);
	printf("  (`clusterdoc env -w ...` prints these as export lines)\n");
}

/* ---------------------------------------------------------------- env */

/* Single-quote a value for the shell when it holds anything unusual. */
static void print_shell_value(const char *v)
{
	if (strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-:,=^/") ==
	    strlen(v)) {
		fputs(v, stdout);
		return;
	}
	putchar('\'');
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*v);
	}
	putchar('\'');
}

static int print_env(const struct check_run *r)
{
	const struct netmodel *m = r->m;
	int missing = 0, shown = 0;

	for (size_t i = 0; i < m->nnodes; i++) {
		struct node_env e;

		if (r->only && strcmp(r->only, m->nodes[i].host) != 0 &&
		    strcmp(r->only, m->nodes[i].hostname) != 0)
			continue;
		shown++;
		printf("# %s\n", m->nodes[i].host);
		if (!node_checked(m, i)) {
			printf("# not checked: %s\n", m->nodes[i].error);
			missing = 1;
			continue;
		}
		node_env_of(r, i, &e);
		for (int k = 0; k < e.n; k++) {
			printf("export %s=", e.name[k]);
			print_shell_value(e.value[k]);
			putchar('\n');
		}
		if (!r->d->sugg.nccl_ifname_per_node[i] || !r->d->sugg.gloo_ifname_per_node[i] ||
		    !r->d->sugg.master_port) {
			printf("# some values could not be verified; run `clusterdoc check` for "
			       "why\n");
			missing = 1;
		}
	}
	if (r->only && !shown) {
		fprintf(stderr, "clusterdoc env: --node %s is not one of the nodes checked\n",
		        r->only);
		return 2;
	}
	return missing ? 1 : 0;
}

/* ---------------------------------------------------------------- command */

static void usage(FILE *f, int env)
{
	if (env)
		fprintf(f,
		        "usage: clusterdoc env -w HOSTLIST [--node HOST] [options]\n"
		        "Check the network, then print shell-ready export lines of the verified\n"
		        "environment (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, GLOO_SOCKET_IFNAME,\n"
		        "MASTER_ADDR, MASTER_PORT) for one node or for every node.\n"
		        "Exit status: 0 all verified, 1 something could not be verified, 2 could "
		        "not check.\n\n");
	else
		fprintf(f,
		        "usage: clusterdoc check -w HOSTLIST [options]\n"
		        "Probe every node's interfaces, routes, hostname and firewall, test TCP\n"
		        "between every pair of nodes on every candidate address, predict what "
		        "NCCL and\nGloo will pick, and print the findings (worst first) and the "
		        "verified environment.\n"
		        "Exit status: 0 no error findings, 1 error findings, 2 a node could not "
		        "be checked\n(or a report or drain failed). With --slurm-prolog: 1 only "
		        "for error findings on\nthe local node.\n\n");
	fprintf(
	    f,
	    "Options:\n"
	    "      --master HOST        the node that will be rank 0 (default: the first)\n"
	    "      --port N             the MASTER_PORT candidate (default 29500)\n"
	    "      --probe-timeout MS   deadline of each TCP attempt (default 3000)\n"
	    "      --no-firewall        do not read the nodes' firewall rules\n"
	    "      --full-matrix-max N  test every pair up to N nodes (default 64)\n"
	    "      --deadline S         end the check after S seconds, reporting the nodes\n"
	    "                           that had not answered (default: none; 30 with\n"
	    "                           --slurm-prolog)\n"
	    "%s%s%s",
	    env ? "      --node HOST          print only this node's lines\n"
	        : "      --slurm-prolog       run as a Slurm Prolog: print nothing, exit 1 only "
	          "for\n"
	          "                           error findings on this node (docs/slurm.md)\n"
	          "      --node HOST          this node, for --slurm-prolog (default\n"
	          "                           $SLURMD_NODENAME, else the hostname); with\n"
	          "                           --drain/--undrain: act on this node only\n"
	          "      --drain              drain the nodes with error findings (scontrol,\n"
	          "                           Reason=\"clusterdoc: IDS\")\n"
	          "      --undrain            resume the nodes that pass and were drained by\n"
	          "                           clusterdoc\n",
	    env ? "" : report_help, targets_help);
}

static int parse_options(struct check_run *r, int argc, char **argv, int env)
{
	static const struct option longopts[] = {
	    TARGETS_LONGOPTS,
	    {"master", required_argument, NULL, OPT_MASTER},
	    {"port", required_argument, NULL, OPT_PORT},
	    {"probe-timeout", required_argument, NULL, OPT_PROBE_TIMEOUT},
	    {"no-firewall", no_argument, NULL, OPT_NO_FIREWALL},
	    {"node", required_argument, NULL, OPT_NODE},
	    {"full-matrix-max", required_argument, NULL, OPT_FULL_MATRIX_MAX},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"slurm-prolog", no_argument, NULL, OPT_SLURM_PROLOG},
	    {"drain", no_argument, NULL, OPT_DRAIN},
	    {"undrain", no_argument, NULL, OPT_UNDRAIN},
	    {"deadline", required_argument, NULL, OPT_DEADLINE},
	    REPORT_LONGOPTS,
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *cmd = env ? "env" : "check";
	int opt, v;

	while ((opt = getopt_long(argc, argv, TARGETS_SHORTOPTS "h", longopts, NULL)) != -1) {
		int took = targets_option(&r->t, opt, optarg, cmd);

		if (took < 0)
			return -1;
		if (took)
			continue;
		if (!env && report_option(&r->rep_o, opt, optarg))
			continue;
		switch (opt) {
		case OPT_MASTER:
			r->master = optarg;
			break;
		case OPT_PORT:
			if (cli_parse_int(cmd, "--port", optarg, 1, 65525, &r->o.master_port) < 0)
				return -1;
			break;
		case OPT_PROBE_TIMEOUT:
			if (cli_parse_int(cmd, "--probe-timeout", optarg, 50, 600000,
			                  &r->o.probe_timeout_ms) < 0)
				return -1;
			break;
		case OPT_NO_FIREWALL:
			r->o.no_firewall = 1;
			break;
		case OPT_NODE:
			r->only = optarg;
			break;
		case OPT_SLURM_PROLOG:
		case OPT_DRAIN:
		case OPT_UNDRAIN:
			if (env) {
				usage(stderr, env);
				return -1;
			}
			r->prolog |= opt == OPT_SLURM_PROLOG;
			r->drain |= opt == OPT_DRAIN;
			r->undrain |= opt == OPT_UNDRAIN;
			break;
		case OPT_DEADLINE:
			if (cli_parse_int(cmd, "--deadline", optarg, 1, 86400, &r->deadline_s) < 0)
				return -1;
			break;
		case OPT_FULL_MATRIX_MAX:
			if (cli_parse_int(cmd, "--full-matrix-max", optarg, 2, 100000,
			                  &r->o.full_matrix_max) < 0)
				return -1;
			break;
		case OPT_SEED:
			if (cli_parse_int(cmd, "--seed", optarg, 0, 1 << 30, &v) < 0)
				return -1;
			r->o.seed = (unsigned)v;
			break;
		case 'h':
			usage(stdout, env);
			return 1;
		default:
			usage(stderr, env);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "clusterdoc %s: unexpected argument \"%s\"\n", cmd, argv[optind]);
		return -1;
	}
	if (!env && r->only && !r->prolog && !r->drain && !r->undrain) {
		fprintf(stderr,
		        "clusterdoc check: --node names the local node of --slurm-prolog, "
		        "--drain or --undrain; without them, every node given is checked\n");
		return -1;
	}
	if (r->prolog && !r->deadline_s)
		r->deadline_s = PROLOG_DEADLINE_S;
	return targets_finish(&r->t, cmd) < 0 ? -1 : 0;
}

static int find_master(struct check_run *r, const char *cmd)
{
	if (!r->master)
		return 0;
	for (size_t i = 0; i < r->m->nnodes; i++) {
		if (strcmp(r->m->nodes[i].host, r->master) == 0) {
			r->o.master = i;
			return 0;
		}
	}
	fprintf(stderr, "clusterdoc %s: --master %s is not one of the nodes given with -w\n", cmd,
	        r->master);
	return -1;
}

/* --slurm-prolog: 1 only when an error finding names the local node. */
static int prolog_status(const struct check_run *r)
{
	char name[256];
	long local = check_local_node(r->m, r->only, name, sizeof(name));

	if (local < 0) {
		/* a Prolog that fails here would drain the node for a setup
		 * mistake; say so loudly instead */
		openlog("clusterdoc", LOG_PID, LOG_DAEMON);
		syslog(LOG_WARNING,
		       "--slurm-prolog: this node (%s) is not one of the nodes checked; set --node "
		       "or SLURMD_NODENAME",
		       name);
		closelog();
		fprintf(stderr,
		        "clusterdoc check: --slurm-prolog: this node (%s) is not one of the nodes "
		        "checked; set --node or SLURMD_NODENAME\n",
		        name);
		return 0;
	}
	return check_slurm_prolog_verdict(r->m, r->d, (size_t)local);
}

/* After the check: the exit status, Slurm's part and the reports. */
static int finish_check(struct check_run *r, int checked)
{
	int rc = checked < (int)r->m->nnodes ? 2 : r->d->errors ? 1 : 0;
	int failed = 0;
	long local = -1;
	char name[256];

	if (!checked)
		fprintf(stderr, "clusterdoc check: no node could be checked\n");
	if (r->deadline_hit && !r->prolog)
		fprintf(stderr,
		        "clusterdoc check: the deadline (%d s) passed; the nodes that had not "
		        "answered are reported as node-unreachable\n",
		        r->deadline_s);
	if (r->prolog)
		rc = prolog_status(r);
	if ((r->drain || r->undrain) && r->only) {
		local = check_local_node(r->m, r->only, name, sizeof(name));
		if (local < 0) {
			fprintf(stderr,
			        "clusterdoc check: --node %s is not one of the nodes checked\n",
			        r->only);
			failed = 1;
		}
	}
	if (r->drain && (!r->only || local >= 0) &&
	    check_slurm_drain(r->m, r->d, local, r->prolog) < 0)
		failed = 1;
	if (r->undrain && (!r->only || local >= 0) &&
	    check_slurm_undrain(r->m, r->d, local, r->prolog) < 0)
		failed = 1;
	if (report_wanted(&r->rep_o)) {
		struct report_run run = {
		    .command = "check",
		    .elapsed_s = (double)(cd_now_ms() - r->started_ms) / 1000,
		    .started_at = r->started_at,
		    .exit_status = rc,
		};
		struct prom *prom = report_check_prom(r->m, r->d, &run);
		struct junit *junit = report_check_junit(r->m, r->d, &run);

		failed |= report_emit(&r->rep_o, &run, prom, junit) < 0;
		prom_free(prom);
		junit_free(junit);
	}
	/* a Prolog's status is the node's health alone: a report or drain that
	 * failed was said on stderr and must not drain this node */
	if (failed && !r->prolog && rc < 2)
		rc = 2;
	return rc;
}

static int run(int argc, char **argv, int env)
{
	const char *cmd = env ? "env" : "check";
	struct check_run r = {0};
	char err[CD_ERRLEN];
	int rc = 2, p, checked = 0;

	targets_init(&r.t);
	netcheck_opts_init(&r.o);
	p = parse_options(&r, argc, argv, env);
	if (p != 0) {
		rc = p > 0 ? 0 : 2;
		goto out;
	}
	r.started_ms = cd_now_ms();
	r.started_at = (long long)time(NULL);
	r.o.request_timeout_ms = r.t.pool.request_timeout_ms;
	r.m = netmodel_new((const char *const *)r.t.hosts->names, hostlist_count(r.t.hosts));
	if (find_master(&r, cmd) < 0)
		goto out;
	r.loop = loop_new();
	r.pool = sshpool_new(r.loop, &r.t.pool, err, sizeof(err));
	if (!r.pool) {
		fprintf(stderr, "clusterdoc %s: %s\n", cmd, err);
		goto out;
	}
	r.nc = netcheck_start(r.loop, r.pool, r.m, &r.o, on_done, &r);
	if (r.deadline_s)
		loop_timer_add(r.loop, (int64_t)r.deadline_s * 1000, on_deadline, &r);
	loop_run(r.loop);
	r.d = diagnose(r.m);
	for (size_t i = 0; i < r.m->nnodes; i++)
		checked += r.m->nodes[i].probed;

	if (env) {
		rc = checked ? print_env(&r) : 2;
	} else if (r.prolog) {
		/* a Prolog is quiet: the verdict below logs what fails */
	} else if (r.t.json) {
		print_report_json(&r);
	} else {
		printf("clusterdoc check: %zu node(s), %d checked, %zu TCP attempts, %.1f s\n\n",
		       r.m->nnodes, checked, r.m->nattempts,
		       (double)(cd_now_ms() - r.started_ms) / 1000);
		print_predictions(&r);
		print_findings(&r);
		print_suggestions(&r);
	}
	if (!env)
		rc = finish_check(&r, checked);
	else if (!checked)
		fprintf(stderr, "clusterdoc %s: no node could be checked\n", cmd);
out:
	diagnosis_free(r.d);
	netcheck_free(r.nc);
	sshpool_free(r.pool);
	loop_free(r.loop);
	netmodel_free(r.m);
	targets_fini(&r.t);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int cmd_env(int argc, char **argv)
{
	return run(argc, argv, 1);
}
