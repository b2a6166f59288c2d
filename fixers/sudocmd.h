/* SPDX-License-Identifier: MIT */
/*
 * sudocmd.h - every command `clusterdoc fix` runs as root through `sudo -n`
 * when the login user is not root, and the sudoers lines that allow exactly
 * those commands.
 *
 * Two kinds of root work:
 *   - a root-owned file (/etc/hosts) is changed with plain tools whose arguments are fixed, so a
 * sudoers line can name them without a wildcard. Beside the file F, the temporary T is
 * ".NAME.clusterdoc" in F's directory: cp -p F T           T starts as a copy of F: owner and mode
 * kept tee T               T gets the new content (stdin) chmod MODE T        a new file only: its
 * mode mv -f T F           the atomic replacement tee F               when F cannot be renamed over
 * (a bind mount) rm -f T             a failed write leaves no temporary rm -f F             undo of
 * a file the run created
 *   - a fixer's command (nft, iptables, ufw, firewall-cmd, sysctl) and the
 *     listings the gather reads: fixed arguments, or a sudoers regular
 *     expression that allows only the shape the fixer builds (no '*': nft
 *     reads its arguments as a language with `;` and `include`).
 * The port-range file in /etc/sysctl.d is written only as root, never
 * through sudo: its content would set any sysctl at boot.
 *
 * The agent builds the file commands (nodefile.h's file_write with "sudo"),
 * the head asks `sudo -n -l COMMAND` for each one a node will need before its
 * first change, and `clusterdoc fix --sudoers` prints the lines from the same
 * table, so the three cannot drift apart.
 */
#ifndef CD_FIXERS_SUDOCMD_H
#define CD_FIXERS_SUDOCMD_H

#include <limits.h>
#include <stddef.h>

enum sudocmd_step {
	SUDOCMD_COPY,     /* cp -p F T */
	SUDOCMD_FILL,     /* tee T */
	SUDOCMD_CHMOD,    /* chmod MODE T */
	SUDOCMD_RENAME,   /* mv -f T F */
	SUDOCMD_IN_PLACE, /* tee F */
	SUDOCMD_CLEAN,    /* rm -f T */
	SUDOCMD_REMOVE,   /* rm -f F */
};

/* One command: argv[0] is the program's name (sudo finds it in its
 * secure_path); the strings live in the struct. */
struct sudocmd {
	const char *argv[6];
	char tmp[PATH_MAX];
	char path[PATH_MAX];
	char mode[8];
};

/* The temporary beside path: ".NAME.clusterdoc" in its directory. -1 when
 * path is not absolute or too long. */
int sudocmd_tmp_path(const char *path, char *out, size_t len);

/* The command for step on the absolute path (mode: a new file's, for
 * SUDOCMD_CHMOD). 0, or -1 when path is not absolute or too long. */
int sudocmd_file(enum sudocmd_step step, const char *path, unsigned mode, struct sudocmd *out);

/* The steps a change of a root file may need, in order, into steps (room for
 * 7): a write of an existing file, of a new one, or a removal. Returns how
 * many. */
size_t sudocmd_file_steps(int exists, int remove, enum sudocmd_step *steps);

/* ---------------------------------------------------------------- sudoers */

/* The program directories sudo's usual secure_path holds, in its order. */
extern const char *const sudocmd_dirs[];

/* The sudoers line that allows argv (an argv a fixer runs, or a file step's)
 * for user, into out: "USER ALL=(root) NOPASSWD: PATH ARGS" with ARGS the
 * table's pattern, PATH the program's path on the node (prog_path, when the
 * node told it) or the table's default. 0, or -1 when no line of the table
 * allows argv (out then holds a line for exactly argv). */
int sudocmd_line_for(const char *user, const char *const *argv, const char *prog_path, char *out,
                     size_t len);

/* The whole sudoers fragment for user: a header and every line the fixers
 * may need (new string). Valid for `visudo -c -f`. */
char *sudocmd_sudoers(const char *user);

/* Whether a table's arguments are a sudoers regular expression ("^...$"). */
int sudocmd_is_regex(const char *pattern);

/* Whether the table's pattern for a command's arguments matches the
 * arguments argv[1..] joined by spaces, as sudo matches them: a regular
 * expression ("^...$", POSIX extended, sudo 1.9.10 and later), else a glob
 * (fnmatch without FNM_PATHNAME). */
int sudocmd_args_match(const char *pattern, const char *const *argv);

#endif
