/* SPDX-License-Identifier: MIT */
/* fuzz_config.c - libFuzzer harness for the configuration files (core/config.h): any text
 * either reads, every entry with a key, a value and the line it came from, or fails with a
 * message naming the file and a line; nothing reads past the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "config.h"
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
static const struct config_section sections[] = {{"", top_keys}, {"check", top_keys}};
static const struct config_schema schema = {sections, 2};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so that ASan sees any read past them */
	char *buf = cd_malloc(size ? size : 1), err[CD_ERRLEN] = "";
	struct config c;
	int rc;

	memcpy(buf, data, size);
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
		if (!strcmp(e->section, CONFIG_GROUPS) ? !config_group(&c, e->key)
		                                       : !config_get(&c, e->section, e->key))
			abort();
	}
	config_fini(&c);
	free(buf);
	return 0;
}
