/* SPDX-License-Identifier: MIT */
/*
 * facts_os.c - the short name of a node's distribution (facts.h,
 * facts_os_short): "Debian 12" where PRETTY_NAME says "Debian GNU/Linux 12
 * (bookworm)", so that a table column holds it whole.
 */
#include "cd.h"
#include "facts.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum version_style {
	V_AS_IS,   /* VERSION_ID as it is: "22.04", "8.9" */
	V_SUSE_SP, /* "15.5" -> "15-SP5", "15" -> "15", as SUSE names its service packs */
	V_NONE,    /* rolling releases: VERSION_ID is a snapshot date or absent */
};

/* Distributions by os-release ID. A row with name_has matches only when
 * NAME contains it (CentOS Linux and CentOS Stream share ID "centos"); the
 * first matching row wins. */
static const struct os_row {
	const char *id;
	const char *name_has;
	const char *label;
	enum version_style style;
} os_rows[] = {
    {.id = "debian", .label = "Debian"},
    {.id = "ubuntu", .label = "Ubuntu"},
    {.id = "rhel", .label = "RHEL"},
    {.id = "rocky", .label = "Rocky"},
    {.id = "almalinux", .label = "Alma"},
    {.id = "centos", .name_has = "Stream", .label = "CentOS Stream"},
    {.id = "centos", .label = "CentOS"},
    {.id = "ol", .label = "Oracle Linux"},
    {.id = "fedora", .label = "Fedora"},
    {.id = "amzn", .label = "Amazon Linux"},
    {.id = "sles", .label = "SLES", .style = V_SUSE_SP},
    {.id = "sled", .label = "SLED", .style = V_SUSE_SP},
    {.id = "sle-micro", .label = "SLE Micro"},
    {.id = "opensuse-leap", .label = "openSUSE Leap"},
    {.id = "opensuse-tumbleweed", .label = "openSUSE Tumbleweed", .style = V_NONE},
    {.id = "arch", .label = "Arch", .style = V_NONE},
    {.id = "alpine", .label = "Alpine"},
    {.id = "linuxmint", .label = "Mint"},
    {.id = "pop", .label = "Pop!_OS"},
};

/* NAME without the words every distribution adds: "Foo GNU/Linux" -> "Foo". */
static char *strip_linux(const char *name)
{
	static const char *const tails[] = {" GNU/Linux", " Linux"};
	size_t n = strlen(name);

	for (size_t k = 0; k < CD_ARRAY_LEN(tails); k++) {
		size_t t = strlen(tails[k]);

		if (n > t && strcmp(name + n - t, tails[k]) == 0) {
			n -= t;
			break;
		}
	}
	return cd_asprintf("%.*s", (int)n, name);
}

/* "15.5" -> "15-SP5"; "15" and "15.0" -> "15". */
static char *suse_version(const char *v)
{
	const char *dot = strchr(v, '.');

	if (!dot || strcmp(dot + 1, "0") == 0 || !dot[1])
		return cd_asprintf("%.*s", (int)(dot ? dot - v : (ptrdiff_t)strlen(v)), v);
	return cd_asprintf("%.*s-SP%s", (int)(dot - v), v, dot + 1);
}

char *facts_os_short(const char *buf, size_t len)
{
	enum { ID, NAME, VERSION_ID, CODENAME, NKEYS };
	static const char *const keys[NKEYS] = {[ID] = "ID",
	                                        [NAME] = "NAME",
	                                        [VERSION_ID] = "VERSION_ID",
	                                        [CODENAME] = "VERSION_CODENAME"};
	const struct os_row *row = NULL;
	char *val[NKEYS], *label = NULL, *version = NULL, *out = NULL;

	facts_os_release_values(buf, len, keys, NKEYS, val);
	for (size_t r = 0; val[ID] && r < CD_ARRAY_LEN(os_rows); r++) {
		if (strcmp(os_rows[r].id, val[ID]) == 0 &&
		    (!os_rows[r].name_has ||
		     (val[NAME] && strstr(val[NAME], os_rows[r].name_has)))) {
			row = &os_rows[r];
			break;
		}
	}
	if (row)
		label = cd_strdup(row->label);
	else if (val[NAME] && *val[NAME])
		label = strip_linux(val[NAME]);
	else if (val[ID] && *val[ID])
		label = cd_strdup(val[ID]);
	if (!label)
		goto out;
	if (row && row->style == V_NONE)
		version = NULL;
	else if (val[VERSION_ID] && *val[VERSION_ID])
		version = row && row->style == V_SUSE_SP ? suse_version(val[VERSION_ID])
		                                         : cd_strdup(val[VERSION_ID]);
	else if (val[CODENAME] && *val[CODENAME])
		version = cd_strdup(val[CODENAME]);
	out = version ? cd_asprintf("%s %s", label, version) : cd_strdup(label);
out:
	free(label);
	free(version);
	for (int k = 0; k < NKEYS; k++)
		free(val[k]);
	return out;
}
