/* SPDX-License-Identifier: MIT */
/* diagnose_gpu_xid.c - gpu-xid: the Xid events of a node's kernel log since
 * boot (its facts' "xid": docs/protocol.md), each tied to the GPU whose PCI
 * address the line names, with NVIDIA's meaning and action (gpu_xid.h). An
 * Xid NVIDIA says needs a GPU reset or a reboot is an error; the others,
 * and Xids outside the common ones, warn. A kernel log the agent could not
 * read is said as such (probe-incomplete), never taken for a clean one. */
#include "probes/diagnose_internal.h"
#include "probes/gpu_topo.h"
#include "probes/gpu_xid.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose (as in diagnose.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV     800
#define KEY    300
#define GROUPS 128 /* distinct (GPU, Xid) pairs per node; the rest are counted */

/* The events of one Xid on one GPU: a log that repeats an Xid thousands of
 * times says it once, with the count and the first and last times. */
struct xid_group {
	char key[KEY]; /* "node1/gpu3", or "node1/pci 0000:3b:00" with no GPU */
	long long gpu; /* its index, -1 when no GPU of NVML has that address */
	long long xid;
	long count;
	double first_s, last_s;
	const char *text; /* the first line, borrowed */
};

/* The GPU of node n at PCI address pci, or -1. */
static long long gpu_at(const struct nm_node *n, const char *pci)
{
	unsigned long long want, have;
	json_t *g;
	size_t k;

	if (!pci || gpu_pci_key(pci, &want) != 0)
		return -1;
	json_array_foreach(json_object_get(n->nvidia, "gpus"), k, g)
	{
		const char *bus =
		    json_string_value(json_object_get(json_object_get(g, "health"), "pci_bus_id"));
		json_t *idx = json_object_get(g, "index");

		if (bus && gpu_pci_key(bus, &have) == 0 && have == want)
			return json_is_integer(idx) ? json_integer_value(idx) : (long long)k;
	}
	return -1;
}

static struct xid_group *group_of(struct xid_group *gr, size_t *n, const char *key, long long xid)
{
	for (size_t k = 0; k < *n; k++)
		if (gr[k].xid == xid && strcmp(gr[k].key, key) == 0)
			return &gr[k];
	if (*n == GROUPS)
		return NULL;
	memset(&gr[*n], 0, sizeof(gr[*n]));
	snprintf(gr[*n].key, sizeof(gr[*n].key), "%s", key);
	gr[*n].xid = xid;
	return &gr[(*n)++];
}

static void note_group(struct dstate *st, size_t i, const struct xid_group *g)
{
	const struct gpu_xid_def *def = gpu_xid_lookup((int)g->xid);
	char ev[EV], msg[200], when[96];

	if (g->count == 1)
		snprintf(when, sizeof(when), "at %.1f s after boot", g->first_s);
	else
		snprintf(when, sizeof(when), "%ld times, %.1f s to %.1f s after boot", g->count,
		         g->first_s, g->last_s);
	if (def)
		snprintf(ev, sizeof(ev), "%s: Xid %lld %s: %s (%s); NVIDIA's action %s: %s; \"%s\"",
		         g->key, g->xid, when, def->description, def->mnemonic, def->action,
		         def->what_to_do, g->text ? g->text : "");
	else
		snprintf(ev, sizeof(ev),
		         "%s: Xid %lld %s (not one of the common Xids: see NVIDIA's Xid catalog); "
		         "\"%s\"",
		         g->key, g->xid, when, g->text ? g->text : "");
	if (g->gpu >= 0)
		snprintf(msg, sizeof(msg), "the kernel log of %%N has Xid errors of GPU %lld",
		         g->gpu);
	else
		snprintf(msg, sizeof(msg),
		         "the kernel log of %%N has Xid errors of a GPU NVML "
		         "does not list");
	diagnose_note(st, "gpu-xid", def && def->fatal ? SEV_ERROR : SEV_WARNING, g->key, i, msg,
	              "Do what NVIDIA's action says for each Xid "
	              "(docs.nvidia.com/deploy/xid-errors). The events stay in the kernel log "
	              "until the node reboots: after a GPU reset that cleared the cause, "
	              "reboot the node (or drain it until then) for the check to pass.",
	              ev);
}

