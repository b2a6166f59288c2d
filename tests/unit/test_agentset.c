/* SPDX-License-Identifier: MIT */
/* test_agentset.c - reading an agent's architecture and build id from its ELF header, the set
 * of agents beside the configured one, and the bootstrap that picks one and installs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentset.h"
#include "bootstrap.h"
#include "cd.h"
#include "elfnote.h"
#include "fsutil.h"
#include "sha256.h"

/* A minimal little-endian ELF64 image: header, one PT_NOTE program header,
 * and a GNU build-id note of 4 bytes (de ad be ef). */
static size_t make_elf64(unsigned char *b, unsigned machine)
{
	memset(b, 0, 256);
	memcpy(b, "\177ELF", 4);
	b[4] = 2; /* ELFCLASS64 */
	b[5] = 1; /* little endian */
	b[6] = 1;
	b[16] = 2; /* ET_EXEC */
	b[18] = (unsigned char)machine;
	b[19] = (unsigned char)(machine >> 8);
	b[32] = 64;      /* e_phoff */
	b[54] = 56;      /* e_phentsize */
	b[56] = 1;       /* e_phnum */
	b[64] = 4;       /* p_type PT_NOTE */
	b[64 + 8] = 120; /* p_offset */
	b[64 + 32] = 20; /* p_filesz */
	/* the note at 120: namesz 4, descsz 4, type 3, "GNU\0", de ad be ef */
	b[120] = 4;
	b[124] = 4;
	b[128] = 3;
	memcpy(b + 132, "GNU", 4);
	memcpy(b + 136, "\xde\xad\xbe\xef", 4);
	return 140;
}

static void elf64_aarch64_is_read_with_its_build_id(void **state)
{
	unsigned char b[256];
	size_t len = make_elf64(b, 183);
	struct elf_info info;
	char err[CD_ERRLEN];

	assert_int_equal(elf_info_parse(b, len, &info, err, sizeof(err)), 0);
	assert_int_equal(info.machine, 183);
	assert_string_equal(info.arch, "aarch64");
	assert_string_equal(info.build_id, "deadbeef");
}

static void elf32_big_endian_machine_is_read(void **state)
{
	unsigned char b[64] = {0x7f, 'E', 'L', 'F', 1, 2, 1};

	b[18] = 0;
	b[19] = 22; /* EM_S390, big endian */
	struct elf_info info;
	char err[CD_ERRLEN];

	assert_int_equal(elf_info_parse(b, sizeof(b), &info, err, sizeof(err)), 0);
	assert_string_equal(info.arch, "s390x");
	assert_string_equal(info.build_id, "");
}

static void not_elf_truncated_and_outside_offsets_are_refused(void **state)
{
	unsigned char b[256];
	struct elf_info info;
	char err[CD_ERRLEN];
	size_t len = make_elf64(b, 62);

	assert_int_equal(
	    elf_info_parse((const unsigned char *)"#!/bin/sh\n", 10, &info, err, sizeof(err)),
	    CD_ERR_PARSE);
	assert_int_equal(elf_info_parse(b, 40, &info, err, sizeof(err)), CD_ERR_PARSE);
	b[32] = 250; /* e_phoff past the end */
	assert_int_equal(elf_info_parse(b, len, &info, err, sizeof(err)), CD_ERR_PARSE);
	assert_non_null(strstr(err, "outside"));
	make_elf64(b, 62);
	b[64 + 8] = 200; /* a note past the end: no build id, not an error */
	assert_int_equal(elf_info_parse(b, len, &info, err, sizeof(err)), 0);
	assert_string_equal(info.arch, "x86_64");
	assert_string_equal(info.build_id, "");
}

static void running_test_binary_has_this_machines_arch_and_a_build_id(void **state)
{
	unsigned char *data;
	size_t len;
	struct elf_info info;
	char err[CD_ERRLEN];

	assert_int_equal(cd_read_file("/proc/self/exe", 64 << 20, &data, &len, err, sizeof(err)),
	                 0);
	assert_int_equal(elf_info_parse(data, len, &info, err, sizeof(err)), 0);
#if defined(__x86_64__)
	assert_string_equal(info.arch, "x86_64");
#elif defined(__aarch64__)
	assert_string_equal(info.arch, "aarch64");
#endif
	assert_int_equal(strlen(info.build_id), 40);
	free(data);
}

static char dir[] = "/tmp/cd-agentset-XXXXXX";

static void write_file(const char *name, const void *data, size_t len, int mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	chmod(path, (mode_t)mode);
}

