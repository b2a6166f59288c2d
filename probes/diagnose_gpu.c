/* SPDX-License-Identifier: MIT */
/* diagnose_gpu.c - the NVIDIA GPU findings (docs/findings.md, gpu-*): a
 * missing GPU, uncorrectable ECC errors, pending and failed row remaps and
 * pending retired pages, Xids from the kernel log, PCIe links trained below
 * their maximum under load, NVLink links down, throttling by power or heat,
 * persistence mode off, MIG modes that differ across the nodes, and GPUs
 * all far (SYS) from the data NIC. Reads each node's "nvidia" object
 * (netmodel.h): the facts' gpus[] with their "health", gpu_pci and xid
 * (docs/protocol.md). A key NVML could not answer is absent and says
 * nothing: only what was read makes a finding.
 *
 * Each finding about one GPU has its own key, NODE/gpuN, and names that
 * node; its evidence lines start with NODE/gpuN. Severity follows NHC's
 * and DCGM's GPU checks: what leaves a GPU unusable until it is reset or
 * replaced is an error (the node fails --slurm-prolog and is drained by
 * --drain), the rest warns. */
#include "probes/diagnose_internal.h"
#include "probes/facts_gpu_watch.h"
#include "probes/gpu_topo.h"
#include "probes/gpu_xid.h"
#include "cd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose (as in diagnose.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV  640
#define KEY 300
#define MSG 160

/* NVML's "GPU is lost" (NVML_ERROR_GPU_IS_LOST) as the facts quote it */
#define NVML_LOST "(NVML error 15)"

static const char *host_of(const struct netmodel *m, size_t i)
{
	return m->nodes[i].host;
}

static json_t *gpus_of(const struct nm_node *n)
{
	return json_object_get(n->nvidia, "gpus");
}

static json_t *health_of(json_t *gpu)
{
	return json_object_get(gpu, "health");
}

/* The integer at obj.key into *v: 1, or 0 (absent or not an integer). */
static int get_int(json_t *obj, const char *key, long long *v)
{
	json_t *j = json_object_get(obj, key);

	if (!json_is_integer(j))
		return 0;
	*v = json_integer_value(j);
	return 1;
}

static long long index_of(json_t *gpu, size_t fallback)
{
	long long idx;

	return get_int(gpu, "index", &idx) ? idx : (long long)fallback;
}

/* "node1/gpu3" */
static void gpu_key(char *buf, size_t len, const struct netmodel *m, size_t i, long long idx)
{
	snprintf(buf, len, "%s/gpu%lld", host_of(m, i), idx);
}

static int has_string(json_t *arr, const char *s)
{
	size_t k;
	json_t *v;

	json_array_foreach(arr, k, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	}
	return 0;
}

/* Whether NVML answered GPU_IS_LOST for one of the GPU's queries, or one
 * never answered (facts_gpu_watch.h): the query's own error before the
 * "not asked" of the others. */
static const char *lost_error(json_t *health)
{
	const char *key, *found = NULL;
	json_t *v;

	json_object_foreach(json_object_get(health, "errors"), key, v)
	{
		const char *s = json_string_value(v);

		if (!s || (!strstr(s, NVML_LOST) && !strstr(s, FACTS_NVML_NO_ANSWER)))
			continue;
		if (strncmp(s, "not asked: ", 11) != 0)
			return s;
		if (!found)
			found = s;
	}
	return found;
}

/* ---------------------------------------------------------------- gpu-missing */

static const char missing_fix[] =
    "Check that every GPU is seated and powered and that the driver sees it "
    "(nvidia-smi -L; dmesg | grep -i nvrm; lspci -d 10de:); a GPU NVML lost "
    "needs a reset or a reboot. Until then the node must not take a job.";

