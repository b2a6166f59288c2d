/* SPDX-License-Identifier: MIT */
/*
 * sudocmd.c - the root commands of `clusterdoc fix` and their sudoers lines
 * (sudocmd.h).
 */
#include "sudocmd.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cd.h"
#include "fix.h"

const char *const sudocmd_dirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
                                    "/sbin",           "/bin",           NULL};

/*
 * The root-owned files a fixer writes through sudo: each gets the file steps'
 * lines. Only /etc/hosts: its content is a name-to-address table, which sudo
 * cannot check but which runs nothing. The port-range file in /etc/sysctl.d
 * is not here: a `tee` into it could set any sysctl at boot
 * (kernel.core_pattern=|PROG runs PROG as root), so through sudo the range is
 * set with `sysctl -w` alone (fix_ports.c).
 */
static const struct {
	const char *path;
	unsigned mode; /* for a new file */
	int created;   /* a fixer may create it: chmod and undo's rm are needed */
} root_files[] = {
    {FIX_ETC_HOSTS, 0644, 0},
};

/*
 * The fixers' own commands: the program, its usual path, and the arguments
 * it may be given. Arguments that vary (a chain, a subnet, an interface, a
 * zone, a run's id, a port) are a sudoers regular expression (sudo 1.9.10 and
 * later: "^...$", POSIX extended, matched against the arguments joined by
 * spaces) that allows exactly the shape the fixer builds and nothing else:
 * names and numbers are character classes with bounded length, so no
 * argument can hold a ';', a newline, a quote, a space or an option. nft
 * parses its arguments as its own language (`; flush ruleset`, `include
 * "/etc/shadow"`), and iptables takes --modprobe=PROG, so a '*' there would
 * amount to root. Fixed arguments are written as they are.
 */
#define RE_FAM  "(ip|ip6|inet)"
#define RE_NAME "[A-Za-z_][A-Za-z0-9_.-]{0,63}"
#define RE_IF   "[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}"
#define RE_NET4 "[0-9]{1,3}(\\.[0-9]{1,3}){3}/[0-9]{1,2}"
#define RE_NET6 "[0-9a-f:]{2,39}/[0-9]{1,3}"
#define RE_NET  "(" RE_NET4 "|" RE_NET6 ")"
#define RE_PORT "[0-9]{1,5}"
/* 1024-65535: a port range of the fixer (or a node's own, for undo) */
#define RE_PORT_HI                                                                                 \
	"(102[4-9]|10[3-9][0-9]|1[1-9][0-9]{2}|[2-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4]" \
	"[0-9]{2}|"                                                                                \
	"655[0-2][0-9]|6553[0-5])"
#define RE_RUN       "[0-9]{8}-[0-9]{6}-[0-9a-f]{1,16}"
#define RE_NFT_CHAIN RE_FAM " " RE_NAME " " RE_NAME
#define RE_NFT_RULE                                                                   \
	"iifname \\{ " RE_IF ", lo \\} (ip saddr " RE_NET4 "|ip6 saddr " RE_NET6 ") " \
	"(meta l4proto tcp|tcp dport \\{ " RE_PORT ", " RE_PORT "-" RE_PORT " \\}) "  \
	"accept comment \"" FIX_RULE_COMMENT " " RE_RUN "\""
#define RE_XT_RULE                                                                             \
	" INPUT -i " RE_IF " -s " RE_NET " -p tcp (-m multiport --dports " RE_PORT "," RE_PORT \
	":" RE_PORT " )?-m comment --comment " FIX_RULE_COMMENT " " RE_RUN " -j ACCEPT$"
#define RE_UFW_RULE                                                                           \
	"allow in on " RE_IF " from " RE_NET " (to any port " RE_PORT "," RE_PORT ":" RE_PORT \
	" )?proto tcp"
#define RE_ZONE "--zone=[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}"
#define RE_RICH                                                                               \
	"-rich-rule=rule family=\"(ipv4|ipv6)\" source address=\"" RE_NET "\" "               \
	"(port port=\"" RE_PORT "(-" RE_PORT ")?\" protocol=\"tcp\"|protocol value=\"tcp\") " \
	"accept$"
