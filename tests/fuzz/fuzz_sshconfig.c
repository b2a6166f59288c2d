/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sshconfig.c - libFuzzer harness for the `ssh -G` output parser and the
 * ProxyJump spec splitter (see sshconfig.h). Every input goes through
 * sshconfig_parse_g (not NUL-terminated, home "/home/u", and again with no
 * home) and through sshconfig_parse_jump as a NUL-terminated copy; a
 * parsed proxyjump is split too. Seeds: tests/fuzz/corpus/sshconfig/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cd.h"
#include "sshconfig.h"
#include "sshkeys.h"

#define HOME "/home/u"

/* What ssh_settings_init leaves (and a failed parse must leave). */
static void check_pristine(const struct ssh_settings *s)
{
	struct ssh_settings init;

	ssh_settings_init(&init);
	if (s->hostname || s->user || s->identity_files || s->n_identity_files ||
	    s->user_known_hosts || s->n_user_known_hosts || s->global_known_hosts ||
	    s->n_global_known_hosts || s->proxyjump || s->port != init.port ||
	    s->strict_host_key_checking != init.strict_host_key_checking || s->hash_known_hosts ||
	    s->identities_only || s->batch_mode || s->connect_timeout_s ||
	    s->server_alive_interval_s)
		abort();
}

static void check_list(char *const *v, size_t n, int paths, int home_given)
{
	if ((n == 0) != (v == NULL))
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!v[i])
			abort();
		if (!paths)
			continue;
		/* blank-separated: never empty, never a blank inside */
		if (v[i][0] == '\0' || strpbrk(v[i], " \t"))
			abort();
		/* "~" and "~/..." are expanded when a home is given */
		if (home_given && v[i][0] == '~' && (v[i][1] == '\0' || v[i][1] == '/'))
			abort();
	}
}

static void check_settings(const struct ssh_settings *s, int home_given)
{
	if (!s->hostname || !s->hostname[0] || !s->user || !s->user[0])
		abort();
	if (s->port < 1 || s->port > 65535)
		abort();
	if (s->strict_host_key_checking != SHK_YES && s->strict_host_key_checking != SHK_ASK &&
	    s->strict_host_key_checking != SHK_ACCEPT_NEW && s->strict_host_key_checking != SHK_NO)
		abort();
	if ((s->hash_known_hosts & ~1) || (s->identities_only & ~1) || (s->batch_mode & ~1))
		abort();
	if (s->connect_timeout_s < 0 || s->server_alive_interval_s < 0)
		abort();
	if (s->proxyjump && (s->proxyjump[0] == '\0' || strcasecmp(s->proxyjump, "none") == 0))
		abort();
	if (s->proxy_command &&
	    (s->proxy_command[0] == '\0' || strcasecmp(s->proxy_command, "none") == 0))
		abort();
	if (s->address_family != 0 && s->address_family != 4 && s->address_family != 6)
		abort();
	/* a switch names a row of the table that switches */
	if (s->switch_key) {
		size_t n;
		const struct sshkey_rule *t = sshkeys_table(&n), *r = NULL;

		for (size_t i = 0; i < n; i++)
			if (t[i].name == s->switch_key)
				r = &t[i];
		if (!r || r->use != SSHKEY_SWITCH)
			abort();
	}
	check_list(s->identity_files, s->n_identity_files, 0, home_given);
	check_list(s->user_known_hosts, s->n_user_known_hosts, 1, home_given);
	check_list(s->global_known_hosts, s->n_global_known_hosts, 1, home_given);
}

static int valid_name(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

static void check_jump(const char *spec)
{
	char err[CD_ERRLEN] = "", *user = (char *)1, *host = (char *)1;
	int port = -1;
	int rc = sshconfig_parse_jump(spec, &user, &host, &port, err, sizeof(err));

	if (rc == 0) {
		if (!valid_name(host) || host[0] == '-' || (user && !valid_name(user)) ||
		    port < 0 || port > 65535)
			abort();
	} else if (rc == CD_ERR_PARSE || rc == CD_ERR_UNSUPPORTED) {
		if (user || host || port != 0 || err[0] == '\0')
			abort();
		if (rc == CD_ERR_UNSUPPORTED && !strchr(spec, ','))
			abort();
	} else {
		abort();
	}
	free(user);
	free(host);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ssh_settings s, s2;
	char err[CD_ERRLEN] = "", err2[CD_ERRLEN] = "", *spec;
	int rc, rc2;

	/* Not NUL-terminated: ASan catches a read past the end. */
	rc = sshconfig_parse_g((const char *)data, size, HOME, &s, err, sizeof(err));
	if (rc == 0) {
		check_settings(&s, 1);
	} else if (rc == CD_ERR_PARSE) {
		check_pristine(&s);
		if (err[0] == '\0')
			abort();
	} else {
		abort();
	}

	/* The home only changes paths, never success or the number of entries. */
	rc2 = sshconfig_parse_g((const char *)data, size, NULL, &s2, err2, sizeof(err2));
	if (rc2 != rc)
		abort();
	if (rc2 == 0) {
		check_settings(&s2, 0);
		if (s2.n_identity_files != s.n_identity_files ||
		    s2.n_user_known_hosts != s.n_user_known_hosts ||
		    s2.n_global_known_hosts != s.n_global_known_hosts || s2.port != s.port ||
		    strcmp(s2.hostname, s.hostname) != 0 || strcmp(s2.user, s.user) != 0)
			abort();
	}
	ssh_settings_fini(&s2);

	if (rc == 0 && s.proxyjump)
		check_jump(s.proxyjump);
	ssh_settings_fini(&s);
	ssh_settings_fini(&s); /* documented as safe twice */
	check_pristine(&s);

	spec = malloc(size + 1);
	if (!spec)
		abort();
	memcpy(spec, data, size);
	spec[size] = '\0';
	check_jump(spec);
	free(spec);
	return 0;
}
