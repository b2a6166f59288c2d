/* SPDX-License-Identifier: MIT */
/* bench_net.c - NCCL's network lines of a bench node against the prediction
 * (see bench_net.h). */
#include "collectives/bench_net.h"

#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_net_fini(struct bench_net *net)
{
	json_decref(net->lines);
	net->lines = NULL;
}

/* The lines, one per '\n', as NCCL wrote them, into b for nccl_ib_parse_log
 * (the agent bounds them: 32 lines of 1024 bytes). */
static void joined(const json_t *lines, struct buf *b)
{
	size_t k;
	json_t *v;

	json_array_foreach(lines, k, v)
	{
		if (json_is_string(v))
			buf_append_strs(b, json_string_value(v), "\n", NULL);
	}
}

void bench_net_judge(const json_t *nccl_net, struct bench_net *net)
{
	const json_t *lines = json_object_get(nccl_net, "lines");
	const char *err = json_string_value(json_object_get(nccl_net, "error"));
	struct buf text;
	int rc;

	bench_net_fini(net);
	memset(&net->used, 0, sizeof(net->used));
	net->error[0] = net->why[0] = net->avoid[0] = '\0';
	net->dropped = json_integer_value(json_object_get(nccl_net, "dropped"));
	net->agrees = -1;
	if (!json_is_array(lines)) {
		snprintf(net->error, sizeof(net->error), "%s",
		         err                        ? err
		         : json_is_object(nccl_net) ? "bench_run's nccl_net has no lines"
		                                    : "no nccl_net in bench_run's answer");
		snprintf(net->why, sizeof(net->why), "NCCL's lines could not be read");
		return;
	}
	net->lines = json_deep_copy(lines);
	buf_init(&text, (size_t)1 << 20);
	joined(lines, &text);
	nccl_ib_parse_log(text.data ? text.data : "", text.len, &net->used);
	buf_fini(&text);
	rc = nccl_ib_compare(&net->predicted, &net->used, net->why, sizeof(net->why));
	net->agrees = rc == 0 ? 1 : rc == 1 ? 0 : -1;
}

/* "[0]mlx5_0:1/RoCE [1]mlx5_1:1/IB" as NCCL prints them (indexed), or
 * "mlx5_0:1/RoCE mlx5_1:1/IB" (a prediction has no order). */
static void devices(const struct nccl_ib_pick *p, int indexed, char *buf, size_t len)
{
	for (int k = 0; k < p->ndevs; k++) {
		const struct nccl_ib_dev *d = &p->devs[k];

		if (indexed)
			cd_appendf(buf, len, " [%d]%s:%d/%s", k, d->dev, d->port,
			           d->roce ? "RoCE" : "IB");
		else
			cd_appendf(buf, len, " %s:%d/%s", d->dev, d->port, d->roce ? "RoCE" : "IB");
	}
}

/* "NET/IB [0]...", "NET/Socket [0]eth0:... (reason)", "network X". */
static void side(const struct nccl_ib_pick *p, int used, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (p->transport) {
	case NCCL_IB_IB:
		cd_appendf(buf, len, "NET/IB");
		devices(p, used, buf, len);
		return;
	case NCCL_IB_SOCKET:
		cd_appendf(buf, len, "NET/Socket");
		if (p->socket[0])
			cd_appendf(buf, len, " %s", p->socket);
		if (p->reason[0])
			cd_appendf(buf, len, " (%s)", p->reason);
		return;
	case NCCL_IB_PLUGIN:
		cd_appendf(buf, len, "%s", p->reason);
		return;
	case NCCL_IB_UNKNOWN:
		cd_appendf(buf, len, "nothing (no RDMA facts)");
		return;
	}
}

void bench_net_line(const struct bench_net *net, const char *host_or_null, char *buf, size_t len)
{
	char used[1024], pred[1024], host[300] = "";

	if (host_or_null)
		snprintf(host, sizeof(host), "%s: ", host_or_null);
	side(&net->used, 1, used, sizeof(used));
	side(&net->predicted, 0, pred, sizeof(pred));
	if (net->error[0])
		snprintf(buf, len, "%sNCCL's lines could not be read (%s); predicted %s", host,
		         net->error, pred);
	else if (net->used.transport == NCCL_IB_UNKNOWN)
		snprintf(buf, len, "%sNCCL's lines name no network; predicted %s", host, pred);
	else if (net->predicted.transport == NCCL_IB_UNKNOWN)
		snprintf(buf, len, "%sNCCL used %s (no prediction: no RDMA facts)", host, used);
	else if (net->agrees == 1 && net->predicted.transport == NCCL_IB_SOCKET &&
	         net->predicted.reason[0])
		snprintf(buf, len, "%sNCCL used %s (predicted: the same, as %s)", host, used,
		         net->predicted.reason);
	else if (net->agrees == 1)
		snprintf(buf, len, "%sNCCL used %s (predicted: the same)", host, used);
	else if (net->used.transport != net->predicted.transport)
		snprintf(buf, len, "%sNCCL used %s; predicted %s", host, used, pred);
	else
		snprintf(buf, len, "%sNCCL used %s; predicted %s: %s", host, used, pred, net->why);
	if (net->avoid[0])
		cd_appendf(buf, len, "; a check's plan would avoid it: %s", net->avoid);
}

static void set_text(json_t *o, const char *key, const char *s)
{
	if (s[0])
		json_object_set_new(o, key, json_string(s));
}

static json_t *pick_json(const struct nccl_ib_pick *p, int used)
{
	json_t *o = json_pack("{ss}", "transport", nccl_ib_transport_name(p->transport));
	json_t *devs = json_array();

	for (int k = 0; k < p->ndevs; k++) {
		const struct nccl_ib_dev *d = &p->devs[k];
		json_t *one = json_pack("{sssiss}", "device", d->dev, "port", d->port, "link_layer",
		                        d->roce ? "RoCE" : "IB");

		if (!used && d->roce && d->gid_index >= 0)
			json_object_set_new(one, "gid_index", json_integer(d->gid_index));
		json_array_append_new(devs, one);
	}
	json_object_set_new(o, "devices", devs);
	set_text(o, "reason", p->reason);
	if (used)
		set_text(o, "socket", p->socket);
	return o;
}

json_t *bench_net_json(const struct bench_net *net)
{
	json_t *nccl = pick_json(&net->used, 1), *o;

	if (net->lines)
		json_object_set(nccl, "lines", net->lines);
	if (net->dropped > 0)
		json_object_set_new(nccl, "dropped", json_integer(net->dropped));
	o = json_pack("{soso}", "nccl", nccl, "predicted", pick_json(&net->predicted, 0));
	json_object_set_new(o, "agrees", net->agrees < 0 ? json_null() : json_boolean(net->agrees));
	set_text(o, "why", net->why);
	set_text(o, "error", net->error);
	set_text(o, "avoidable", net->avoid);
	return o;
}
