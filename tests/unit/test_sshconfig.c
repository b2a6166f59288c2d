/* SPDX-License-Identifier: MIT */
/* test_sshconfig.c - parsing `ssh -G` output, defaults, ProxyJump specs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cd.h"
#include "sshconfig.h"

/* `ssh -G somehost` from OpenSSH_9.2p1 Debian-2+deb12u10 as root, with Debian's
 * /etc/ssh/ssh_config (HashKnownHosts yes) and no ~/.ssh/config. */
static const char g_default[] =
    "host somehost\n"
    "user root\n"
    "hostname somehost\n"
    "port 22\n"
    "addressfamily any\n"
    "batchmode no\n"
    "canonicalizefallbacklocal yes\n"
    "canonicalizehostname false\n"
    "checkhostip no\n"
    "compression no\n"
    "controlmaster false\n"
    "enablesshkeysign no\n"
    "clearallforwardings no\n"
    "exitonforwardfailure no\n"
    "fingerprinthash SHA256\n"
    "forwardx11 no\n"
    "forwardx11trusted yes\n"
    "gatewayports no\n"
    "gssapiauthentication yes\n"
    "gssapikeyexchange no\n"
    "gssapidelegatecredentials no\n"
    "gssapitrustdns no\n"
    "gssapirenewalforcesrekey no\n"
    "gssapikexalgorithms "
    "gss-group14-sha256-,gss-group16-sha512-,gss-nistp256-sha256-,gss-curve25519-sha256-,gss-"
    "group14-sha1-,gss-gex-sha1-\n"
    "hashknownhosts yes\n"
    "hostbasedauthentication no\n"
    "identitiesonly no\n"
    "kbdinteractiveauthentication yes\n"
    "nohostauthenticationforlocalhost no\n"
    "passwordauthentication yes\n"
    "permitlocalcommand no\n"
    "proxyusefdpass no\n"
    "pubkeyauthentication true\n"
    "requesttty auto\n"
    "sessiontype default\n"
    "stdinnull no\n"
    "forkafterauthentication no\n"
    "streamlocalbindunlink no\n"
    "stricthostkeychecking ask\n"
    "tcpkeepalive yes\n"
    "tunnel false\n"
    "verifyhostkeydns false\n"
    "visualhostkey no\n"
    "updatehostkeys true\n"
    "enableescapecommandline no\n"
    "canonicalizemaxdots 1\n"
    "connectionattempts 1\n"
    "forwardx11timeout 1200\n"
    "numberofpasswordprompts 3\n"
    "serveralivecountmax 3\n"
    "serveraliveinterval 0\n"
    "requiredrsasize 1024\n"
    "ciphers "
    "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-"
    "gcm@openssh.com\n"
    "hostkeyalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "hostbasedacceptedalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "kexalgorithms "
    "sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@"
    "libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-"
    "exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-"
    "group14-sha256\n"
    "casignaturealgorithms "
    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@"
    "openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256\n"
    "loglevel INFO\n"
    "macs "
    "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-"
    "etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-"
    "256,hmac-sha2-512,hmac-sha1\n"
    "securitykeyprovider internal\n"
    "pubkeyacceptedalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "xauthlocation /usr/bin/xauth\n"
    "identityfile ~/.ssh/id_rsa\n"
    "identityfile ~/.ssh/id_ecdsa\n"
    "identityfile ~/.ssh/id_ecdsa_sk\n"
    "identityfile ~/.ssh/id_ed25519\n"
    "identityfile ~/.ssh/id_ed25519_sk\n"
    "identityfile ~/.ssh/id_xmss\n"
    "identityfile ~/.ssh/id_dsa\n"
    "canonicaldomains none\n"
    "globalknownhostsfile /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2\n"
    "userknownhostsfile /root/.ssh/known_hosts /root/.ssh/known_hosts2\n"
    "sendenv LANG\n"
    "sendenv LC_*\n"
    "logverbose none\n"
    "permitremoteopen any\n"
    "addkeystoagent false\n"
    "forwardagent no\n"
    "connecttimeout none\n"
    "tunneldevice any:any\n"
    "canonicalizePermittedcnames none\n"
    "controlpersist no\n"
    "escapechar ~\n"
    "ipqos lowdelay throughput\n"
    "rekeylimit 0 0\n"
    "streamlocalbindmask 0177\n"
    "syslogfacility USER\n";