/* The agent keeps the newest events only ("events_dropped" counts the older
 * ones): what they were is unknown here, so it is said, not guessed. */
static void note_dropped(struct dstate *st, size_t i, json_t *dropped)
{
	char ev[EV];

	if (!json_is_integer(dropped) || json_integer_value(dropped) <= 0)
		return;
	snprintf(ev, sizeof(ev),
	         "%s: %lld older Xid lines are not in the facts (the agent keeps the newest)",
	         st->m->nodes[i].host, (long long)json_integer_value(dropped));
	diagnose_note(st, "gpu-xid", SEV_WARNING, st->m->nodes[i].host, i,
	              "the kernel log of %N has more Xid errors than the check kept",
	              "Read them on the node (dmesg | grep -i xid, or journalctl -k -b | grep -i "
	              "xid): a GPU reset or reboot they call for is not judged here.",
	              ev);
}

/* A kernel log the agent could not read: the Xids are unknown. */
static void note_unreadable(struct dstate *st, size_t i, json_t *xid)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *pci = json_object_get(n->nvidia, "gpu_pci");
	const char *why = json_string_value(json_object_get(xid, "why"));
	char ev[EV];

	/* only where there are GPUs whose Xids would matter */
	if (json_array_size(json_object_get(n->nvidia, "gpus")) == 0 &&
	    json_integer_value(json_object_get(pci, "nvidia_devices")) <= 0)
		return;
	snprintf(ev, sizeof(ev), "%s: Xid errors unknown: the kernel log cannot be read%s%s",
	         n->host, why ? ": " : "", why ? why : "");
	diagnose_note(st, "probe-incomplete", SEV_WARNING, "gpu-xid", i,
	              "part of the probe did not answer on %N",
	              "Run the check as a user who may read the kernel log (root, the adm "
	              "group for journalctl -k, or kernel.dmesg_restrict=0); until then a "
	              "GPU's Xid errors are unknown.",
	              ev);
}

void diagnose_gpu_xid(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *xid = json_object_get(n->nvidia, "xid"), *e;
	struct xid_group *gr;
	size_t ngr = 0, k;

	if (!json_is_object(xid))
		return;
	if (json_is_false(json_object_get(xid, "readable"))) {
		note_unreadable(st, i, xid);
		return;
	}
	gr = cd_calloc(GROUPS, sizeof(*gr));
	json_array_foreach(json_object_get(xid, "events"), k, e)
	{
		json_t *num = json_object_get(e, "xid"), *t = json_object_get(e, "time_s");
		const char *pci = json_string_value(json_object_get(e, "pci"));
		long long gpu = gpu_at(n, pci);
		double when = json_is_number(t) ? json_number_value(t) : 0;
		char key[KEY];
		struct xid_group *g;

		if (!json_is_integer(num))
			continue;
		if (gpu >= 0)
			snprintf(key, sizeof(key), "%s/gpu%lld", n->host, gpu);
		else
			snprintf(key, sizeof(key), "%s/pci %s", n->host, pci ? pci : "?");
		g = group_of(gr, &ngr, key, json_integer_value(num));
		if (!g)
			continue;
		if (!g->count++) {
			g->first_s = when;
			g->gpu = gpu;
			g->text = json_string_value(json_object_get(e, "text"));
		}
		g->last_s = when;
	}
	for (k = 0; k < ngr; k++)
		note_group(st, i, &gr[k]);
	free(gr);
	note_dropped(st, i, json_object_get(xid, "events_dropped"));
}
