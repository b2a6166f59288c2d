/* SPDX-License-Identifier: MIT */
/* version.c - see version.h. */
#include "version.h"

#include "agentset.h"
#include "cd.h"
#include "targets.h"

#include <curl/curl.h>
#include <curses.h>
#include <jansson.h>
#include <libssh2.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef CD_COMMIT
#define CD_COMMIT "unknown"
#endif

const char *version_commit(void)
{
	return CD_COMMIT;
}

/* One row per library: its name and its version as the running library says it. */
struct lib_version {
	const char *name;
	const char *(*version)(void);
};

static const char *ssh2_version(void)
{
	return libssh2_version(0);
}

static const char *openssl_version(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

static const char *curl_version_now(void)
{
	return curl_version_info(CURLVERSION_NOW)->version;
}

static const char *ncurses_version(void)
{
	return curses_version();
}

static const struct lib_version libs[] = {
    {.name = "libssh2", .version = ssh2_version},
    {.name = "OpenSSL", .version = openssl_version},
    {.name = "jansson", .version = jansson_version_str},
    {.name = "libcurl", .version = curl_version_now},
    {.name = "ncurses", .version = ncurses_version},
};

static void print_agents(FILE *f)
{
	char err[CD_ERRLEN] = "";
	char *path = targets_find_agent();
	struct agentset set = {0};

	if (!path) {
		fprintf(f, "agent: not found (CLUSTERDOC_AGENT or --agent names it)\n");
		return;
	}
	if (agentset_load(&set, path, err, sizeof(err)) < 0) {
		fprintf(f, "agent: %s\n", err);
		free(path);
		return;
	}
	for (size_t i = 0; i < set.n; i++)
		fprintf(f, "agent %s: build id %s (%s)\n", set.bins[i].arch,
		        set.bins[i].build_id[0] ? set.bins[i].build_id : "none", set.bins[i].path);
	agentset_fini(&set);
	free(path);
}

int version_print(FILE *f)
{
	fprintf(f, "clusterdoc %s\ncommit: %s\n", CLUSTERDOC_VERSION, version_commit());
	for (size_t i = 0; i < CD_ARRAY_LEN(libs); i++) {
		const char *v = libs[i].version();

		size_t n = strlen(libs[i].name);

		/* "OpenSSL 3.0.11 19 Sep 2023", "ncurses 6.4.20221231": the number, not the name
		 * twice */
		if (v && strncasecmp(v, libs[i].name, n) == 0 && v[n] == ' ')
			v += n + 1;
		fprintf(f, "%s: %s\n", libs[i].name, v ? v : "unknown");
	}
	print_agents(f);
	return 0;
}

int version_asked(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--version") == 0)
			return 1;
	}
	return 0;
}