static const struct rule {
	const char *prog, *path, *args, *why;
} rules[] = {
    {"nft", "/usr/sbin/nft", "-j list ruleset", "firewall: read the ruleset"},
    {"nft", "/usr/sbin/nft", "^--echo --handle insert rule " RE_NFT_CHAIN " " RE_NFT_RULE "$",
     "firewall: add the accept rule, of one of the two shapes the fixer builds"},
    {"nft", "/usr/sbin/nft", "^delete rule " RE_NFT_CHAIN " handle [0-9]{1,10}$",
     "firewall: undo, by the rule's handle"},
    {"nft", "/usr/sbin/nft", "^--handle list chain " RE_NFT_CHAIN "$",
     "firewall: undo of an interrupted run: is the rule there, and its handle"},
    {"iptables", "/usr/sbin/iptables", "^-I" RE_XT_RULE, "firewall: iptables-nft's own tables"},
    {"iptables", "/usr/sbin/iptables", "^-D" RE_XT_RULE, "firewall: undo"},
    {"iptables", "/usr/sbin/iptables", "^-C" RE_XT_RULE,
     "firewall: undo of an interrupted run: is the rule there"},
    {"ip6tables", "/usr/sbin/ip6tables", "^-I" RE_XT_RULE, "firewall: ip6tables-nft's own tables"},
    {"ip6tables", "/usr/sbin/ip6tables", "^-D" RE_XT_RULE, "firewall: undo"},
    {"ip6tables", "/usr/sbin/ip6tables", "^-C" RE_XT_RULE,
     "firewall: undo of an interrupted run: is the rule there"},
    {"ufw", "/usr/sbin/ufw", "status", "firewall: is ufw active"},
    {"ufw", "/usr/sbin/ufw", "^" RE_UFW_RULE " comment " FIX_RULE_COMMENT "$",
     "firewall: add the ufw rule"},
    {"ufw", "/usr/sbin/ufw", "^delete " RE_UFW_RULE "$", "firewall: undo"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "--state", "firewall: is firewalld running"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^--get-zone-of-interface=" RE_IF "$",
     "firewall: the data interface's zone"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^" RE_ZONE " --list-rich-rules$",
     "firewall: that zone's rules"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^" RE_ZONE " --add" RE_RICH,
     "firewall: add the rich rule"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^" RE_ZONE " --remove" RE_RICH, "firewall: undo"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^--permanent " RE_ZONE " --add" RE_RICH,
     "firewall: the rich rule across reboots"},
    {"firewall-cmd", "/usr/bin/firewall-cmd", "^--permanent " RE_ZONE " --remove" RE_RICH,
     "firewall: undo"},
    {"sysctl", "/usr/sbin/sysctl",
     "^-w net\\.ipv4\\.ip_local_port_range=" RE_PORT_HI " " RE_PORT_HI "$",
     "port-range: set the range now (and undo); this key only"},
};

/* The file steps' programs and their usual paths. */
static const struct {
	const char *prog, *path;
} file_progs[] = {
    {"cp", "/usr/bin/cp"}, {"tee", "/usr/bin/tee"}, {"chmod", "/usr/bin/chmod"},
    {"mv", "/usr/bin/mv"}, {"rm", "/usr/bin/rm"},
};

/* ---------------------------------------------------------------- file steps */