static int setup_dir(void **state)
{
	unsigned char b[256], *self;
	size_t len, slen;
	char err[CD_ERRLEN];

	if (!mkdtemp(dir))
		return -1;
	if (cd_read_file("/proc/self/exe", 64 << 20, &self, &slen, err, sizeof(err)) < 0)
		return -1;
	write_file("clusterdoc-agent", self, slen, 0755);
	write_file("clusterdoc-agent-dup", self, slen, 0755); /* the same arch again: skipped */
	free(self);
	len = make_elf64(b, 183);
	write_file("clusterdoc-agent-aarch64", b, len, 0755);
	write_file("clusterdoc-agent-notes.txt", "notes\n", 6, 0644); /* no ELF: skipped */
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void set_is_the_agent_and_every_other_arch_beside_it(void **state)
{
	struct agentset set;
	char path[256], err[CD_ERRLEN], list[64];
	const struct agent_bin *a;

	snprintf(path, sizeof(path), "%s/clusterdoc-agent", dir);
	assert_int_equal(agentset_load(&set, path, err, sizeof(err)), 0);
	assert_int_equal(set.n, 2);
	assert_string_equal(set.bins[0].path, path);
	a = agentset_for_arch(&set, "arm64");
	assert_non_null(a);
	assert_string_equal(a->arch, "aarch64");
	assert_int_equal(a->size, 140);
	assert_string_equal(a->build_id, "deadbeef");
	assert_ptr_equal(agentset_by_sha(&set, a->sha256), a);
	assert_null(agentset_for_arch(&set, "ppc64le"));
	agentset_arch_list(&set, list, sizeof(list));
	assert_string_equal(list, "x86_64, aarch64");
	agentset_fini(&set);
}

static void missing_agent_is_an_error_naming_it(void **state)
{
	struct agentset set;
	char err[CD_ERRLEN];

	assert_true(agentset_load(&set, "/nonexistent/clusterdoc-agent", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/clusterdoc-agent"));
}

static void command_has_an_arm_per_arch_and_no_quote_inside(void **state)
{
	struct agentset set;
	char path[256], err[CD_ERRLEN], arm[200];
	struct boot_params p = {.stream = 1, .skip = "", .token = "0123456789abcdef"};
	char *cmd;

	snprintf(path, sizeof(path), "%s/clusterdoc-agent", dir);
	assert_int_equal(agentset_load(&set, path, err, sizeof(err)), 0);
	cmd = bootstrap_command(&set, &p);
	assert_true(strncmp(cmd, "exec /bin/sh -c '", 17) == 0);
	assert_ptr_equal(strchr(cmd + 17, '\''), cmd + strlen(cmd) - 1); /* only the closing one */
	snprintf(arm, sizeof(arm), "x86_64) s=%s; z=%lld;;", set.bins[0].sha256, set.bins[0].size);
	assert_non_null(strstr(cmd, arm));
	snprintf(arm, sizeof(arm), "aarch64|arm64) s=%s; z=140;;", set.bins[1].sha256);
	assert_non_null(strstr(cmd, arm));
	assert_non_null(strstr(cmd, "*) echo CDBOOT arch \"$m\"; exit 0;; esac"));
	assert_non_null(strstr(cmd, "read -r k"));
	/* the temp name is the writer's own: node name, shell pid, the head's token */
	assert_non_null(strstr(cmd, "t=\"$1/.agent-$s.$(uname -n).$$.$K\""));
	free(cmd);
	p.stream = 0;
	cmd = bootstrap_command(&set, &p);
	assert_null(strstr(cmd, "read -r k"));
	free(cmd);
	agentset_fini(&set);
}

/* Run a bootstrap command with /bin/sh in a fresh HOME, stdin from `in`;
 * returns its output. */
static char *run_boot(const char *home, const char *cmd, const char *in, size_t inlen)
{
	char path[300], sh[700];
	unsigned char *out;
	size_t len;
	char err[CD_ERRLEN];

	write_file("cmd", cmd, strlen(cmd), 0644);
	write_file("in", in, inlen, 0644);
	snprintf(sh, sizeof(sh), "cd '%s' && env -u XDG_RUNTIME_DIR HOME='%s' sh cmd <in >out 2>&1",
	         dir, home);
	assert_int_equal(system(sh), 0);
	snprintf(path, sizeof(path), "%s/out", dir);
	assert_int_equal(cd_read_file(path, 1 << 20, &out, &len, err, sizeof(err)), 0);
	return (char *)out;
}

/* The stream bootstrap, run for real by /bin/sh: cold it asks for the agent,
 * checks and installs it, then runs it; warm it runs it at once. */
static void stream_bootstrap_installs_then_reuses_the_agent(void **state)
{
	static const char agent[] = "#!/bin/sh\necho agent-ran\n";
	struct agentset set;
	struct boot_params p = {.stream = 1, .skip = "", .token = "feedface00000001"};
	char path[512], home[64], err[CD_ERRLEN], want[600], in[200], *cmd, *out;
	struct stat st;

	snprintf(home, sizeof(home), "%s/home", dir);
	mkdir(home, 0700);
	write_file("fake-agent", agent, strlen(agent), 0755);
	snprintf(path, sizeof(path), "%s/fake-agent", dir);
	assert_int_equal(agentset_load(&set, path, err, sizeof(err)), 0);
	cmd = bootstrap_command(&set, &p);
	snprintf(in, sizeof(in), "send\n%s", agent);
	out = run_boot(home, cmd, in, strlen(in));
	snprintf(want, sizeof(want),
	         "CDBOOT missing %s feedface00000001 %s/.cache/clusterdoc/.agent-%s.",
	         set.bins[0].sha256, home, set.bins[0].sha256);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want),
	         "CDBOOT exec %s feedface00000001 %s/.cache/clusterdoc\nagent-ran\n",
	         set.bins[0].sha256, home);
	assert_non_null(strstr(out, want));
	free(out);
	snprintf(path, sizeof(path), "%s/.cache/clusterdoc/agent-%s", home, set.bins[0].sha256);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* warm: nothing read from stdin, the agent runs at once */
	out = run_boot(home, cmd, "", 0);
	assert_non_null(strstr(out, "agent-ran"));
	assert_null(strstr(out, "missing"));
	free(out);
	/* a corrupted upload is refused and removed: the checksum is the agent's */
	p.force = 1;
	free(cmd);
	cmd = bootstrap_command(&set, &p);
	snprintf(in, sizeof(in), "send\n%.*sX", (int)strlen(agent) - 1, agent);
	out = run_boot(home, cmd, in, strlen(in));
	snprintf(want, sizeof(want), "CDBOOT fail checksum %s/.cache/clusterdoc\n", home);
	assert_non_null(strstr(out, want));
	free(out);
	snprintf(want, sizeof(want), "ls -A '%s/.cache/clusterdoc' | grep -q '^\\.agent-'", home);
	assert_int_not_equal(system(want), 0); /* no temp file left */
	free(cmd);
	agentset_fini(&set);
}

/* Two notes, big-endian: another note first, then the GNU build id. */
static void elfnote_big_endian_build_id_after_another_note_is_found(void **state)
{
	static const unsigned char notes[] = {
	    0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 1, 'G', 'N', 'U', 0, 1,    2,    3,    4,
	    0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 3, 'G', 'N', 'U', 0, 0xab, 0xcd, 0xef, 0,
	};
	char hex[ELF_BUILD_ID_HEX] = "";

	(void)state;
	assert_int_equal(elfnote_build_id(notes, sizeof(notes), 1, hex), 1);
	assert_string_equal(hex, "abcdef");
}

static void elfnote_note_running_past_the_segment_is_not_read(void **state)
{
	/* little-endian: namesz 4, descsz 20, type 3, "GNU", but only 4 bytes of desc */
	static const unsigned char notes[] = {
	    4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 4,
	};
	char hex[ELF_BUILD_ID_HEX] = "untouched";

	(void)state;
	assert_int_equal(elfnote_build_id(notes, sizeof(notes), 0, hex), 0);
	assert_string_equal(hex, "untouched");
	assert_int_equal(elfnote_build_id(notes, 11, 0, hex), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(elf64_aarch64_is_read_with_its_build_id),
	    cmocka_unit_test(elf32_big_endian_machine_is_read),
	    cmocka_unit_test(elfnote_big_endian_build_id_after_another_note_is_found),
	    cmocka_unit_test(elfnote_note_running_past_the_segment_is_not_read),
	    cmocka_unit_test(not_elf_truncated_and_outside_offsets_are_refused),
	    cmocka_unit_test(running_test_binary_has_this_machines_arch_and_a_build_id),
	    cmocka_unit_test(set_is_the_agent_and_every_other_arch_beside_it),
	    cmocka_unit_test(missing_agent_is_an_error_naming_it),
	    cmocka_unit_test(command_has_an_arm_per_arch_and_no_quote_inside),
	    cmocka_unit_test(stream_bootstrap_installs_then_reuses_the_agent),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
