/* SPDX-License-Identifier: MIT */
/*
 * fake_ibverbs.c - a stand-in HCA for the matrix's RDMA proof, built as
 * libibverbs.so.1 (an HCA cannot exist on the test machines: their kernel
 * has no RDMA at all). tests/integration/test_rdma_pairs.sh puts it where a
 * node's fixture tree says libibverbs is, and the agent dlopens it as it
 * would the real one (probes/verbs_lib.c).
 *
 * It implements the calls the agent makes with the signatures, return
 * conventions and structure layouts of rdma-core's libibverbs (verbs.h;
 * clusterdoc's own declarations of them are probes/verbs_abi.h), as the man
 * pages give them:
 *   ibv_get_device_list(3)  a NULL-terminated array, *num_devices its length
 *   ibv_get_device_name(3), ibv_free_device_list(3)
 *   ibv_open_device(3)      a context, NULL and errno on failure;
 *                           ibv_close_device(3) 0 or -1
 *   ibv_query_port(3)       0, or the value of errno on failure
 *   ibv_query_gid(3)        0, or -1 on failure
 *   ibv_alloc_pd(3), ibv_reg_mr(3), ibv_create_cq(3), ibv_create_qp(3)
 *                           the object, or NULL and errno; their destroy
 *                           calls 0 or the value of errno
 *   ibv_modify_qp(3)        0, or the value of errno (EINVAL for a mask the
 *                           transition's table does not allow)
 *   ibv_post_send(3)        through context->ops.post_send: 0, or the value
 *                           of errno and *bad_wr the first request refused
 *   ibv_poll_cq(3)          through context->ops.poll_cq: the number of
 *                           completions (0 when none), negative on failure
 *   ibv_wc_status_str(3)    rdma-core's words
 * Devices, ports and GIDs come from the node's fixture tree under
 * $CLUSTERDOC_SYSFS_ROOT, the same sysfs files the facts read (tests/
 * fixtures/rdma/README.md): state, phys_state, link_layer, lid, sm_lid,
 * gids/<i>, and the active MTU from the port's netdev MTU as rxe (Soft-RoCE,
 * drivers/infiniband/sw/rxe, rxe_net.c eth_mtu_int_to_enum) derives it.
 *
 * The wire: RoCE v2 carries a QP's packets in UDP to port 4791 of the
 * address the destination GID encodes. This stand-in carries each RDMA
 * WRITE in one TCP connection to port 4791 (FAKE_IBVERBS_PORT overrides it)
 * of that IPv4 address, from the address of the source GID, so a real nft
 * rule between two namespaces stops it as it would stop the fabric's
 * packets. The requester gives up after the QP's retry budget, as an HCA
 * does: retry_cnt + 1 tries of the local ACK timeout, 4.096 µs * 2^timeout
 * (IBTA; ibv_modify_qp(3)), and completes the request with
 * IBV_WC_RETRY_EXC_ERR. The responder checks the QP number (an unknown or
 * not-ready QP answers nothing: the requester's retries run out) and the
 * rkey, range and IBV_ACCESS_REMOTE_WRITE of the target memory region
 * (IBV_WC_REM_ACCESS_ERR otherwise), then places the bytes and answers.
 * Only IPv4-mapped GIDs are routed; an InfiniBand (LID-addressed) QP's
 * writes end in IBV_WC_RETRY_EXC_ERR.
 *
 * FAKE_IBVERBS_CRASH_ON_OPEN=1 makes ibv_open_device abort, as a broken
 * provider might; FAKE_IBVERBS_NO_COMPLETION=1 makes a write never
 * complete (no completion is ever queued), as a wedged HCA might;
 * FAKE_IBVERBS_MEMLOCK=1 refuses to register memory for remote writes
 * with ENOMEM, as a locked-memory limit too small for the buffer does.
 */
#include "fake_ibverbs.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 32

/* ------------------------------------------------------------ the tree */

struct fake_device {
	char name[64];
};

static const char *root(void)
{
	const char *r = getenv("CLUSTERDOC_SYSFS_ROOT");

	return r ? r : "";
}

/* The first line of root/sys/class/infiniband/<dev>/<rel>, without its
 * newline; -1 when unreadable. */
static int read_attr(const char *dev, const char *rel, char *buf, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/%s", root(), dev, rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct fake_device *)a)->name, ((const struct fake_device *)b)->name);
}

static struct fake_device devices[MAX_DEVS];
static int ndevices = -1;