/* The PCI addresses of NVIDIA display controllers no GPU of NVML has. */
static void missing_addresses(json_t *gpus, json_t *paths, char *buf, size_t len)
{
	const char *addr;
	json_t *v, *g;
	size_t k, used = 0;

	buf[0] = '\0';
	json_object_foreach(paths, addr, v)
	{
		unsigned long long want, have;
		int found = 0;

		if (gpu_pci_key(addr, &want) != 0)
			continue;
		json_array_foreach(gpus, k, g)
		{
			const char *bus =
			    json_string_value(json_object_get(health_of(g), "pci_bus_id"));

			found |= bus && gpu_pci_key(bus, &have) == 0 && have == want;
		}
		if (!found && used + strlen(addr) + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
			                         addr);
	}
}

static void check_missing(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *gpus = gpus_of(n), *pci = json_object_get(n->nvidia, "gpu_pci"), *g;
	long long count = (long long)json_array_size(gpus), devices;
	const char *why = json_string_value(json_object_get(n->nvidia, "gpus_error"));
	char ev[EV], key[KEY], absent[EV / 2];
	size_t k;

	if (st->m->expect_gpus > 0 && count < st->m->expect_gpus) {
		snprintf(ev, sizeof(ev), "%s: NVML lists %lld GPU%s, --expect-gpus %d%s%s",
		         host_of(st->m, i), count, count == 1 ? "" : "s", st->m->expect_gpus,
		         why ? ": " : "", why ? why : "");
		diagnose_note(st, "gpu-missing", SEV_ERROR, host_of(st->m, i), i,
		              "a GPU is missing on %N", missing_fix, ev);
	}
	if (get_int(pci, "nvidia_devices", &devices) && count < devices) {
		missing_addresses(gpus, json_object_get(pci, "paths"), absent, sizeof(absent));
		snprintf(ev, sizeof(ev),
		         "%s: NVML lists %lld GPU%s, the PCI bus shows %lld NVIDIA display "
		         "controller%s%s%s%s%s",
		         host_of(st->m, i), count, count == 1 ? "" : "s", devices,
		         devices == 1 ? "" : "s", absent[0] ? " (not in NVML: " : "", absent,
		         absent[0] ? ")" : "", why ? "; " : "");
		if (why)
			snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "%s", why);
		diagnose_note(st, "gpu-missing", SEV_ERROR, host_of(st->m, i), i,
		              "a GPU is missing on %N", missing_fix, ev);
	}
	json_array_foreach(gpus, k, g)
	{
		const char *lost = lost_error(health_of(g));
		char msg[MSG];

		if (!lost)
			continue;
		gpu_key(key, sizeof(key), st->m, i, index_of(g, k));
		if (strstr(lost, FACTS_NVML_NO_ANSWER)) {
			snprintf(ev, sizeof(ev), "%s: NVML does not answer for the GPU: %s", key,
			         lost);
			snprintf(msg, sizeof(msg), "GPU %lld of %%N does not answer",
			         index_of(g, k));
		} else {
			snprintf(ev, sizeof(ev), "%s: NVML lost the GPU: %s", key, lost);
			snprintf(msg, sizeof(msg), "GPU %lld of %%N is lost", index_of(g, k));
		}
		diagnose_note(st, "gpu-missing", SEV_ERROR, key, i, msg, missing_fix, ev);
	}
}

/* ---------------------------------------------------------------- memory */

/* How nvidia-smi -i names this GPU: its PCI bus id (the same whatever
 * CUDA_VISIBLE_DEVICES or the enumeration order says), else its index. */
static void smi_id(char *buf, size_t len, json_t *g, size_t k)
{
	const char *bus = json_string_value(json_object_get(health_of(g), "pci_bus_id"));

	if (bus)
		snprintf(buf, len, "%s", bus);
	else
		snprintf(buf, len, "%lld", index_of(g, k));
}