/* `ssh -G -F cfg gpu01` with
 *   Host gpu01
 *     HostName gpu01.cluster.example.org
 *     User alice
 *     Port 2222
 *     IdentityFile ~/.ssh/id_cluster_ed25519
 *     IdentityFile /opt/keys/shared_ecdsa
 *     ProxyJump bob@bastion.example.org:2200
 *     UserKnownHostsFile ~/.ssh/known_hosts_cluster /etc/clusterdoc/known_hosts
 *     StrictHostKeyChecking accept-new
 *     IdentitiesOnly yes
 *     BatchMode yes
 *     ConnectTimeout 10
 *     ServerAliveInterval 15
 *     HashKnownHosts no */
static const char g_gpu01[] =
    "host gpu01\n"
    "user alice\n"
    "hostname gpu01.cluster.example.org\n"
    "port 2222\n"
    "addressfamily any\n"
    "batchmode yes\n"
    "canonicalizefallbacklocal yes\n"
    "canonicalizehostname false\n"
    "checkhostip no\n"
    "compression no\n"
    "controlmaster false\n"
    "enablesshkeysign no\n"
    "clearallforwardings no\n"
    "exitonforwardfailure no\n"
    "fingerprinthash SHA256\n"
    "forwardx11 no\n"
    "forwardx11trusted yes\n"
    "gatewayports no\n"
    "gssapiauthentication no\n"
    "gssapikeyexchange no\n"
    "gssapidelegatecredentials no\n"
    "gssapitrustdns no\n"
    "gssapirenewalforcesrekey no\n"
    "gssapikexalgorithms "
    "gss-group14-sha256-,gss-group16-sha512-,gss-nistp256-sha256-,gss-curve25519-sha256-,gss-"
    "group14-sha1-,gss-gex-sha1-\n"
    "hashknownhosts no\n"
    "hostbasedauthentication no\n"
    "identitiesonly yes\n"
    "kbdinteractiveauthentication yes\n"
    "nohostauthenticationforlocalhost no\n"
    "passwordauthentication yes\n"
    "permitlocalcommand no\n"
    "proxyusefdpass no\n"
    "pubkeyauthentication true\n"
    "requesttty auto\n"
    "sessiontype default\n"
    "stdinnull no\n"
    "forkafterauthentication no\n"
    "streamlocalbindunlink no\n"
    "stricthostkeychecking accept-new\n"
    "tcpkeepalive yes\n"
    "tunnel false\n"
    "verifyhostkeydns false\n"
    "visualhostkey no\n"
    "updatehostkeys false\n"
    "enableescapecommandline no\n"
    "canonicalizemaxdots 1\n"
    "connectionattempts 1\n"
    "forwardx11timeout 1200\n"
    "numberofpasswordprompts 3\n"
    "serveralivecountmax 3\n"
    "serveraliveinterval 15\n"
    "requiredrsasize 1024\n"
    "ciphers "
    "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-"
    "gcm@openssh.com\n"
    "hostkeyalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "hostbasedacceptedalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "kexalgorithms "
    "sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@"
    "libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-"
    "exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-"
    "group14-sha256\n"
    "casignaturealgorithms "
    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@"
    "openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256\n"
    "loglevel INFO\n"
    "macs "
    "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-"
    "etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-"
    "256,hmac-sha2-512,hmac-sha1\n"
    "securitykeyprovider internal\n"
    "pubkeyacceptedalgorithms "
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-"
    "cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh."
    "com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-"
    "256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-"
    "nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-"
    "256\n"
    "xauthlocation /usr/bin/xauth\n"
    "identityfile ~/.ssh/id_cluster_ed25519\n"
    "identityfile /opt/keys/shared_ecdsa\n"
    "canonicaldomains none\n"
    "globalknownhostsfile /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2\n"
    "userknownhostsfile /root/.ssh/known_hosts_cluster /etc/clusterdoc/known_hosts\n"
    "logverbose none\n"
    "permitremoteopen any\n"
    "addkeystoagent false\n"
    "forwardagent no\n"
    "connecttimeout 10\n"
    "tunneldevice any:any\n"
    "canonicalizePermittedcnames none\n"
    "controlpersist no\n"
    "escapechar ~\n"
    "ipqos lowdelay throughput\n"
    "rekeylimit 0 0\n"
    "streamlocalbindmask 0177\n"
    "syslogfacility USER\n"
    "proxyjump bob@bastion.example.org:2200\n";

