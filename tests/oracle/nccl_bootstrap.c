/* SPDX-License-Identifier: MIT */
/*
 * nccl_bootstrap.c - ask the real NCCL which interface its bootstrap picks
 * on this machine, to compare with nccl_predict (probes/predict.h).
 * It sets nothing itself: run it under the environment to test, e.g.
 *   NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP,ENV ./nccl_bootstrap
 * and look for "Bootstrap: Using <if>:<addr>" or "Bootstrap : no socket
 * interface found". No GPU is needed: ncclGetUniqueId only initialises
 * NCCL's bootstrap network.
 *
 * Build (no Makefile rule; the tree does not depend on NCCL):
 *   cc -std=c11 -Wall -o build/nccl_bootstrap tests/oracle/nccl_bootstrap.c \
 *      -I/usr/local/cuda/include -L/usr/local/cuda/lib -lnccl \
 *      -Wl,-rpath,/usr/local/cuda/lib
 */
#include <nccl.h>
#include <stdio.h>

int main(void)
{
	ncclUniqueId id;
	int version = 0;
	ncclResult_t rc;

	ncclGetVersion(&version);
	rc = ncclGetUniqueId(&id);
	printf("nccl %d: ncclGetUniqueId returned %d (%s)\n", version, (int)rc,
	       ncclGetErrorString(rc));
	return rc == ncclSuccess ? 0 : 1;
}