static void check_ecc(struct dstate *st, size_t i, json_t *g, size_t k, const char *key)
{
	json_t *ecc = json_object_get(health_of(g), "ecc");
	long long vol = 0, agg = 0;
	char ev[EV], msg[MSG], fix[EV], id[64];
	int has_vol = get_int(json_object_get(ecc, "volatile"), "uncorrected", &vol);
	int has_agg = get_int(json_object_get(ecc, "aggregate"), "uncorrected", &agg);

	if (!(has_vol && vol > 0) && !(has_agg && agg > 0))
		return;
	snprintf(ev, sizeof(ev),
	         "%s: uncorrectable ECC errors: %lld since the driver loaded, "
	         "%lld in the GPU's lifetime",
	         key, vol, agg);
	snprintf(msg, sizeof(msg), "GPU %lld of %%N has uncorrectable ECC errors", index_of(g, k));
	smi_id(id, sizeof(id), g, k);
	snprintf(fix, sizeof(fix),
	         "Drain the node and reset the GPU (nvidia-smi -r -i %s); then look at its "
	         "remapped rows or retired pages (nvidia-smi -q -i %s -d "
	         "ROW_REMAPPER,PAGE_RETIREMENT). If the errors come back, run the field "
	         "diagnostic (dcgmi diag -r 3) and replace it.",
	         id, id);
	/* The lifetime count alone is history (its rows remapped or pages
	 * retired since); DCGM fails a GPU on its volatile count. */
	diagnose_note(st, "gpu-ecc-uncorrectable", vol > 0 ? SEV_ERROR : SEV_WARNING, key, i, msg,
	              fix, ev);
}

static void check_remap(struct dstate *st, size_t i, json_t *g, size_t k, const char *key)
{
	json_t *h = health_of(g), *rr = json_object_get(h, "row_remap"),
	       *rp = json_object_get(h, "retired_pages");
	const char *mig = json_string_value(json_object_get(h, "mig"));
	long long corr = 0, unc = 0, count = 0;
	char ev[EV], msg[MSG], fix[EV], id[64];

	smi_id(id, sizeof(id), g, k);
	get_int(rr, "corrected", &corr);
	get_int(rr, "uncorrected", &unc);
	get_int(rp, "count", &count);
	if (json_is_true(json_object_get(rr, "pending"))) {
		snprintf(ev, sizeof(ev),
		         "%s: a row remap is pending (%lld rows remapped for "
		         "correctable, %lld for uncorrectable errors)",
		         key, corr, unc);
		snprintf(msg, sizeof(msg), "GPU %lld of %%N needs a reset to remap a row",
		         index_of(g, k));
		snprintf(fix, sizeof(fix),
		         "Reset the GPU (nvidia-smi -r -i %s, with no process on it) or reboot the "
		         "node: the remap takes effect only then.",
		         id);
		diagnose_note(st, "gpu-row-remap-pending", SEV_ERROR, key, i, msg, fix, ev);
	}
	/* NVML does not report remapped rows while MIG is on (its header:
	 * "NOT_SUPPORTED If MIG is enabled"): say that the gate is blind there */
	if (!rr && has_string(json_object_get(h, "unsupported"), "row_remap") && mig &&
	    strcmp(mig, "on") == 0) {
		snprintf(ev, sizeof(ev),
		         "%s: MIG is on, and NVML reports no remapped rows while it is; a pending "
		         "remap or a remap failure would go unseen",
		         key);
		snprintf(msg, sizeof(msg), "the remapped rows of GPU %lld of %%N cannot be read",
		         index_of(g, k));
		diagnose_note(
		    st, "gpu-row-remap-unknown", SEV_INFO, key, i, msg,
		    "Read them with MIG off, in a maintenance window (nvidia-smi -mig 0 "
		    "once no instance is left, then clusterdoc check). Until then an Xid 63 "
		    "or 64 in the kernel log (gpu-xid) still shows a remap or its failure.",
		    ev);
	}
	if (json_is_true(json_object_get(rr, "failure"))) {
		snprintf(ev, sizeof(ev),
		         "%s: row remapping failed (%lld rows remapped for "
		         "uncorrectable errors)",
		         key, unc);
		snprintf(msg, sizeof(msg), "GPU %lld of %%N could not remap a row", index_of(g, k));
		diagnose_note(st, "gpu-row-remap-failure", SEV_ERROR, key, i, msg,
		              "The GPU has no spare rows left where it needs one: run the field "
		              "diagnostic and have the GPU replaced (NVIDIA's RMA criterion).",
		              ev);
	}
	if (json_is_true(json_object_get(rp, "pending"))) {
		snprintf(ev, sizeof(ev), "%s: a page retirement is pending (%lld pages retired)",
		         key, count);
		snprintf(msg, sizeof(msg), "GPU %lld of %%N needs a reset to retire a page",
		         index_of(g, k));
		snprintf(fix, sizeof(fix),
		         "Reset the GPU (nvidia-smi -r -i %s, with no process on it) or reboot the "
		         "node: the page is retired only then.",
		         id);
		diagnose_note(st, "gpu-retired-pages-pending", SEV_ERROR, key, i, msg, fix, ev);
	}
}