/* The lines that differ, from `ssh -G -F cfg strict` (StrictHostKeyChecking
 * yes) and `ssh -G -F cfg lax` (StrictHostKeyChecking no, ProxyJump a@j1,j2:2022). */
static const char g_strict[] = "host strict\n"
                               "user root\n"
                               "hostname strict\n"
                               "port 22\n"
                               "stricthostkeychecking true\n";
static const char g_lax[] = "host lax\n"
                            "user root\n"
                            "hostname lax\n"
                            "port 22\n"
                            "stricthostkeychecking false\n"
                            "proxyjump a@j1,j2:2022\n";

static int parse(const char *text, const char *home, struct ssh_settings *s, char *err)
{
	return sshconfig_parse_g(text, strlen(text), home, s, err, CD_ERRLEN);
}

static void test_settings_init_sets_port_22_and_ask(void **state)
{
	struct ssh_settings s;

	memset(&s, 0xff, sizeof(s));
	ssh_settings_init(&s);
	assert_null(s.hostname);
	assert_null(s.user);
	assert_int_equal(s.port, 22);
	assert_int_equal(s.n_identity_files, 0);
	assert_null(s.identity_files);
	assert_null(s.proxyjump);
	assert_int_equal(s.strict_host_key_checking, SHK_ASK);
	assert_int_equal(s.hash_known_hosts, 0);
	assert_int_equal(s.connect_timeout_s, 0);
	ssh_settings_fini(&s);
	ssh_settings_fini(&s);
}

static void test_parse_g_default_output(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_default, "/root", &s, err), 0);
	assert_string_equal(s.hostname, "somehost");
	assert_string_equal(s.user, "root");
	assert_int_equal(s.port, 22);
	assert_int_equal(s.n_identity_files, 7);
	assert_string_equal(s.identity_files[0], "/root/.ssh/id_rsa");
	assert_string_equal(s.identity_files[1], "/root/.ssh/id_ecdsa");
	assert_string_equal(s.identity_files[2], "/root/.ssh/id_ecdsa_sk");
	assert_string_equal(s.identity_files[3], "/root/.ssh/id_ed25519");
	assert_string_equal(s.identity_files[4], "/root/.ssh/id_ed25519_sk");
	assert_string_equal(s.identity_files[5], "/root/.ssh/id_xmss");
	assert_string_equal(s.identity_files[6], "/root/.ssh/id_dsa");
	assert_int_equal(s.n_user_known_hosts, 2);
	assert_string_equal(s.user_known_hosts[0], "/root/.ssh/known_hosts");
	assert_string_equal(s.user_known_hosts[1], "/root/.ssh/known_hosts2");
	assert_int_equal(s.n_global_known_hosts, 2);
	assert_string_equal(s.global_known_hosts[0], "/etc/ssh/ssh_known_hosts");
	assert_string_equal(s.global_known_hosts[1], "/etc/ssh/ssh_known_hosts2");
	assert_null(s.proxyjump);
	assert_int_equal(s.strict_host_key_checking, SHK_ASK);
	assert_int_equal(s.hash_known_hosts, 1);
	assert_int_equal(s.identities_only, 0);
	assert_int_equal(s.batch_mode, 0);
	assert_int_equal(s.connect_timeout_s, 0);
	assert_int_equal(s.server_alive_interval_s, 0);
	ssh_settings_fini(&s);
}

