/* SPDX-License-Identifier: MIT */
/*
 * agentset.c - see agentset.h.
 */
#include "agentset.h"
#include "cd.h"
#include "elfnote.h"
#include "fsutil.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define AGENT_SIZE_MAX (256u << 20)
#define EM_X86_64_     62
#define EM_AARCH64_    183
#define PT_NOTE_       4

static const struct {
	unsigned machine;
	const char *arch;
} machines[] = {
    {.machine = EM_X86_64_, .arch = "x86_64"},
    {.machine = EM_AARCH64_, .arch = "aarch64"},
    {.machine = 3, .arch = "i686"},
    {.machine = 21, .arch = "ppc64le"},
    {.machine = 22, .arch = "s390x"},
    {.machine = 243, .arch = "riscv64"},
};

/* The uname -m spelling of an ELF e_machine value, or NULL. */
static const char *elf_machine_arch(unsigned machine)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(machines); i++)
		if (machines[i].machine == machine)
			return machines[i].arch;
	return NULL;
}

/* An ELF reader that never trusts an offset: every field is read through
 * get(), which checks the bounds and the byte order. */
struct elf_rd {
	const unsigned char *b;
	size_t len;
	int big;
	int bad;
};

static uint64_t get(struct elf_rd *r, uint64_t off, unsigned size)
{
	uint64_t v = 0;

	if (off > r->len || size > r->len - off) {
		r->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < size; i++) {
		unsigned k = r->big ? i : size - 1 - i;

		v = v << 8 | r->b[off + k];
	}
	return v;
}

int elf_info_parse(const unsigned char *buf, size_t len, struct elf_info *out, char *err,
                   size_t errlen)
{
	struct elf_rd r = {.b = buf, .len = len};
	uint64_t phoff, phentsize, phnum;
	int is64;

	memset(out, 0, sizeof(*out));
	if (len < 52 || memcmp(buf, "\177ELF", 4) != 0)
		return cd_errf(err, errlen, CD_ERR_PARSE, "not an ELF file");
	if ((buf[4] != 1 && buf[4] != 2) || (buf[5] != 1 && buf[5] != 2))
		return cd_errf(err, errlen, CD_ERR_PARSE, "unknown ELF class or byte order");
	is64 = buf[4] == 2;
	r.big = buf[5] == 2;
	out->machine = (unsigned)get(&r, 18, 2);
	out->arch = elf_machine_arch(out->machine);
	phoff = is64 ? get(&r, 32, 8) : get(&r, 28, 4);
	phentsize = get(&r, is64 ? 54 : 42, 2);
	phnum = get(&r, is64 ? 56 : 44, 2);
	if (r.bad)
		return cd_errf(err, errlen, CD_ERR_PARSE, "truncated ELF header");
	for (uint64_t i = 0; i < phnum && phentsize; i++) {
		uint64_t ph = phoff + i * phentsize;
		uint64_t type = get(&r, ph, 4);
		uint64_t off = is64 ? get(&r, ph + 8, 8) : get(&r, ph + 4, 4);
		uint64_t size = is64 ? get(&r, ph + 32, 8) : get(&r, ph + 16, 4);

		if (r.bad)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "program header %llu lies outside the file",
			               (unsigned long long)i);
		/* The first PT_NOTE with a build id names it. */
		if (type == PT_NOTE_ && !out->build_id[0] && off <= len && size <= len - off)
			elfnote_build_id(buf + off, size, r.big, out->build_id);
	}
	return 0;
}

/* Load one agent. The configured one may be a script that is no ELF file
 * (a stand-in agent in tests, run by the local transport): it counts as
 * this machine's architecture, without a build id. */
static int bin_load(struct agent_bin *b, const char *path, int configured, char *err, size_t errlen)
{
	unsigned char *data = NULL;
	struct elf_info info;
	struct utsname u;
	size_t len = 0;
	int rc = cd_read_file(path, AGENT_SIZE_MAX, &data, &len, err, errlen);

	if (rc < 0)
		return rc;
	rc = elf_info_parse(data, len, &info, err, errlen);
	if (rc < 0 && configured && len > 2 && memcmp(data, "#!", 2) == 0 && uname(&u) == 0) {
		memset(&info, 0, sizeof(info));
		info.arch = u.machine;
		rc = 0;
	}
	if (rc == 0 && !info.arch)
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "ELF machine %u is no known architecture",
		             info.machine);
	if (rc == 0) {
		b->path = cd_strdup(path);
		snprintf(b->arch, sizeof(b->arch), "%s", info.arch);
		memcpy(b->build_id, info.build_id, sizeof(b->build_id));
		sha256_data_hex(data, len, b->sha256);
		b->size = (long long)len;
		b->data = data;
		data = NULL;
	}
	free(data);
	return rc;
}

int agentset_load(struct agentset *set, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? cd_strndup(path, (size_t)(slash - path)) : cd_strdup(".");
	const char *base = slash ? slash + 1 : path;
	size_t blen = strlen(base);
	char sub[CD_ERRLEN];
	struct dirent *de;
	DIR *d;
	int rc;

	memset(set, 0, sizeof(*set));
	rc = bin_load(&set->bins[0], path, 1, sub, sizeof(sub));
	if (rc < 0) {
		rc = cd_errf(err, errlen, rc, "cannot use the agent binary %s: %s", path, sub);
		goto out;
	}
	set->n = 1;
	d = opendir(slash == path ? "/" : dir);
	while (d && (de = readdir(d)) && set->n < AGENTSET_MAX) {
		struct agent_bin b = {0};
		struct stat st;
		char *p;

		if (strncmp(de->d_name, base, blen) != 0 || de->d_name[blen] != '-')
			continue;
		p = cd_asprintf("%s/%s", slash == path ? "" : dir, de->d_name);
		/* A P-* that is not a usable agent (P-old, P-debug.txt) is
		 * not one of the set: skipped, not an error. */
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		    bin_load(&b, p, 0, sub, sizeof(sub)) == 0) {
			if (agentset_for_arch(set, b.arch)) {
				free(b.path);
				free(b.data);
			} else
				set->bins[set->n++] = b;
		}
		free(p);
	}
	if (d)
		closedir(d);
out:
	free(dir);
	return rc;
}

void agentset_fini(struct agentset *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->bins[i].path);
		free(set->bins[i].data);
	}
	set->n = 0;
}

const struct agent_bin *agentset_for_arch(const struct agentset *set, const char *machine)
{
	if (strcmp(machine, "arm64") == 0)
		machine = "aarch64";
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->bins[i].arch, machine) == 0)
			return &set->bins[i];
	return NULL;
}

const struct agent_bin *agentset_by_sha(const struct agentset *set, const char *hex)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->bins[i].sha256, hex) == 0)
			return &set->bins[i];
	return NULL;
}

void agentset_arch_list(const struct agentset *set, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < set->n && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", set->bins[i].arch);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}
