/* SPDX-License-Identifier: MIT */
/*
 * nccl_ib_log.c - NCCL's own NCCL_DEBUG=INFO lines about its network, read
 * into a struct nccl_ib_pick, and their comparison with the prediction
 * (nccl_ib.h). The line shapes are NCCL's format strings:
 *   - ncclIbInit (src/transport/net_ib.cc, net_ib/init.cc in 2.23+):
 *     "NET/IB : Using%s %s; OOB %s:%s" with " [%d]%s:%d/%s" per device
 *     ("IB" or "RoCE") and "[RO]" when relaxed ordering is on;
 *     "NET/IB : No device found."; "NET/IB : No IP interface found.";
 *   - ncclNetSocketInit (src/transport/net_socket.cc):
 *     "NET/Socket : Using [0]eth0:10.0.0.1<0> ...";
 *   - src/misc/ibvwrap.cc (ibvsymbols.cc): "Failed to open libibverbs.so[.1]";
 *   - src/init.cc: "Using network %s" (the network NCCL kept: "IB",
 *     "Socket", or a plugin's name).
 * Anything else, "NET/Plugin ..." lines included, is skipped. Pure.
 */
#include "nccl_ib.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"

/* A bounded copy of one line (NCCL lines are far shorter). */
#define LINE_MAX_LEN 2048

static const char *find_in(const char *line, const char *what)
{
	return strstr(line, what);
}

/* " [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; OOB ..." -> devices. */
static void parse_devices(const char *p, struct nccl_ib_pick *out)
{
	const char *end = strchr(p, ';');

	if (!end)
		end = p + strlen(p);
	while ((p = strchr(p, '[')) && p < end && out->ndevs < NCCL_IB_MAX_DEVS) {
		struct nccl_ib_dev *d = &out->devs[out->ndevs];
		const char *name, *colon, *q = p + 1;
		size_t n;

		p++;
		if (!isdigit((unsigned char)*q))
			continue; /* "[RO]" */
		while (isdigit((unsigned char)*q))
			q++;
		if (*q != ']')
			continue;
		name = q + 1;
		colon = name + strcspn(name, ": [;");
		n = (size_t)(colon - name);
		if (*colon != ':' || n == 0 || n >= sizeof(d->dev) || colon >= end ||
		    !isdigit((unsigned char)colon[1]))
			continue;
		memset(d, 0, sizeof(*d));
		memcpy(d->dev, name, n);
		d->port = atoi(colon + 1);
		q = colon + 1 + strspn(colon + 1, "0123456789");
		d->roce = strncmp(q, "/RoCE", 5) == 0;
		if (!d->roce && strncmp(q, "/IB", 3) != 0)
			continue;
		d->gid_index = -1;
		d->gid_type = -1;
		snprintf(d->gid_family, sizeof(d->gid_family), "%s", d->roce ? "" : "ib");
		out->ndevs++;
	}
}