int sudocmd_tmp_path(const char *path, char *out, size_t len)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	int n;

	if (!path || path[0] != '/' || !slash[1])
		return -1;
	n = snprintf(out, len, "%.*s/.%s.clusterdoc", (int)(slash - path), path, slash + 1);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int sudocmd_file(enum sudocmd_step step, const char *path, unsigned mode, struct sudocmd *out)
{
	const char **a = out->argv;

	memset(out, 0, sizeof(*out));
	if (sudocmd_tmp_path(path, out->tmp, sizeof(out->tmp)) < 0 ||
	    strlen(path) >= sizeof(out->path))
		return -1;
	snprintf(out->path, sizeof(out->path), "%s", path);
	snprintf(out->mode, sizeof(out->mode), "%04o", mode & 07777);
	switch (step) {
	case SUDOCMD_COPY:
		a[0] = "cp", a[1] = "-p", a[2] = out->path, a[3] = out->tmp;
		break;
	case SUDOCMD_FILL:
		a[0] = "tee", a[1] = out->tmp;
		break;
	case SUDOCMD_CHMOD:
		a[0] = "chmod", a[1] = out->mode, a[2] = out->tmp;
		break;
	case SUDOCMD_RENAME:
		a[0] = "mv", a[1] = "-f", a[2] = out->tmp, a[3] = out->path;
		break;
	case SUDOCMD_IN_PLACE:
		a[0] = "tee", a[1] = out->path;
		break;
	case SUDOCMD_CLEAN:
		a[0] = "rm", a[1] = "-f", a[2] = out->tmp;
		break;
	case SUDOCMD_REMOVE:
		a[0] = "rm", a[1] = "-f", a[2] = out->path;
		break;
	}
	return 0;
}

size_t sudocmd_file_steps(int exists, int remove, enum sudocmd_step *steps)
{
	size_t n = 0;

	if (remove) {
		steps[n++] = SUDOCMD_REMOVE;
		return n;
	}
	if (exists)
		steps[n++] = SUDOCMD_COPY;
	steps[n++] = SUDOCMD_FILL;
	if (!exists)
		steps[n++] = SUDOCMD_CHMOD;
	steps[n++] = SUDOCMD_RENAME;
	if (exists)
		steps[n++] = SUDOCMD_IN_PLACE;
	steps[n++] = SUDOCMD_CLEAN;
	return n;
}

/* ---------------------------------------------------------------- sudoers */

static char *join_args(const char *const *argv)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	for (const char *const *a = argv + 1; *a; a++)
		buf_append_strs(&b, a == argv + 1 ? "" : " ", *a, NULL);
	s = cd_strndup(b.data ? (const char *)b.data : "", b.len);
	buf_fini(&b);
	return s;
}

int sudocmd_is_regex(const char *pattern)
{
	size_t n = strlen(pattern);

	return n >= 2 && pattern[0] == '^' && pattern[n - 1] == '$';
}

int sudocmd_args_match(const char *pattern, const char *const *argv)
{
	char *args = join_args(argv);
	int m;

	if (sudocmd_is_regex(pattern)) {
		regex_t re;

		/* as sudo compiles it (sudoers' regex.c) */
		if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
			cd_fatal("sudocmd: the table's pattern does not compile: %s", pattern);
		m = regexec(&re, args, 0, NULL, 0) == 0;
		regfree(&re);
	} else {
		m = fnmatch(pattern, args, 0) == 0;
	}
	free(args);
	return m;
}

/* text with sudoers' special characters in a command's arguments escaped; a
 * regular expression needs only '#' escaped (sudoers(5)) and has none */
static void append_escaped(struct buf *b, const char *text)
{
	if (sudocmd_is_regex(text)) {
		buf_append_str(b, text);
		return;
	}
	for (const char *c = text; *c; c++) {
		if (strchr(",:=\\", *c))
			buf_append_str(b, "\\");
		buf_append(b, c, 1);
	}
}

static void append_line(struct buf *b, const char *user, const char *path, const char *args)
{
	buf_append_strs(b, user, " ALL=(root) NOPASSWD: ", path, NULL);
	if (args && *args) {
		buf_append_str(b, " ");
		append_escaped(b, args);
	}
}

static const char *file_prog_path(const char *prog)
{
	for (size_t k = 0; k < CD_ARRAY_LEN(file_progs); k++)
		if (strcmp(file_progs[k].prog, prog) == 0)
			return file_progs[k].path;
	return NULL;
}

