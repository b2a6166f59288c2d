/* SPDX-License-Identifier: MIT */
/*
 * verbs_abi.h - the part of libibverbs' ABI that the matrix's RDMA proof
 * (probes/reach_rdma.c) uses, declared by clusterdoc itself so that the
 * agent builds without rdma-core's headers and links libc only: the library
 * is dlopen()ed and every call is looked up with dlsym (probes/verbs_lib.h).
 *
 * Every struct, enum value and call below is rdma-core's, from
 * libibverbs/verbs.h (github.com/linux-rdma/rdma-core, the header Debian
 * ships as libibverbs-dev 44.0) and the ibv_* man pages it installs:
 * ibv_get_device_list(3), ibv_open_device(3), ibv_query_port(3),
 * ibv_query_gid(3), ibv_alloc_pd(3), ibv_reg_mr(3), ibv_create_cq(3),
 * ibv_create_qp(3), ibv_modify_qp(3), ibv_post_send(3), ibv_poll_cq(3) and
 * ibv_wc_status_str(3). Members are laid out exactly as there, with the
 * same types; a member clusterdoc never touches keeps its place and size
 * under its own name. Where verbs.h declares a struct only by name (struct
 * ibv_device, ibv_comp_channel, ibv_srq, ibv_ah), it stays opaque here.
 * tests/unit/test_verbs_abi.c checks every offset, size and value against
 * <infiniband/verbs.h> where that header is installed.
 *
 * ibv_post_send and ibv_poll_cq are static inline functions of verbs.h,
 * not library symbols: they call through the context's ops table
 * (qp->context->ops.post_send, cq->context->ops.poll_cq), so struct
 * cd_ibv_context_ops keeps the table's layout up to those slots. The
 * exported ibv_query_port (IBVERBS_1.1) fills the whole struct
 * ibv_port_attr; verbs.h's inline wrapper of the same name first tries an
 * extended op that older providers lack, so calling the symbol works with
 * every provider.
 */
#ifndef CD_PROBES_VERBS_ABI_H
#define CD_PROBES_VERBS_ABI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct cd_ibv_device; /* opaque: only named through ibv_get_device_name */
struct cd_ibv_comp_channel;
struct cd_ibv_srq;
struct cd_ibv_ah;
struct cd_ibv_cq;
struct cd_ibv_qp;
struct cd_ibv_wc;
struct cd_ibv_send_wr;
struct cd_ibv_context;

union cd_ibv_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix; /* __be64 */
		uint64_t interface_id;  /* __be64 */
	} global;
};

/* enum ibv_port_state */
enum {
	CD_IBV_PORT_NOP = 0,
	CD_IBV_PORT_DOWN = 1,
	CD_IBV_PORT_INIT = 2,
	CD_IBV_PORT_ARMED = 3,
	CD_IBV_PORT_ACTIVE = 4,
	CD_IBV_PORT_ACTIVE_DEFER = 5,
};

/* enum ibv_mtu: 256 << (value - 1) bytes */
enum {
	CD_IBV_MTU_256 = 1,
	CD_IBV_MTU_512 = 2,
	CD_IBV_MTU_1024 = 3,
	CD_IBV_MTU_2048 = 4,
	CD_IBV_MTU_4096 = 5,
};

/* IBV_LINK_LAYER_* of struct ibv_port_attr's link_layer */
enum {
	CD_IBV_LINK_LAYER_UNSPECIFIED = 0,
	CD_IBV_LINK_LAYER_INFINIBAND = 1,
	CD_IBV_LINK_LAYER_ETHERNET = 2,
};

struct cd_ibv_port_attr {
	int state;      /* enum ibv_port_state */
	int max_mtu;    /* enum ibv_mtu */
	int active_mtu; /* enum ibv_mtu */
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
};

/* struct ibv_context_ops: 34 function pointers; those the inline calls use
 * are named, the others keep their slots. */
struct cd_ibv_context_ops {
	void *compat_query_device;
	void *compat_query_port;
	void *compat_alloc_pd;
	void *compat_dealloc_pd;
	void *compat_reg_mr;
	void *compat_rereg_mr;
	void *compat_dereg_mr;
	void *alloc_mw;
	void *bind_mw;
	void *dealloc_mw;
	void *compat_create_cq;
	int (*poll_cq)(struct cd_ibv_cq *cq, int num_entries, struct cd_ibv_wc *wc);
	void *req_notify_cq;
	void *compat_cq_event;
	void *compat_resize_cq;
	void *compat_destroy_cq;
	void *compat_create_srq;
	void *compat_modify_srq;
	void *compat_query_srq;
	void *compat_destroy_srq;
	void *post_srq_recv;
	void *compat_create_qp;
	void *compat_query_qp;
	void *compat_modify_qp;
	void *compat_destroy_qp;
	int (*post_send)(struct cd_ibv_qp *qp, struct cd_ibv_send_wr *wr,
	                 struct cd_ibv_send_wr **bad_wr);
	void *post_recv;
	void *compat_create_ah;
	void *compat_destroy_ah;
	void *compat_attach_mcast;
	void *compat_detach_mcast;
	void *compat_async_event;
};

