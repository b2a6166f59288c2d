/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rdma.c - libFuzzer harness for the parsers of the RDMA sysfs words
 * (probes/rdma_parse.h): whatever a node's /sys/class/infiniband, its
 * /etc/libibverbs.d, /etc/ld.so.conf or /proc/modules holds must never crash the agent, and
 * what a parser accepts is well formed.
 *
 * The first input byte picks the parser (its low three bits, so the seeds
 * start with an ASCII digit); the rest, as a NUL-terminated copy, is fed to
 * it:
 *   0 rdma_parse_state          4 rdma_parse_ndev
 *   1 rdma_parse_rate           5 rdma_parse_lid
 *   2 rdma_parse_gid, then the family and address of what it accepts
 *   3 rdma_parse_gid_type       6 rdma_parse_driver_file, rdma_parse_peermem,
 *                               rdma_parse_ld_so_conf
 *   7 all of the above
 * Seeds: tests/fuzz/corpus/rdma/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "probes/rdma_parse.h"

static void check_word(const char *w, size_t cap)
{
	size_t n = strnlen(w, cap);

	if (n == 0 || n == cap)
		abort();
}

static void one_gid(const char *s)
{
	unsigned char gid[RDMA_GID_LEN];
	char addr[64];
	const char *f;

	if (rdma_parse_gid(s, gid) < 0)
		return;
	for (int is_ib = 0; is_ib < 2; is_ib++) {
		f = rdma_gid_family(gid, is_ib);
		if (strcmp(f, "ib") && strcmp(f, "ipv4") && strcmp(f, "ipv6") &&
		    strcmp(f, "link-local"))
			abort();
		if ((rdma_gid_address(gid, f, addr, sizeof(addr)) == 0) == !strcmp(f, "ib"))
			abort();
	}
	(void)rdma_gid_is_zero(gid);
}

static void run(int which, const char *s, size_t len)
{
	char w[RDMA_WORD_MAX];
	const char *t;
	double g;
	json_t *a;

	if ((which == 0 || which == 7) && rdma_parse_state(s, w, sizeof(w)) == 0)
		check_word(w, sizeof(w));
	if ((which == 1 || which == 7) && rdma_parse_rate(s, &g, w, sizeof(w)) == 0) {
		check_word(w, sizeof(w));
		if (g < 0 || w[strlen(w) - 1] != 'X')
			abort();
	}
	if (which == 2 || which == 7)
		one_gid(s);
	if ((which == 3 || which == 7) && rdma_parse_gid_type(s, &t) == 0 && strcmp(t, "RoCE v2") &&
	    strcmp(t, "IB/RoCE v1"))
		abort();
	if ((which == 4 || which == 7) && rdma_parse_ndev(s, w, sizeof(w)) == 0 &&
	    (strlen(w) > 15 || strchr(w, '/')))
		abort();
	if ((which == 5 || which == 7) && rdma_parse_lid(s, w, sizeof(w)) == 0 &&
	    strncmp(w, "0x", 2) != 0)
		abort();
	if (which == 6 || which == 7) {
		a = json_array();
		if (rdma_parse_driver_file(s, len, a) != json_array_size(a))
			abort();
		json_decref(a);
		t = rdma_parse_peermem(s, len);
		if (t && strcmp(t, "nvidia_peermem") && strcmp(t, "nv_peer_mem"))
			abort();
		a = json_array();
		if (rdma_parse_ld_so_conf(s, len, a) != json_array_size(a))
			abort();
		for (size_t i = 0; i < json_array_size(a); i++) {
			const char *dir =
			    json_string_value(json_object_get(json_array_get(a, i), "dir"));

			if (dir && dir[0] != '/')
				abort();
		}
		json_decref(a);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	run(data[0] & 7, s, size - 1);
	free(s);
	return 0;
}
