/* SPDX-License-Identifier: MIT */
/*
 * fuzz_procscan.c - libFuzzer harness for the /proc parsers of `clusterdoc
 * hang` (probes/procscan.h): whatever the bytes, each answers without a
 * crash, a refusal says why, and what is accepted is within its bounds
 * (strings terminated, at most max sockets). Seeds: tests/fuzz/corpus/procscan/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/procscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct procscan_stat st;
	struct procscan_syscall sc;
	struct procscan_tcp t[8];
	struct procscan_rank r;
	char err[CD_ERRLEN];
	size_t n = 0;

	err[0] = '\0';
	if (procscan_stat_parse(buf, size, &st, err, sizeof(err)) < 0 && !err[0])
		abort();
	if (strlen(st.comm) >= sizeof(st.comm))
		abort();
	err[0] = '\0';
	if (procscan_syscall_parse(buf, size, &sc, err, sizeof(err)) < 0 && !err[0])
		abort();
	(void)procscan_syscall_class(&sc);
	for (int v6 = 0; v6 < 2; v6++) {
		err[0] = '\0';
		if (procscan_tcp_parse(buf, size, v6, t, 8, &n, err, sizeof(err)) < 0 && !err[0])
			abort();
		if (n > 8)
			abort();
		for (size_t i = 0; i < n; i++) {
			if (strlen(t[i].local) >= PROCSCAN_ADDR ||
			    strlen(t[i].remote) >= PROCSCAN_ADDR)
				abort();
		}
	}
	(void)procscan_socket_inode(buf, size);
	if (procscan_environ_rank(buf, size, &r) < 0 || strlen(r.rank) >= PROCSCAN_VALUE)
		abort();
	if (strlen(r.node_rank) >= PROCSCAN_VALUE || strlen(r.fr_temp) >= sizeof(r.fr_temp))
		abort();
	(void)procscan_global_rank(&r);
	(void)procscan_world_size(&r);
	(void)procscan_rank_explicit(&r);
	if (procscan_cmdline_launcher(buf, size) > PROCSCAN_MPIRUN)
		abort();
	err[0] = '\0';
	{
		uint64_t mask;

		if (procscan_status_sigcgt(buf, size, &mask, err, sizeof(err)) < 0 && !err[0])
			abort();
	}
	return 0;
}
