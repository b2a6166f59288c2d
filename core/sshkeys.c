/* SPDX-License-Identifier: MIT */
/* sshkeys.c - the table of `ssh -G` keys and their treatment (see sshkeys.h). */
#include "sshkeys.h"

#include "cd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define READ(k, n, w)                                             \
	{                                                         \
		.key = k, .name = n, .use = SSHKEY_READ, .why = w \
	}
#define LIBSSH2(k, n, w)                                             \
	{                                                            \
		.key = k, .name = n, .use = SSHKEY_LIBSSH2, .why = w \
	}
#define SWITCH(k, n, keep_, w)                                                     \
	{                                                                          \
		.key = k, .name = n, .use = SSHKEY_SWITCH, .keep = keep_, .why = w \
	}
#define HARMLESS(k, n, w)                                             \
	{                                                             \
		.key = k, .name = n, .use = SSHKEY_HARMLESS, .why = w \
	}

static const char only_forwarding[] = "clusterdoc's session forwards nothing";
static const char only_own_command[] = "clusterdoc runs its own command in its own session";
static const char only_algorithms[] =
    "libssh2 offers its own algorithms; a server that shares none fails the handshake, named";
static const char only_display[] = "changes what ssh shows, not the connection";

static const struct sshkey_rule rules[] = {
    /* where ssh connects */
    READ("hostname", "HostName", "the address connected to"),
    READ("port", "Port", "the port connected to"),
    READ("user", "User", "the login name"),
    LIBSSH2("addressfamily", "AddressFamily", "inet or inet6 limits the addresses tried"),
    SWITCH("proxycommand", "ProxyCommand", "none", "the node goes through ssh(1)"),
    SWITCH("proxyjump", "ProxyJump", "none", "the node goes through ssh(1)"),
    SWITCH("bindaddress", "BindAddress", NULL, "the node goes through ssh(1)"),
    SWITCH("bindinterface", "BindInterface", NULL, "the node goes through ssh(1)"),
    SWITCH("canonicalizehostname", "CanonicalizeHostname", "false no",
           "ssh(1) canonicalizes the name when it connects"),
    SWITCH("controlmaster", "ControlMaster", "false no",
           "the node goes through ssh(1) and its shared connection"),
    SWITCH("controlpath", "ControlPath", "none",
           "ssh(1) uses a master connection already at that path"),
    HARMLESS("controlpersist", "ControlPersist", "matters only with ControlMaster, which switches"),
    HARMLESS("canonicaldomains", "CanonicalDomains",
             "only with CanonicalizeHostname, which switches"),
    HARMLESS("canonicalizefallbacklocal", "CanonicalizeFallbackLocal",
             "only with CanonicalizeHostname, which switches"),
    HARMLESS("canonicalizemaxdots", "CanonicalizeMaxDots",
             "only with CanonicalizeHostname, which switches"),
    HARMLESS("canonicalizepermittedcnames", "CanonicalizePermittedCNAMEs",
             "only with CanonicalizeHostname, which switches"),
    HARMLESS("proxyusefdpass", "ProxyUseFdpass", "only with ProxyCommand, which switches"),
    HARMLESS("connectionattempts", "ConnectionAttempts",
             "one attempt per address, within --connect-timeout"),
    READ("connecttimeout", "ConnectTimeout",
         "read; --connect-timeout (default 10 s) bounds the connect instead"),
    /* whom ssh trusts */
    READ("stricthostkeychecking", "StrictHostKeyChecking", "accept-new or no records new keys"),
    READ("userknownhostsfile", "UserKnownHostsFile", "the known_hosts files read and appended"),
    READ("globalknownhostsfile", "GlobalKnownHostsFile", "the known_hosts files read"),
    READ("hashknownhosts", "HashKnownHosts", "new known_hosts lines are hashed"),
    LIBSSH2("hostkeyalias", "HostKeyAlias", "the name looked up in known_hosts"),
    SWITCH("knownhostscommand", "KnownHostsCommand", "none", "ssh(1) runs it to find host keys"),
    SWITCH("revokedhostkeys", "RevokedHostKeys", "none", "ssh(1) refuses the keys it lists"),
    HARMLESS("verifyhostkeydns", "VerifyHostKeyDNS",
             "libssh2 trusts known_hosts only: stricter, never weaker"),
    HARMLESS("checkhostip", "CheckHostIP", "libssh2 checks the name: stricter, never weaker"),
    HARMLESS("nohostauthenticationforlocalhost", "NoHostAuthenticationForLocalhost",
             "libssh2 checks every host's key: stricter, never weaker"),
    HARMLESS("updatehostkeys", "UpdateHostKeys", "clusterdoc only appends known_hosts lines"),
    HARMLESS("hostkeyalgorithms", "HostKeyAlgorithms",
             "the key types known_hosts holds go first; others only when none is known"),
    HARMLESS("fingerprinthash", "FingerprintHash", only_display),
    HARMLESS("visualhostkey", "VisualHostKey", only_display),
    /* how ssh logs in */
    READ("identityfile", "IdentityFile", "the key files tried, in order"),
    READ("identitiesonly", "IdentitiesOnly", "agent keys are not offered"),
    READ("batchmode", "BatchMode", "read; clusterdoc never prompts, whatever it says"),
    LIBSSH2("identityagent", "IdentityAgent",
            "the agent socket: a path, none, SSH_AUTH_SOCK or $VARIABLE"),
    SWITCH("certificatefile", "CertificateFile", "none", "ssh(1) offers the certificate"),
    SWITCH("pkcs11provider", "PKCS11Provider", "none", "ssh(1) loads the token's keys"),
    SWITCH("securitykeyprovider", "SecurityKeyProvider", "internal",
           "ssh(1) talks to the FIDO middleware"),
    SWITCH("hostbasedauthentication", "HostbasedAuthentication", "no false",
           "ssh(1) signs with ssh-keysign"),
    SWITCH("pubkeyauthentication", "PubkeyAuthentication", "yes true unbound host-bound",
           "ssh(1) offers no keys when told so"),
    {.key = "gssapiauthentication",
     .name = "GSSAPIAuthentication",
     .use = SSHKEY_KRB5,
     .why = "yes with a Kerberos ticket cache: the node goes through ssh(1)"},
    SWITCH("gssapikeyexchange", "GSSAPIKeyExchange", "no false", "ssh(1) does GSSAPI key exchange"),
    HARMLESS("gssapidelegatecredentials", "GSSAPIDelegateCredentials",
             "only with GSSAPI, which switches"),
    HARMLESS("gssapikexalgorithms", "GSSAPIKexAlgorithms",
             "only with GSSAPIKeyExchange, which switches"),
    HARMLESS("gssapirenewalforcesrekey", "GSSAPIRenewalForcesRekey",
             "only with GSSAPI, which switches"),
    HARMLESS("gssapitrustdns", "GSSAPITrustDNS", "only with GSSAPI, which switches"),
    HARMLESS("gssapiclientidentity", "GSSAPIClientIdentity", "only with GSSAPI, which switches"),
    HARMLESS("gssapiserveridentity", "GSSAPIServerIdentity", "only with GSSAPI, which switches"),
    HARMLESS("enablesshkeysign", "EnableSSHKeysign",
             "only with HostbasedAuthentication, which switches"),
    HARMLESS("hostbasedacceptedalgorithms", "HostbasedAcceptedAlgorithms",
             "only with HostbasedAuthentication, which switches"),
    HARMLESS("passwordauthentication", "PasswordAuthentication",
             "a password is tried only when --password gives one"),
    HARMLESS("kbdinteractiveauthentication", "KbdInteractiveAuthentication",
             "a password is tried only when --password gives one"),
    HARMLESS("kbdinteractivedevices", "KbdInteractiveDevices",
             "a password is tried only when --password gives one"),
    HARMLESS("numberofpasswordprompts", "NumberOfPasswordPrompts",
             "a password is tried once, so no account is locked"),
    HARMLESS("preferredauthentications", "PreferredAuthentications",
             "libssh2 tries agent keys, key files, then --password: the same methods"),
    HARMLESS("pubkeyacceptedalgorithms", "PubkeyAcceptedAlgorithms", only_algorithms),
    HARMLESS("casignaturealgorithms", "CASignatureAlgorithms",
             "only for certificates, which switch"),
    HARMLESS("requiredrsasize", "RequiredRSASize", "libssh2 skips RSA user keys on 1.10"),
    HARMLESS("addkeystoagent", "AddKeysToAgent", "clusterdoc never adds keys to an agent"),
    /* the transport itself */
    HARMLESS("ciphers", "Ciphers", only_algorithms),
    HARMLESS("kexalgorithms", "KexAlgorithms", only_algorithms),
    HARMLESS("macs", "MACs", only_algorithms),
    HARMLESS("compression", "Compression", "speed only; the agent's lines are small"),
    HARMLESS("rekeylimit", "RekeyLimit", "libssh2 rekeys by its own limits"),
    HARMLESS("ipqos", "IPQoS", "packet marking only"),
    HARMLESS("tcpkeepalive", "TCPKeepAlive", "the agent protocol's keepalives detect a dead peer"),
    READ("serveraliveinterval", "ServerAliveInterval",
         "read; the agent protocol's keepalives (every 5 s) detect a dead peer instead"),
    HARMLESS("serveralivecountmax", "ServerAliveCountMax",
             "the agent protocol's keepalives detect a dead peer"),
    /* the session */
    HARMLESS("forwardagent", "ForwardAgent", only_forwarding),
    HARMLESS("forwardx11", "ForwardX11", only_forwarding),
    HARMLESS("forwardx11timeout", "ForwardX11Timeout", only_forwarding),
    HARMLESS("forwardx11trusted", "ForwardX11Trusted", only_forwarding),
    HARMLESS("xauthlocation", "XAuthLocation", only_forwarding),
    HARMLESS("localforward", "LocalForward", only_forwarding),
    HARMLESS("remoteforward", "RemoteForward", only_forwarding),
    HARMLESS("dynamicforward", "DynamicForward", only_forwarding),
    HARMLESS("clearallforwardings", "ClearAllForwardings", only_forwarding),
    HARMLESS("exitonforwardfailure", "ExitOnForwardFailure", only_forwarding),
    HARMLESS("gatewayports", "GatewayPorts", only_forwarding),
    HARMLESS("permitremoteopen", "PermitRemoteOpen", only_forwarding),
    HARMLESS("streamlocalbindmask", "StreamLocalBindMask", only_forwarding),
    HARMLESS("streamlocalbindunlink", "StreamLocalBindUnlink", only_forwarding),
    HARMLESS("tunnel", "Tunnel", only_forwarding),
    HARMLESS("tunneldevice", "TunnelDevice", only_forwarding),
    HARMLESS("remotecommand", "RemoteCommand", only_own_command),
    HARMLESS("requesttty", "RequestTTY", only_own_command),
    HARMLESS("sessiontype", "SessionType", only_own_command),
    HARMLESS("stdinnull", "StdinNull", only_own_command),
    HARMLESS("forkafterauthentication", "ForkAfterAuthentication", only_own_command),
    HARMLESS("sendenv", "SendEnv", "the agent starts with the login's own environment"),
    HARMLESS("setenv", "SetEnv", "the agent starts with the login's own environment"),
    HARMLESS("localcommand", "LocalCommand", only_own_command),
    HARMLESS("permitlocalcommand", "PermitLocalCommand", only_own_command),
    HARMLESS("escapechar", "EscapeChar", only_own_command),
    HARMLESS("enableescapecommandline", "EnableEscapeCommandline", only_own_command),
    HARMLESS("host", "Host", "the name given; HostName is what is connected to"),
    HARMLESS("ignoreunknown", "IgnoreUnknown", "read by ssh -G itself"),
    HARMLESS("loglevel", "LogLevel", "ssh's own logging"),
    HARMLESS("logverbose", "LogVerbose", "ssh's own logging"),
    HARMLESS("syslogfacility", "SyslogFacility", "ssh's own logging"),
};

