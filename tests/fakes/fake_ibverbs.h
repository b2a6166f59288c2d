/* SPDX-License-Identifier: MIT */
/*
 * fake_ibverbs.h - what the two halves of the stand-in HCA share
 * (tests/fakes/fake_ibverbs.c: devices, ports, objects and the verbs calls;
 * fake_ibverbs_wire.c: the wire between two nodes' stand-ins). See
 * fake_ibverbs.c for what it stands in for and its sources.
 */
#ifndef CD_TESTS_FAKE_IBVERBS_H
#define CD_TESTS_FAKE_IBVERBS_H

#include "probes/verbs_abi.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>

#define CQ_MAX 1024

struct fake_cq {
	struct cd_ibv_cq cq;
	pthread_mutex_t mu;
	struct cd_ibv_wc wc[CQ_MAX];
	int head, n;
};

struct fake_mr {
	struct cd_ibv_mr mr;
	int access;
	int busy; /* responders writing into it now */
	int gone; /* deregistering: no new responder */
	struct fake_mr *next;
};

struct job {
	uint64_t wr_id;
	int signaled;
	uint64_t local_addr;
	uint32_t length, lkey;
	uint64_t remote_addr;
	uint32_t rkey;
	struct job *next;
};

struct fake_qp {
	struct cd_ibv_qp qp;
	int state;
	uint8_t port, sgid_index, timeout, retry_cnt;
	int is_global;
	union cd_ibv_gid dgid;
	uint32_t dest_qpn;
	int sq_sig_all;
	/* the requester: jobs in order, served by one thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *jobs, **tail;
	int stop, worker;
	pthread_t thread;
	struct fake_qp *next;
};

/* Every memory region and QP of the process, for the responder; the
 * counters that name new ones. All under fake_lock; fake_mr_idle is
 * signalled when a region's busy count drops. */
extern pthread_mutex_t fake_lock;
extern pthread_cond_t fake_mr_idle;
extern struct fake_mr *fake_mrs;
extern struct fake_qp *fake_qps;

/* The monotonic clock in µs. */
int64_t fake_now_us(void);

/* The wire's port: FAKE_IBVERBS_PORT, else RoCE v2's 4791. */
int fake_wire_port(void);

/* The responder's listening port, opened by the first open context and
 * closed with the last (reference counted). Called under fake_lock. */
void fake_wire_up(void);
void fake_wire_down(void);

/* One RDMA WRITE of job j from QP q, within deadline: the completion
 * status (enum ibv_wc_status). */
int fake_wire_write(struct fake_qp *q, const struct job *j, int64_t deadline);

/* The library calls (probes/verbs_abi.h gives their types). */
struct cd_ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct cd_ibv_device **list);
const char *ibv_get_device_name(struct cd_ibv_device *device);
struct cd_ibv_context *ibv_open_device(struct cd_ibv_device *device);
int ibv_close_device(struct cd_ibv_context *context);
int ibv_query_port(struct cd_ibv_context *context, uint8_t port_num, struct cd_ibv_port_attr *attr);
int ibv_query_gid(struct cd_ibv_context *context, uint8_t port_num, int index,
                  union cd_ibv_gid *gid);
struct cd_ibv_pd *ibv_alloc_pd(struct cd_ibv_context *context);
int ibv_dealloc_pd(struct cd_ibv_pd *pd);
struct cd_ibv_mr *ibv_reg_mr(struct cd_ibv_pd *pd, void *addr, size_t length, int access);
int ibv_dereg_mr(struct cd_ibv_mr *mr);
struct cd_ibv_cq *ibv_create_cq(struct cd_ibv_context *context, int cqe, void *cq_context,
                                struct cd_ibv_comp_channel *channel, int comp_vector);
int ibv_destroy_cq(struct cd_ibv_cq *cq);
struct cd_ibv_qp *ibv_create_qp(struct cd_ibv_pd *pd, struct cd_ibv_qp_init_attr *init);
int ibv_modify_qp(struct cd_ibv_qp *qp, struct cd_ibv_qp_attr *attr, int attr_mask);
int ibv_destroy_qp(struct cd_ibv_qp *qp);
const char *ibv_wc_status_str(int status);

#endif
