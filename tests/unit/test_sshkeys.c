/* SPDX-License-Identifier: MIT */
/* test_sshkeys.c - the table of `ssh -G` keys: every key OpenSSH prints has
 * a treatment, and what the table says is what the parser does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cd.h"
#include "sshconfig.h"
#include "sshkeys.h"

/* Every key `ssh -G` of OpenSSH_9.2p1 Debian-2+deb12u10 prints: its output
 * for a host with no ssh_config (`ssh -F /dev/null -G x | awk '{print $1}'`),
 * then the keys it prints only when set (a config setting every other key
 * of ssh_config(5), and ProxyCommand/ProxyJump). */
static const char *const keys_9_2[] = {
    "addkeystoagent", "addressfamily", "batchmode", "canonicaldomains",
    "canonicalizePermittedcnames", "canonicalizefallbacklocal", "canonicalizehostname",
    "canonicalizemaxdots", "casignaturealgorithms", "checkhostip", "ciphers", "clearallforwardings",
    "compression", "connectionattempts", "connecttimeout", "controlmaster", "controlpersist",
    "enableescapecommandline", "enablesshkeysign", "escapechar", "exitonforwardfailure",
    "fingerprinthash", "forkafterauthentication", "forwardagent", "forwardx11", "forwardx11timeout",
    "forwardx11trusted", "gatewayports", "globalknownhostsfile", "gssapiauthentication",
    "gssapidelegatecredentials", "gssapikexalgorithms", "gssapikeyexchange",
    "gssapirenewalforcesrekey", "gssapitrustdns", "hashknownhosts", "host",
    "hostbasedacceptedalgorithms", "hostbasedauthentication", "hostkeyalgorithms", "hostname",
    "identitiesonly", "identityfile", "ipqos", "kbdinteractiveauthentication", "kexalgorithms",
    "loglevel", "logverbose", "macs", "nohostauthenticationforlocalhost", "numberofpasswordprompts",
    "passwordauthentication", "permitlocalcommand", "permitremoteopen", "port", "proxyusefdpass",
    "pubkeyacceptedalgorithms", "pubkeyauthentication", "rekeylimit", "requesttty",
    "requiredrsasize", "securitykeyprovider", "serveralivecountmax", "serveraliveinterval",
    "sessiontype", "stdinnull", "streamlocalbindmask", "streamlocalbindunlink",
    "stricthostkeychecking", "syslogfacility", "tcpkeepalive", "tunnel", "tunneldevice",
    "updatehostkeys", "user", "userknownhostsfile", "verifyhostkeydns", "visualhostkey",
    "xauthlocation",
    /* printed only when set */
    "bindaddress", "bindinterface", "certificatefile", "controlpath", "dynamicforward",
    "gssapiclientidentity", "gssapiserveridentity", "hostkeyalias", "identityagent",
    "ignoreunknown", "kbdinteractivedevices", "knownhostscommand", "localcommand", "localforward",
    "pkcs11provider", "preferredauthentications", "remotecommand", "remoteforward",
    "revokedhostkeys", "sendenv", "setenv", "proxycommand", "proxyjump"};

/* The keys that change where or how ssh connects and that libssh2 cannot
 * do: each must send the node to the openssh transport, never be ignored. */
static const char *const must_switch[] = {
    "proxycommand",      "proxyjump",           "bindaddress",         "bindinterface",
    "certificatefile",   "pkcs11provider",      "controlmaster",       "controlpath",
    "knownhostscommand", "revokedhostkeys",     "securitykeyprovider", "hostbasedauthentication",
    "gssapikeyexchange", "canonicalizehostname"};

static int in_list(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(key, list[i]) == 0)
			return 1;
	return 0;
}

static int parse(const char *text, const char *home, struct ssh_settings *s, char *err)
{
	return sshconfig_parse_g(text, strlen(text), home, s, err, CD_ERRLEN);
}

/* The lines of `ssh -G somehost` (OpenSSH 9.2, Debian's /etc/ssh/ssh_config:
 * SendEnv LANG LC_*, HashKnownHosts yes, GSSAPIAuthentication yes) that
 * concern the table's switching keys. */