static void test_parse_g_config_output(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_gpu01, "/home/alice", &s, err), 0);
	assert_string_equal(s.hostname, "gpu01.cluster.example.org");
	assert_string_equal(s.user, "alice");
	assert_int_equal(s.port, 2222);
	assert_int_equal(s.n_identity_files, 2);
	assert_string_equal(s.identity_files[0], "/home/alice/.ssh/id_cluster_ed25519");
	assert_string_equal(s.identity_files[1], "/opt/keys/shared_ecdsa");
	assert_int_equal(s.n_user_known_hosts, 2);
	/* ssh -G expands ~ in known hosts files itself, with the real home */
	assert_string_equal(s.user_known_hosts[0], "/root/.ssh/known_hosts_cluster");
	assert_string_equal(s.user_known_hosts[1], "/etc/clusterdoc/known_hosts");
	assert_int_equal(s.n_global_known_hosts, 2);
	assert_string_equal(s.proxyjump, "bob@bastion.example.org:2200");
	assert_int_equal(s.strict_host_key_checking, SHK_ACCEPT_NEW);
	assert_int_equal(s.hash_known_hosts, 0);
	assert_int_equal(s.identities_only, 1);
	assert_int_equal(s.batch_mode, 1);
	assert_int_equal(s.connect_timeout_s, 10);
	assert_int_equal(s.server_alive_interval_s, 15);
	ssh_settings_fini(&s);
}

static void test_parse_g_strict_true_is_yes(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_strict, "/root", &s, err), 0);
	assert_int_equal(s.strict_host_key_checking, SHK_YES);
	ssh_settings_fini(&s);
}

static void test_parse_g_strict_false_is_no(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_lax, "/root", &s, err), 0);
	assert_int_equal(s.strict_host_key_checking, SHK_NO);
	ssh_settings_fini(&s);
}

static void test_parse_g_keeps_proxyjump_chain_verbatim(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse(g_lax, "/root", &s, err), 0);
	assert_string_equal(s.proxyjump, "a@j1,j2:2022");
	ssh_settings_fini(&s);
}

static void test_parse_g_proxyjump_none_is_null(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\nuser u\nproxyjump none\n", "/root", &s, err), 0);
	assert_null(s.proxyjump);
	ssh_settings_fini(&s);
}

static void test_parse_g_expands_tilde_with_given_home(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\nuser u\n"
	                       "identityfile ~/.ssh/id_ed25519\n"
	                       "identityfile ~\n"
	                       "identityfile ~bob/.ssh/id_rsa\n"
	                       "identityfile /abs/~/key\n"
	                       "userknownhostsfile ~/kh1 ~/.ssh/kh2\n",
	                       "/home/alice/", &s, err),
	                 0);
	assert_int_equal(s.n_identity_files, 4);
	assert_string_equal(s.identity_files[0], "/home/alice/.ssh/id_ed25519");
	assert_string_equal(s.identity_files[1], "/home/alice");
	assert_string_equal(s.identity_files[2], "~bob/.ssh/id_rsa");
	assert_string_equal(s.identity_files[3], "/abs/~/key");
	assert_int_equal(s.n_user_known_hosts, 2);
	assert_string_equal(s.user_known_hosts[0], "/home/alice/kh1");
	assert_string_equal(s.user_known_hosts[1], "/home/alice/.ssh/kh2");
	ssh_settings_fini(&s);
}

static void test_parse_g_tilde_with_root_home(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    parse("hostname h\nuser u\nidentityfile ~/k\nidentityfile ~\n", "/", &s, err), 0);
	assert_string_equal(s.identity_files[0], "/k");
	assert_string_equal(s.identity_files[1], "/");
	ssh_settings_fini(&s);
}

static void test_parse_g_without_home_leaves_tilde(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\nuser u\nidentityfile ~/k\n", NULL, &s, err), 0);
	assert_string_equal(s.identity_files[0], "~/k");
	ssh_settings_fini(&s);
}

/* ssh -G prints IdentityFile tokens unexpanded: `IdentityFile %d/.ssh/id_%r`
 * gives "identityfile %d/.ssh/id_%r". */
static void test_parse_g_expands_identity_tokens(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("user bob\nhostname n1\nport 2200\n"
	                       "identityfile %d/.ssh/id_%r\n"
	                       "identityfile ~/.ssh/%h-%p-100%%\n"
	                       "identityfile ~/.ssh/%C%\n",
	                       "/home/bob", &s, err),
	                 0);
	assert_int_equal(s.n_identity_files, 3);
	assert_string_equal(s.identity_files[0], "/home/bob/.ssh/id_bob");
	assert_string_equal(s.identity_files[1], "/home/bob/.ssh/n1-2200-100%");
	assert_string_equal(s.identity_files[2], "/home/bob/.ssh/%C%");
	ssh_settings_fini(&s);
}

