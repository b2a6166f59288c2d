/* SPDX-License-Identifier: MIT */
/*
 * bootstrap.c - see bootstrap.h.
 *
 * The script is kept cheap on the warm path: one fork (uname -m), a test
 * and a read builtin, then exec. Everything else (id, ls, df, mkdir, the
 * checksum) runs only when no cached agent is there.
 */
#include "bootstrap.h"
#include "buf.h"
#include "cd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = cd_vasprintf(fmt, ap);
	va_end(ap);
	if (buf_append_str(b, s) < 0)
		cd_fatal("the bootstrap command is over %zu bytes", b->max);
	free(s);
}

/* Functions of the script (no single quote may appear in them):
 *   o DIR   DIR is a real directory (no symlink), ours, mode 0700
 *   r DIR   exec DIR/agent-$s when it is there and executable
 *   w TEXT  the CODE for an error message
 *   y DIR   DIR has less room than the agent needs
 *   p DIR   DIR can take a new agent (sets t, the temp name), else c=CODE
 *   v TMP DIR  check TMP and rename it to DIR/agent-$s */
static const char script_functions[] =
    "o() { [ -d \"$1\" ] && [ ! -L \"$1\" ] && [ -O \"$1\" ] && "
    "case $(ls -ld \"$1\") in drwx------*) ;; *) false;; esac; }; "
    "r() { [ -x \"$1/agent-$s\" ] || return 0; i=-; "
    "[ -r \"$1/.id\" ] && read -r i < \"$1/.id\"; "
    "echo CDBOOT exec $s \"${i:--}\" \"$1\"; exec \"$1/agent-$s\" --stdio; }; "
    "w() { case \"$1\" in *\"o space\"*) echo nospace;; *ead-only*) echo rofs;; "
    "*uota*) echo quota;; *ermission*|*denied*) echo perm;; *) echo other;; esac; }; "
    "y() { set -- $(df -Pk \"$1\" 2>/dev/null | sed -n 2p); "
    "[ -n \"$4\" ] && [ \"$4\" -lt $((z / 1024 + 16)) ] 2>/dev/null; }; "
    "p() { c=; case \"$S\" in *\"|$1|\"*) c=done; return 1;; esac; "
    "if [ \"$1\" = \"$h\" ]; then e=$(mkdir -p -m 700 \"$1\" 2>&1) || "
    "{ c=$(w \"$e\"); return 1; }; "
    "else e=$(mkdir -m 700 \"$1\" 2>&1); "
    "o \"$1\" || { [ -d \"$1\" ] && c=unsafe || c=$(w \"$e\"); return 1; }; fi; "
    "y \"$1\" && { c=nospace; return 1; }; "
    "t=\"$1/.agent-$s.$(uname -n).$$.$K\"; "
    "e=$({ : > \"$t\"; } 2>&1) || { c=$(w \"$e\"); rm -f \"$t\"; return 1; }; "
    "rm -f \"$t\"; "
    "find \"$1\" -maxdepth 1 -name \".agent-*\" -mmin +60 -exec rm -f {} + "
    "2>/dev/null; return 0; }; "
    "v() { n=$(wc -c < \"$1\"); [ $n -eq $z ] 2>/dev/null || "
    "{ y \"$2\" && e=nospace || e=short; rm -f \"$1\"; echo CDBOOT fail $e \"$2\"; exit 0; }; "
    "if command -v sha256sum >/dev/null 2>&1; then "
    "set -- \"$1\" \"$2\" $(sha256sum < \"$1\"); [ \"$3\" = $s ] || "
    "{ rm -f \"$1\"; echo CDBOOT fail checksum \"$2\"; exit 0; }; fi; "
    "chmod 700 \"$1\" && mv -f \"$1\" \"$2/agent-$s\" || "
    "{ rm -f \"$1\"; echo CDBOOT fail other \"$2\"; exit 0; }; }; ";

