/* SPDX-License-Identifier: MIT */
/*
 * replay_selftest.c - a harness that breaks on purpose, to prove that the seed
 * replay (tests/fuzz/replay.c) fails where libFuzzer would: the input "past"
 * reads one byte past its end (ASan), "abort" aborts, anything else passes.
 * tests/run-fuzz.sh runs it on each file of tests/fuzz/replay-selftest/ alone.
 */
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile uint8_t sink;

	if (size == 4 && memcmp(data, "past", 4) == 0)
		sink = data[size]; /* one past the input: ASan must stop here */
	if (size == 5 && memcmp(data, "abort", 5) == 0)
		abort();
	(void)sink;
	return 0;
}