/* Captured: `IdentityFile none` prints "identityfile none", `UserKnownHostsFile
 * none` prints "userknownhostsfile none", `ConnectTimeout 0` prints 0. */
static void test_parse_g_none_values_mean_nothing(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("user root\nhostname n\nidentityfile none\n"
	                       "globalknownhostsfile /etc/ssh/ssh_known_hosts\n"
	                       "userknownhostsfile none\nconnecttimeout 0\n",
	                       "/root", &s, err),
	                 0);
	assert_int_equal(s.n_identity_files, 0);
	assert_int_equal(s.n_user_known_hosts, 0);
	assert_int_equal(s.n_global_known_hosts, 1);
	assert_int_equal(s.connect_timeout_s, 0);
	ssh_settings_fini(&s);
}

static void test_parse_g_first_value_wins(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    parse("hostname first\nuser u\nhostname second\nport 2\nport 3\n", "/", &s, err), 0);
	assert_string_equal(s.hostname, "first");
	assert_int_equal(s.port, 2);
	ssh_settings_fini(&s);
}

static void test_parse_g_keys_are_case_insensitive(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(
	    parse("HostName h\nUSER u\nStrictHostKeyChecking Accept-New\n", "/", &s, err), 0);
	assert_string_equal(s.hostname, "h");
	assert_string_equal(s.user, "u");
	assert_int_equal(s.strict_host_key_checking, SHK_ACCEPT_NEW);
	ssh_settings_fini(&s);
}

static void test_parse_g_accepts_crlf_and_no_final_newline(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\r\nuser u\r\nport 2222", "/", &s, err), 0);
	assert_string_equal(s.hostname, "h");
	assert_string_equal(s.user, "u");
	assert_int_equal(s.port, 2222);
	ssh_settings_fini(&s);
}

static void test_parse_g_skips_overlong_line(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";
	size_t n = SSHCONFIG_LINE_MAX + 100;
	char *text = malloc(n + 64);

	strcpy(text, "hostname h\nuser u\nidentityfile /");
	memset(text + strlen(text), 'x', SSHCONFIG_LINE_MAX);
	strcpy(text + strlen("hostname h\nuser u\nidentityfile /") + SSHCONFIG_LINE_MAX,
	       "\nidentityfile /k\n");
	assert_int_equal(parse(text, "/", &s, err), 0);
	assert_int_equal(s.n_identity_files, 1);
	assert_string_equal(s.identity_files[0], "/k");
	ssh_settings_fini(&s);
	free(text);
}

static void test_parse_g_rejects_bad_port(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\nuser u\nport 65536\n", "/", &s, err), CD_ERR_PARSE);
	assert_string_equal(err, "ssh -G line 3: bad port \"65536\"");
	assert_null(s.hostname);
}

static void test_parse_g_rejects_unknown_strict_value(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("hostname h\nuser u\nstricthostkeychecking maybe\n", "/", &s, err),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "ssh -G line 3: bad stricthostkeychecking \"maybe\"");
}

static void test_parse_g_rejects_output_without_hostname(void **state)
{
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(parse("ssh: Could not resolve hostname x\n", "/", &s, err), CD_ERR_PARSE);
	assert_string_equal(err, "ssh -G output has no hostname");
}

static void test_parse_g_rejects_nul_in_used_value(void **state)
{
	static const char text[] = "hostname h\0x\nuser u\n";
	struct ssh_settings s;
	char err[CD_ERRLEN] = "";

	assert_int_equal(sshconfig_parse_g(text, sizeof(text) - 1, "/", &s, err, sizeof(err)),
	                 CD_ERR_PARSE);
	assert_string_equal(err, "ssh -G line 1: NUL byte in hostname");
}

