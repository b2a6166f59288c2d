/* SPDX-License-Identifier: MIT */
/*
 * hostlist.h - host list expressions: parse "node[01-16,20],gpu[1-4]!gpu3",
 * expand them into host names, fold host names back into an expression.
 *
 * Dialect: the bracket syntax shared by Slurm, pdsh and ClusterShell, plus
 * ClusterShell's set operators.
 *
 *   node[01-16,20]      ranges and lists inside brackets; a bound written
 *                       with a leading zero fixes the width ("01" -> 2 digits)
 *   n[1-9/2]            every 2nd index: n1,n3,n5,n7,n9
 *   rack[1-2]-n[1-4]    several bracket groups: the cartesian product, the
 *                       last group varying fastest (rack1-n1, rack1-n2, ...)
 *   foo[0-3]-eth0       text may follow the brackets
 *   a,b  a b            ',' and whitespace both separate hosts (union)
 *   A!B  A&B  A^B       difference, intersection, symmetric difference;
 *                       all operators, ',' included, are applied strictly
 *                       from left to right, with no precedence:
 *                       "a[1-5]&a[2-9]!a3,a7" is ((a[1-5] & a[2-9]) ! a3) , a7
 *
 * Padding follows ClusterShell: "node[1-10]" is node1..node10, and a range
 * whose bounds differ in length while one is zero-padded ("node[9-011]",
 * "[01-044]") is an error. Different widths in different ranges of one list
 * are fine: "[07-09,010]". Digits next to a bracket are text in front of
 * each index, as in Slurm and pdsh: "node0[8-9]" is node08,node09 and
 * "n2[10-320]" is n210..n299,n2100..n2320 (ClusterShell would shift the
 * bounds instead and read n[210-2320]).
 *
 * Result order and duplicates (a deliberate divergence from Slurm): a
 * hostlist is a set, as in ClusterShell. Names are sorted by their text
 * with the numbers taken out, then by the numbers (numerically; at equal
 * value the shorter, unpadded spelling first), and duplicates are dropped.
 * Slurm's "hostlist" keeps the order written and the duplicates
 * ("tux2,tux1,tux2" stays three hosts); here it is tux1,tux2. For names
 * with several numbers that do not form one product, ClusterShell lists
 * the hosts product by product, larger first ("a[1-2]p[1-2],a0p0" gives
 * a1p1 a1p2 a2p1 a2p2 a0p0); here the list is sorted all the same.
 *
 *   @group  @src:grp    a node group, resolved by hl->groups (see struct
 *                       hostlist_groups); without one, an error
 *
 * Not supported: ClusterShell negative indexes, pdsh user@host,
 * -host, /regex/ and #include, whitespace inside a host name (ClusterShell
 * keeps "tigrou 0" as one name; here it is two hosts).
 *
 * A hostlist holds at most HOSTLIST_MAX hosts so that a typo such as
 * "n[0-99999999]" fails fast (CD_ERR_TOOBIG) instead of exhausting memory.
 */
#ifndef CD_HOSTLIST_H
#define CD_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_MAX 1000000

/* The longest host name (the 255 bytes of a DNS name): a longer one could
 * never be resolved, and its echo would crowd the reason out of messages. */
#define HOSTLIST_NAME_MAX 255

/* The largest host file hostlist_read_file reads (32 MiB): a million
 * hosts of 32 bytes each, so that "--hostfile /dev/zero" fails fast. */
#define HOSTLIST_FILE_MAX ((size_t)32 << 20)

struct hostlist;

/*
 * Where "@name" terms are resolved: the caller's table of group sources
 * (core/nodegroup.h builds one). resolve adds the hosts of the group
 * spelled name (without the '@', e.g. "gpu" or "sj:1234") to out, which it
 * need not keep sorted; it returns 0, or a negative enum cd_err with a
 * message in err that names the group and where it looked.
 */
struct hostlist_groups {
	int (*resolve)(const struct hostlist_groups *g, const char *name, struct hostlist *out,
	               char *err, size_t errlen);
	void *ctx;
};

/*
 * An ordered vector of host names. names[0..count-1] are NUL-terminated
 * strings owned by the hostlist (freed by hostlist_free); capacity is the
 * allocated length of names. Every function below that adds hosts leaves
 * the vector sorted and without duplicates (see hostlist_sort_uniq).
 */
struct hostlist {
	char **names;
	size_t count;
	size_t capacity;
	/* Borrowed, may be NULL: how this list's parses resolve @groups. */
	const struct hostlist_groups *groups;
};

/* A new empty hostlist; never NULL (aborts on out-of-memory). Free with hostlist_free. */
struct hostlist *hostlist_new(void);

/* Free hl and every name in it. hostlist_free(NULL) is a no-op. */
void hostlist_free(struct hostlist *hl);

