/* SPDX-License-Identifier: MIT */
/*
 * test_facts.c - the node-facts probe: parsers on text captured from real
 * machines, the environment filter, the Python/torch probe against the real
 * /usr/bin/python3 (Debian's python3-torch) and against fake interpreters
 * that hang or print garbage, and facts_collect on this machine.
 */
#include "probes/facts.h"
#include "probes/facts_gpu.h"
#include "probes/facts_python.h"
#include "probes/facts_pyfind.h"
#include "fsutil.h"
#include "cd.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Captured on the development VM (AMD EPYC, Debian 12) with cat. */
static const char cpuinfo_x86[] =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC\n"
    "stepping\t: 1\n"
    "microcode\t: 0x1000065\n"
    "cpu MHz\t\t: 2596.132\n"
    "cache size\t: 1024 KB\n"
    "physical id\t: 0\n"
    "siblings\t: 2\n"
    "core id\t\t: 0\n"
    "cpu cores\t: 2\n"
    "apicid\t\t: 0\n"
    "initial apicid\t: 0\n"
    "fpu\t\t: yes\n"
    "fpu_exception\t: yes\n"
    "cpuid level\t: 28\n"
    "wp\t\t: yes\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush "
    "mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl "
    "xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid "
    "sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor "
    "lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext vmmcall "
    "fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap "
    "avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves "
    "avx512_bf16 clzero xsaveerptr arat avx512vbmi umip avx512_vbmi2 gfni vaes vpclmulqdq "
    "avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid fsrm\n"
    "bugs\t\t: sysret_ss_attrs null_seg spectre_v1 spectre_v2 spec_store_bypass srso "
    "spectre_v2_user\n"
    "bogomips\t: 5192.26\n"
    "TLB size\t: 3584 4K pages\n"
    "clflush size\t: 64\n"
    "cache_alignment\t: 64\n"
    "address sizes\t: 48 bits physical, 48 bits virtual\n"
    "power management:\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC\n"
    "stepping\t: 1\n"
    "microcode\t: 0x1000065\n"
    "cpu MHz\t\t: 2596.132\n"
    "cache size\t: 1024 KB\n"
    "physical id\t: 0\n"
    "siblings\t: 2\n"
    "core id\t\t: 1\n"
    "cpu cores\t: 2\n"
    "apicid\t\t: 1\n"
    "initial apicid\t: 1\n"
    "fpu\t\t: yes\n"
    "fpu_exception\t: yes\n"
    "cpuid level\t: 28\n"
    "wp\t\t: yes\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush "
    "mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl "
    "xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid "
    "sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor "
    "lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext vmmcall "
    "fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap "
    "avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves "
    "avx512_bf16 clzero xsaveerptr arat avx512vbmi umip avx512_vbmi2 gfni vaes vpclmulqdq "
    "avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid fsrm\n"
    "bugs\t\t: sysret_ss_attrs null_seg spectre_v1 spectre_v2 spec_store_bypass srso "
    "spectre_v2_user\n"
    "bogomips\t: 5192.26\n"
    "TLB size\t: 3584 4K pages\n"
    "clflush size\t: 64\n"
    "cache_alignment\t: 64\n"
    "address sizes\t: 48 bits physical, 48 bits virtual\n"
    "power management:\n"
    "\n";

static const char meminfo_real[] = "MemTotal:       24684096 kB\n"
                                   "MemFree:        24068216 kB\n"
                                   "MemAvailable:   24303724 kB\n"
                                   "Buffers:            5004 kB\n"
                                   "Cached:           405428 kB\n"
                                   "SwapCached:            0 kB\n"
                                   "Active:           191408 kB\n"
                                   "Inactive:         233272 kB\n"
                                   "Active(anon):       1572 kB\n"
                                   "Inactive(anon):    21464 kB\n"
                                   "Active(file):     189836 kB\n"
                                   "Inactive(file):   211808 kB\n"
                                   "Unevictable:       15144 kB\n"
                                   "Mlocked:           14156 kB\n"
                                   "SwapTotal:             0 kB\n"
                                   "SwapFree:              0 kB\n"
                                   "Zswap:                 0 kB\n"
                                   "Zswapped:              0 kB\n"
                                   "Dirty:              1756 kB\n"
                                   "Writeback:             0 kB\n"
                                   "AnonPages:         29464 kB\n"
                                   "Mapped:            22624 kB\n"
                                   "Shmem:              8788 kB\n"
                                   "KReclaimable:      87192 kB\n"
                                   "Slab:             116696 kB\n"
                                   "SReclaimable:      87192 kB\n"
                                   "SUnreclaim:        29504 kB\n"
                                   "KernelStack:        1704 kB\n"
                                   "PageTables:         2888 kB\n"
                                   "SecPageTables:         0 kB\n"
                                   "NFS_Unstable:          0 kB\n"
                                   "Bounce:                0 kB\n"
                                   "WritebackTmp:          0 kB\n"
                                   "CommitLimit:    12342048 kB\n"
                                   "Committed_AS:      86380 kB\n"
                                   "VmallocTotal:   34359738367 kB\n"
                                   "VmallocUsed:       14508 kB\n"
                                   "VmallocChunk:          0 kB\n"
                                   "Percpu:              784 kB\n"
                                   "AnonHugePages:         0 kB\n"
                                   "ShmemHugePages:        0 kB\n"
                                   "ShmemPmdMapped:        0 kB\n"
                                   "FileHugePages:         0 kB\n"
                                   "FilePmdMapped:         0 kB\n"
                                   "Balloon:               0 kB\n"
                                   "HugePages_Total:       0\n"
                                   "HugePages_Free:        0\n"
                                   "HugePages_Rsvd:        0\n"
                                   "HugePages_Surp:        0\n"
                                   "Hugepagesize:       2048 kB\n"
                                   "Hugetlb:               0 kB\n"
                                   "DirectMap4k:       32768 kB\n"
                                   "DirectMap2M:     2064384 kB\n"
                                   "DirectMap1G:    25165824 kB\n";