static void test_defaults_use_given_names(void **state)
{
	struct ssh_settings s;

	assert_int_equal(sshconfig_defaults("node7", "/home/carol", "carol", &s), 0);
	assert_string_equal(s.hostname, "node7");
	assert_string_equal(s.user, "carol");
	assert_int_equal(s.port, 22);
	assert_int_equal(s.n_identity_files, 3);
	assert_string_equal(s.identity_files[0], "/home/carol/.ssh/id_ed25519");
	assert_string_equal(s.identity_files[1], "/home/carol/.ssh/id_ecdsa");
	assert_string_equal(s.identity_files[2], "/home/carol/.ssh/id_rsa");
	assert_int_equal(s.n_user_known_hosts, 2);
	assert_string_equal(s.user_known_hosts[0], "/home/carol/.ssh/known_hosts");
	assert_string_equal(s.user_known_hosts[1], "/home/carol/.ssh/known_hosts2");
	assert_int_equal(s.n_global_known_hosts, 2);
	assert_string_equal(s.global_known_hosts[0], "/etc/ssh/ssh_known_hosts");
	assert_string_equal(s.global_known_hosts[1], "/etc/ssh/ssh_known_hosts2");
	assert_null(s.proxyjump);
	assert_int_equal(s.strict_host_key_checking, SHK_ASK);
	ssh_settings_fini(&s);
}

static void test_defaults_take_user_and_home_from_environment(void **state)
{
	struct ssh_settings s;

	setenv("USER", "dave", 1);
	setenv("HOME", "/srv/dave", 1);
	assert_int_equal(sshconfig_defaults("node7", NULL, NULL, &s), 0);
	assert_string_equal(s.user, "dave");
	assert_string_equal(s.identity_files[0], "/srv/dave/.ssh/id_ed25519");
	ssh_settings_fini(&s);
}

static void test_defaults_fall_back_to_passwd(void **state)
{
	struct ssh_settings s;

	unsetenv("USER");
	unsetenv("HOME");
	assert_int_equal(sshconfig_defaults("node7", NULL, NULL, &s), 0);
	assert_non_null(s.user);
	assert_true(strlen(s.user) > 0);
	assert_true(s.identity_files[0][0] == '/');
	ssh_settings_fini(&s);
}

static void test_defaults_reject_empty_host(void **state)
{
	struct ssh_settings s;

	assert_int_equal(sshconfig_defaults("", "/h", "u", &s), CD_ERR_PARSE);
	assert_null(s.hostname);
}

struct jump_case {
	const char *spec;
	const char *user, *host;
	int port;
};

static void test_parse_jump_splits_user_host_port(void **state)
{
	static const struct jump_case cases[] = {
	    {"bob@bastion.example.org:2200", "bob", "bastion.example.org", 2200},
	    {"bastion", NULL, "bastion", 0},
	    {"bob@bastion", "bob", "bastion", 0},
	    {"bastion:22", NULL, "bastion", 22},
	    {"me@corp@bastion:2022", "me@corp", "bastion", 2022},
	    {"[fe80::1%eth0]:2200", NULL, "fe80::1%eth0", 2200},
	    {"u@[::1]", "u", "::1", 0},
	    {"ssh://bob@bastion:2200", "bob", "bastion", 2200},
	    {"ssh://bastion/", NULL, "bastion", 0},
	};
	char err[CD_ERRLEN];

	for (size_t i = 0; i < CD_ARRAY_LEN(cases); i++) {
		char *user = (char *)"junk", *host = (char *)"junk";
		int port = -5;

		assert_int_equal(
		    sshconfig_parse_jump(cases[i].spec, &user, &host, &port, err, sizeof(err)), 0);
		if (cases[i].user)
			assert_string_equal(user, cases[i].user);
		else
			assert_null(user);
		assert_string_equal(host, cases[i].host);
		assert_int_equal(port, cases[i].port);
		free(user);
		free(host);
	}
}

static void test_parse_jump_chain_is_unsupported(void **state)
{
	char err[CD_ERRLEN] = "", *user, *host;
	int port;

	assert_int_equal(
	    sshconfig_parse_jump("a@j1,j2:2022", &user, &host, &port, err, sizeof(err)),
	    CD_ERR_UNSUPPORTED);
	assert_string_equal(err,
	                    "ProxyJump chain \"a@j1,j2:2022\": only one jump host is supported");
	assert_null(user);
	assert_null(host);
	assert_int_equal(port, 0);
}

