/* SPDX-License-Identifier: MIT */
/* expect.c - the [expect] keys and their parsers (expect.h). */
#include "expect.h"

#include "cd.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole decimal number from lo to hi, else an error naming key and value. */
static int whole(const char *key, const char *value, int lo, int hi, const char *unit, int *out,
                 char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = isdigit((unsigned char)value[0]) ? strtol(value, &end, 10) : -1;
	if (v < 0 || errno || *end || v < lo || v > hi)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%s = %s: a whole number of %s from %d to %d", key, value, unit, lo,
		               hi);
	*out = (int)v;
	return 0;
}

static int parse_gpus(struct expect *e, const char *value, char *err, size_t errlen)
{
	return whole("gpus", value, 1, 1024, "GPUs", &e->gpus, err, errlen);
}

static int parse_ib_rate(struct expect *e, const char *value, char *err, size_t errlen)
{
	return whole("ib-rate", value, 1, 100000, "Gb/s", &e->ib_rate, err, errlen);
}

static int parse_mtu(struct expect *e, const char *value, char *err, size_t errlen)
{
	return whole("mtu", value, 68, 65536, "bytes", &e->mtu, err, errlen);
}

/* A driver version as NVML prints it: digits and dots ("550.54.15"). */
static int parse_driver(struct expect *e, const char *value, char *err, size_t errlen)
{
	size_t n = strlen(value);
	int ok = n > 0 && n < sizeof(e->driver) && isdigit((unsigned char)value[0]) &&
	         isdigit((unsigned char)value[n - 1]);

	for (size_t i = 0; ok && i < n; i++)
		ok = isdigit((unsigned char)value[i]) || (value[i] == '.' && value[i + 1] != '.');
	if (!ok)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "driver = %s: a version as nvidia-smi prints it (550.54.15)", value);
	memcpy(e->driver, value, n + 1);
	return 0;
}

const struct expect_key expect_keys[] = {
    {.key = "gpus", .id = "expect-gpus", .what = "NVIDIA GPUs NVML lists", .parse = parse_gpus},
    {.key = "ib-rate",
     .id = "expect-ib-rate",
     .what = "Gb/s of every ACTIVE RDMA port",
     .parse = parse_ib_rate},
    {.key = "mtu",
     .id = "expect-mtu",
     .what = "MTU of the data interfaces and RoCE netdevs",
     .parse = parse_mtu},
    {.key = "driver",
     .id = "expect-driver",
     .what = "the NVIDIA driver version",
     .parse = parse_driver},
};
const size_t expect_keys_len = CD_ARRAY_LEN(expect_keys);

const struct expect_key *expect_key_named(const char *key)
{
	for (size_t i = 0; i < expect_keys_len; i++)
		if (strcmp(expect_keys[i].key, key) == 0)
			return &expect_keys[i];
	return NULL;
}

int expect_set(struct expect *e, const char *key, const char *value, char *err, size_t errlen)
{
	const struct expect_key *k = expect_key_named(key);
	char keys[128] = "";
	size_t len = 0;

	if (!k) {
		for (size_t i = 0; i < expect_keys_len && len < sizeof(keys); i++)
			len += (size_t)snprintf(keys + len, sizeof(keys) - len, "%s%s",
			                        i ? ", " : "", expect_keys[i].key);
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "unknown key %s in [" EXPECT_SECTION "]; the keys are %s", key,
		               keys);
	}
	return k->parse(e, value, err, errlen);
}

int expect_declared(const struct expect *e)
{
	return e->gpus || e->ib_rate || e->mtu || e->driver[0];
}

const struct option *expect_options(void)
{
	static struct option opts[CD_ARRAY_LEN(expect_keys) + 1];

	if (!opts[0].name)
		for (size_t i = 0; i < expect_keys_len; i++)
			opts[i] = (struct option){expect_keys[i].key, required_argument, NULL, 0};
	return opts;
}
