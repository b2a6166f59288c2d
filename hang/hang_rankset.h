/* SPDX-License-Identifier: MIT */
/*
 * hang_rankset.h - ranks as the verdicts write them: a sorted list of rank
 * numbers folded into ranges ("0-3,5,7-8"), as hostlists fold node names.
 * Pure; shared by the verdict's rules (hang_analyze.c, hang_gpu.c,
 * hang_nccl.c) and the text report.
 */
#ifndef CD_HANG_RANKSET_H
#define CD_HANG_RANKSET_H

#include <stddef.h>

#include <jansson.h>

/* "0-3,5,7-8" for ranks (an array of integers, ascending) into out, cut at
 * outlen - 1 bytes; "" for none. */
void hang_ranks_text(const json_t *ranks, char *out, size_t outlen);

#endif