static void load_devices(void)
{
	char path[1024];
	DIR *d;
	struct dirent *e;

	if (ndevices >= 0)
		return;
	ndevices = 0;
	snprintf(path, sizeof(path), "%s/sys/class/infiniband", root());
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && ndevices < MAX_DEVS) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(devices[ndevices++].name, sizeof(devices[0].name), "%.63s", e->d_name);
	}
	closedir(d);
	qsort(devices, (size_t)ndevices, sizeof(devices[0]), cmp_names);
}

struct cd_ibv_device **ibv_get_device_list(int *num_devices)
{
	struct cd_ibv_device **list;

	pthread_mutex_lock(&fake_lock);
	load_devices();
	list = calloc((size_t)ndevices + 1, sizeof(*list));
	for (int i = 0; list && i < ndevices; i++)
		list[i] = (struct cd_ibv_device *)&devices[i];
	pthread_mutex_unlock(&fake_lock);
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (num_devices)
		*num_devices = ndevices;
	return list;
}

void ibv_free_device_list(struct cd_ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct cd_ibv_device *device)
{
	return ((struct fake_device *)device)->name;
}

/* ------------------------------------------------------------ objects */

pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t fake_mr_idle = PTHREAD_COND_INITIALIZER;
struct fake_mr *fake_mrs;
struct fake_qp *fake_qps;
static uint32_t next_key = 0x100; /* under fake_lock */
static uint32_t next_qpn = 0x11;  /* under fake_lock */

/* ------------------------------------------------------- context, port */

struct fake_context {
	struct cd_ibv_context ctx;
	struct fake_device *dev;
};

static int fake_poll_cq(struct cd_ibv_cq *cq, int num_entries, struct cd_ibv_wc *wc);
static int fake_post_send(struct cd_ibv_qp *qp, struct cd_ibv_send_wr *wr,
                          struct cd_ibv_send_wr **bad_wr);

struct cd_ibv_context *ibv_open_device(struct cd_ibv_device *device)
{
	struct fake_context *c;
	const char *crash = getenv("FAKE_IBVERBS_CRASH_ON_OPEN");

	if (crash && strcmp(crash, "1") == 0)
		abort();
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = (struct fake_device *)device;
	c->ctx.device = device;
	c->ctx.ops.poll_cq = fake_poll_cq;
	c->ctx.ops.post_send = fake_post_send;
	c->ctx.cmd_fd = c->ctx.async_fd = -1;
	pthread_mutex_init(&c->ctx.mutex, NULL);
	pthread_mutex_lock(&fake_lock);
	fake_wire_up();
	pthread_mutex_unlock(&fake_lock);
	return &c->ctx;
}

int ibv_close_device(struct cd_ibv_context *context)
{
	pthread_mutex_lock(&fake_lock);
	fake_wire_down();
	pthread_mutex_unlock(&fake_lock);
	pthread_mutex_destroy(&context->mutex);
	free(context);
	return 0;
}

static const char *dev_name(struct cd_ibv_context *ctx)
{
	return ((struct fake_context *)ctx)->dev->name;
}

/* rxe's eth_mtu_int_to_enum: the IB MTU that fits the netdev's MTU less
 * the RoCE v2 headers. */
static int mtu_of_netdev(int mtu)
{
	mtu -= 80;
	return mtu >= 4096   ? CD_IBV_MTU_4096
	       : mtu >= 2048 ? CD_IBV_MTU_2048
	       : mtu >= 1024 ? CD_IBV_MTU_1024
	       : mtu >= 512  ? CD_IBV_MTU_512
	                     : CD_IBV_MTU_256;
}

static int netdev_mtu(const char *dev, int port)
{
	char rel[128], ndev[64], path[1024];
	FILE *f;
	int mtu = 1500;

	snprintf(rel, sizeof(rel), "ports/%d/gid_attrs/ndevs/0", port);
	if (read_attr(dev, rel, ndev, sizeof(ndev)) < 0)
		return mtu;
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/mtu", root(), ndev);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &mtu) != 1)
			mtu = 1500;
		fclose(f);
	}
	return mtu;
}