/* ---------------------------------------------------------------- links and clocks */

static void check_pcie(struct dstate *st, size_t i, json_t *g, size_t k, const char *key)
{
	json_t *h = health_of(g), *p = json_object_get(h, "pcie");
	json_t *reasons = json_object_get(json_object_get(h, "throttle"), "reasons");
	long long gen, gen_max, w, w_max;
	char ev[EV], msg[MSG];

	if (!get_int(p, "gen", &gen) || !get_int(p, "gen_max", &gen_max) ||
	    !get_int(p, "width", &w) || !get_int(p, "width_max", &w_max))
		return;
	if (gen >= gen_max && w >= w_max)
		return;
	/* An idle GPU lowers its link's speed to save power, and its reasons
	 * say gpu_idle: normal. Without the reasons, idle cannot be told. */
	if (!json_is_array(reasons) || has_string(reasons, "gpu_idle"))
		return;
	snprintf(ev, sizeof(ev),
	         "%s: PCIe link gen %lld x%lld, the maximum is gen %lld x%lld "
	         "(the GPU is not idle)",
	         key, gen, w, gen_max, w_max);
	snprintf(msg, sizeof(msg), "GPU %lld of %%N has a degraded PCIe link", index_of(g, k));
	diagnose_note(st, "gpu-pcie-degraded", SEV_WARNING, key, i, msg,
	              "Reseat the GPU or its riser and check the slot and cable; look for "
	              "AER errors (dmesg | grep -i aer). nvidia-smi -q -d PCIE shows the "
	              "link; host-device copies run at the lower rate until it is fixed.",
	              ev);
}

/* Whether another GPU of the node has an NVLink link up: a node whose GPUs
 * have none (PCIe cards without bridges) has no NVLink fabric to miss. */
static int node_has_nvlink_up(json_t *gpus)
{
	size_t k, l;
	json_t *g, *link;

	json_array_foreach(gpus, k, g)
	{
		json_array_foreach(json_object_get(health_of(g), "nvlink"), l, link)
		{
			if (json_is_true(json_object_get(link, "up")))
				return 1;
		}
	}
	return 0;
}

static void check_nvlink(struct dstate *st, size_t i, json_t *g, size_t k, const char *key,
                         int fabric)
{
	json_t *link;
	size_t l;
	char ev[EV], msg[MSG], down[EV / 2] = "";
	size_t used = 0;
	int ndown = 0;

	if (!fabric)
		return;
	json_array_foreach(json_object_get(health_of(g), "nvlink"), l, link)
	{
		long long id = (long long)l;

		if (!json_is_false(json_object_get(link, "up")))
			continue;
		get_int(link, "link", &id);
		ndown++;
		if (used + 8 < sizeof(down))
			used += (size_t)snprintf(down + used, sizeof(down) - used, "%s%lld",
			                         used ? ", " : "", id);
	}
	if (!ndown)
		return;
	snprintf(ev, sizeof(ev), "%s: NVLink link%s %s down", key, ndown == 1 ? "" : "s", down);
	snprintf(msg, sizeof(msg), "an NVLink link of GPU %lld of %%N is down", index_of(g, k));
	diagnose_note(st, "gpu-nvlink-down", SEV_WARNING, key, i, msg,
	              "nvidia-smi nvlink -s shows the links; reset the GPU, check the fabric "
	              "manager (systemctl status nvidia-fabricmanager) and the NVSwitch "
	              "trays. NCCL routes around the link, slower.",
	              ev);
}

