/* SPDX-License-Identifier: MIT */
/*
 * test_verbs_abi.c - clusterdoc's own declarations of the verbs ABI
 * (probes/verbs_abi.h) against rdma-core's <infiniband/verbs.h>, where that
 * header is installed at build time (Debian's libibverbs-dev): every
 * offset, size and value the agent relies on is checked at compile time,
 * and the status names (probes/rdma_pair.h) against the real library's
 * ibv_wc_status_str where libibverbs.so.1 loads. Without the header the
 * compile-time checks are left out and that test skips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <string.h>

#include "probes/rdma_pair.h"
#include "probes/verbs_abi.h"

#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#define HAVE_VERBS_H 1
#include <infiniband/verbs.h>
#endif
#endif

#ifdef HAVE_VERBS_H
#define SAME(ours, theirs)       _Static_assert((long)(ours) == (long)(theirs), #ours " is not " #theirs)
#define SAME_SIZE(ours, theirs)  SAME(sizeof(struct ours), sizeof(struct theirs))
#define SAME_AT(ours, theirs, m) SAME(offsetof(struct ours, m), offsetof(struct theirs, m))

SAME(sizeof(union cd_ibv_gid), sizeof(union ibv_gid));
SAME_SIZE(cd_ibv_port_attr, ibv_port_attr);
SAME_AT(cd_ibv_port_attr, ibv_port_attr, state);
SAME_AT(cd_ibv_port_attr, ibv_port_attr, active_mtu);
SAME_AT(cd_ibv_port_attr, ibv_port_attr, lid);
SAME_AT(cd_ibv_port_attr, ibv_port_attr, link_layer);
SAME_AT(cd_ibv_port_attr, ibv_port_attr, port_cap_flags2);
SAME(sizeof(int), sizeof(enum ibv_port_state));
SAME(sizeof(int), sizeof(enum ibv_mtu));
SAME_SIZE(cd_ibv_context_ops, ibv_context_ops);
SAME_AT(cd_ibv_context_ops, ibv_context_ops, poll_cq);
SAME_AT(cd_ibv_context_ops, ibv_context_ops, post_send);
SAME_SIZE(cd_ibv_context, ibv_context);
SAME_AT(cd_ibv_context, ibv_context, device);
SAME_AT(cd_ibv_context, ibv_context, ops);
SAME_AT(cd_ibv_context, ibv_context, abi_compat);
SAME_SIZE(cd_ibv_pd, ibv_pd);
SAME_SIZE(cd_ibv_mr, ibv_mr);
SAME_AT(cd_ibv_mr, ibv_mr, addr);
SAME_AT(cd_ibv_mr, ibv_mr, lkey);
SAME_AT(cd_ibv_mr, ibv_mr, rkey);
SAME_SIZE(cd_ibv_cq, ibv_cq);
SAME_AT(cd_ibv_cq, ibv_cq, context);
SAME_SIZE(cd_ibv_qp, ibv_qp);
SAME_AT(cd_ibv_qp, ibv_qp, context);
SAME_AT(cd_ibv_qp, ibv_qp, qp_num);
SAME_AT(cd_ibv_qp, ibv_qp, state);
SAME_SIZE(cd_ibv_qp_cap, ibv_qp_cap);
SAME_SIZE(cd_ibv_qp_init_attr, ibv_qp_init_attr);
SAME_AT(cd_ibv_qp_init_attr, ibv_qp_init_attr, cap);
SAME_AT(cd_ibv_qp_init_attr, ibv_qp_init_attr, qp_type);
SAME_AT(cd_ibv_qp_init_attr, ibv_qp_init_attr, sq_sig_all);
SAME_SIZE(cd_ibv_global_route, ibv_global_route);
SAME_AT(cd_ibv_global_route, ibv_global_route, sgid_index);
SAME_AT(cd_ibv_global_route, ibv_global_route, hop_limit);
SAME_SIZE(cd_ibv_ah_attr, ibv_ah_attr);
SAME_AT(cd_ibv_ah_attr, ibv_ah_attr, dlid);
SAME_AT(cd_ibv_ah_attr, ibv_ah_attr, is_global);
SAME_AT(cd_ibv_ah_attr, ibv_ah_attr, port_num);
SAME_SIZE(cd_ibv_qp_attr, ibv_qp_attr);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, path_mtu);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, rq_psn);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, sq_psn);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, dest_qp_num);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, qp_access_flags);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, ah_attr);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, max_rd_atomic);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, max_dest_rd_atomic);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, min_rnr_timer);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, port_num);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, timeout);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, retry_cnt);
SAME_AT(cd_ibv_qp_attr, ibv_qp_attr, rnr_retry);
SAME_SIZE(cd_ibv_sge, ibv_sge);
SAME_SIZE(cd_ibv_mw_bind_info, ibv_mw_bind_info);
SAME_SIZE(cd_ibv_send_wr, ibv_send_wr);
SAME_AT(cd_ibv_send_wr, ibv_send_wr, sg_list);
SAME_AT(cd_ibv_send_wr, ibv_send_wr, num_sge);
SAME_AT(cd_ibv_send_wr, ibv_send_wr, opcode);
SAME_AT(cd_ibv_send_wr, ibv_send_wr, send_flags);
SAME_AT(cd_ibv_send_wr, ibv_send_wr, wr);
SAME(offsetof(struct cd_ibv_send_wr, wr.rdma.rkey), offsetof(struct ibv_send_wr, wr.rdma.rkey));
SAME_SIZE(cd_ibv_wc, ibv_wc);
SAME_AT(cd_ibv_wc, ibv_wc, status);
SAME_AT(cd_ibv_wc, ibv_wc, opcode);
SAME_AT(cd_ibv_wc, ibv_wc, qp_num);
SAME(sizeof(int), sizeof(enum ibv_wc_status));

SAME(CD_IBV_PORT_ACTIVE, IBV_PORT_ACTIVE);
SAME(CD_IBV_PORT_INIT, IBV_PORT_INIT);
SAME(CD_IBV_MTU_256, IBV_MTU_256);
SAME(CD_IBV_MTU_4096, IBV_MTU_4096);
SAME(CD_IBV_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_INFINIBAND);
SAME(CD_IBV_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
SAME(CD_IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
SAME(CD_IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
SAME(CD_IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
SAME(CD_IBV_QPS_RESET, IBV_QPS_RESET);
SAME(CD_IBV_QPS_INIT, IBV_QPS_INIT);
SAME(CD_IBV_QPS_RTR, IBV_QPS_RTR);
SAME(CD_IBV_QPS_RTS, IBV_QPS_RTS);
SAME(CD_IBV_QPS_ERR, IBV_QPS_ERR);
SAME(CD_IBV_QPT_RC, IBV_QPT_RC);
SAME(CD_IBV_QP_STATE, IBV_QP_STATE);
SAME(CD_IBV_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
SAME(CD_IBV_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
SAME(CD_IBV_QP_PORT, IBV_QP_PORT);
SAME(CD_IBV_QP_AV, IBV_QP_AV);
SAME(CD_IBV_QP_PATH_MTU, IBV_QP_PATH_MTU);
SAME(CD_IBV_QP_TIMEOUT, IBV_QP_TIMEOUT);
SAME(CD_IBV_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
SAME(CD_IBV_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
SAME(CD_IBV_QP_RQ_PSN, IBV_QP_RQ_PSN);
SAME(CD_IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
SAME(CD_IBV_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
SAME(CD_IBV_QP_SQ_PSN, IBV_QP_SQ_PSN);
SAME(CD_IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME(CD_IBV_QP_DEST_QPN, IBV_QP_DEST_QPN);
SAME(CD_IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
SAME(CD_IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
SAME(CD_IBV_WC_SUCCESS, IBV_WC_SUCCESS);
SAME(CD_IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
SAME(CD_IBV_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
SAME(CD_IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
SAME(CD_IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RNDV_INCOMPLETE);
SAME(CD_IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
#endif

static void declarations_match_infiniband_verbs_h(void **state)
{
#ifdef HAVE_VERBS_H
	/* the layouts and values are checked at compile time above */
	assert_int_equal(sizeof(struct cd_ibv_qp_attr), sizeof(struct ibv_qp_attr));
#else
	skip(); /* no <infiniband/verbs.h> at build time */
#endif
}

static void status_names_are_those_of_the_real_ibv_wc_status_str(void **state)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	cd_ibv_wc_status_str_fn real;

	if (!lib) {
		skip(); /* no libibverbs on this machine */
		return;
	}
	real = (cd_ibv_wc_status_str_fn)(uintptr_t)dlsym(lib, "ibv_wc_status_str");
	assert_non_null(real);
	for (int s = 0; s < CD_IBV_WC_STATUS_COUNT; s++)
		assert_string_equal(rdma_wc_status_name(s), real(s));
	assert_string_equal(rdma_wc_status_name(CD_IBV_WC_STATUS_COUNT), "unknown");
	dlclose(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(declarations_match_infiniband_verbs_h),
	    cmocka_unit_test(status_names_are_those_of_the_real_ibv_wc_status_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