/* One `case` arm per agent: `uname -m` -> its SHA-256 and size. */
static void add_arch_arms(struct buf *b, const struct agentset *set)
{
	buf_printf(b, "case \"$m\" in ");
	for (size_t i = 0; i < set->n; i++) {
		const struct agent_bin *a = &set->bins[i];

		buf_printf(b, "%s%s) s=%s; z=%lld;; ", a->arch,
		           strcmp(a->arch, "aarch64") == 0 ? "|arm64" : "", a->sha256, a->size);
	}
	buf_printf(b, "*) echo CDBOOT arch \"$m\"; exit 0;; esac; ");
}

char *bootstrap_command(const struct agentset *set, const struct boot_params *p)
{
	struct buf b;
	char *cmd;

	buf_init(&b, 64 * 1024);
	buf_printf(&b, "exec /bin/sh -c '");
	buf_printf(&b, "F=%d; S=\"%s\"; K=%s; h=\"$HOME/.cache/clusterdoc\"; m=$(uname -m); ",
	           p->force, p->skip ? p->skip : "", p->token);
	add_arch_arms(&b, set);
	buf_printf(&b, "%s", script_functions);
	if (p->tmp && p->tmp_failed) {
		/* The SFTP upload failed: say why in plain words, leave nothing. */
		buf_printf(&b,
		           "T=\"%s\"; D=\"${T%%/*}\"; if y \"$D\"; then e=nospace; "
		           "else e=$({ : >> \"$T\"; } 2>&1) && e=other || e=$(w \"$e\"); fi; "
		           "rm -f \"$T\"; echo CDBOOT fail $e \"$D\"; exit 0",
		           p->tmp);
	} else if (p->tmp) {
		buf_printf(&b,
		           "T=\"%s\"; D=\"${T%%/*}\"; v \"$T\" \"$D\"; r \"$D\"; "
		           "echo CDBOOT fail gone \"$D\"; exit 0",
		           p->tmp);
	} else {
		/* Warm path: the home directory's agent; a fallback's only while the
		 * home directory still cannot take one (else the cold path puts it
		 * back home, and no note blames a home directory that is fine). */
		buf_printf(
		    &b,
		    "if [ $F = 0 ]; then r \"$h\"; if ! p \"$h\"; then "
		    "[ -n \"$XDG_RUNTIME_DIR\" ] && o \"$XDG_RUNTIME_DIR/clusterdoc\" && "
		    "r \"$XDG_RUNTIME_DIR/clusterdoc\"; "
		    "o \"/tmp/clusterdoc-$(id -u)\" && r \"/tmp/clusterdoc-$(id -u)\"; fi; fi; ");
		/* Cold path: the first directory that can take one. */
		buf_printf(&b,
		           "for d in \"$h\" \"${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/clusterdoc}\" "
		           "\"/tmp/clusterdoc-$(id -u)\"; do [ -n \"$d\" ] || continue; "
		           "if p \"$d\"; then i=-; "
		           "[ -r \"$d/.id\" ] || { { echo $K > \"$d/.id.$K\" && "
		           "ln \"$d/.id.$K\" \"$d/.id\"; } 2>/dev/null; rm -f \"$d/.id.$K\"; }; "
		           "[ -r \"$d/.id\" ] && read -r i < \"$d/.id\"; "
		           "echo CDBOOT missing $s \"${i:--}\" \"$t\"; ");
		if (p->stream)
			buf_printf(
			    &b,
			    "read -r k; if [ \"$k\" = send ]; then "
			    "e=$(head -c $z 2>&1 > \"$t\") || { y \"$d\" && e=nospace || "
			    "e=$(w \"$e\"); rm -f \"$t\"; echo CDBOOT fail $e \"$d\"; exit 0; }; "
			    "v \"$t\" \"$d\"; fi; r \"$d\"; echo CDBOOT fail gone \"$d\"; ");
		buf_printf(&b, "exit 0; fi; [ \"$c\" = done ] || echo CDBOOT skip $c \"$d\"; done; "
		               "echo CDBOOT nowhere; exit 0");
	}
	buf_printf(&b, "'");
	cmd = cd_strndup(b.data, b.len);
	buf_fini(&b);
	return cmd;
}
