/* SPDX-License-Identifier: MIT */
/*
 * built_agent.h - for the unit tests that run the built agent: its absolute
 * path, "" when there is none. $CLUSTERDOC_AGENT first; else the
 * clusterdoc-agent in the folders above this test binary (BUILD/tests/test_x
 * finds the top's, build-asan/tests/test_x build-asan's); else the current
 * folder's.
 */
#ifndef CD_TESTS_BUILT_AGENT_H
#define CD_TESTS_BUILT_AGENT_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int built_agent_try(const char *cand, char *agent, size_t len)
{
	char abs[PATH_MAX];

	if (access(cand, X_OK) != 0 || !realpath(cand, abs))
		return 0;
	snprintf(agent, len, "%s", abs);
	return 1;
}

static inline void built_agent_path(char *agent, size_t len)
{
	char self[PATH_MAX], cand[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *env = getenv("CLUSTERDOC_AGENT");

	if (env && built_agent_try(env, agent, len))
		return;
	if (n > 0) {
		self[n] = '\0';
		for (int up = 0; up < 3 && (slash = strrchr(self, '/')); up++) {
			*slash = '\0';
			snprintf(cand, sizeof(cand), "%s/clusterdoc-agent", self);
			if (built_agent_try(cand, agent, len))
				return;
		}
	}
	if (!built_agent_try("clusterdoc-agent", agent, len))
		agent[0] = '\0';
}

#endif