struct cd_ibv_context {
	struct cd_ibv_device *device;
	struct cd_ibv_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
};

struct cd_ibv_pd {
	struct cd_ibv_context *context;
	uint32_t handle;
};

/* enum ibv_access_flags */
enum {
	CD_IBV_ACCESS_LOCAL_WRITE = 1,
	CD_IBV_ACCESS_REMOTE_WRITE = 1 << 1,
	CD_IBV_ACCESS_REMOTE_READ = 1 << 2,
};

struct cd_ibv_mr {
	struct cd_ibv_context *context;
	struct cd_ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

struct cd_ibv_cq {
	struct cd_ibv_context *context;
	struct cd_ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
};

/* enum ibv_qp_state */
enum {
	CD_IBV_QPS_RESET = 0,
	CD_IBV_QPS_INIT = 1,
	CD_IBV_QPS_RTR = 2,
	CD_IBV_QPS_RTS = 3,
	CD_IBV_QPS_SQD = 4,
	CD_IBV_QPS_SQE = 5,
	CD_IBV_QPS_ERR = 6,
};

/* enum ibv_qp_type */
enum { CD_IBV_QPT_RC = 2 };

struct cd_ibv_qp {
	struct cd_ibv_context *context;
	void *qp_context;
	struct cd_ibv_pd *pd;
	struct cd_ibv_cq *send_cq;
	struct cd_ibv_cq *recv_cq;
	struct cd_ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	int state;   /* enum ibv_qp_state */
	int qp_type; /* enum ibv_qp_type */
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
};

struct cd_ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct cd_ibv_qp_init_attr {
	void *qp_context;
	struct cd_ibv_cq *send_cq;
	struct cd_ibv_cq *recv_cq;
	struct cd_ibv_srq *srq;
	struct cd_ibv_qp_cap cap;
	int qp_type; /* enum ibv_qp_type */
	int sq_sig_all;
};

struct cd_ibv_global_route {
	union cd_ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct cd_ibv_ah_attr {
	struct cd_ibv_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct cd_ibv_qp_attr {
	int qp_state;       /* enum ibv_qp_state */
	int cur_qp_state;   /* enum ibv_qp_state */
	int path_mtu;       /* enum ibv_mtu */
	int path_mig_state; /* enum ibv_mig_state */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct cd_ibv_qp_cap cap;
	struct cd_ibv_ah_attr ah_attr;
	struct cd_ibv_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

/* enum ibv_qp_attr_mask */
enum {
	CD_IBV_QP_STATE = 1 << 0,
	CD_IBV_QP_ACCESS_FLAGS = 1 << 3,
	CD_IBV_QP_PKEY_INDEX = 1 << 4,
	CD_IBV_QP_PORT = 1 << 5,
	CD_IBV_QP_AV = 1 << 7,
	CD_IBV_QP_PATH_MTU = 1 << 8,
	CD_IBV_QP_TIMEOUT = 1 << 9,
	CD_IBV_QP_RETRY_CNT = 1 << 10,
	CD_IBV_QP_RNR_RETRY = 1 << 11,
	CD_IBV_QP_RQ_PSN = 1 << 12,
	CD_IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	CD_IBV_QP_MIN_RNR_TIMER = 1 << 15,
	CD_IBV_QP_SQ_PSN = 1 << 16,
	CD_IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	CD_IBV_QP_DEST_QPN = 1 << 20,
};

/* enum ibv_wr_opcode and enum ibv_send_flags */
enum { CD_IBV_WR_RDMA_WRITE = 0 };
enum { CD_IBV_SEND_SIGNALED = 1 << 1 };

struct cd_ibv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* struct ibv_mw_bind_info, inside the send request's last union */
struct cd_ibv_mw_bind_info {
	struct cd_ibv_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;
};

struct cd_ibv_send_wr {
	uint64_t wr_id;
	struct cd_ibv_send_wr *next;
	struct cd_ibv_sge *sg_list;
	int num_sge;
	int opcode; /* enum ibv_wr_opcode */
	unsigned int send_flags;
	uint32_t imm_data; /* a union with invalidate_rkey */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct cd_ibv_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	union {
		struct {
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
	union {
		struct {
			void *mw;
			uint32_t rkey;
			struct cd_ibv_mw_bind_info bind_info;
		} bind_mw;
		struct {
			void *hdr;
			uint16_t hdr_sz;
			uint16_t mss;
		} tso;
	} ext;
};

/* enum ibv_wc_status, in verbs.h's order (0 .. CD_IBV_WC_STATUS_COUNT - 1) */
enum {
	CD_IBV_WC_SUCCESS = 0,
	CD_IBV_WC_LOC_LEN_ERR,
	CD_IBV_WC_LOC_QP_OP_ERR,
	CD_IBV_WC_LOC_EEC_OP_ERR,
	CD_IBV_WC_LOC_PROT_ERR,
	CD_IBV_WC_WR_FLUSH_ERR,
	CD_IBV_WC_MW_BIND_ERR,
	CD_IBV_WC_BAD_RESP_ERR,
	CD_IBV_WC_LOC_ACCESS_ERR,
	CD_IBV_WC_REM_INV_REQ_ERR,
	CD_IBV_WC_REM_ACCESS_ERR,
	CD_IBV_WC_REM_OP_ERR,
	CD_IBV_WC_RETRY_EXC_ERR,
	CD_IBV_WC_RNR_RETRY_EXC_ERR,
	CD_IBV_WC_LOC_RDD_VIOL_ERR,
	CD_IBV_WC_REM_INV_RD_REQ_ERR,
	CD_IBV_WC_REM_ABORT_ERR,
	CD_IBV_WC_INV_EECN_ERR,
	CD_IBV_WC_INV_EEC_STATE_ERR,
	CD_IBV_WC_FATAL_ERR,
	CD_IBV_WC_RESP_TIMEOUT_ERR,
	CD_IBV_WC_GENERAL_ERR,
	CD_IBV_WC_TM_ERR,
	CD_IBV_WC_TM_RNDV_INCOMPLETE,
	CD_IBV_WC_STATUS_COUNT
};

/* What ibv_wc_status_str says of each status (rdma-core
 * libibverbs/enum_strs.c), in the enum's order: the words clusterdoc reports
 * and the stand-in HCA gives back. */
static const char *const cd_ibv_wc_status_words[CD_IBV_WC_STATUS_COUNT] = {
    "success",
    "local length error",
    "local QP operation error",
    "local EE context operation error",
    "local protection error",
    "Work Request Flushed Error",
    "memory management operation error",
    "bad response error",
    "local access error",
    "remote invalid request error",
    "remote access error",
    "remote operation error",
    "transport retry counter exceeded",
    "RNR retry counter exceeded",
    "local RDD violation error",
    "remote invalid RD request",
    "aborted error",
    "invalid EE context number",
    "invalid EE context state",
    "fatal error",
    "response timeout error",
    "general error",
    "TM error",
    "TM software rendezvous",
};

/* enum ibv_wc_opcode: RDMA_WRITE's completion */
enum { CD_IBV_WC_RDMA_WRITE = 1 };

struct cd_ibv_wc {
	uint64_t wr_id;
	int status; /* enum ibv_wc_status */
	int opcode; /* enum ibv_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* a union with invalidated_rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

/* The library calls, as the man pages above give them. */
typedef struct cd_ibv_device **(*cd_ibv_get_device_list_fn)(int *num_devices);
typedef void (*cd_ibv_free_device_list_fn)(struct cd_ibv_device **list);
typedef const char *(*cd_ibv_get_device_name_fn)(struct cd_ibv_device *device);
typedef struct cd_ibv_context *(*cd_ibv_open_device_fn)(struct cd_ibv_device *device);
typedef int (*cd_ibv_close_device_fn)(struct cd_ibv_context *context);
typedef int (*cd_ibv_query_port_fn)(struct cd_ibv_context *context, uint8_t port_num,
                                    struct cd_ibv_port_attr *port_attr);
typedef int (*cd_ibv_query_gid_fn)(struct cd_ibv_context *context, uint8_t port_num, int index,
                                   union cd_ibv_gid *gid);
typedef struct cd_ibv_pd *(*cd_ibv_alloc_pd_fn)(struct cd_ibv_context *context);
typedef int (*cd_ibv_dealloc_pd_fn)(struct cd_ibv_pd *pd);
typedef struct cd_ibv_mr *(*cd_ibv_reg_mr_fn)(struct cd_ibv_pd *pd, void *addr, size_t length,
                                              int access);
typedef int (*cd_ibv_dereg_mr_fn)(struct cd_ibv_mr *mr);
typedef struct cd_ibv_cq *(*cd_ibv_create_cq_fn)(struct cd_ibv_context *context, int cqe,
                                                 void *cq_context,
                                                 struct cd_ibv_comp_channel *channel,
                                                 int comp_vector);
typedef int (*cd_ibv_destroy_cq_fn)(struct cd_ibv_cq *cq);
typedef struct cd_ibv_qp *(*cd_ibv_create_qp_fn)(struct cd_ibv_pd *pd,
                                                 struct cd_ibv_qp_init_attr *qp_init_attr);
typedef int (*cd_ibv_modify_qp_fn)(struct cd_ibv_qp *qp, struct cd_ibv_qp_attr *attr,
                                   int attr_mask);
typedef int (*cd_ibv_destroy_qp_fn)(struct cd_ibv_qp *qp);
typedef const char *(*cd_ibv_wc_status_str_fn)(int status);

#endif