/*
 * Parse the expression expr (see the dialect above) and add its hosts to hl.
 * The operators apply within expr only; the result is then unioned into hl.
 *
 * err, errlen: on failure, a message such as
 *   hostlist "n[5-3]": range 5-3 goes backwards (at column 3)
 * (the column counts bytes of expr from 1; a long expr is shown abridged).
 *
 * Returns 0; CD_ERR_PARSE for a malformed expression (empty, stray ',' or
 * ']', backwards range, bad padding, a host name longer than
 * HOSTLIST_NAME_MAX, a byte that is not UTF-8 text ("byte 0xff is not UTF-8
 * text (at column C)"), ...); CD_ERR_TOOBIG when hl would hold
 * more than HOSTLIST_MAX hosts. On error hl is unchanged.
 */
int hostlist_parse(struct hostlist *hl, const char *expr, char *err, size_t errlen);

/*
 * Remove from hl every host that is in minus; the order of the others is
 * kept. minus may be hl itself (hl becomes empty). This cannot fail (as
 * everywhere, running out of memory is fatal). Returns the number of hosts
 * removed.
 */
int hostlist_exclude(struct hostlist *hl, const struct hostlist *minus);

/*
 * Add the hosts listed in the file at path: one host or expression per
 * line, '#' starts a comment, blank lines are ignored.
 *
 * The file is read to its end (it may be a pipe), at most HOSTLIST_FILE_MAX
 * bytes.
 *
 * Returns 0; CD_ERR_IO when the file cannot be opened or read (messages
 * "cannot open PATH: <strerror>", "cannot read PATH: <strerror>");
 * CD_ERR_TOOBIG for a file over the cap ("PATH is larger than N bytes");
 * CD_ERR_PARSE for a line holding a NUL byte ("PATH:LINE: a NUL byte at
 * column C (not a text file?)"); CD_ERR_PARSE or CD_ERR_TOOBIG for a bad
 * line, with the message "PATH:LINE: " followed by hostlist_parse's message.
 * On error hl is unchanged.
 */
int hostlist_read_file(struct hostlist *hl, const char *path, char *err, size_t errlen);

/* hostlist_read_file on an open fd (not closed here), its messages naming
 * it name (e.g. "<stdin>"): pdsh's "-w -", hosts separated by whitespace,
 * commas or newlines. */
int hostlist_read_fd(struct hostlist *hl, int fd, const char *name, char *err, size_t errlen);

/* The name standard input has in messages: "<stdin>:2: ...". */
#define HOSTLIST_STDIN_NAME "<stdin>"

/*
 * Add the hosts of one command-line target (a -w argument): "^FILE" reads
 * FILE with hostlist_read_file (as pdsh does); anything else is an
 * expression for hostlist_parse. "-" is left to the front end (standard
 * input is its to read: hostlist_read_fd on STDIN_FILENO), so that a host
 * name handed here is never taken for it. Unlike pdsh, "^FILE" must be the
 * whole argument. Returns as those functions do; "^" alone is CD_ERR_PARSE.
 */
int hostlist_add_arg(struct hostlist *hl, const char *arg, char *err, size_t errlen);

/*
 * Fold hl into the shortest usual expression, as ClusterShell's
 * "nodeset -f" prints it: "node[1-3,5],other", padding kept
 * ("n[001-010]"), no /step. Names with several numbers fold on every
 * number when the set is a product ("rack[1-2]-n[1-4]"); otherwise into
 * one product per distinct remainder ("da3c[1-4],da2c[1-2],da4c[3-4]"),
 * larger products first. Names are grouped by their text without numbers,
 * in the order of hostlist_sort_uniq. Numbers of more than 18 digits are
 * kept as text. hl itself is not modified (it need not be sorted).
 *
 * Returns a cd_malloc'd string ("" for an empty or NULL hl); the caller
 * frees it with free(). Parsing the result gives back the same set.
 */
char *hostlist_fold(const struct hostlist *hl);

/* Add every host of add (unchanged, any order) to hl. Returns 0, or
 * CD_ERR_TOOBIG when hl would pass HOSTLIST_MAX (hl unchanged then). */
int hostlist_union(struct hostlist *hl, const struct hostlist *add);

/* The number of hosts in hl (0 for NULL). */
size_t hostlist_count(const struct hostlist *hl);

/*
 * Sort hl in ClusterShell order and drop duplicate names (freeing them).
 * Order: names are compared first by their text with each number replaced
 * by a placeholder ("node%s-eth%s"), byte-wise; then number by number,
 * the shorter digit string first and equal lengths by digits. So n2 < n10,
 * n9 < n08 < n10 (the padded "08" is a different host from "8"), and
 * "node" < "node1" < "nodeA".
 */
void hostlist_sort_uniq(struct hostlist *hl);

#endif