static const char os_release_debian[] = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
                                        "NAME=\"Debian GNU/Linux\"\n"
                                        "VERSION_ID=\"12\"\n"
                                        "VERSION=\"12 (bookworm)\"\n"
                                        "VERSION_CODENAME=bookworm\n"
                                        "ID=debian\n"
                                        "HOME_URL=\"https://www.debian.org/\"\n"
                                        "SUPPORT_URL=\"https://www.debian.org/support\"\n"
                                        "BUG_REPORT_URL=\"https://bugs.debian.org/\"\n";

/*
 * arm64 /proc/cpuinfo has no "model name": an AWS Graviton2 (c6g) node,
 * Neoverse-N1, first two of its CPUs.
 */
static const char cpuinfo_graviton2[] =
    "processor\t: 0\n"
    "BogoMIPS\t: 243.75\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
    "asimdrdm lrcpc dcpop asimddp ssbs\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n"
    "processor\t: 1\n"
    "BogoMIPS\t: 243.75\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
    "asimdrdm lrcpc dcpop asimddp ssbs\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n";

/* Older 32-bit ARM kernels print "Processor" (capital P) instead of
 * "model name" and name the board in "Hardware", after the CPU blocks. */
static const char cpuinfo_armv7[] = "Processor\t: ARMv7 Processor rev 5 (v7l)\n"
                                    "processor\t: 0\n"
                                    "BogoMIPS\t: 38.40\n"
                                    "\n"
                                    "Hardware\t: BCM2709\n"
                                    "Revision\t: a21041\n";

#define STRLEN(s) (sizeof(s) - 1)
/* --- helpers ----------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

struct tmp {
	char dir[64];
};

static int tmp_setup(void **state)
{
	struct tmp *t = cd_calloc(1, sizeof(*t));

	snprintf(t->dir, sizeof(t->dir), "/tmp/test_facts.XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

/* Write an executable shell script at dir/name; returns its path (free it). */
static char *write_script(const char *dir, const char *name, const char *body)
{
	char *path = cd_asprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
	return path;
}

static const char *str_at(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

struct probe {
	json_t *facts, *errors;
	int64_t ms; /* how long facts_python_collect took */
};

static void probe_python(struct probe *p, const char *python, const char *cache_dir, int timeout_ms,
                         int no_cache, const char *gpu_driver)
{
	struct facts_opts o;
	int64_t t0;

	facts_opts_init(&o);
	o.python = python;
	o.cache_dir = cache_dir;
	o.python_timeout_ms = timeout_ms;
	o.no_cache = no_cache;
	p->facts = json_object();
	p->errors = json_object();
	t0 = cd_now_ms();
	facts_python_collect(&o, gpu_driver, p->facts, p->errors);
	p->ms = cd_now_ms() - t0;
}

static void probe_fini(struct probe *p)
{
	json_decref(p->facts);
	json_decref(p->errors);
}

/* Processes in process group pgid that have not exited (zombies excluded). */
static int live_in_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[512], state, *rp;
		int pgrp;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %c %*d %d", &state, &pgrp) == 2 && pgrp == pgid &&
		    state != 'Z' && state != 'X')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* --- /proc/cpuinfo ----------------------------------------------------- */

static void test_cpuinfo_x86_uses_model_name(void **state)
{
	char *model;

	assert_int_equal(facts_parse_cpuinfo(cpuinfo_x86, STRLEN(cpuinfo_x86), &model), 0);
	assert_string_equal(model, "AMD EPYC");
	free(model);
}

static void test_cpuinfo_arm64_names_the_core_from_implementer_and_part(void **state)
{
	char *model;

	assert_int_equal(facts_parse_cpuinfo(cpuinfo_graviton2, STRLEN(cpuinfo_graviton2), &model),
	                 0);
	assert_string_equal(model, "ARM Neoverse-N1");
	free(model);
}

static void test_cpuinfo_arm64_unknown_part_shows_the_raw_ids(void **state)
{
	static const char text[] = "processor\t: 0\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n";
	char *model;

	assert_int_equal(facts_parse_cpuinfo(text, STRLEN(text), &model), 0);
	assert_string_equal(model, "CPU implementer 0x61 part 0x022");
	free(model);
}

static void test_cpuinfo_arm32_falls_back_to_hardware(void **state)
{
	char *model;

	assert_int_equal(facts_parse_cpuinfo(cpuinfo_armv7, STRLEN(cpuinfo_armv7), &model), 0);
	assert_string_equal(model, "BCM2709");
	free(model);
}

