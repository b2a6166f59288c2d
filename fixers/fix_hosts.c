/* SPDX-License-Identifier: MIT */
/*
 * fix_hosts.c - the hosts fixer: the node's hostname resolves to its data
 * address (hostname-loopback).
 *
 * Debian's installer maps the hostname to 127.0.1.1; Gloo's default device
 * and torchrun's advertised address come from resolving the hostname, so
 * peers are told to connect to a loopback address. Adding a line for the
 * data address is not enough: getaddrinfo sorts the answers (RFC 6724) and
 * puts the loopback address first. So the marked block takes the place of
 * the loopback line that names the hostname and keeps that line in it,
 * commented ("# was: 127.0.1.1 node2"); other names on such a line (as in
 * "127.0.0.1 localhost node2") stay on loopback. Undo puts the file's old
 * bytes back.
 */
#include "fix_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

const char *const fix_hosts_findings[] = {"hostname-loopback", NULL};

static int hostname_ok(const char *s)
{
	if (!*s || *s == '-' || *s == '.')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-'))
			return 0;
	return 1;
}

/* Whether the hosts line [s, s+n) maps an address of loopback to one of the
 * names; *others gets the line's other names, space-separated. */
static int loopback_line_names(const char *s, size_t n, const char *host, const char *shortname,
                               char *others, size_t olen)
{
	char *line = cd_strndup(s, n), *save = NULL, *tok;
	int hit = 0, first = 1;

	others[0] = 0;
	line[strcspn(line, "#\r")] = 0;
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (first) {
			if (strncmp(tok, "127.", 4) != 0 && strcmp(tok, "::1") != 0)
				break;
			first = 0;
		} else if (strcmp(tok, host) == 0 ||
		           (shortname[0] && strcmp(tok, shortname) == 0)) {
			hit = 1;
		} else {
			snprintf(others + strlen(others), olen - strlen(others), "%s%s",
			         others[0] ? " " : "", tok);
		}
	}
	free(line);
	return hit && !first;
}

static const char hosts_header[] =
    "# clusterdoc fix: the hostname resolves to the data address, so Gloo and torchrun\n"
    "# advertise an address peers can reach (getaddrinfo sorts loopback first, so\n"
    "# the loopback line for the hostname is kept here, commented).\n";

/* A block already there: its mapping replaced, the rest kept. */
static char *rebody(const char *old, const char *host, const char *mapping)
{
	struct buf b;
	char tab_host[300], *out;

	snprintf(tab_host, sizeof(tab_host), "\t%s", host);
	buf_init(&b, 1 << 20);
	for (const char *s = old; *s;) {
		size_t n = strcspn(s, "\n") + (s[strcspn(s, "\n")] == '\n');

		if (s[0] == '#' || !memmem(s, n, tab_host, strlen(tab_host)))
			buf_append(&b, s, n);
		s += n;
	}
	buf_append_str(&b, mapping);
	out = cd_strndup((const char *)b.data, b.len);
	buf_fini(&b);
	return out;
}

void fix_hosts_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct nm_node *n = &c->m->nodes[i];
	const char *addr = c->d->pred[i].data_addr, *dot;
	char mapping[600], summary[1024], shortname[256];
	struct fix_file_state *w;
	struct buf b, text;
	char *old;
	size_t absorbed = 0;
	long first = -1;

	if (!addr[0]) {
		fix_note(p, "hosts: no data address was verified for this node; `clusterdoc "
		            "check` says why");
		return;
	}
	if (!hostname_ok(n->hostname)) {
		fix_note(p, "hosts: the hostname \"%s\" is not one /etc/hosts can hold",
		         n->hostname);
		return;
	}
	/* "gpu01.cluster" also answers to "gpu01", as the installer's line did */
	dot = strchr(n->hostname, '.');
	snprintf(shortname, sizeof(shortname), "%.*s", dot ? (int)(dot - n->hostname) : 0,
	         n->hostname);
	snprintf(mapping, sizeof(mapping), "%s\t%s%s%s\n", addr, n->hostname,
	         shortname[0] ? " " : "", shortname);
	snprintf(summary, sizeof(summary), "map %s to %s (%s) instead of loopback", n->hostname,
	         addr, c->d->pred[i].data_iface);
	if (!(w = fix_work_file(c, i, p, "hosts", FIX_ETC_HOSTS)))
		return;

	{
		size_t bs, be;
		char err[CD_ERRLEN];

		if (blockedit_find(w->data ? w->data : "", w->len, "#", "hostname", &bs, &be, err,
		                   sizeof(err)) < 0) {
			fix_note(
			    p,
			    "hosts: %s left as is: %s; fix or remove the clusterdoc markers by "
			    "hand",
			    FIX_ETC_HOSTS, err);
			return;
		}
	}
	old = blockedit_body(w->data ? w->data : "", w->len, "#", "hostname");
	if (old) {
		char *body = rebody(old, n->hostname, mapping);

		fix_plan_block(c, i, p, "hosts", FIX_ETC_HOSTS, fix_needs_sudo(c, i), "hostname",
		               body, BLOCK_AFTER_COMMENTS, 0644, summary);
		free(body);
		free(old);
		return;
	}

	/* The loopback lines naming the hostname move, commented, into the
	 * block, which takes the first one's place. */
	buf_init(&b, 1 << 20);
	buf_init(&text, 16 << 20);
	buf_append_str(&b, hosts_header);
	for (size_t off = 0; w->data && off < w->len;) {
		const char *s = w->data + off;
		size_t n0 = strcspn(s, "\n"), n1 = n0 + (off + n0 < w->len);
		char others[4096];

		if (s[0] != '#' &&
		    loopback_line_names(s, n0, n->hostname, shortname, others, sizeof(others))) {
			buf_append_str(&b, "# was: ");
			buf_append(&b, s, n0);
			buf_append_str(&b, "\n");
			if (others[0]) {
				char first_field[64];

				snprintf(first_field, sizeof(first_field), "%.*s",
				         (int)strcspn(s, " \t"), s);
				buf_append_strs(&b, first_field, "\t", others, "\n", NULL);
			}
			if (first < 0)
				first = (long)text.len;
			absorbed++;
		} else {
			buf_append(&text, s, n1);
		}
		off += n1;
	}
	if (!absorbed) {
		buf_fini(&b);
		buf_fini(&text);
		fix_plan_block(c, i, p, "hosts", FIX_ETC_HOSTS, fix_needs_sudo(c, i), "hostname",
		               mapping, BLOCK_AFTER_COMMENTS, 0644, summary);
		return;
	}
	buf_append_str(&b, mapping);
	{
		struct buf out;

		buf_init(&out, 16 << 20);
		buf_append(&out, text.data, (size_t)first);
		buf_append_strs(&out, "# >>> clusterdoc hostname >>>\n", NULL);
		buf_append(&out, b.data, b.len);
		buf_append_str(&out, "# <<< clusterdoc hostname <<<\n");
		buf_append(&out, text.data + first, text.len - (size_t)first);
		fix_plan_text(c, i, p, "hosts", FIX_ETC_HOSTS, fix_needs_sudo(c, i),
		              cd_strndup((const char *)out.data, out.len), out.len, 0644, summary);
		buf_fini(&out);
	}
	buf_fini(&b);
	buf_fini(&text);
}
