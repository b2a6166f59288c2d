/* SPDX-License-Identifier: MIT */
/*
 * reach_rdma.c - one end's verbs context, its queue pairs, and the line
 * helpers of the RDMA proof (reach_rdma.h). The connector's and the
 * listener's halves of the exchange are reach_rdma_try.c.
 */
#include "probes/reach_rdma.h"
#include "probes/reach_rdma_internal.h"
#include "probes/rdma_probe.h"
#include "proto.h"
#include "cd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int reach_rdma_spec_read(json_t *req, struct rdma_spec *s, char *msg, size_t msglen)
{
	json_t *o = json_object_get(req, "rdma");
	const char *dev;
	long long port, gid_index;

	memset(s, 0, sizeof(*s));
	if (!o || json_is_null(o))
		return 0;
	dev = json_string_value(json_object_get(o, "device"));
	if (!json_is_object(o) || !dev || !*dev || strlen(dev) >= sizeof(s->device) ||
	    strchr(dev, ' ') || proto_field_int(o, "port", 1, 255, &port) < 0 ||
	    !json_is_integer(json_object_get(o, "port")) ||
	    proto_field_int(o, "gid_index", -1, 255, &gid_index) < 0 ||
	    !json_is_integer(json_object_get(o, "gid_index"))) {
		snprintf(msg, msglen,
		         "\"rdma\" needs a string \"device\", an integer \"port\" 1..255 and "
		         "\"gid_index\" -1..255");
		return -1;
	}
	snprintf(s->device, sizeof(s->device), "%s", dev);
	s->port = (int)port;
	s->gid_index = (int)gid_index;
	return 1;
}

int reach_cut_rdma_suffix(char *line)
{
	size_t n = strlen(line), k = sizeof(REACH_RDMA_SUFFIX) - 1;

	if (n < k || strcmp(line + n - k, REACH_RDMA_SUFFIX) != 0)
		return 0;
	line[n - k] = '\0';
	return 1;
}

