/* SPDX-License-Identifier: MIT */
/*
 * ctor_probe.c - linked exactly as the release agents are (scripts/agent-floor.mk),
 * it prints how often its constructor ran before main, then its destructor
 * runs at exit. tests/integration/test_abi.sh expects "ctor 1 main dtor".
 * It uses only write(2), which the agent imports too, so the agent's stubs
 * cover it.
 */
#include <unistd.h>

static int ctor_runs;

static void say(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	if (write(1, s, n) < 0)
		_exit(2);
}

__attribute__((constructor)) static void probe_ctor(void)
{
	ctor_runs++;
}

__attribute__((destructor)) static void probe_dtor(void)
{
	say(" dtor\n");
}

int main(void)
{
	say(ctor_runs == 1 ? "ctor 1 main" : ctor_runs == 0 ? "ctor 0 main" : "ctor 2+ main");
	return 0;
}