/* Whether argv is one of the file steps on a root file of the table. */
static int is_file_step(const char *const *argv)
{
	static const enum sudocmd_step all[] = {SUDOCMD_COPY,   SUDOCMD_FILL,     SUDOCMD_CHMOD,
	                                        SUDOCMD_RENAME, SUDOCMD_IN_PLACE, SUDOCMD_CLEAN,
	                                        SUDOCMD_REMOVE};

	for (size_t f = 0; f < CD_ARRAY_LEN(root_files); f++)
		for (size_t s = 0; s < CD_ARRAY_LEN(all); s++) {
			struct sudocmd c;
			size_t k = 0;

			if (!root_files[f].created &&
			    (all[s] == SUDOCMD_CHMOD || all[s] == SUDOCMD_REMOVE))
				continue;
			sudocmd_file(all[s], root_files[f].path, root_files[f].mode, &c);
			while (c.argv[k] && argv[k] && strcmp(c.argv[k], argv[k]) == 0)
				k++;
			if (!c.argv[k] && !argv[k])
				return 1;
		}
	return 0;
}

int sudocmd_line_for(const char *user, const char *const *argv, const char *prog_path, char *out,
                     size_t len)
{
	const struct rule *hit = NULL;
	const char *path = prog_path && *prog_path ? prog_path : NULL;
	struct buf b;
	char *args = join_args(argv);
	int rc = 0;

	for (size_t k = 0; k < CD_ARRAY_LEN(rules) && !hit; k++)
		if (strcmp(rules[k].prog, argv[0]) == 0 && sudocmd_args_match(rules[k].args, argv))
			hit = &rules[k];
	if (!path)
		path = hit ? hit->path : file_prog_path(argv[0]);
	if (!hit && !is_file_step(argv))
		rc = -1;
	buf_init(&b, 1 << 20);
	append_line(&b, user, path ? path : argv[0], hit ? hit->args : args);
	snprintf(out, len, "%.*s", (int)b.len, b.data ? (const char *)b.data : "");
	buf_fini(&b);
	free(args);
	return rc;
}

char *sudocmd_sudoers(const char *user)
{
	struct buf b;
	char *s;

	buf_init(&b, 1 << 20);
	buf_append_strs(
	    &b, "# sudoers lines for `clusterdoc fix` run as ", user,
	    " (printed by clusterdoc fix --sudoers).\n"
	    "# Install with: visudo -f /etc/sudoers.d/clusterdoc\n"
	    "# Each line allows one command, NOPASSWD because clusterdoc runs sudo -n.\n"
	    "# No line here has a wildcard: /etc/hosts is changed with fixed arguments (a\n"
	    "# copy beside it, owner and mode kept, its new content, an atomic rename);\n"
	    "# a command whose arguments vary is a regular expression (sudo 1.9.10 or\n"
	    "# later) allowing only the shape clusterdoc builds, whose varying parts are\n"
	    "# names, addresses and numbers: never a ';', a quote, a space or an option.\n"
	    "# sudo before 1.9.10 cannot parse those lines and then refuses the whole\n"
	    "# file: there, leave out every line whose arguments start with ^ (the\n"
	    "# firewall and port-range fixes then need a root login).\n",
	    NULL);
	for (size_t f = 0; f < CD_ARRAY_LEN(root_files); f++) {
		static const enum sudocmd_step order[] = {
		    SUDOCMD_COPY,     SUDOCMD_FILL,  SUDOCMD_CHMOD, SUDOCMD_RENAME,
		    SUDOCMD_IN_PLACE, SUDOCMD_CLEAN, SUDOCMD_REMOVE};

		buf_append_strs(&b, "# ", root_files[f].path, "\n", NULL);
		for (size_t k = 0; k < CD_ARRAY_LEN(order); k++) {
			struct sudocmd c;
			char *args;

			if (!root_files[f].created &&
			    (order[k] == SUDOCMD_CHMOD || order[k] == SUDOCMD_REMOVE))
				continue;
			sudocmd_file(order[k], root_files[f].path, root_files[f].mode, &c);
			args = join_args(c.argv);
			append_line(&b, user, file_prog_path(c.argv[0]), args);
			buf_append_str(&b, "\n");
			free(args);
		}
	}
	for (size_t k = 0; k < CD_ARRAY_LEN(rules); k++) {
		if (rules[k].why)
			buf_append_strs(&b, "# ", rules[k].why, "\n", NULL);
		append_line(&b, user, rules[k].path, rules[k].args);
		buf_append_str(&b, "\n");
	}
	s = cd_strndup((const char *)b.data, b.len);
	buf_fini(&b);
	return s;
}
