/* SPDX-License-Identifier: MIT */
/* sshconfig_scan.c - can an ssh_config give two hosts different settings?
 * (see sshconfig.h) */
#include "sshconfig.h"
#include "cd.h"
#include "scan.h"

#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SCAN_FILE_MAX (1u << 20) /* a bigger ssh_config is not scanned: per host then */
#define SCAN_DEPTH    16         /* Include nesting, as OpenSSH's READCONF_MAX_DEPTH */

/* The next blank- or '='-separated word of line (double quotes removed),
 * copied into word; returns where the scan goes on, or NULL at the end. */
static const char *next_word(const char *p, const char *end, char *word, size_t cap)
{
	size_t n = 0;
	int quoted = 0;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '='))
		p++;
	if (p >= end)
		return NULL;
	for (; p < end && (quoted || (*p != ' ' && *p != '\t' && *p != '=')); p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if (n + 1 < cap)
			word[n++] = *p;
	}
	word[n] = '\0';
	return p;
}

int sshconfig_scan_text(const char *text, size_t len, char ***includes, size_t *n_includes)
{
	const char *p = text, *end = text + len;
	char key[64], word[4096];

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;

		if (!eol)
			eol = end;
		q = next_word(p, eol, key, sizeof(key));
		if (!q || key[0] == '#') {
			p = eol + 1;
			continue;
		}
		/* a token or an environment variable may name the host */
		if (memchr(p, '%', (size_t)(eol - p)) || memmem(p, (size_t)(eol - p), "${", 2))
			return 1;
		if (strcasecmp(key, "match") == 0 || strcasecmp(key, "hostname") == 0)
			return 1;
		if (strcasecmp(key, "host") == 0) {
			int words = 0;

			while ((q = next_word(q, eol, word, sizeof(word)))) {
				if (word[0] == '#')
					break;
				if (strcmp(word, "*") != 0 || ++words > 1)
					return 1;
			}
		} else if (strcasecmp(key, "canonicalizehostname") == 0) {
			if (!(q = next_word(q, eol, word, sizeof(word))) || strcasecmp(word, "no"))
				return 1;
		} else if (strcasecmp(key, "include") == 0) {
			while ((q = next_word(q, eol, word, sizeof(word)))) {
				if (word[0] == '#')
					break;
				*includes =
				    cd_realloc(*includes, (*n_includes + 1) * sizeof(char *));
				(*includes)[(*n_includes)++] = cd_strdup(word);
			}
		}
		p = eol + 1;
	}
	return 0;
}

/* Scan one file and what it includes; relative Includes are under dir. */
static int scan_file(const char *path, const char *dir, const char *home, int depth, int must_exist)
{
	char *data = NULL, **inc = NULL;
	size_t len, n_inc = 0;
	int rc;

	if (depth > SCAN_DEPTH)
		return 1;
	rc = scan_read_file(path, SCAN_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, NULL, 0);
	if (rc == CD_ERR_NOTFOUND && !must_exist)
		return 0;
	if (rc < 0)
		return 1; /* unreadable or too big: let `ssh -G` judge, per host */
	rc = sshconfig_scan_text(data, len, &inc, &n_inc);
	for (size_t i = 0; i < n_inc; i++) {
		char *pat;
		glob_t g;

		if (rc == 0) {
			if (inc[i][0] == '~' && inc[i][1] == '/' && home)
				pat = cd_asprintf("%s%s", home, inc[i] + 1);
			else if (inc[i][0] == '~')
				pat = NULL; /* ~otheruser: per host */
			else if (inc[i][0] == '/')
				pat = cd_strdup(inc[i]);
			else
				pat = cd_asprintf("%s/%s", dir, inc[i]);
			if (!pat)
				rc = 1;
			else if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t k = 0; k < g.gl_pathc && rc == 0; k++)
					rc = scan_file(g.gl_pathv[k], dir, home, depth + 1, 0);
				globfree(&g);
			}
			free(pat);
		}
		free(inc[i]);
	}
	free(inc);
	free(data);
	return rc;
}

int sshconfig_host_dependent(const char *config_file, const char *home)
{
	char *user_cfg, *user_dir;
	int rc;

	if (!home)
		return 1;
	/* OpenSSH reads -F FILE as a user config: relative Includes are in ~/.ssh */
	user_dir = cd_asprintf("%s/.ssh", home);
	user_cfg = cd_asprintf("%s/config", user_dir);
	if (config_file)
		rc = scan_file(config_file, user_dir, home, 0, 1);
	else
		rc = scan_file(user_cfg, user_dir, home, 0, 0);
	if (rc == 0 && !config_file)
		rc = scan_file("/etc/ssh/ssh_config", "/etc/ssh", home, 0, 0);
	free(user_cfg);
	free(user_dir);
	return rc;
}

int sshconfig_host_plain(const char *host)
{
	if (!host || !host[0] || host[0] == '-')
		return 0;
	for (const char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-_:", *c))
			return 0;
	return 1;
}