static const char g_default[] = "host somehost\n"
                                "user root\n"
                                "hostname somehost\n"
                                "port 22\n"
                                "addressfamily any\n"
                                "canonicalizehostname false\n"
                                "controlmaster false\n"
                                "gssapiauthentication yes\n"
                                "gssapikeyexchange no\n"
                                "hashknownhosts yes\n"
                                "hostbasedauthentication no\n"
                                "pubkeyauthentication true\n"
                                "securitykeyprovider internal\n"
                                "sendenv LANG\n"
                                "sendenv LC_*\n";

/* The lines of `ssh -F cfg -G n3` (OpenSSH 9.2, HOME=/root) that differ
 * from g_default's, with
 *   Host n3
 *     HostName 10.0.0.3
 *     User alice
 *     ProxyCommand ssh -W %h:%p jump
 *     HostKeyAlias node3-key
 *     IdentityAgent ~/.ssh/agent.sock
 *     AddressFamily inet */
static const char g_n3[] = "host n3\n"
                           "user alice\n"
                           "hostname 10.0.0.3\n"
                           "port 22\n"
                           "addressfamily inet\n"
                           "controlmaster false\n"
                           "gssapiauthentication no\n"
                           "hostkeyalias node3-key\n"
                           "identityagent /root/.ssh/agent.sock\n"
                           "proxycommand ssh -W %h:%p jump\n";

static void test_parse_g_debian_defaults_keep_libssh2(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	/* Debian's ssh_config says GSSAPIAuthentication yes for every host:
	 * that alone (no Kerberos ticket) must not switch anything */
	assert_int_equal(parse(g_default, "/root", &s, err), 0);
	assert_null(s.switch_key);
	assert_int_equal(s.gssapi, 1);
	assert_null(s.proxy_command);
	assert_null(s.host_key_alias);
	assert_null(s.identity_agent);
	assert_int_equal(s.address_family, 0);
	ssh_settings_fini(&s);
}

static void test_parse_g_proxycommand_sends_node_to_openssh(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_n3, "/root", &s, err), 0);
	assert_string_equal(s.switch_key, "ProxyCommand");
	assert_string_equal(s.proxy_command, "ssh -W %h:%p jump");
	ssh_settings_fini(&s);
}

static void test_parse_g_reads_hostkeyalias_identityagent_addressfamily(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_n3, "/root", &s, err), 0);
	assert_string_equal(s.host_key_alias, "node3-key");
	assert_string_equal(s.identity_agent, "/root/.ssh/agent.sock");
	assert_int_equal(s.address_family, 4);
	assert_int_equal(s.gssapi, 0);
	ssh_settings_fini(&s);
}

static void test_parse_g_controlpath_sends_node_to_openssh(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("host a\nuser u\nhostname a\ncontrolmaster false\n"
	                       "controlpath /root/.ssh/cm-u@a:22\n",
	                       "/root", &s, err),
	                 0);
	assert_string_equal(s.switch_key, "ControlPath");
	ssh_settings_fini(&s);
}

static void test_parse_g_first_switching_key_names_the_switch(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("host a\nuser u\nhostname a\ncertificatefile ~/.ssh/c.pub\n"
	                       "pkcs11provider /usr/lib/opensc-pkcs11.so\n",
	                       "/root", &s, err),
	                 0);
	assert_string_equal(s.switch_key, "CertificateFile");
	ssh_settings_fini(&s);
}

/* A key a newer OpenSSH prints and no row names is not left out silently:
 * the node goes through ssh(1), named once per key. */
static void test_parse_g_a_key_no_row_knows_sends_node_to_openssh(void **state)
{
	struct ssh_settings s, t;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("host a\nuser u\nhostname a\nfuturehopkey yes\n", "/root", &s, err),
	                 0);
	assert_string_equal(s.switch_key, "futurehopkey (a key clusterdoc does not know)");
	assert_int_equal(parse("host b\nuser u\nhostname b\nfuturehopkey no\n", "/root", &t, err),
	                 0);
	assert_ptr_equal(s.switch_key, t.switch_key);
	ssh_settings_fini(&s);
	ssh_settings_fini(&t);
}

static void test_parse_g_rejects_unknown_addressfamily(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("host a\nuser u\nhostname a\naddressfamily ipx\n", "/root", &s, err),
	                 CD_ERR_PARSE);
	assert_non_null(strstr(err, "addressfamily"));
	assert_null(s.switch_key);
	ssh_settings_fini(&s);
}

