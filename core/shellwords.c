/* SPDX-License-Identifier: MIT */
/*
 * shellwords.c - split a typed command line into words (shellwords.h).
 */
#include "shellwords.h"

#include <stdlib.h>
#include <string.h>

#include "cd.h"

void shellwords_free(char **words)
{
	if (!words)
		return;
	for (size_t i = 0; words[i]; i++)
		free(words[i]);
	free(words);
}

/* One word from *pp into word (room for strlen(*pp) + 1); *pp moves past it. */
static int one_word(const char **pp, char *word, char *err, size_t errlen)
{
	const char *p = *pp;
	size_t wl = 0;

	while (*p && *p != ' ' && *p != '\t') {
		if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');

			if (!q)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "a quote ' is not closed");
			memcpy(word + wl, p + 1, (size_t)(q - p - 1));
			wl += (size_t)(q - p - 1);
			p = q + 1;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
					p++;
				word[wl++] = *p;
			}
			if (!*p)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "a quote \" is not closed");
			p++;
		} else if (*p == '\\' && p[1]) {
			word[wl++] = p[1];
			p += 2;
		} else {
			word[wl++] = *p++;
		}
	}
	word[wl] = 0;
	*pp = p;
	return 0;
}

int shellwords_split(const char *line, char ***words, size_t *n, char *err, size_t errlen)
{
	char **w = cd_calloc(SHELLWORDS_MAX + 1, sizeof(*w));
	char *word = cd_calloc(strlen(line) + 1, 1);
	const char *p = line;
	size_t nw = 0;
	int rc = 0;

	*words = NULL;
	*n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (nw == SHELLWORDS_MAX) {
			rc = cd_errf(err, errlen, CD_ERR_PARSE, "more than %d words",
			             SHELLWORDS_MAX);
			break;
		}
		rc = one_word(&p, word, err, errlen);
		if (rc < 0)
			break;
		w[nw++] = cd_strdup(word);
	}
	free(word);
	if (rc == 0 && nw == 0)
		rc = cd_errf(err, errlen, CD_ERR_PARSE, "no command given");
	if (rc < 0) {
		shellwords_free(w);
		return rc;
	}
	*words = w;
	*n = nw;
	return 0;
}
