/* SPDX-License-Identifier: MIT */
/*
 * agentset.h - the agent binaries the head can push, one per architecture,
 * and what the head must know of each: the architecture its ELF header
 * names, its SHA-256 (the name it is cached under on nodes), its size and
 * its GNU build id (what a running agent reports in hello, so that a node
 * proves its cached copy is that build without hashing it on every start).
 *
 * The set is the configured path P plus every regular file named P-* beside
 * it (CONVENTIONS "agents per architecture"); the architecture comes from
 * e_machine, never from the name.
 */
#ifndef CD_AGENTSET_H
#define CD_AGENTSET_H

#include "elfnote.h"

#include <stddef.h>

#define AGENTSET_MAX 8

struct elf_info {
	unsigned machine;                        /* e_machine */
	const char *arch;                        /* "x86_64", "aarch64", ... or NULL when unknown */
	char build_id[2 * ELF_BUILD_ID_MAX + 1]; /* lowercase hex, "" when absent */
};

/*
 * Read an ELF image's machine and GNU build id from buf[0..len). Pure.
 * 0, or CD_ERR_PARSE with a reason in err (not ELF, truncated, a header
 * that points outside the buffer).
 */
int elf_info_parse(const unsigned char *buf, size_t len, struct elf_info *out, char *err,
                   size_t errlen);

struct agent_bin {
	char *path;
	unsigned char *data; /* the whole file, read once at load: what is streamed */
	char arch[32];
	char sha256[65];
	long long size;
	char build_id[2 * ELF_BUILD_ID_MAX + 1];
};

struct agentset {
	struct agent_bin bins[AGENTSET_MAX];
	size_t n; /* bins[0] is P itself */
};

/*
 * Load P and every regular file P-* beside it. A P-* that is not an ELF
 * file of a known architecture, or that repeats an architecture already
 * loaded, is skipped. 0, or a negative cd_err with the reason in err when
 * P itself cannot be read or is no ELF file. Free with agentset_fini.
 */
int agentset_load(struct agentset *set, const char *path, char *err, size_t errlen);
void agentset_fini(struct agentset *set);

/* The agent for a node's `uname -m` (arm64 is aarch64), or NULL. */
const struct agent_bin *agentset_for_arch(const struct agentset *set, const char *machine);
/* The agent whose sha256 is hex, or NULL. */
const struct agent_bin *agentset_by_sha(const struct agentset *set, const char *hex);
/* "aarch64, x86_64": the architectures of the set, into buf. */
void agentset_arch_list(const struct agentset *set, char *buf, size_t len);

#endif