static void check_throttle(struct dstate *st, size_t i, json_t *g, size_t k, const char *key)
{
	static const char *const bad[] = {"hw_slowdown", "hw_power_brake", "hw_thermal",
	                                  "sw_thermal"};
	json_t *h = health_of(g), *t = json_object_get(h, "throttle"),
	       *c = json_object_get(h, "clocks_mhz");
	json_t *reasons = json_object_get(t, "reasons");
	char which[160] = "", ev[EV], msg[MSG];
	const char *mask;
	long long sm = 0, sm_max = 0, temp = 0, slow = 0;
	size_t used = 0;

	for (size_t b = 0; b < CD_ARRAY_LEN(bad); b++)
		if (has_string(reasons, bad[b]))
			used += (size_t)snprintf(which + used, sizeof(which) - used, "%s%s",
			                         used ? ", " : "", bad[b]);
	if (!used)
		return;
	mask = json_string_value(json_object_get(t, "mask"));
	snprintf(ev, sizeof(ev), "%s: clocks held down by %s (mask %s)", key, which,
	         mask ? mask : "?");
	if (get_int(c, "sm", &sm) && get_int(c, "sm_max", &sm_max))
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "; SM clock %lld of %lld MHz",
		         sm, sm_max);
	if (get_int(h, "temperature_c", &temp))
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "; %lld C", temp);
	if (get_int(h, "temperature_slowdown_c", &slow))
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), " (slowdown at %lld C)", slow);
	if (json_is_number(json_object_get(h, "power_w")) &&
	    json_is_number(json_object_get(h, "power_limit_w")))
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "; %.0f of %.0f W",
		         json_number_value(json_object_get(h, "power_w")),
		         json_number_value(json_object_get(h, "power_limit_w")));
	snprintf(msg, sizeof(msg), "GPU %lld of %%N is throttled by power or heat", index_of(g, k));
	diagnose_note(st, "gpu-throttled", SEV_WARNING, key, i, msg,
	              "hw_slowdown and hw_power_brake come from the board or the chassis "
	              "(power supply, external power brake signal); the thermal reasons from "
	              "cooling: check fans, airflow and inlet temperature "
	              "(nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER). The GPU runs slower, "
	              "and every rank waits for it.",
	              ev);
}

static void check_persistence(struct dstate *st, size_t i, json_t *g, const char *key)
{
	const char *p = json_string_value(json_object_get(health_of(g), "persistence"));
	char ev[EV];

	if (!p || strcmp(p, "off") != 0)
		return;
	snprintf(ev, sizeof(ev), "%s: persistence mode off", key);
	/* one finding for the cluster: it is a setting, usually the same on
	 * every GPU, and 8 findings per node would bury the rest */
	diagnose_note(st, "gpu-persistence-off", SEV_WARNING, "", i,
	              "persistence mode is off on GPUs of %N",
	              "Start nvidia-persistenced (systemctl enable --now nvidia-persistenced); "
	              "without it the driver tears the GPU down when the last process exits "
	              "and every job start pays its initialisation, and NVML calls are slow.",
	              ev);
}

/* Incomplete health: probe-incomplete, one line per key NVML failed on
 * (a lost GPU is gpu-missing). */
