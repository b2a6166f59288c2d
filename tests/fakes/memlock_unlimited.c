/* SPDX-License-Identifier: MIT */
/*
 * memlock_unlimited.c - an LD_PRELOAD library for tests/integration/
 * test_journey.sh: the login of a node whose RLIMIT_MEMLOCK is unlimited, as
 * `* soft memlock unlimited` and `* hard memlock unlimited` in
 * /etc/security/limits.conf give it on an RDMA cluster (NCCL's
 * troubleshooting guide). The machines the tests run on drop
 * CAP_SYS_RESOURCE, so no process there can raise its limit above the
 * sandbox's (8 MiB, under what NCCL's IB transport registers, which
 * rdma-memlock-low names); test_rdma_facts.sh proves that finding with a
 * real `ulimit -l 64`. getrlimit(2) and prlimit(2) (getrlimit(3p)) report
 * RLIM_INFINITY for RLIMIT_MEMLOCK; every other resource, and every
 * attempt to set a limit, goes to libc unchanged.
 */
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/types.h>

static void unlimited(int resource, struct rlimit *rl)
{
	if (resource == RLIMIT_MEMLOCK && rl) {
		rl->rlim_cur = RLIM_INFINITY;
		rl->rlim_max = RLIM_INFINITY;
	}
}

int getrlimit(__rlimit_resource_t resource, struct rlimit *rl)
{
	int (*real)(__rlimit_resource_t, struct rlimit *) =
	    (int (*)(__rlimit_resource_t, struct rlimit *))dlsym(RTLD_NEXT, "getrlimit");
	int rc = real ? real(resource, rl) : -1;

	if (rc == 0)
		unlimited((int)resource, rl);
	return rc;
}

int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *new_limit,
            struct rlimit *old_limit)
{
	int (*real)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *) =
	    (int (*)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *))dlsym(
	        RTLD_NEXT, "prlimit");
	int rc = real ? real(pid, resource, new_limit, old_limit) : -1;

	if (rc == 0 && !new_limit)
		unlimited((int)resource, old_limit);
	return rc;
}
