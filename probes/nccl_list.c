/* SPDX-License-Identifier: MIT */
/* nccl_list.c - NCCL's list syntax (see nccl_list.h). */
#include "nccl_list.h"

#include <stdlib.h>
#include <string.h>

void nccl_list_parse(const char *value, int max_items, struct nccl_list *l)
{
	const char *p = value;

	memset(l, 0, sizeof(*l));
	if (!p)
		return;
	if (max_items > NCCL_LIST_CAP)
		max_items = NCCL_LIST_CAP;
	if (*p == '^') {
		l->exclude = 1;
		p++;
	}
	if (*p == '=') {
		l->exact = 1;
		p++;
	}
	while (*p && l->nitems < max_items) {
		size_t n = strcspn(p, ",:");
		struct nccl_list_item *it = &l->items[l->nitems];

		if (n > 0 && n < sizeof(it->prefix)) {
			memcpy(it->prefix, p, n);
			it->prefix[n] = '\0';
			it->port = p[n] == ':' ? atoi(p + n + 1) : -1;
			l->nitems++;
		}
		p += n;
		if (*p == ':')
			p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
}

int nccl_list_item_matches(const struct nccl_list *l, int k, const char *name, int port)
{
	const struct nccl_list_item *it = &l->items[k];
	int named = l->exact ? strcmp(name, it->prefix) == 0
	                     : strncmp(name, it->prefix, strlen(it->prefix)) == 0;

	return named && (it->port == -1 || port == -1 || it->port == port);
}

int nccl_list_match(const struct nccl_list *l, const char *name, int port)
{
	int hit = l->nitems == 0;

	for (int i = 0; i < l->nitems && !hit; i++)
		hit = nccl_list_item_matches(l, i, name, port);
	return hit != l->exclude;
}
