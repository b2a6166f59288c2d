/* SPDX-License-Identifier: MIT */
/*
 * replay.h - the entry point every harness in tests/fuzz/ defines, as libFuzzer
 * calls it. Force-included (-include) when a harness is built for replay
 * (tests/fuzz/replay.c), where no libFuzzer declares it.
 */
#ifndef CD_FUZZ_REPLAY_H
#define CD_FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* Run one input; 0 always (libFuzzer's contract). An input that breaks the
 * code under test aborts or trips a sanitizer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