static void test_cpuinfo_without_any_model_key_is_notfound(void **state)
{
	static const char text[] = "processor\t: 0\nBogoMIPS\t: 50.00\n";
	char *model = (char *)"untouched";

	assert_int_equal(facts_parse_cpuinfo(text, STRLEN(text), &model), CD_ERR_NOTFOUND);
	assert_null(model);
}

static void test_cpuinfo_reads_only_len_bytes(void **state)
{
	/* "model name" lies past len: the parser must not see it */
	static const char text[] = "CPU part\t: 0xd0c\nmodel name\t: Past The End\n";
	char *model;

	assert_int_equal(facts_parse_cpuinfo(text, 17, &model), 0);
	assert_string_equal(model, "CPU part 0xd0c");
	free(model);
}

/* --- /proc/meminfo ----------------------------------------------------- */

static void test_meminfo_gives_total_and_available_in_bytes(void **state)
{
	struct facts_meminfo mi;
	char err[CD_ERRLEN];

	assert_int_equal(
	    facts_parse_meminfo(meminfo_real, STRLEN(meminfo_real), &mi, err, sizeof(err)), 0);
	assert_int_equal(mi.total_bytes, 24684096LL * 1024);
	assert_int_equal(mi.available_bytes, 24303724LL * 1024);
}

static void test_meminfo_without_memavailable_leaves_it_minus_one(void **state)
{
	/* Linux < 3.14 */
	static const char text[] = "MemTotal:        1016232 kB\nMemFree:          123456 kB\n";
	struct facts_meminfo mi;
	char err[CD_ERRLEN];

	assert_int_equal(facts_parse_meminfo(text, STRLEN(text), &mi, err, sizeof(err)), 0);
	assert_int_equal(mi.total_bytes, 1016232LL * 1024);
	assert_int_equal(mi.available_bytes, -1);
}

