/* SPDX-License-Identifier: MIT */
/*
 * gpu_topo.h - pure: how far apart two PCI devices of a node are, from
 * their sysfs paths, in the words of `nvidia-smi topo -m` (and NCCL's
 * topology): the gpu-nic-far finding (probes/diagnose_gpu.c) and PCI bus
 * ids as NVML and the kernel write them.
 *
 * A device's path is the realpath of its sysfs node, e.g.
 * "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0": the host bridge
 * (root complex) "pci0000:17", then every PCI bridge down to the device.
 * The common ancestor of two paths says what traffic between the devices
 * crosses:
 *   PIX  at most one PCIe switch (each side at most one bridge below the
 *        common one, or one device above the other)
 *   PXB  several PCIe bridges, without the host bridge
 *   PHB  the host bridge (the same root complex, different root ports)
 *   NODE the interconnect between host bridges of one NUMA node
 *   SYS  the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)
 * Two host bridges are NODE only when both NUMA nodes are known and equal;
 * otherwise SYS.
 */
#ifndef CD_PROBES_GPU_TOPO_H
#define CD_PROBES_GPU_TOPO_H

enum gpu_topo {
	GPU_TOPO_UNKNOWN = 0, /* a path that is not a PCI device's */
	GPU_TOPO_PIX,
	GPU_TOPO_PXB,
	GPU_TOPO_PHB,
	GPU_TOPO_NODE,
	GPU_TOPO_SYS,
};

/* "PIX" ... "SYS", "?" for GPU_TOPO_UNKNOWN. Static. */
const char *gpu_topo_name(enum gpu_topo t);

/* The distance between the devices at sysfs paths a and b; numa_a and
 * numa_b are their NUMA nodes, -1 when unknown. */
enum gpu_topo gpu_topo_between(const char *a, const char *b, int numa_a, int numa_b);

/* The host bridge of a sysfs path ("pci0000:17") into buf (len bytes):
 * 0, or -1 (buf "") when the path is not a PCI device's. */
int gpu_topo_root(const char *path, char *buf, unsigned len);

/*
 * A PCI address as NVML ("00000000:18:00.0"), sysfs ("0000:18:00.0") or
 * the kernel's Xid line ("0000:18:00", no function) write it, hex digits
 * in either case. Returns 0 with *key = domain << 24 | bus << 16 | device
 * << 8 (the function left out: an Xid names the device), or -1.
 */
int gpu_pci_key(const char *addr, unsigned long long *key);

#endif
