/* SPDX-License-Identifier: MIT */
/*
 * genders.h - genders(5) files, as pdsh's -g reads them (through
 * libgenders): each line names nodes and their attributes,
 *
 *   # comment
 *   node[1-16]        compute,gpus=8
 *   login1,login2     login
 *   node3             rack=r2,compute
 *
 * NODES is a comma list of node names, each of which may use the hostlist
 * range syntax; ATTRS, when present, a comma list of attr or attr=value.
 * Names are letters, digits, '.', '_' and '-'; attributes add ':', '+' and
 * '/'; a value is any text without whitespace or ','. A node may appear on
 * several lines; an attribute given twice for one node is an error, as in
 * libgenders.
 *
 * The file is parsed here, not with libgenders, so that the head needs no
 * more libraries and its errors name the file, the line and the value:
 *   /etc/genders:3: "127.0.0.1 localhost ip6-localhost": a genders line is
 *   NODES [ATTRS]; this one has 3 fields (is it a genders file?)
 */
#ifndef CD_GENDERS_H
#define CD_GENDERS_H

#include <stddef.h>

#include "hostlist.h"

/* The default file, as libgenders's; CLUSTERDOC_GENDERS names another. */
#define GENDERS_DEFAULT_FILE "/etc/genders"
#define GENDERS_ENV          "CLUSTERDOC_GENDERS"

struct genders_entry {
	char *node, *attr, *val; /* val NULL for a bare attr */
	size_t line;
};

struct genders {
	struct genders_entry *e;
	size_t count, capacity;
};

void genders_init(struct genders *g);
void genders_fini(struct genders *g);

/*
 * Parse the genders file buf[0..len), named path in messages, into g
 * (which must be empty). Pure. Returns 0 or CD_ERR_PARSE ("PATH:LINE:
 * \"VALUE\": why") for a line with more than two fields, an empty or
 * malformed node name or attribute, an attribute given twice for a node,
 * a NUL byte; CD_ERR_TOOBIG for ranges that expand past HOSTLIST_MAX. On
 * error g is left empty.
 */
int genders_parse(struct genders *g, const char *buf, size_t len, const char *path, char *err,
                  size_t errlen);

/*
 * Add to hl the nodes that match query, pdsh's -g syntax: a comma list of
 * attr or attr=value, any of which selects a node. Returns the number of
 * nodes added (0 is not an error here), or CD_ERR_PARSE for a malformed
 * query ("-g \"=x\": ...").
 */
int genders_select(const struct genders *g, const char *query, struct hostlist *hl, char *err,
                   size_t errlen);

/*
 * The file to read: $CLUSTERDOC_GENDERS when set and not empty, else
 * GENDERS_DEFAULT_FILE. Then genders_read: read it (regular file, at most
 * HOSTLIST_FILE_MAX bytes) and genders_parse it; CD_ERR_IO "cannot open
 * PATH: why" when it is missing.
 */
const char *genders_path(void);
int genders_read(struct genders *g, const char *path, char *err, size_t errlen);

#endif