const struct sshkey_rule *sshkeys_find(const char *key, size_t n)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(rules); i++)
		if (strlen(rules[i].key) == n && strncasecmp(rules[i].key, key, n) == 0)
			return &rules[i];
	return NULL;
}

const char *sshkeys_unknown_name(const char *key, size_t n)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char *names[32];
	static size_t count;
	const char *found = NULL;
	char *name;

	if (n > 64)
		n = 64;
	name = cd_asprintf("%.*s (a key clusterdoc does not know)", (int)n, key);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count && !found; i++)
		if (strcmp(names[i], name) == 0)
			found = names[i];
	if (!found && count < CD_ARRAY_LEN(names)) {
		names[count] = name;
		found = names[count++];
		name = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(name);
	return found;
}

int sshkeys_switches(const struct sshkey_rule *r, const char *value)
{
	const char *k;

	if (!r || r->use != SSHKEY_SWITCH)
		return 0;
	for (k = r->keep; k && *k;) {
		size_t n = strcspn(k, " ");

		if (strlen(value) == n && strncasecmp(value, k, n) == 0)
			return 0;
		k += n;
		k += strspn(k, " ");
	}
	return 1;
}

const struct sshkey_rule *sshkeys_table(size_t *n)
{
	*n = CD_ARRAY_LEN(rules);
	return rules;
}

const char *sshkeys_use_name(enum sshkey_use use)
{
	static const char *const names[] = {
	    [SSHKEY_READ] = "read", [SSHKEY_LIBSSH2] = "libssh2",   [SSHKEY_SWITCH] = "switch",
	    [SSHKEY_KRB5] = "krb5", [SSHKEY_HARMLESS] = "harmless",
	};

	return (unsigned)use < CD_ARRAY_LEN(names) ? names[use] : "?";
}