static void test_every_key_ssh_G_prints_has_a_row(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(keys_9_2); i++) {
		const struct sshkey_rule *r = sshkeys_find(keys_9_2[i], strlen(keys_9_2[i]));

		if (!r)
			fail_msg("`ssh -G` key %s has no row in sshkeys.c", keys_9_2[i]);
		assert_non_null(r->name);
		assert_true(r->why && *r->why);
	}
}

static void test_every_row_is_a_key_ssh_G_prints(void **state)
{
	size_t n;
	const struct sshkey_rule *t = sshkeys_table(&n);

	for (size_t i = 0; i < n; i++)
		if (!in_list(t[i].key, keys_9_2, CD_ARRAY_LEN(keys_9_2)))
			fail_msg("row %s is no key of `ssh -G`", t[i].key);
}

static void test_keys_libssh2_cannot_do_switch_to_openssh(void **state)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(must_switch); i++) {
		const struct sshkey_rule *r = sshkeys_find(must_switch[i], strlen(must_switch[i]));

		assert_non_null(r);
		if (r->use != SSHKEY_SWITCH)
			fail_msg("%s is %s, not switch", must_switch[i], sshkeys_use_name(r->use));
		assert_int_equal(sshkeys_switches(r, "/some/value"), 1);
	}
}

static void test_read_rows_are_keys_the_parser_reads(void **state)
{
	size_t n;
	const struct sshkey_rule *t = sshkeys_table(&n);

	for (size_t i = 0; i < n; i++) {
		int read = t[i].use == SSHKEY_READ || t[i].use == SSHKEY_LIBSSH2;

		/* a switch row may be read too (ProxyJump, ProxyCommand are
		 * kept for the openssh transport); a harmless one never is */
		if (read && !sshconfig_reads_key(t[i].key))
			fail_msg("row %s says %s but the parser does not read it", t[i].key,
			         sshkeys_use_name(t[i].use));
		if (t[i].use == SSHKEY_HARMLESS && sshconfig_reads_key(t[i].key))
			fail_msg("row %s says harmless but the parser reads it", t[i].key);
	}
}

static void test_default_values_keep_libssh2(void **state)
{
	static const struct {
		const char *key, *value;
	} defaults[] = {
	    {"controlmaster", "false"},
	    {"controlmaster", "no"},
	    {"securitykeyprovider", "internal"},
	    {"hostbasedauthentication", "no"},
	    {"pubkeyauthentication", "true"},
	    {"canonicalizehostname", "false"},
	    {"gssapikeyexchange", "no"},
	    {"proxyjump", "none"},
	    {"proxycommand", "NONE"},
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(defaults); i++) {
		const struct sshkey_rule *r =
		    sshkeys_find(defaults[i].key, strlen(defaults[i].key));

		assert_non_null(r);
		assert_int_equal(sshkeys_switches(r, defaults[i].value), 0);
	}
	assert_int_equal(sshkeys_switches(sshkeys_find("controlmaster", 13), "auto"), 1);
}

static void test_harmless_and_read_rows_never_switch(void **state)
{
	size_t n;
	const struct sshkey_rule *t = sshkeys_table(&n);

	for (size_t i = 0; i < n; i++)
		if (t[i].use != SSHKEY_SWITCH)
			assert_int_equal(sshkeys_switches(&t[i], "anything"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_key_ssh_G_prints_has_a_row),
	    cmocka_unit_test(test_every_row_is_a_key_ssh_G_prints),
	    cmocka_unit_test(test_keys_libssh2_cannot_do_switch_to_openssh),
	    cmocka_unit_test(test_read_rows_are_keys_the_parser_reads),
	    cmocka_unit_test(test_default_values_keep_libssh2),
	    cmocka_unit_test(test_harmless_and_read_rows_never_switch),
	    cmocka_unit_test(test_parse_g_debian_defaults_keep_libssh2),
	    cmocka_unit_test(test_parse_g_proxycommand_sends_node_to_openssh),
	    cmocka_unit_test(test_parse_g_reads_hostkeyalias_identityagent_addressfamily),
	    cmocka_unit_test(test_parse_g_controlpath_sends_node_to_openssh),
	    cmocka_unit_test(test_parse_g_first_switching_key_names_the_switch),
	    cmocka_unit_test(test_parse_g_rejects_unknown_addressfamily),
	    cmocka_unit_test(test_parse_g_a_key_no_row_knows_sends_node_to_openssh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
