/* SPDX-License-Identifier: MIT */
/* fuzz_config.c - libFuzzer harness for the configuration files (core/config.h): any text
 * either reads, every entry with a key, a value and the line it came from, or fails with a
 * message naming the file and a line; nothing reads past the text. The [expect] values go
 * through their rows' parsers (probes/expect.h): taken, or an error naming the key and value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "config.h"
#include "probes/expect.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct option top_keys[] = {
    {"nodes", required_argument, NULL, 'w'},
    {"login", required_argument, NULL, 'l'},
    {"ssh", required_argument, NULL, 1},
    {"fanout", required_argument, NULL, 2},
    {"accept-new", no_argument, NULL, 3},
    {"expect-gpus", required_argument, NULL, 4},
    {0},
};
static struct config_section sections[] = {
    {"", top_keys, NULL}, {"check", top_keys, NULL}, {EXPECT_SECTION, NULL, NULL}};
static const struct config_schema schema = {sections, 3};

/* An [expect] line: its row's parser takes it or names the key and the value. */
static void check_expect(const struct config_entry *e)
{
	struct expect x = {0};
	char err[CD_ERRLEN] = "", want[CD_ERRLEN];

	if (strcmp(e->section, EXPECT_SECTION) != 0)
		return;
	snprintf(want, sizeof(want), "%s = %s: ", e->key, e->value);
	if (expect_set(&x, e->key, e->value, err, sizeof(err)) == 0
	        ? !expect_declared(&x)
	        : strncmp(err, want, strlen(want)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so that ASan sees any read past them */
	char *buf = cd_malloc(size ? size : 1), err[CD_ERRLEN] = "";
	struct config c;
	int rc;

	memcpy(buf, data, size);
	sections[2].keys = expect_options();
	config_init(&c);
	rc = config_parse(&c, &schema, buf, size, "fuzz.conf", CONFIG_USER, 0, err, sizeof(err));
	if (rc < 0 && strncmp(err, "fuzz.conf:", 10) != 0)
		abort();
	if (rc < 0 && rc != CD_ERR_PARSE && rc != CD_ERR_TOOBIG)
		abort();
	for (size_t i = 0; i < c.n; i++) {
		const struct config_entry *e = &c.entries[i];

		if (!e->key[0] || !e->value[0] || e->line < 1 || strcmp(e->file, "fuzz.conf") != 0)
			abort();
		for (size_t k = 0, l; e->value[k]; k += l) /* JSON takes it: UTF-8 only */
			if (!(l = utf8_seq_len((const unsigned char *)e->value + k,
			                       strlen(e->value + k))))
				abort();
		check_expect(e);
		if (!strcmp(e->section, CONFIG_GROUPS) ? !config_group(&c, e->key)
		                                       : !config_get(&c, e->section, e->key))
			abort();
	}
	config_fini(&c);
	free(buf);
	return 0;
}