int reach_rdma_read_line(int fd, struct rdma_linebuf *lb, size_t *len)
{
	size_t room, take;
	ssize_t n;
	char *at, *nl;

	if (lb->len >= sizeof(lb->buf) - 1)
		lb->len = 0; /* the last call gave a whole line: start anew */
	at = lb->buf + lb->len;
	room = sizeof(lb->buf) - 1 - lb->len;
	n = recv(fd, at, room, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1;
	nl = memchr(at, '\n', (size_t)n);
	take = nl ? (size_t)(nl - at) + 1 : (size_t)n;
	if (recv(fd, at, take, MSG_DONTWAIT) != (ssize_t)take)
		return -1;
	lb->len += take;
	if (!nl)
		return lb->len == sizeof(lb->buf) - 1 ? -1 : 0;
	*len = lb->len - 1;
	lb->buf[*len] = '\0';
	lb->len = sizeof(lb->buf) - 1; /* the next call starts a new line */
	return 1;
}

int reach_rdma_send_line(int fd, const char *line, size_t len)
{
	return send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len ? 0 : -1;
}

struct rdma_side *reach_rdma_connect_side(json_t *req, size_t wanted, const char *token, char *why,
                                          size_t len)
{
	struct rdma_spec spec;
	long long bytes = REACH_RDMA_BYTES;
	char msg[160];

	proto_field_int(req, "rdma_bytes", 1, RDMA_BYTES_MAX, &bytes);
	if (reach_rdma_spec_read(req, &spec, msg, sizeof(msg)) <= 0) {
		snprintf(why, len, "the request names no RDMA port");
		return NULL;
	}
	return rdma_side_open(&spec, (int)(wanted < 1000 ? wanted + 1 : 1000), (size_t)bytes, token,
	                      why, len);
}

json_t *reach_rdma_listen_side(json_t *req, const char *token, struct rdma_side **side, char *why,
                               size_t len)
{
	struct rdma_spec spec;
	int rc = reach_rdma_spec_read(req, &spec, why, len);

	*side = NULL;
	if (rc == 0)
		snprintf(why, len, "no RDMA port in the listen request");
	if (rc <= 0)
		return rc < 0 ? json_pack("{ss}", "not_tested", why) : json_null();
	*side = rdma_side_open(&spec, 16, 0, token, why, len);
	if (!*side)
		return json_pack("{ss}", "not_tested", why);
	return json_pack("{sssisi}", "device", spec.device, "port", spec.port, "gid_index",
	                 spec.gid_index);
}

/* ------------------------------------------------------------------ side */

static int open_port(struct rdma_side *s, char *why, size_t len)
{
	struct cd_ibv_port_attr pa;
	int rc;

	memset(&pa, 0, sizeof(pa));
	rc = s->v.query_port(s->ctx, (uint8_t)s->spec.port, &pa);
	if (rc != 0) {
		snprintf(why, len, "no port %s:%d (ibv_query_port: %s)", s->spec.device,
		         s->spec.port, strerror(rc));
		return -1;
	}
	if (pa.state != CD_IBV_PORT_ACTIVE) {
		snprintf(why, len, "no ACTIVE port (%s:%d is in state %d)", s->spec.device,
		         s->spec.port, pa.state);
		return -1;
	}
	if (pa.link_layer == CD_IBV_LINK_LAYER_ETHERNET && s->spec.gid_index < 0) {
		snprintf(why, len, "no GID index for RoCE port %s:%d", s->spec.device,
		         s->spec.port);
		return -1;
	}
	s->lid = pa.lid;
	s->mtu = rdma_mtu_bytes(pa.active_mtu) ? rdma_mtu_bytes(pa.active_mtu) : 1024;
	memset(&s->gid, 0, sizeof(s->gid));
	if (s->spec.gid_index >= 0 &&
	    s->v.query_gid(s->ctx, (uint8_t)s->spec.port, s->spec.gid_index, &s->gid) != 0) {
		snprintf(why, len, "no GID at index %d of %s:%d", s->spec.gid_index, s->spec.device,
		         s->spec.port);
		return -1;
	}
	return 0;
}

static int make_src(struct rdma_side *s, size_t bytes, const char *token, char *why, size_t len)
{
	s->src = malloc(bytes);
	if (!s->src) {
		snprintf(why, len, "no memory for %zu bytes", bytes);
		return -1;
	}
	s->src_bytes = bytes;
	rdma_pattern_fill(s->src, bytes, token);
	s->src_mr = s->v.reg_mr(s->pd, s->src, bytes, CD_IBV_ACCESS_LOCAL_WRITE);
	if (!s->src_mr) {
		snprintf(why, len, "ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct rdma_side *rdma_side_open(const struct rdma_spec *spec, int cqe, size_t src_bytes,
                                 const char *token, char *why, size_t len)
{
	struct rdma_side *s = cd_calloc(1, sizeof(*s));
	char *path = verbs_lib_path(rdma_probe_root(NULL));

	s->spec = *spec;
	if (verbs_lib_open(&s->v, path, spec->device, why, len) < 0)
		goto fail;
	s->ctx = verbs_lib_open_device(&s->v, spec->device, why, len);
	if (!s->ctx || open_port(s, why, len) < 0)
		goto fail;
	s->pd = s->v.alloc_pd(s->ctx);
	if (!s->pd) {
		snprintf(why, len, "ibv_alloc_pd: %s", strerror(errno));
		goto fail;
	}
	s->cq = s->v.create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!s->cq) {
		snprintf(why, len, "ibv_create_cq: %s", strerror(errno));
		goto fail;
	}
	if (src_bytes && make_src(s, src_bytes, token, why, len) < 0)
		goto fail;
	free(path);
	return s;
fail:
	free(path);
	rdma_side_free(s);
	return NULL;
}

void rdma_side_free(struct rdma_side *s)
{
	if (!s)
		return;
	if (s->src_mr)
		s->v.dereg_mr(s->src_mr);
	free(s->src);
	if (s->cq)
		s->v.destroy_cq(s->cq);
	if (s->pd)
		s->v.dealloc_pd(s->pd);
	if (s->ctx)
		s->v.close_device(s->ctx);
	verbs_lib_close(&s->v);
	free(s);
}

const char *rdma_side_status(const struct rdma_side *s, int status)
{
	const char *w = s->v.wc_status_str ? s->v.wc_status_str(status) : NULL;

	return w ? w : rdma_wc_status_name(status);
}

/* ------------------------------------------------------------------- QP */

static uint32_t next_psn(void)
{
	static uint32_t x;

	if (!x)
		x = (uint32_t)reach_now_us() ^ (uint32_t)getpid() << 8;
	x = x * 1103515245u + 12345u;
	return (x >> 4) & 0xffffff;
}

struct cd_ibv_qp *rdma_qp_new(struct rdma_side *s, char *why, size_t len)
{
	struct cd_ibv_qp_init_attr init = {
	    .send_cq = s->cq,
	    .recv_cq = s->cq,
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = CD_IBV_QPT_RC};
	struct cd_ibv_qp_attr a = {.qp_state = CD_IBV_QPS_INIT,
	                           .port_num = (uint8_t)s->spec.port,
	                           .qp_access_flags =
	                               CD_IBV_ACCESS_LOCAL_WRITE | CD_IBV_ACCESS_REMOTE_WRITE};
	struct cd_ibv_qp *qp = s->v.create_qp(s->pd, &init);
	int rc;

	if (!qp) {
		snprintf(why, len, "ibv_create_qp: %s", strerror(errno));
		return NULL;
	}
	rc = s->v.modify_qp(qp, &a,
	                    CD_IBV_QP_STATE | CD_IBV_QP_PKEY_INDEX | CD_IBV_QP_PORT |
	                        CD_IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		snprintf(why, len, "ibv_modify_qp to INIT: %s", strerror(rc));
		s->v.destroy_qp(qp);
		return NULL;
	}
	return qp;
}

void rdma_local_endpoint(const struct rdma_side *s, const struct cd_ibv_qp *qp, uint64_t addr,
                         uint32_t rkey, struct rdma_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	snprintf(ep->device, sizeof(ep->device), "%s", s->spec.device);
	ep->port = s->spec.port;
	ep->lid = s->lid;
	ep->gid_index = s->spec.gid_index;
	memcpy(ep->gid, s->gid.raw, sizeof(ep->gid));
	ep->qpn = qp->qp_num & 0xffffff;
	ep->psn = next_psn();
	ep->addr = addr;
	ep->rkey = rkey;
	ep->mtu = s->mtu;
}

/* RTR then RTS toward peer, as ib_write_bw's ctx_connect does: the path
 * MTU both ports carry, global routing (the GID) where both ends have a
 * GID index, the local ACK timeout 14 (4.096 µs * 2^14, 67 ms) and 7
 * retries. 0, or -1 with the step that failed. */
int rdma_qp_connect(struct rdma_side *s, struct cd_ibv_qp *qp, const struct rdma_endpoint *self,
                    const struct rdma_endpoint *peer, char *why, size_t len)
{
	struct cd_ibv_qp_attr a = {0};
	int mtu = self->mtu < peer->mtu ? self->mtu : peer->mtu, rc;

	if ((self->gid_index < 0) != (peer->gid_index < 0)) {
		snprintf(why, len, "link layers differ");
		return -1;
	}
	a.qp_state = CD_IBV_QPS_RTR;
	a.path_mtu = rdma_mtu_enum(mtu);
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = (uint16_t)peer->lid;
	a.ah_attr.port_num = (uint8_t)self->port;
	if (self->gid_index >= 0) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, peer->gid, sizeof(peer->gid));
		a.ah_attr.grh.sgid_index = (uint8_t)self->gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	rc = s->v.modify_qp(qp, &a,
	                    CD_IBV_QP_STATE | CD_IBV_QP_AV | CD_IBV_QP_PATH_MTU |
	                        CD_IBV_QP_DEST_QPN | CD_IBV_QP_RQ_PSN |
	                        CD_IBV_QP_MAX_DEST_RD_ATOMIC | CD_IBV_QP_MIN_RNR_TIMER);
	if (rc != 0) {
		snprintf(why, len, "ibv_modify_qp to RTR: %s", strerror(rc));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = CD_IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = self->psn;
	a.max_rd_atomic = 1;
	rc =
	    s->v.modify_qp(qp, &a,
	                   CD_IBV_QP_STATE | CD_IBV_QP_TIMEOUT | CD_IBV_QP_RETRY_CNT |
	                       CD_IBV_QP_RNR_RETRY | CD_IBV_QP_SQ_PSN | CD_IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0) {
		snprintf(why, len, "ibv_modify_qp to RTS: %s", strerror(rc));
		return -1;
	}
	return 0;
}
