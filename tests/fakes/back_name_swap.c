/* SPDX-License-Identifier: MIT */
/*
 * back_name_swap.c - an LD_PRELOAD library for tests/integration/test_launcher.sh
 * (fault-run-3 case 20): a connect-back agent that lies about its node. In a
 * process whose $CLUSTERDOC_BACK_NAME is FROM, where $BACK_NAME_SWAP is
 * "FROM=TO", it sets CLUSTERDOC_BACK_NAME=TO and NCCL_IMPOSTOR=FROM (a mark
 * that shows in that agent's facts) before main runs; in the process whose
 * name is TO (the real one) it waits 1 s, so the liar connects first.
 * Anything else it leaves alone, so the head and other programs under it
 * run as they would.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void back_name_swap(void)
{
	const char *swap = getenv("BACK_NAME_SWAP"), *name = getenv("CLUSTERDOC_BACK_NAME");
	const char *eq = swap ? strchr(swap, '=') : NULL;
	char from[128];
	size_t n;

	if (!eq || !name)
		return;
	n = (size_t)(eq - swap);
	if (n >= sizeof(from))
		return;
	memcpy(from, swap, n);
	from[n] = '\0';
	if (strcmp(name, from) == 0) {
		setenv("NCCL_IMPOSTOR", from, 1);
		setenv("CLUSTERDOC_BACK_NAME", eq + 1, 1);
	} else if (strcmp(name, eq + 1) == 0) {
		sleep(1);
	}
}