static void test_meminfo_malformed_value_is_a_parse_error(void **state)
{
	static const char text[] = "MemTotal:        lots kB\n";
	struct facts_meminfo mi;
	char err[CD_ERRLEN];

	assert_int_equal(facts_parse_meminfo(text, STRLEN(text), &mi, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(
	    err, "malformed MemTotal line in /proc/meminfo: \"MemTotal:        lots kB\"");
}

static void test_meminfo_overflowing_value_is_a_parse_error(void **state)
{
	static const char text[] = "MemTotal: 99999999999999999999 kB\n";
	struct facts_meminfo mi;
	char err[CD_ERRLEN];

	assert_int_equal(facts_parse_meminfo(text, STRLEN(text), &mi, err, sizeof(err)),
	                 CD_ERR_PARSE);
}

/* --- os-release ------------------------------------------------------- */

static void test_os_release_uses_pretty_name(void **state)
{
	char *os;

	assert_int_equal(facts_parse_os_release(os_release_debian, STRLEN(os_release_debian), &os),
	                 0);
	assert_string_equal(os, "Debian GNU/Linux 12 (bookworm)");
	free(os);
}

static void test_os_release_unquotes_single_quotes_and_escapes(void **state)
{
	static const char text[] = "# comment\nPRETTY_NAME=\"Say \\\"hi\\\" \\$HOME\"\n";
	static const char single[] = "PRETTY_NAME='Rocky Linux 9.3 (Blue Onyx)'\n";
	char *os;

	assert_int_equal(facts_parse_os_release(text, STRLEN(text), &os), 0);
	assert_string_equal(os, "Say \"hi\" $HOME");
	free(os);
	assert_int_equal(facts_parse_os_release(single, STRLEN(single), &os), 0);
	assert_string_equal(os, "Rocky Linux 9.3 (Blue Onyx)");
	free(os);
}

static void test_os_release_without_pretty_name_uses_name_and_version_id(void **state)
{
	static const char text[] = "NAME=Alpine\nID=alpine\nVERSION_ID=3.19.1\n";
	char *os;

	assert_int_equal(facts_parse_os_release(text, STRLEN(text), &os), 0);
	assert_string_equal(os, "Alpine 3.19.1");
	free(os);
}

static void test_os_release_without_names_is_notfound(void **state)
{
	static const char text[] = "ID=mystery\n";
	char *os;

	assert_int_equal(facts_parse_os_release(text, STRLEN(text), &os), CD_ERR_NOTFOUND);
	assert_null(os);
}

/* The short name of each captured os-release in tests/fixtures/os-release/. */
static void test_os_short_names_real_os_release_files(void **state)
{
	static const struct {
		const char *file, *want;
	} cases[] = {
	    {"debian-12", "Debian 12"},
	    {"debian-11", "Debian 11"},
	    {"debian-trixie", "Debian trixie"},
	    {"ubuntu-22.04", "Ubuntu 22.04"},
	    {"rocky-8.9", "Rocky 8.9"},
	    {"rhel-8.9", "RHEL 8.9"},
	    {"almalinux-9.3", "Alma 9.3"},
	    {"centos-7", "CentOS 7"},
	    {"centos-stream-9", "CentOS Stream 9"},
	    {"sles-15-sp5", "SLES 15-SP5"},
	    {"opensuse-tumbleweed", "openSUSE Tumbleweed"},
	    {"amzn-2023", "Amazon Linux 2023"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256], err[CD_ERRLEN], *data, *os;
		size_t len;

		snprintf(path, sizeof(path), "tests/fixtures/os-release/%s", cases[i].file);
		assert_int_equal(facts_read_file(path, 65536, &data, &len, err, sizeof(err)), 0);
		os = facts_os_short(data, len);
		if (!os || strcmp(os, cases[i].want) != 0)
			fail_msg("%s: \"%s\", expected \"%s\"", cases[i].file, os ? os : "(null)",
			         cases[i].want);
		free(os);
		free(data);
	}
}

static void test_os_short_of_sles_without_a_service_pack_is_the_major(void **state)
{
	static const char text[] =
	    "NAME=\"SLES\"\nVERSION=\"15\"\nVERSION_ID=\"15\"\nID=\"sles\"\n";
	char *os = facts_os_short(text, STRLEN(text));

	assert_string_equal(os, "SLES 15");
	free(os);
}

static void test_os_short_of_an_unknown_distribution_drops_linux_from_name(void **state)
{
	static const char text[] = "NAME=\"Foo GNU/Linux\"\nID=foo\nVERSION_ID=\"3.1\"\n";
	static const char id_only[] = "ID=mystery\n";
	char *os = facts_os_short(text, STRLEN(text));

	assert_string_equal(os, "Foo 3.1");
	free(os);
	os = facts_os_short(id_only, STRLEN(id_only));
	assert_string_equal(os, "mystery");
	free(os);
}

static void test_os_short_without_id_or_name_is_null(void **state)
{
	static const char text[] = "PRETTY_NAME=\"Something\"\nVERSION_ID=1\n";

	assert_null(facts_os_short(text, STRLEN(text)));
}

/* --- environment ------------------------------------------------------ */

static void test_env_filter_keeps_exactly_the_job_variables(void **state)
{
	static const char *const envp[] = {
	    "PATH=/usr/bin:/bin",
	    "NCCL_DEBUG=INFO",
	    "HOME=/home/alice",
	    "NCCL_SOCKET_IFNAME=^docker0,lo",
	    "GLOO_SOCKET_IFNAME=eth0",
	    "MASTER_ADDR=10.0.0.1",
	    "MASTER_PORT=29500",
	    "TORCH_DISTRIBUTED_DEBUG=DETAIL",
	    "CUDA_VISIBLE_DEVICES=0,1",
	    "WORLD_SIZE=4",
	    "RANK=0",
	    "LOCAL_RANK=0",
	    "OMP_NUM_THREADS=8",
	    "NCCL_=prefix-only",
	    "NCCL=1",
	    "MASTER=x",
	    "RANKS=3",
	    "MY_RANK=1",
	    "CUDA_VISIBLE_DEVICES_EXTRA=1",
	    "nccl_debug=info",
	    "NCCL_NO_EQUALS",
	    "RANK=1",
	    NULL,
	};
	json_t *env = facts_env_filter((char *const *)envp);
	json_t *want =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "NCCL_DEBUG",
	              "INFO", "NCCL_SOCKET_IFNAME", "^docker0,lo", "GLOO_SOCKET_IFNAME", "eth0",
	              "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500", "TORCH_DISTRIBUTED_DEBUG",
	              "DETAIL", "CUDA_VISIBLE_DEVICES", "0,1", "WORLD_SIZE", "4", "RANK", "0",
	              "LOCAL_RANK", "0", "OMP_NUM_THREADS", "8");

	assert_true(json_equal(env, want));
	json_decref(env);
	json_decref(want);
}

static void test_env_filter_of_empty_environment_is_empty_object(void **state)
{
	static const char *const envp[] = {NULL};
	json_t *env = facts_env_filter((char *const *)envp);

	assert_true(json_is_object(env));
	assert_int_equal(json_object_size(env), 0);
	json_decref(env);
}

/* --- small pieces ------------------------------------------------------ */

static void test_nccl_version_code_decodes_both_encodings(void **state)
{
	char v[32];

	assert_int_equal(facts_nccl_version_string(22803, v, sizeof(v)), 0);
	assert_string_equal(v, "2.28.3");
	assert_int_equal(facts_nccl_version_string(2708, v, sizeof(v)), 0);
	assert_string_equal(v, "2.7.8");
	assert_int_equal(facts_nccl_version_string(0, v, sizeof(v)), CD_ERR_PARSE);
	assert_string_equal(v, "");
}

static void test_json_text_replaces_invalid_utf8(void **state)
{
	json_t *s = facts_json_text("ok\xff\xc3\xa9\0z", 7);

	assert_string_equal(json_string_value(s), "ok\xef\xbf\xbd\xc3\xa9\xef\xbf\xbdz");
	json_decref(s);
}

static void test_python_info_parser_takes_the_last_line(void **state)
{
	static const char out[] =
	    "a sitecustomize that prints\n"
	    "{\"executable\": \"/usr/bin/python3\", \"version\": \"3.11.2\", "
	    "\"executable_mtime_ns\": 1700000000000000000, \"torch_origin\": null, "
	    "\"torch_mtime_ns\": null}\n";
	struct facts_python_info info;
	char err[CD_ERRLEN];

	assert_int_equal(facts_python_parse_info(out, STRLEN(out), &info, err, sizeof(err)), 0);
	assert_string_equal(info.executable, "/usr/bin/python3");
	assert_string_equal(info.version, "3.11.2");
	assert_null(info.torch_origin);
	assert_int_equal(info.executable_mtime_ns, 1700000000000000000LL);
	assert_int_equal(info.torch_mtime_ns, -1);
	facts_python_info_fini(&info);
}

static void test_torch_parser_reports_a_failed_import(void **state)
{
	static const char out[] = "{\"error\": \"ImportError: libcudnn.so.8: cannot open\"}\n";
	char err[CD_ERRLEN];
	json_t *torch;

	assert_int_equal(facts_python_parse_torch(out, STRLEN(out), &torch, err, sizeof(err)),
	                 CD_ERR_IO);
	assert_null(torch);
	assert_string_equal(err, "import torch failed: ImportError: libcudnn.so.8: cannot open");
}

/* --- the python probe ---------------------------------------------------- */

static void test_python_probe_real_torch_cache_miss_then_hit(void **state)
{
	struct tmp *t = *state;
	struct probe p1, p2;
	char host[256] = "", *cache;
	json_t *torch;
	struct stat st;

	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	probe_python(&p1, "/usr/bin/python3", t->dir, 60000, 0, NULL);
	if (json_is_null(json_object_get(p1.facts, "torch")) && !json_object_size(p1.errors)) {
		probe_fini(&p1);
		skip(); /* python3-torch is not installed */
	}
	assert_int_equal(json_object_size(p1.errors), 0);
	assert_string_equal(str_at(json_object_get(p1.facts, "python"), "path"),
	                    "/usr/bin/python3");
	assert_string_equal(str_at(json_object_get(p1.facts, "python"), "version"), "3.11.2");
	torch = json_object_get(p1.facts, "torch");
	assert_string_equal(str_at(torch, "version"), "1.13.0a0");
	assert_true(json_is_false(json_object_get(torch, "cached")));
	assert_true(json_is_false(json_object_get(torch, "cuda_available")));
	assert_true(json_is_null(json_object_get(torch, "cuda_version")));
	assert_true(json_is_null(json_object_get(torch, "nccl_version")));
	assert_true(json_is_integer(json_object_get(torch, "import_ms")));
	assert_true(json_integer_value(json_object_get(torch, "import_ms")) >= 0);

	gethostname(host, sizeof(host) - 1);
	cache = cd_asprintf("%s/python-facts-%s.json", t->dir, host);
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(cache);

	probe_python(&p2, "/usr/bin/python3", t->dir, 60000, 0, NULL);
	assert_int_equal(json_object_size(p2.errors), 0);
	torch = json_object_get(p2.facts, "torch");
	assert_true(json_is_true(json_object_get(torch, "cached")));
	assert_string_equal(str_at(torch, "version"), "1.13.0a0");
	assert_null(json_object_get(torch, "import_ms"));
	assert_true(p2.ms < p1.ms);
	probe_fini(&p1);
	probe_fini(&p2);
}

static void test_python_probe_no_cache_imports_torch_again(void **state)
{
	struct tmp *t = *state;
	struct probe p1, p2;

	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	probe_python(&p1, "/usr/bin/python3", t->dir, 60000, 0, NULL);
	if (!json_is_object(json_object_get(p1.facts, "torch"))) {
		probe_fini(&p1);
		skip();
	}
	probe_python(&p2, "/usr/bin/python3", t->dir, 60000, 1, NULL);
	assert_true(json_is_false(json_object_get(json_object_get(p2.facts, "torch"), "cached")));
	probe_fini(&p1);
	probe_fini(&p2);
}

static void test_python_probe_new_driver_version_misses_the_cache(void **state)
{
	struct tmp *t = *state;
	struct probe p1, p2;

	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	probe_python(&p1, "/usr/bin/python3", t->dir, 60000, 0, NULL);
	if (!json_is_object(json_object_get(p1.facts, "torch"))) {
		probe_fini(&p1);
		skip();
	}
	probe_python(&p2, "/usr/bin/python3", t->dir, 60000, 0, "550.54.15");
	assert_true(json_is_false(json_object_get(json_object_get(p2.facts, "torch"), "cached")));
	probe_fini(&p1);
	probe_fini(&p2);
}

static void test_python_probe_hang_times_out_and_leaves_no_process(void **state)
{
	struct tmp *t = *state;
	char *body = cd_asprintf("echo $$ > %s/pid\nsleep 30\n", t->dir);
	char *py = write_script(t->dir, "python3", body);
	char *want = cd_asprintf("%s did not answer within 0.5 s", py);
	char *pidfile = cd_asprintf("%s/pid", t->dir);
	struct probe p;
	int64_t waited = 0;
	FILE *f;
	int pid = 0, status;

	probe_python(&p, py, t->dir, 500, 0, NULL);
	assert_true(p.ms >= 500);
	assert_true(p.ms < 750);
	assert_string_equal(str_at(p.errors, "python"), want);
	assert_true(json_is_null(json_object_get(p.facts, "python")));
	assert_true(json_is_null(json_object_get(p.facts, "torch")));

	/* the child was reaped: this process has no child left */
	assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	/* and its process group, the `sleep` included, is gone (SIGKILL is
	 * asynchronous for the grandchild: give the kernel a moment) */
	assert_non_null(f = fopen(pidfile, "r"));
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	while (live_in_group(pid) > 0 && waited < 500) {
		usleep(10000);
		waited += 10;
	}
	assert_int_equal(live_in_group(pid), 0);
	probe_fini(&p);
	free(body);
	free(py);
	free(want);
	free(pidfile);
}

static void test_python_probe_garbage_output_is_a_clear_error(void **state)
{
	struct tmp *t = *state;
	char *py = write_script(t->dir, "python3", "echo 'hello, I am not JSON'\n");
	char *want =
	    cd_asprintf("%s printed something that is not JSON: \"hello, I am not JSON\"", py);
	struct probe p;

	probe_python(&p, py, t->dir, 5000, 0, NULL);
	assert_string_equal(str_at(p.errors, "python"), want);
	assert_true(json_is_null(json_object_get(p.facts, "python")));
	assert_true(json_is_null(json_object_get(p.facts, "torch")));
	probe_fini(&p);
	free(py);
	free(want);
}

static void test_python_probe_failing_interpreter_reports_stderr(void **state)
{
	struct tmp *t = *state;
	char *py = write_script(t->dir, "python3",
	                        "echo 'Traceback:' >&2\n"
	                        "echo 'SyntaxError: bad' >&2\nexit 1\n");
	char *want = cd_asprintf("%s exited with status 1: SyntaxError: bad", py);
	struct probe p;

	probe_python(&p, py, t->dir, 5000, 0, NULL);
	assert_string_equal(str_at(p.errors, "python"), want);
	probe_fini(&p);
	free(py);
	free(want);
}

static void test_python_probe_output_over_64k_is_an_error(void **state)
{
	struct tmp *t = *state;
	char *py = write_script(t->dir, "python3", "head -c 70000 /dev/zero | tr '\\0' x\n");
	char *want = cd_asprintf("%s printed more than 64 KiB", py);
	struct probe p;

	probe_python(&p, py, t->dir, 5000, 0, NULL);
	assert_string_equal(str_at(p.errors, "python"), want);
	probe_fini(&p);
	free(py);
	free(want);
}

static void test_python_probe_without_torch_gives_null_torch(void **state)
{
	struct tmp *t = *state;
	char *py = write_script(t->dir, "python3",
	                        "echo '{\"executable\": \"/opt/py/bin/python3\", \"version\": "
	                        "\"3.12.1\", \"executable_mtime_ns\": 1, \"torch_origin\": null, "
	                        "\"torch_mtime_ns\": null}'\n");
	struct probe p;

	probe_python(&p, py, t->dir, 5000, 0, NULL);
	assert_int_equal(json_object_size(p.errors), 0);
	assert_string_equal(str_at(json_object_get(p.facts, "python"), "path"),
	                    "/opt/py/bin/python3");
	assert_string_equal(str_at(json_object_get(p.facts, "python"), "version"), "3.12.1");
	assert_true(json_is_null(json_object_get(p.facts, "torch")));
	probe_fini(&p);
	free(py);
}

/* mkdir -p dir/rel's parent, then an executable script at dir/rel; returns
 * its path (free it). */
static char *write_script_at(const char *dir, const char *rel, const char *body)
{
	char *path = cd_asprintf("%s/%s", dir, rel), err[CD_ERRLEN], *slash, *made;

	slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(cd_mkdir_p(path, err, sizeof(err)), 0);
	*slash = '/';
	made = write_script(dir, rel, body);
	free(made);
	return path;
}

#define INFO_LINE(torch)                                                         \
	"echo '{\"executable\": \"/usr/bin/python3\", \"version\": \"3.11.2\", " \
	"\"executable_mtime_ns\": 1, \"torch_origin\": " torch ", \"torch_mtime_ns\": null}'\n"

static void test_pyfind_lists_the_usual_places_in_order(void **state)
{
	struct tmp *t = *state;
	char *home = cd_asprintf("%s/home", t->dir), *conda = cd_asprintf("%s/conda", t->dir);
	char **paths, *want[7];
	size_t n;

	want[0] = write_script_at(t->dir, "conda/bin/python", "");
	want[1] = write_script_at(home, "miniconda3/envs/a/bin/python", "");
	want[2] = write_script_at(home, "miniconda3/envs/b/bin/python", "");
	want[3] = write_script_at(home, "miniconda3/bin/python", "");
	want[4] = write_script_at(home, ".venv/bin/python", "");
	want[5] = write_script_at(home, "venv-torch/bin/python", "");
	want[6] = write_script_at(home, ".pyenv/versions/3.10.4/bin/python", "");
	/* pyenv's shims pick a version by directory: never a candidate */
	free(write_script_at(home, ".pyenv/shims/python", ""));
	/* not executable: not a candidate */
	free(write_script_at(home, ".virtualenvs/x/bin/python", ""));
	{
		char *nx = cd_asprintf("%s/.virtualenvs/x/bin/python", home);

		assert_int_equal(chmod(nx, 0644), 0);
		free(nx);
	}
	n = facts_pyfind_candidates(home, conda, &paths);
	assert_true(n >= 7);
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(paths[i], want[i]);
	/* then only the system's own interpreters, last */
	for (size_t i = 7; i < n; i++)
		assert_true(strcmp(paths[i], "/usr/local/bin/python3") == 0 ||
		            strcmp(paths[i], "/usr/bin/python3") == 0);
	assert_null(paths[n]);
	facts_pyfind_free(paths);
	/* without HOME and CONDA_PREFIX only the absolute places are looked at */
	n = facts_pyfind_candidates(NULL, NULL, &paths);
	for (size_t i = 0; i < n; i++)
		assert_true(strncmp(paths[i], "/opt/conda/", 11) == 0 ||
		            strcmp(paths[i], "/usr/local/bin/python3") == 0 ||
		            strcmp(paths[i], "/usr/bin/python3") == 0);
	facts_pyfind_free(paths);
	for (size_t i = 0; i < 7; i++)
		free(want[i]);
	free(home);
	free(conda);
}

static void test_python_probe_without_torch_lists_the_interpreters_that_have_it(void **state)
{
	struct tmp *t = *state;
	char *home = cd_asprintf("%s/home", t->dir), *old_home = getenv("HOME"),
	     *old_path = getenv("PATH"), *old_conda = getenv("CONDA_PREFIX");
	char *venv, *bin = cd_asprintf("%s/bin", t->dir);
	struct probe p;
	json_t *c;

	old_home = old_home ? cd_strdup(old_home) : NULL;
	old_path = old_path ? cd_strdup(old_path) : NULL;
	old_conda = old_conda ? cd_strdup(old_conda) : NULL;
	free(write_script_at(t->dir, "bin/python3", INFO_LINE("null")));
	free(write_script_at(home, "miniconda3/envs/old/bin/python", INFO_LINE("null")));
	venv = write_script_at(home, ".venv/bin/python", INFO_LINE("\"/v/torch/__init__.py\""));
	setenv("HOME", home, 1);
	setenv("PATH", bin, 1);
	unsetenv("CONDA_PREFIX");
	probe_python(&p, NULL, t->dir, 5000, 0, NULL);
	c = json_object_get(p.facts, "python_candidates");
	assert_true(json_array_size(c) >= 1);
	assert_string_equal(str_at(json_array_get(c, 0), "path"), venv);
	assert_string_equal(str_at(json_array_get(c, 0), "version"), "3.11.2");
	/* after the home's, only this machine's own python3 (Debian's has torch) */
	for (size_t i = 1; i < json_array_size(c); i++)
		assert_true(
		    strcmp(str_at(json_array_get(c, i), "path"), "/usr/bin/python3") == 0 ||
		    strcmp(str_at(json_array_get(c, i), "path"), "/usr/local/bin/python3") == 0);
	assert_true(json_is_null(json_object_get(p.facts, "torch")));
	probe_fini(&p);
	/* an interpreter named with --python is what is asked about: no search */
	probe_python(&p, "python3", t->dir, 5000, 0, NULL);
	assert_null(json_object_get(p.facts, "python_candidates"));
	probe_fini(&p);
	old_home ? setenv("HOME", old_home, 1) : unsetenv("HOME");
	old_path ? setenv("PATH", old_path, 1) : unsetenv("PATH");
	if (old_conda)
		setenv("CONDA_PREFIX", old_conda, 1);
	free(old_home);
	free(old_path);
	free(old_conda);
	free(venv);
	free(bin);
	free(home);
}

static void test_python_probe_named_interpreter_missing_is_an_error(void **state)
{
	struct tmp *t = *state;
	char *py = cd_asprintf("%s/no-such-python", t->dir);
	char *want = cd_asprintf("cannot run %s: No such file or directory", py);
	struct probe p;

	probe_python(&p, py, t->dir, 5000, 0, NULL);
	assert_string_equal(str_at(p.errors, "python"), want);
	assert_true(json_is_null(json_object_get(p.facts, "python")));
	probe_fini(&p);
	free(py);
	free(want);
}

/* --- facts_collect ------------------------------------------------------ */

static void test_collect_on_this_machine(void **state)
{
	struct tmp *t = *state;
	struct facts_opts o;
	char host[256] = "";
	void *nvml;
	json_t *f;

	facts_opts_init(&o);
	o.cache_dir = t->dir;
	f = facts_collect(&o);
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_string_equal(str_at(f, "hostname"), host);
	assert_int_equal(json_integer_value(json_object_get(f, "cpus")),
	                 sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(json_is_array(json_object_get(f, "gpus")));
	/* this machine has no NVIDIA driver; on one that has, gpus is not empty */
	nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!nvml) {
		assert_int_equal(json_array_size(json_object_get(f, "gpus")), 0);
		assert_true(json_is_null(json_object_get(f, "gpu_driver")));
	} else {
		dlclose(nvml);
	}
	assert_true(json_is_integer(json_object_get(f, "mem_total_bytes")));
	assert_true(json_is_integer(json_object_get(f, "wall_clock_ms")));
	assert_true(json_is_real(json_object_get(f, "uptime_s")));
	assert_true(json_is_object(json_object_get(f, "env")));
	assert_int_equal(json_object_size(json_object_get(f, "errors")), 0);
	json_decref(f);
}

/* The GPUs through the NVML stand-in (tests/fakes/fake_nvml.c) that
 * CLUSTERDOC_NVML_LIB selects: what a node with two GPUs reports. */
static void test_gpus_through_nvml_name_each_device_and_the_driver(void **state)
{
	json_t *facts = json_object(), *errors = json_object(), *g;

	setenv("CLUSTERDOC_NVML_LIB", FAKE_NVML, 1);
	setenv("FAKE_NVML_DEVICES", "100:1,0", 1);
	facts_gpu_collect(facts, errors);
	unsetenv("FAKE_NVML_DEVICES");
	unsetenv("CLUSTERDOC_NVML_LIB");
	assert_int_equal(json_object_size(errors), 0);
	assert_string_equal(str_at(facts, "gpu_driver"), "550.54.fake");
	assert_int_equal(json_array_size(json_object_get(facts, "gpus")), 2);
	g = json_array_get(json_object_get(facts, "gpus"), 1);
	assert_int_equal(json_integer_value(json_object_get(g, "index")), 1);
	assert_string_equal(str_at(g, "name"), "Fake GPU");
	assert_string_equal(str_at(g, "uuid"), "GPU-fa4e0000-0000-0000-0000-000000000001");
	assert_int_equal(json_integer_value(json_object_get(g, "memory_bytes")), 80ll << 30);
	json_decref(facts);
	json_decref(errors);
}

static void test_gpus_when_nvml_init_fails_say_why(void **state)
{
	json_t *facts = json_object(), *errors = json_object();

	setenv("CLUSTERDOC_NVML_LIB", FAKE_NVML, 1);
	setenv("FAKE_NVML_INIT", "9", 1);
	facts_gpu_collect(facts, errors);
	unsetenv("FAKE_NVML_INIT");
	unsetenv("CLUSTERDOC_NVML_LIB");
	assert_int_equal(json_array_size(json_object_get(facts, "gpus")), 0);
	assert_true(json_is_null(json_object_get(facts, "gpu_driver")));
	assert_string_equal(str_at(errors, "gpus"), "nvmlInit: Driver Not Loaded (NVML error 9)");
	json_decref(facts);
	json_decref(errors);
}

static void test_collect_finds_nccl_2_28_of_the_cuda_toolkit(void **state)
{
	static const char toolkit[] = "/usr/local/cuda/lib64/libnccl.so.2";
	struct tmp *t = *state;
	struct facts_opts o;
	struct stat want, got;
	json_t *f, *nccl;

	if (stat(toolkit, &want) != 0)
		skip();
	facts_opts_init(&o);
	o.cache_dir = t->dir;
	f = facts_collect(&o);
	nccl = json_object_get(f, "nccl");
	assert_true(json_is_object(nccl));
	assert_memory_equal(str_at(nccl, "version"), "2.28.", 5);
	/* found through ld.so.cache or the toolkit path: the same file either way */
	assert_int_equal(stat(str_at(nccl, "library"), &got), 0);
	assert_int_equal(got.st_ino, want.st_ino);
	assert_int_equal(got.st_dev, want.st_dev);
	json_decref(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpuinfo_x86_uses_model_name),
	    cmocka_unit_test(test_cpuinfo_arm64_names_the_core_from_implementer_and_part),
	    cmocka_unit_test(test_cpuinfo_arm64_unknown_part_shows_the_raw_ids),
	    cmocka_unit_test(test_cpuinfo_arm32_falls_back_to_hardware),
	    cmocka_unit_test(test_cpuinfo_without_any_model_key_is_notfound),
	    cmocka_unit_test(test_cpuinfo_reads_only_len_bytes),
	    cmocka_unit_test(test_meminfo_gives_total_and_available_in_bytes),
	    cmocka_unit_test(test_meminfo_without_memavailable_leaves_it_minus_one),
	    cmocka_unit_test(test_meminfo_malformed_value_is_a_parse_error),
	    cmocka_unit_test(test_meminfo_overflowing_value_is_a_parse_error),
	    cmocka_unit_test(test_os_release_uses_pretty_name),
	    cmocka_unit_test(test_os_release_unquotes_single_quotes_and_escapes),
	    cmocka_unit_test(test_os_release_without_pretty_name_uses_name_and_version_id),
	    cmocka_unit_test(test_os_release_without_names_is_notfound),
	    cmocka_unit_test(test_os_short_names_real_os_release_files),
	    cmocka_unit_test(test_os_short_of_sles_without_a_service_pack_is_the_major),
	    cmocka_unit_test(test_os_short_of_an_unknown_distribution_drops_linux_from_name),
	    cmocka_unit_test(test_os_short_without_id_or_name_is_null),
	    cmocka_unit_test(test_env_filter_keeps_exactly_the_job_variables),
	    cmocka_unit_test(test_env_filter_of_empty_environment_is_empty_object),
	    cmocka_unit_test(test_nccl_version_code_decodes_both_encodings),
	    cmocka_unit_test(test_json_text_replaces_invalid_utf8),
	    cmocka_unit_test(test_python_info_parser_takes_the_last_line),
	    cmocka_unit_test(test_torch_parser_reports_a_failed_import),
	    cmocka_unit_test_setup_teardown(test_python_probe_real_torch_cache_miss_then_hit,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_no_cache_imports_torch_again,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_new_driver_version_misses_the_cache,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_hang_times_out_and_leaves_no_process,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_garbage_output_is_a_clear_error,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_failing_interpreter_reports_stderr,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_output_over_64k_is_an_error,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_without_torch_gives_null_torch,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_pyfind_lists_the_usual_places_in_order, tmp_setup,
	                                    tmp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_python_probe_without_torch_lists_the_interpreters_that_have_it, tmp_setup,
	        tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_python_probe_named_interpreter_missing_is_an_error,
	                                    tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_collect_on_this_machine, tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_gpus_through_nvml_name_each_device_and_the_driver),
	    cmocka_unit_test(test_gpus_when_nvml_init_fails_say_why),
	    cmocka_unit_test_setup_teardown(test_collect_finds_nccl_2_28_of_the_cuda_toolkit,
	                                    tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
