/* SPDX-License-Identifier: MIT */
/* diagnose_gpu_topo.c - gpu-nic-far: every GPU of a node across the CPU
 * interconnect (SYS, as `nvidia-smi topo -m` says it) from every NIC a job's
 * inter-node traffic would take, so GPUDirect RDMA cannot be used and every
 * byte crosses the sockets. The distance comes from the sysfs paths of the
 * node's facts (gpu_pci.paths, gpu_pci.nics; gpu_topo.h).
 *
 * The data NICs: the ones with RDMA when the node has RDMA ports (NCCL's
 * IB/RoCE transport takes them: gpu_pci.rdma when the facts list the RDMA
 * devices' paths, else the IPoIB interfaces), else the interface suggested
 * for NCCL_SOCKET_IFNAME on that node (d->pred[i].data_iface), or the
 * interfaces enslaved to it (a bond). */
#include "probes/diagnose_internal.h"
#include "probes/gpu_topo.h"
#include "cd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence lines are bounded on purpose (as in diagnose.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define EV    640
#define NICS  16
#define ROOTN 64

struct nic {
	const char *name; /* borrowed from the facts */
	const char *path;
	int numa; /* -1 unknown */
};

/* The NUMA node the facts give for a name (gpu_pci.numa, when the agent
 * writes it: a PCI address or an interface), else -1. */
static int numa_given(json_t *pci, const char *name)
{
	json_t *v = json_object_get(json_object_get(pci, "numa"), name);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (int)json_integer_value(v) : -1;
}

static size_t add_nic(struct nic *nics, size_t n, const char *name, json_t *path)
{
	if (n == NICS || !json_is_string(path))
		return n;
	for (size_t k = 0; k < n; k++)
		if (strcmp(nics[k].name, name) == 0)
			return n;
	nics[n].name = name;
	nics[n].path = json_string_value(path);
	nics[n].numa = -1;
	return n + 1;
}

/* Node i's data NICs into nics (at most NICS); returns how many. */
static size_t data_nics(const struct dstate *st, size_t i, struct nic *nics)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *pci = json_object_get(n->nvidia, "gpu_pci"), *all = json_object_get(pci, "nics"),
	       *v;
	const char *name = st->d->pred[i].data_iface;
	size_t count = 0;

	if (n->rdma_ports > 0) {
		json_object_foreach(json_object_get(pci, "rdma"), name, v) count =
		    add_nic(nics, count, name, v);
		for (size_t k = 0; !count && k < n->nifaces; k++)
			if (strcmp(n->ifaces[k].kind, "ipoib") == 0)
				count = add_nic(nics, count, n->ifaces[k].name,
				                json_object_get(all, n->ifaces[k].name));
		if (count)
			return count;
		name = st->d->pred[i].data_iface;
	}
	if (!name[0])
		return 0;
	count = add_nic(nics, count, name, json_object_get(all, name));
	for (size_t k = 0; !count && k < n->nifaces; k++)
		if (strcmp(n->ifaces[k].master, name) == 0)
			count = add_nic(nics, count, n->ifaces[k].name,
			                json_object_get(all, n->ifaces[k].name));
	return count;
}

/* The GPU's sysfs path (gpu_pci.paths, by its NVML bus id) and NUMA node. */
static const char *gpu_path(json_t *pci, json_t *gpu, int *numa)
{
	json_t *h = json_object_get(gpu, "health"), *nn = json_object_get(h, "numa_node"), *v;
	const char *bus = json_string_value(json_object_get(h, "pci_bus_id")), *addr;
	unsigned long long want, have;

	*numa = json_is_integer(nn) ? (int)json_integer_value(nn) : -1;
	if (!bus || gpu_pci_key(bus, &want) != 0)
		return NULL;
	json_object_foreach(json_object_get(pci, "paths"), addr, v)
	{
		if (json_is_string(v) && gpu_pci_key(addr, &have) == 0 && have == want) {
			if (*numa < 0)
				*numa = numa_given(pci, addr);
			return json_string_value(v);
		}
	}
	return NULL;
}

/* A NIC's NUMA node: the facts', else that of a GPU under the same host
 * bridge (one root complex belongs to one socket). */
static void nic_numa(json_t *pci, json_t *gpus, struct nic *nic)
{
	char root[ROOTN], groot[ROOTN];
	json_t *g;
	size_t k;
	int numa;

	nic->numa = numa_given(pci, nic->name);
	if (nic->numa >= 0 || gpu_topo_root(nic->path, root, sizeof(root)) != 0)
		return;
	json_array_foreach(gpus, k, g)
	{
		const char *p = gpu_path(pci, g, &numa);

		if (p && numa >= 0 && gpu_topo_root(p, groot, sizeof(groot)) == 0 &&
		    strcmp(root, groot) == 0) {
			nic->numa = numa;
			return;
		}
	}
}

/* "1", or "unknown" (then two host bridges count as SYS: gpu_topo.h) */
static void numa_text(char *buf, size_t len, int numa)
{
	if (numa >= 0)
		snprintf(buf, len, "%d", numa);
	else
		snprintf(buf, len, "unknown");
}

void diagnose_gpu_nic_far(struct dstate *st, size_t i)
{
	const struct nm_node *n = &st->m->nodes[i];
	json_t *pci = json_object_get(n->nvidia, "gpu_pci"),
	       *gpus = json_object_get(n->nvidia, "gpus"), *g;
	struct nic nics[NICS];
	size_t nn = data_nics(st, i, nics), k, judged = 0;
	char *ev = NULL, line[EV], groot[ROOTN], nroot[ROOTN], gnuma[16], nnuma[16];

	if (!nn || !json_array_size(gpus))
		return;
	for (size_t q = 0; q < nn; q++)
		nic_numa(pci, gpus, &nics[q]);
	json_array_foreach(gpus, k, g)
	{
		json_t *idx = json_object_get(g, "index");
		int numa;
		const char *p = gpu_path(pci, g, &numa);

		if (!p)
			continue;
		for (size_t q = 0; q < nn; q++) {
			enum gpu_topo t = gpu_topo_between(p, nics[q].path, numa, nics[q].numa);

			if (t == GPU_TOPO_UNKNOWN)
				continue;
			if (t != GPU_TOPO_SYS)
				goto out; /* one GPU near one data NIC: not this finding */
			gpu_topo_root(p, groot, sizeof(groot));
			gpu_topo_root(nics[q].path, nroot, sizeof(nroot));
			numa_text(gnuma, sizeof(gnuma), numa);
			numa_text(nnuma, sizeof(nnuma), nics[q].numa);
			snprintf(
			    line, sizeof(line),
			    "%s/gpu%lld: SYS from %s (GPU under %s, NUMA %s; %s under %s, NUMA %s)",
			    n->host, json_is_integer(idx) ? json_integer_value(idx) : (long long)k,
			    nics[q].name, groot, gnuma, nics[q].name, nroot, nnuma);
			cd_strcatf(&ev, "%s%s", ev ? "\n" : "", line);
			judged++;
		}
	}
	if (judged)
		diagnose_note(
		    st, "gpu-nic-far", SEV_WARNING, n->host, i,
		    "every GPU of %N is across the CPU interconnect from its data NIC",
		    "NCCL cannot use GPUDirect RDMA across the sockets and every transfer "
		    "crosses them: put the data NIC (or one per socket) on the GPUs' "
		    "PCIe switches or socket, or check which NIC NCCL_SOCKET_IFNAME / "
		    "NCCL_IB_HCA name (nvidia-smi topo -m shows the matrix).",
		    ev);
out:
	free(ev);
}