static void copy_rest(char *dst, size_t cap, const char *src)
{
	size_t n = strcspn(src, "\r\n");

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* One line; *network is set by "Using network X". */
static void parse_line(const char *line, struct nccl_ib_pick *out, int *ib_seen, int *sock_seen,
                       char *network, size_t netcap)
{
	const char *p;

	if ((p = find_in(line, "NET/IB : Using")) && !*ib_seen) {
		*ib_seen = 1;
		copy_rest(out->ib_line, sizeof(out->ib_line), p);
		parse_devices(p + strlen("NET/IB : Using"), out);
	} else if ((p = find_in(line, "NET/IB : No device found.")) ||
	           (p = find_in(line, "NET/IB : No IP interface found."))) {
		if (!out->reason[0])
			copy_rest(out->reason, sizeof(out->reason), p);
	} else if (find_in(line, "Failed to open libibverbs")) {
		if (!out->reason[0])
			snprintf(out->reason, sizeof(out->reason), "no libibverbs");
	} else if ((p = find_in(line, "NET/Socket : Using ")) && !*sock_seen) {
		*sock_seen = 1;
		copy_rest(out->socket, sizeof(out->socket), p + strlen("NET/Socket : Using "));
	} else if ((p = find_in(line, "Using network ")) && !network[0]) {
		copy_rest(network, netcap, p + strlen("Using network "));
	}
}

static void decide(struct nccl_ib_pick *out, int ib_seen, int sock_seen, const char *network)
{
	if (network[0]) {
		if (strcmp(network, "IB") == 0)
			out->transport = NCCL_IB_IB;
		else if (strcmp(network, "Socket") == 0)
			out->transport = NCCL_IB_SOCKET;
		else {
			out->transport = NCCL_IB_PLUGIN;
			snprintf(out->reason, sizeof(out->reason), "network %.200s", network);
		}
	} else if (ib_seen && out->ndevs > 0) {
		out->transport = NCCL_IB_IB;
	} else if (sock_seen) {
		out->transport = NCCL_IB_SOCKET;
	}
	if (out->transport != NCCL_IB_IB)
		out->ndevs = 0;
	else
		out->reason[0] = '\0';
}

int nccl_ib_parse_log(const char *buf, size_t len, struct nccl_ib_pick *out)
{
	static char line[LINE_MAX_LEN];
	char network[64] = "";
	int ib_seen = 0, sock_seen = 0;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < len) {
		size_t n = 0;

		while (i < len && buf[i] != '\n') {
			if (n + 1 < sizeof(line))
				line[n++] = buf[i] ? buf[i] : ' ';
			i++;
		}
		i++;
		line[n] = '\0';
		parse_line(line, out, &ib_seen, &sock_seen, network, sizeof(network));
	}
	decide(out, ib_seen, sock_seen, network);
	return out->transport == NCCL_IB_UNKNOWN ? CD_ERR_NOTFOUND : 0;
}

static int has_dev(const struct nccl_ib_pick *p, const struct nccl_ib_dev *d)
{
	for (int i = 0; i < p->ndevs; i++) {
		if (p->devs[i].port == d->port && strcmp(p->devs[i].dev, d->dev) == 0)
			return 1;
	}
	return 0;
}

static void dev_list(const struct nccl_ib_pick *p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < p->ndevs; i++)
		cd_appendf(buf, len, "%s%s:%d", i ? " " : "", p->devs[i].dev, p->devs[i].port);
}

/* The devices one side has and the other lacks, appended in words. */
static int missing_devs(const struct nccl_ib_pick *a, const struct nccl_ib_pick *b,
                        const char *label, char *buf, size_t len)
{
	int n = 0;

	for (int i = 0; i < a->ndevs; i++) {
		if (has_dev(b, &a->devs[i]))
			continue;
		cd_appendf(buf, len, "%s%s %s:%d", buf[0] ? "; " : "", label, a->devs[i].dev,
		           a->devs[i].port);
		n++;
	}
	return n;
}

static void side(const struct nccl_ib_pick *p, char *buf, size_t len)
{
	char devs[256];

	dev_list(p, devs, sizeof(devs));
	snprintf(buf, len, "%s (%s)", nccl_ib_transport_name(p->transport),
	         p->transport == NCCL_IB_IB ? devs
	         : p->reason[0]             ? p->reason
	                                    : "no reason given");
}

int nccl_ib_compare(const struct nccl_ib_pick *predicted, const struct nccl_ib_pick *seen,
                    char *buf, size_t len)
{
	char a[320], b[320];
	int n;

	buf[0] = '\0';
	if (predicted->transport == NCCL_IB_UNKNOWN || seen->transport == NCCL_IB_UNKNOWN) {
		snprintf(buf, len, "%s",
		         predicted->transport == NCCL_IB_UNKNOWN ? "no prediction (no RDMA facts)"
		                                                 : "NCCL's lines name no network");
		return -1;
	}
	if (predicted->transport != seen->transport) {
		side(predicted, a, sizeof(a));
		side(seen, b, sizeof(b));
		snprintf(buf, len, "predicted %s, NCCL used %s", a, b);
		return 1;
	}
	if (predicted->transport != NCCL_IB_IB)
		return 0;
	n = missing_devs(seen, predicted, "NCCL also used", buf, len);
	n += missing_devs(predicted, seen, "NCCL did not use", buf, len);
	return n > 0;
}
