/* SPDX-License-Identifier: MIT */
/*
 * elfnote.h - the GNU build id among an ELF file's notes. One walker for
 * both sides: the head reads it from an agent binary's bytes (agentset.c),
 * the agent from its own PT_NOTE segment in memory (agent.c), so that the
 * two always agree on what a build id is. Pure: no I/O, no allocation; it
 * links into the agent (nothing here may pull libssh2 or other head-only
 * libraries).
 */
#ifndef CD_ELFNOTE_H
#define CD_ELFNOTE_H

#include <stddef.h>

#define ELF_BUILD_ID_MAX 64 /* bytes; GNU ld writes 20 (sha1) */
#define ELF_BUILD_ID_HEX (2 * ELF_BUILD_ID_MAX + 1)

/*
 * Walk the notes notes[0..len) (the contents of one PT_NOTE segment), whose
 * fields are big-endian when big_endian is non-zero, else little-endian.
 * On the first NT_GNU_BUILD_ID note named "GNU" with 1 to ELF_BUILD_ID_MAX
 * bytes, write them as lowercase hex into hex (ELF_BUILD_ID_HEX bytes) and
 * return 1. Returns 0, hex untouched, when there is none or a note runs
 * past len (the walk stops there).
 */
int elfnote_build_id(const unsigned char *notes, size_t len, int big_endian, char *hex);

#endif
