/* SPDX-License-Identifier: MIT */
/*
 * hostfile.h - the host files users already have, read as their tools read
 * them:
 *
 *   node[01-04] gpu7        one host or hostlist per line (pdsh, clush)
 *   n1 slots=8              Open MPI and DeepSpeed: a host and its slots
 *   n2 slots=8 max_slots=8  (max_slots, also spelled max-slots, is checked
 *                           and otherwise ignored)
 *   n3:8                    MPICH and Intel MPI: host:slots
 *   # comment               '#' to the end of the line
 *
 * A line with no key=value and no host:N is a hostlist expression, as in
 * hostlist_read_file (whitespace, ',' and the set operators). A line with
 * slots names one host (or one hostlist: "n[1-4] slots=8" gives all four
 * 8 slots), then key=value words. Slots are ranks per node: 1 to
 * HOSTFILE_SLOTS_MAX.
 *
 * Errors name the file, the line and the value, e.g.
 *   hosts.txt:3: "slots=eight": slots takes a whole number from 1 to 1024
 */
#ifndef CD_HOSTFILE_H
#define CD_HOSTFILE_H

#include <stddef.h>

#include "hostlist.h"

#define HOSTFILE_SLOTS_MAX 1024

/* The slot count written for each host that had one (sorted by name once
 * hostfile_parse returns; names owned). */
struct hostslots {
	char **names;
	int *slots;
	size_t *lines; /* where each was written */
	size_t count, capacity;
};

void hostslots_init(struct hostslots *s);
void hostslots_fini(struct hostslots *s);

/* host's slot count, or 0 when its line gave none (or s is NULL or empty). */
int hostslots_get(const struct hostslots *s, const char *host);

/*
 * The one slot count all of hl's hosts share: N > 0 when every host has N
 * slots; 0 when no host has a slot count; -1 when they differ or some hosts
 * have none, with a message in err naming two hosts that differ, e.g.
 * "n1 has 8 slots, n2 has 4".
 */
int hostslots_common(const struct hostslots *s, const struct hostlist *hl, char *err,
                     size_t errlen);

/*
 * Parse buf[0..len) (a host file named path in messages) and add its hosts
 * to hl (whose groups resolve "@name") and their slot counts to slots.
 * Pure: no file is opened (beyond what hl's groups do).
 *
 * Returns 0; CD_ERR_PARSE for a bad line ("PATH:LINE: \"VALUE\": why"): a
 * malformed slots= or max_slots=, max_slots below slots, an unknown key, a
 * word after the slots that is not key=value, a host given slots twice, a
 * NUL byte; or hostlist_parse's errors prefixed with "PATH:LINE: ". On error
 * hl and slots are unchanged.
 */
int hostfile_parse(struct hostlist *hl, struct hostslots *slots, const char *buf, size_t len,
                   const char *path, char *err, size_t errlen);

/*
 * Read the file at path ("-": standard input, named "<stdin>") to its end,
 * at most HOSTLIST_FILE_MAX bytes, and hostfile_parse it. Returns as
 * hostfile_parse does, or CD_ERR_IO / CD_ERR_TOOBIG for the file itself
 * ("cannot open PATH: why").
 */
int hostfile_read(struct hostlist *hl, struct hostslots *slots, const char *path, char *err,
                  size_t errlen);

#endif