static void test_parse_jump_rejects_malformed_specs(void **state)
{
	static const char *const bad[] = {
	    "",
	    "@bastion",
	    "bob@",
	    "bastion:",
	    "bastion:0",
	    "bastion:65536",
	    "bastion:22x",
	    "bastion:123456789",
	    "-oProxyCommand=x",
	    "[::1",
	    "[::1]x",
	    "ba stion",
	    "ssh://bastion/path",
	};
	char err[CD_ERRLEN], *user, *host;
	int port;

	for (size_t i = 0; i < CD_ARRAY_LEN(bad); i++) {
		err[0] = '\0';
		assert_int_equal(
		    sshconfig_parse_jump(bad[i], &user, &host, &port, err, sizeof(err)),
		    CD_ERR_PARSE);
		assert_true(strlen(err) > 0);
		assert_null(user);
		assert_null(host);
	}
}

/* --- is one `ssh -G` enough for every host? ------------------------------ */

/* sshconfig_scan_text on text; frees the includes, returns the verdict. */
static int scan(const char *text, size_t *n_includes, char *first_include, size_t cap)
{
	char **inc = NULL;
	size_t n = 0;
	int rc = sshconfig_scan_text(text, strlen(text), &inc, &n);

	if (first_include && n)
		snprintf(first_include, cap, "%s", inc[0]);
	for (size_t i = 0; i < n; i++)
		free(inc[i]);
	free(inc);
	if (n_includes)
		*n_includes = n;
	return rc;
}