static void check_health_errors(struct dstate *st, size_t i, json_t *g, const char *key)
{
	const char *what;
	json_t *v;
	char ev[EV];

	if (lost_error(health_of(g)))
		return;
	json_object_foreach(json_object_get(health_of(g), "errors"), what, v)
	{
		if (!json_is_string(v))
			continue;
		snprintf(ev, sizeof(ev), "%s: GPU health %s: %s", key, what, json_string_value(v));
		diagnose_note(st, "probe-incomplete", SEV_WARNING, "gpu-health", i,
		              "part of the probe did not answer on %N",
		              "Run nvidia-smi -q on the node; those GPU checks are unknown until "
		              "NVML answers.",
		              ev);
	}
}

static void check_gpus(struct dstate *st, size_t i)
{
	json_t *gpus = gpus_of(&st->m->nodes[i]), *g;
	int fabric = node_has_nvlink_up(gpus);
	char key[KEY];
	size_t k;

	json_array_foreach(gpus, k, g)
	{
		gpu_key(key, sizeof(key), st->m, i, index_of(g, k));
		check_ecc(st, i, g, k, key);
		check_remap(st, i, g, k, key);
		check_pcie(st, i, g, k, key);
		check_nvlink(st, i, g, k, key, fabric);
		check_throttle(st, i, g, k, key);
		check_persistence(st, i, g, key);
		check_health_errors(st, i, g, key);
	}
}

/* ---------------------------------------------------------------- MIG */

/* The MIG mode ("on", "off") of node i's GPUs when they agree, "mixed"
 * when they do not, NULL when none says. */
static const char *node_mig(const struct nm_node *n)
{
	const char *mode = NULL;
	json_t *g;
	size_t k;

	json_array_foreach(gpus_of(n), k, g)
	{
		const char *m = json_string_value(json_object_get(health_of(g), "mig"));

		if (!m)
			continue;
		if (mode && strcmp(mode, m) != 0)
			return "mixed";
		mode = m;
	}
	return mode;
}

/* MIG modes across the nodes: a job started on all of them sees whole GPUs
 * on some and MIG slices (or none) on others. The nodes whose mode is not
 * the most common one are named (every node when two modes are as common);
 * evidence is one line per node. */
static void check_mig(struct dstate *st)
{
	const char *modes[3] = {"on", "off", "mixed"};
	size_t count[3] = {0}, most = 0, kinds = 0, ties = 0;
	char ev[EV];

	for (size_t i = 0; i < st->m->nnodes; i++) {
		const char *m = node_mig(&st->m->nodes[i]);

		for (size_t k = 0; m && k < 3; k++)
			count[k] += strcmp(m, modes[k]) == 0;
	}
	for (size_t k = 0; k < 3; k++) {
		kinds += count[k] > 0;
		if (count[k] > count[most])
			most = k;
	}
	if (kinds < 2)
		return;
	for (size_t k = 0; k < 3; k++)
		ties += count[k] == count[most];
	for (size_t i = 0; i < st->m->nnodes; i++) {
		const char *m = node_mig(&st->m->nodes[i]);

		if (!m)
			continue;
		snprintf(ev, sizeof(ev), "%s: MIG %s", host_of(st->m, i), m);
		diagnose_note(
		    st, "gpu-mig-mismatch", SEV_WARNING, "",
		    ties > 1 || strcmp(m, modes[most]) != 0 ? i : SIZE_MAX,
		    "the GPUs' MIG mode differs on %N from the other nodes",
		    "Set one MIG mode on every node of a job (nvidia-smi -mig 0 or 1, then "
		    "reset the GPUs; nvidia-smi mig -lgi lists the instances): a job sees "
		    "whole GPUs on some nodes and MIG slices on others.",
		    ev);
	}
}

void diagnose_check_gpu(struct dstate *st)
{
	for (size_t i = 0; i < st->m->nnodes; i++) {
		if (!st->m->nodes[i].nvidia)
			continue;
		check_missing(st, i);
		check_gpus(st, i);
		diagnose_gpu_xid(st, i);
		diagnose_gpu_nic_far(st, i);
		diagnose_gpu_dcgm(st, i);
	}
	check_mig(st);
}