static int count_gids(const char *dev, int port)
{
	char path[1024];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d/gids", root(), dev, port);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int ibv_query_port(struct cd_ibv_context *context, uint8_t port_num, struct cd_ibv_port_attr *attr)
{
	const char *dev = dev_name(context);
	char rel[64], buf[128];

	memset(attr, 0, sizeof(*attr));
	snprintf(rel, sizeof(rel), "ports/%u/state", port_num);
	if (read_attr(dev, rel, buf, sizeof(buf)) < 0)
		return errno = EINVAL;
	attr->state = atoi(buf);
	snprintf(rel, sizeof(rel), "ports/%u/phys_state", port_num);
	if (read_attr(dev, rel, buf, sizeof(buf)) == 0)
		attr->phys_state = (uint8_t)atoi(buf);
	snprintf(rel, sizeof(rel), "ports/%u/link_layer", port_num);
	attr->link_layer =
	    read_attr(dev, rel, buf, sizeof(buf)) == 0 && strcmp(buf, "Ethernet") == 0
	        ? CD_IBV_LINK_LAYER_ETHERNET
	        : CD_IBV_LINK_LAYER_INFINIBAND;
	snprintf(rel, sizeof(rel), "ports/%u/lid", port_num);
	if (read_attr(dev, rel, buf, sizeof(buf)) == 0)
		attr->lid = (uint16_t)strtoul(buf, NULL, 16);
	snprintf(rel, sizeof(rel), "ports/%u/sm_lid", port_num);
	if (read_attr(dev, rel, buf, sizeof(buf)) == 0)
		attr->sm_lid = (uint16_t)strtoul(buf, NULL, 16);
	attr->max_mtu = CD_IBV_MTU_4096;
	attr->active_mtu = attr->link_layer == CD_IBV_LINK_LAYER_ETHERNET
	                       ? mtu_of_netdev(netdev_mtu(dev, port_num))
	                       : CD_IBV_MTU_4096;
	attr->gid_tbl_len = count_gids(dev, port_num);
	attr->max_msg_sz = 1u << 31;
	attr->pkey_tbl_len = 1;
	return 0;
}

int ibv_query_gid(struct cd_ibv_context *context, uint8_t port_num, int index,
                  union cd_ibv_gid *gid)
{
	char rel[64], buf[128];
	unsigned g[8];

	snprintf(rel, sizeof(rel), "ports/%u/gids/%d", port_num, index);
	if (index < 0 || read_attr(dev_name(context), rel, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
	           &g[6], &g[7]) != 8)
		return -1;
	for (int i = 0; i < 8; i++) {
		gid->raw[2 * i] = (uint8_t)(g[i] >> 8);
		gid->raw[2 * i + 1] = (uint8_t)g[i];
	}
	return 0;
}

/* ---------------------------------------------------------- PD, MR, CQ */

struct cd_ibv_pd *ibv_alloc_pd(struct cd_ibv_context *context)
{
	struct cd_ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	return pd;
}

int ibv_dealloc_pd(struct cd_ibv_pd *pd)
{
	free(pd);
	return 0;
}

struct cd_ibv_mr *ibv_reg_mr(struct cd_ibv_pd *pd, void *addr, size_t length, int access)
{
	struct fake_mr *m;

	/* ibv_reg_mr(3): remote write needs local write */
	if (!addr || !length ||
	    ((access & CD_IBV_ACCESS_REMOTE_WRITE) && !(access & CD_IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & CD_IBV_ACCESS_REMOTE_WRITE) && getenv("FAKE_IBVERBS_MEMLOCK") &&
	    strcmp(getenv("FAKE_IBVERBS_MEMLOCK"), "1") == 0) {
		errno = ENOMEM;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->access = access;
	pthread_mutex_lock(&fake_lock);
	m->mr.lkey = m->mr.rkey = next_key++;
	m->next = fake_mrs;
	fake_mrs = m;
	pthread_mutex_unlock(&fake_lock);
	return &m->mr;
}

int ibv_dereg_mr(struct cd_ibv_mr *mr)
{
	struct fake_mr *m = (struct fake_mr *)mr;

	pthread_mutex_lock(&fake_lock);
	m->gone = 1;
	while (m->busy)
		pthread_cond_wait(&fake_mr_idle, &fake_lock);
	for (struct fake_mr **p = &fake_mrs; *p; p = &(*p)->next) {
		if (*p == m) {
			*p = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	free(m);
	return 0;
}

struct cd_ibv_cq *ibv_create_cq(struct cd_ibv_context *context, int cqe, void *cq_context,
                                struct cd_ibv_comp_channel *channel, int comp_vector)
{
	struct fake_cq *c;

	if (cqe < 1 || cqe > CQ_MAX) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->cq.context = context;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	pthread_mutex_init(&c->mu, NULL);
	return &c->cq;
}

int ibv_destroy_cq(struct cd_ibv_cq *cq)
{
	struct fake_cq *c = (struct fake_cq *)cq;

	pthread_mutex_destroy(&c->mu);
	free(c);
	return 0;
}

static void cq_push(struct cd_ibv_cq *cq, const struct cd_ibv_wc *wc)
{
	struct fake_cq *c = (struct fake_cq *)cq;

	pthread_mutex_lock(&c->mu);
	if (c->n < CQ_MAX)
		c->wc[(c->head + c->n++) % CQ_MAX] = *wc;
	pthread_mutex_unlock(&c->mu);
}

static int fake_poll_cq(struct cd_ibv_cq *cq, int num_entries, struct cd_ibv_wc *wc)
{
	struct fake_cq *c = (struct fake_cq *)cq;
	int n = 0;

	if (num_entries < 0)
		return -1;
	pthread_mutex_lock(&c->mu);
	while (n < num_entries && c->n) {
		wc[n++] = c->wc[c->head];
		c->head = (c->head + 1) % CQ_MAX;
		c->n--;
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* ------------------------------------------------------------------ QP */

struct cd_ibv_qp *ibv_create_qp(struct cd_ibv_pd *pd, struct cd_ibv_qp_init_attr *init)
{
	struct fake_qp *q;

	if (init->qp_type != CD_IBV_QPT_RC || !init->send_cq || !init->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->qp.context = pd->context;
	q->qp.qp_context = init->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = init->send_cq;
	q->qp.recv_cq = init->recv_cq;
	q->qp.qp_type = CD_IBV_QPT_RC;
	q->sq_sig_all = init->sq_sig_all;
	q->tail = &q->jobs;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_mutex_lock(&fake_lock);
	q->qp.qp_num = next_qpn++;
	q->next = fake_qps;
	fake_qps = q;
	pthread_mutex_unlock(&fake_lock);
	return &q->qp;
}

/* The attributes each transition needs (ibv_modify_qp(3)'s table, RC). */
static int required(int from, int to)
{
	if (from == CD_IBV_QPS_RESET && to == CD_IBV_QPS_INIT)
		return CD_IBV_QP_STATE | CD_IBV_QP_PKEY_INDEX | CD_IBV_QP_PORT |
		       CD_IBV_QP_ACCESS_FLAGS;
	if (from == CD_IBV_QPS_INIT && to == CD_IBV_QPS_RTR)
		return CD_IBV_QP_STATE | CD_IBV_QP_AV | CD_IBV_QP_PATH_MTU | CD_IBV_QP_DEST_QPN |
		       CD_IBV_QP_RQ_PSN | CD_IBV_QP_MAX_DEST_RD_ATOMIC | CD_IBV_QP_MIN_RNR_TIMER;
	if (from == CD_IBV_QPS_RTR && to == CD_IBV_QPS_RTS)
		return CD_IBV_QP_STATE | CD_IBV_QP_SQ_PSN | CD_IBV_QP_TIMEOUT |
		       CD_IBV_QP_RETRY_CNT | CD_IBV_QP_RNR_RETRY | CD_IBV_QP_MAX_QP_RD_ATOMIC;
	if (to == CD_IBV_QPS_RESET || to == CD_IBV_QPS_ERR)
		return CD_IBV_QP_STATE;
	return -1;
}

static void *requester(void *arg);

/* INIT -> RTR: a RoCE port's address vector must be global, its source
 * GID one the port has. */
static int check_av(struct fake_qp *q, const struct cd_ibv_qp_attr *attr)
{
	struct cd_ibv_port_attr pa;
	union cd_ibv_gid g;

	if (ibv_query_port(q->qp.context, q->port, &pa) != 0)
		return EINVAL;
	if (pa.link_layer == CD_IBV_LINK_LAYER_ETHERNET &&
	    (!attr->ah_attr.is_global ||
	     ibv_query_gid(q->qp.context, q->port, attr->ah_attr.grh.sgid_index, &g) != 0))
		return EINVAL;
	if (attr->path_mtu > pa.active_mtu)
		return EINVAL;
	return 0;
}

int ibv_modify_qp(struct cd_ibv_qp *qp, struct cd_ibv_qp_attr *attr, int attr_mask)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	int need = (attr_mask & CD_IBV_QP_STATE) ? required(q->state, attr->qp_state) : -1;

	if (need < 0 || (attr_mask & need) != need)
		return EINVAL;
	if (attr_mask & CD_IBV_QP_PORT)
		q->port = attr->port_num;
	if (attr->qp_state == CD_IBV_QPS_RTR) {
		if (check_av(q, attr) != 0)
			return EINVAL;
		q->is_global = attr->ah_attr.is_global;
		q->dgid = attr->ah_attr.grh.dgid;
		q->sgid_index = attr->ah_attr.grh.sgid_index;
		q->dest_qpn = attr->dest_qp_num;
	}
	if (attr->qp_state == CD_IBV_QPS_RTS) {
		q->timeout = attr->timeout;
		q->retry_cnt = attr->retry_cnt;
		if (!q->worker && pthread_create(&q->thread, NULL, requester, q) == 0)
			q->worker = 1;
	}
	pthread_mutex_lock(&fake_lock);
	q->state = attr->qp_state;
	q->qp.state = attr->qp_state;
	pthread_mutex_unlock(&fake_lock);
	return 0;
}

int ibv_destroy_qp(struct cd_ibv_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (q->worker)
		pthread_join(q->thread, NULL);
	pthread_mutex_lock(&fake_lock);
	for (struct fake_qp **p = &fake_qps; *p; p = &(*p)->next) {
		if (*p == q) {
			*p = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	while (q->jobs) {
		struct job *j = q->jobs;

		q->jobs = j->next;
		free(j);
	}
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
	return 0;
}

static int fake_post_send(struct cd_ibv_qp *qp, struct cd_ibv_send_wr *wr,
                          struct cd_ibv_send_wr **bad_wr)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	for (; wr; wr = wr->next) {
		struct job *j;

		if (q->state != CD_IBV_QPS_RTS || wr->opcode != CD_IBV_WR_RDMA_WRITE ||
		    wr->num_sge != 1 || !(j = calloc(1, sizeof(*j)))) {
			*bad_wr = wr;
			return EINVAL;
		}
		j->wr_id = wr->wr_id;
		j->signaled = q->sq_sig_all || (wr->send_flags & CD_IBV_SEND_SIGNALED);
		j->local_addr = wr->sg_list[0].addr;
		j->length = wr->sg_list[0].length;
		j->lkey = wr->sg_list[0].lkey;
		j->remote_addr = wr->wr.rdma.remote_addr;
		j->rkey = wr->wr.rdma.rkey;
		pthread_mutex_lock(&q->mu);
		*q->tail = j;
		q->tail = &j->next;
		pthread_cond_signal(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	return 0;
}

static int local_key_ok(const struct job *j)
{
	int ok = 0;

	pthread_mutex_lock(&fake_lock);
	for (struct fake_mr *m = fake_mrs; m; m = m->next) {
		uint64_t lo = (uintptr_t)m->mr.addr;

		if (m->mr.lkey == j->lkey && j->local_addr >= lo &&
		    j->local_addr + j->length <= lo + m->mr.length)
			ok = 1;
	}
	pthread_mutex_unlock(&fake_lock);
	return ok;
}

/* The local ACK timeout, 4.096 µs * 2^timeout, for each of retry_cnt + 1
 * tries; timeout 0 means infinite (IBTA), here 10 s. */
static int64_t retry_budget_us(const struct fake_qp *q)
{
	int64_t each = q->timeout ? (int64_t)(4.096 * (double)(1ull << q->timeout)) : 10000000;

	return each * (q->retry_cnt + 1);
}

static int run_job(struct fake_qp *q, const struct job *j)
{
	if (q->state == CD_IBV_QPS_ERR)
		return CD_IBV_WC_WR_FLUSH_ERR;
	if (!local_key_ok(j))
		return CD_IBV_WC_LOC_PROT_ERR;
	return fake_wire_write(q, j, fake_now_us() + retry_budget_us(q));
}

static int no_completion(void)
{
	const char *v = getenv("FAKE_IBVERBS_NO_COMPLETION");

	return v && strcmp(v, "1") == 0;
}

static void *requester(void *arg)
{
	struct fake_qp *q = arg;

	for (;;) {
		struct job *j;
		struct cd_ibv_wc wc = {0};

		pthread_mutex_lock(&q->mu);
		while (!q->jobs && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		j = q->jobs;
		q->jobs = j->next;
		if (!q->jobs)
			q->tail = &q->jobs;
		pthread_mutex_unlock(&q->mu);
		wc.wr_id = j->wr_id;
		wc.status = run_job(q, j);
		wc.opcode = CD_IBV_WC_RDMA_WRITE;
		wc.qp_num = q->qp.qp_num;
		wc.byte_len = j->length;
		if (wc.status != CD_IBV_WC_SUCCESS) {
			pthread_mutex_lock(&fake_lock);
			q->state = q->qp.state = CD_IBV_QPS_ERR;
			pthread_mutex_unlock(&fake_lock);
		}
		if ((j->signaled || wc.status != CD_IBV_WC_SUCCESS) && !no_completion())
			cq_push(q->qp.send_cq, &wc);
		free(j);
	}
}
