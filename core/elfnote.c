/* SPDX-License-Identifier: MIT */
/*
 * elfnote.c - see elfnote.h.
 */
#include "elfnote.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NT_GNU_BUILD_ID_ 3

/* A 4-byte note field at p (in bounds: the caller checked). */
static uint64_t field(const unsigned char *p, int big_endian)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 4; i++)
		v = v << 8 | p[big_endian ? i : 3 - i];
	return v;
}

int elfnote_build_id(const unsigned char *notes, size_t len, int big_endian, char *hex)
{
	uint64_t off = 0, end = len;

	while (off + 12 <= end) {
		uint64_t namesz = field(notes + off, big_endian);
		uint64_t descsz = field(notes + off + 4, big_endian);
		uint64_t type = field(notes + off + 8, big_endian);
		uint64_t name = off + 12, desc = name + ((namesz + 3) & ~3ull);
		uint64_t next = desc + ((descsz + 3) & ~3ull);

		if (next > end || next <= off)
			return 0;
		if (type == NT_GNU_BUILD_ID_ && namesz == 4 &&
		    memcmp(notes + name, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= ELF_BUILD_ID_MAX) {
			for (uint64_t i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", notes[desc + i]);
			return 1;
		}
		off = next;
	}
	return 0;
}