static void test_scan_debian_ssh_config_is_host_independent(void **state)
{
	/* /etc/ssh/ssh_config of Debian 12, comments shortened */
	const char text[] = "# This is the ssh client system-wide configuration file.\n"
	                    "Include /etc/ssh/ssh_config.d/*.conf\n"
	                    "\n"
	                    "Host *\n"
	                    "#   ForwardAgent no\n"
	                    "#   IdentityFile ~/.ssh/id_%u\n"
	                    "    SendEnv LANG LC_*\n"
	                    "    HashKnownHosts yes\n"
	                    "    GSSAPIAuthentication yes\n";
	char inc[128] = "";
	size_t n;

	assert_int_equal(scan(text, &n, inc, sizeof(inc)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(inc, "/etc/ssh/ssh_config.d/*.conf");
}

static void test_scan_host_star_settings_are_host_independent(void **state)
{
	const char text[] = "Host *\n  User root\n  Port=2222\n  IdentityFile /w/id_ed25519\n"
	                    "  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n"
	                    "\tConnectTimeout 60\n  Host \"*\"\n";

	assert_int_equal(scan(text, NULL, NULL, 0), 0);
}

static void test_scan_anything_naming_hosts_is_host_dependent(void **state)
{
	static const char *const dependent[] = {
	    "Host node1\n  User x\n",
	    "Host *.example.com\n  Port 2222\n",
	    "Host * !bastion\n  User x\n",
	    "Host * node1\n",
	    "host=node1\n",
	    "Match host node1\n  User x\n",
	    "Match all\n  User x\n",
	    "Host *\n  HostName 10.0.0.1\n",
	    "Host *\n  IdentityFile ~/.ssh/id_%h\n",
	    "Host *\n  UserKnownHostsFile ~/.ssh/kh_%C\n",
	    "Host *\n  IdentityFile ${KEYDIR}/id\n",
	    "CanonicalizeHostname yes\n",
	    "CanonicalizeHostname always\n",
	    "CanonicalizeHostname\n",
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(dependent); i++)
		assert_int_equal(scan(dependent[i], NULL, NULL, 0), 1);
}

static void test_scan_ignores_comments_and_takes_each_include(void **state)
{
	const char text[] = "# Host node1\n  # Match all\nCanonicalizeHostname no\n"
	                    "Include a.conf \"b c.conf\" # trailing\nHost * # all of them\n";
	char inc[128] = "";
	size_t n;

	assert_int_equal(scan(text, &n, inc, sizeof(inc)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(inc, "a.conf");
}

static void test_host_dependent_follows_includes_of_the_given_file(void **state)
{
	char dir[] = "/tmp/test_sshconfig.XXXXXX", path[128], inc[128], sub[128];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config", dir);
	snprintf(inc, sizeof(inc), "%s/more.conf", dir);
	snprintf(sub, sizeof(sub), "%s/*.conf", dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "Include %s\nHost *\n  User root\n", sub);
	fclose(f);
	assert_non_null(f = fopen(inc, "w"));
	fputs("Port 2222\n", f);
	fclose(f);
	assert_int_equal(sshconfig_host_dependent(path, dir), 0);
	/* the included file names a host */
	assert_non_null(f = fopen(inc, "w"));
	fputs("Host gpu*\n  Port 2200\n", f);
	fclose(f);
	assert_int_equal(sshconfig_host_dependent(path, dir), 1);
	/* a -F file that does not exist: ssh -G must say so, per host */
	unlink(inc);
	unlink(path);
	assert_int_equal(sshconfig_host_dependent(path, dir), 1);
	assert_int_equal(rmdir(dir), 0);
}

static void test_host_plain_accepts_names_and_addresses_only(void **state)
{
	assert_true(sshconfig_host_plain("node17"));
	assert_true(sshconfig_host_plain("127.0.1.9"));
	assert_true(sshconfig_host_plain("GPU-a_1.example.com"));
	assert_true(sshconfig_host_plain("fd00::1"));
	assert_false(sshconfig_host_plain(""));
	assert_false(sshconfig_host_plain("-oProxyCommand=x"));
	assert_false(sshconfig_host_plain("fe80::1%eth0"));
	assert_false(sshconfig_host_plain("user@node"));
	assert_false(sshconfig_host_plain("node 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_settings_init_sets_port_22_and_ask),
	    cmocka_unit_test(test_parse_g_default_output),
	    cmocka_unit_test(test_parse_g_config_output),
	    cmocka_unit_test(test_parse_g_strict_true_is_yes),
	    cmocka_unit_test(test_parse_g_strict_false_is_no),
	    cmocka_unit_test(test_parse_g_keeps_proxyjump_chain_verbatim),
	    cmocka_unit_test(test_parse_g_proxyjump_none_is_null),
	    cmocka_unit_test(test_parse_g_expands_tilde_with_given_home),
	    cmocka_unit_test(test_parse_g_tilde_with_root_home),
	    cmocka_unit_test(test_parse_g_without_home_leaves_tilde),
	    cmocka_unit_test(test_parse_g_expands_identity_tokens),
	    cmocka_unit_test(test_parse_g_none_values_mean_nothing),
	    cmocka_unit_test(test_parse_g_first_value_wins),
	    cmocka_unit_test(test_parse_g_keys_are_case_insensitive),
	    cmocka_unit_test(test_parse_g_accepts_crlf_and_no_final_newline),
	    cmocka_unit_test(test_parse_g_skips_overlong_line),
	    cmocka_unit_test(test_parse_g_rejects_bad_port),
	    cmocka_unit_test(test_parse_g_rejects_unknown_strict_value),
	    cmocka_unit_test(test_parse_g_rejects_output_without_hostname),
	    cmocka_unit_test(test_parse_g_rejects_nul_in_used_value),
	    cmocka_unit_test(test_defaults_use_given_names),
	    cmocka_unit_test(test_defaults_take_user_and_home_from_environment),
	    cmocka_unit_test(test_defaults_fall_back_to_passwd),
	    cmocka_unit_test(test_defaults_reject_empty_host),
	    cmocka_unit_test(test_parse_jump_splits_user_host_port),
	    cmocka_unit_test(test_parse_jump_chain_is_unsupported),
	    cmocka_unit_test(test_parse_jump_rejects_malformed_specs),
	    cmocka_unit_test(test_scan_debian_ssh_config_is_host_independent),
	    cmocka_unit_test(test_scan_host_star_settings_are_host_independent),
	    cmocka_unit_test(test_scan_anything_naming_hosts_is_host_dependent),
	    cmocka_unit_test(test_scan_ignores_comments_and_takes_each_include),
	    cmocka_unit_test(test_host_dependent_follows_includes_of_the_given_file),
	    cmocka_unit_test(test_host_plain_accepts_names_and_addresses_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
