/* SPDX-License-Identifier: MIT */
/*
 * gpu_topo.c - PCI distances from sysfs paths (gpu_topo.h).
 */
#include "gpu_topo.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 32 /* bridges below a host bridge; real ones have a handful */
#define COMP      64 /* one path component */

/* The components of path: comp[0] the host bridge ("pci0000:17"), then the
 * PCI addresses down to the device; a component that is not a PCI address
 * ends the chain (a virtio NIC's "virtio0" is its PCI device's child).
 * Returns how many, or 0 when the path is not under a host bridge. */
static int split(const char *path, char comp[][COMP])
{
	static const char prefix[] = "/sys/devices/";
	const char *p = path;
	int n = 0;

	if (strncmp(p, prefix, sizeof(prefix) - 1) != 0)
		return 0;
	p += sizeof(prefix) - 1;
	while (*p && n < MAX_DEPTH + 1) {
		size_t len = strcspn(p, "/");
		unsigned long long key;

		if (len == 0 || len >= COMP)
			break;
		memcpy(comp[n], p, len);
		comp[n][len] = '\0';
		if (n == 0 ? strncmp(comp[0], "pci", 3) != 0 : gpu_pci_key(comp[n], &key) != 0)
			break;
		n++;
		p += len;
		p += *p == '/';
	}
	return n >= 2 ? n : 0;
}

const char *gpu_topo_name(enum gpu_topo t)
{
	static const char *const names[] = {"?", "PIX", "PXB", "PHB", "NODE", "SYS"};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

int gpu_topo_root(const char *path, char *buf, unsigned len)
{
	char comp[MAX_DEPTH + 1][COMP];

	if (len)
		buf[0] = '\0';
	if (!split(path, comp))
		return -1;
	snprintf(buf, len, "%s", comp[0]);
	return 0;
}

enum gpu_topo gpu_topo_between(const char *a, const char *b, int numa_a, int numa_b)
{
	char ca[MAX_DEPTH + 1][COMP], cb[MAX_DEPTH + 1][COMP];
	int na = split(a, ca), nb = split(b, cb), common = 0, below_a, below_b;

	if (!na || !nb)
		return GPU_TOPO_UNKNOWN;
	if (strcmp(ca[0], cb[0]) != 0)
		return numa_a >= 0 && numa_a == numa_b ? GPU_TOPO_NODE : GPU_TOPO_SYS;
	while (common + 1 < na && common + 1 < nb && strcmp(ca[common + 1], cb[common + 1]) == 0)
		common++;
	if (common == 0)
		return GPU_TOPO_PHB; /* only the host bridge in common */
	/* the bridges below the common one on each side, the device excluded */
	below_a = na - 1 - common - 1;
	below_b = nb - 1 - common - 1;
	if (below_a < 0 || below_b < 0 || (below_a <= 1 && below_b <= 1))
		return GPU_TOPO_PIX;
	return GPU_TOPO_PXB;
}

int gpu_pci_key(const char *addr, unsigned long long *key)
{
	unsigned dom, bus, dev, fn;
	int used = 0;

	if (!addr || strlen(addr) > 20)
		return -1;
	if (sscanf(addr, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &used) == 4 &&
	    addr[used] == '\0')
		goto ok;
	used = 0;
	if (sscanf(addr, "%8x:%2x:%2x%n", &dom, &bus, &dev, &used) == 3 && addr[used] == '\0')
		goto ok;
	return -1;
ok:
	if (dev > 0x1f)
		return -1;
	*key = (unsigned long long)dom << 24 | (unsigned long long)bus << 16 |
	       (unsigned long long)dev << 8;
	return 0;
}
