/* SPDX-License-Identifier: MIT */
/* sockaddr.c - see sockaddr.h. */
#include "sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int cd_sockaddr_from_text(const char *text, long long scope_id, int port,
                          struct sockaddr_storage *addr, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sin6->sin6_scope_id = (uint32_t)scope_id;
		*len = sizeof(*sin6);
		return 0;
	}
	return EINVAL;
}

char *cd_sockaddr_text(const struct sockaddr *addr, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)addr;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, (unsigned)ntohs(sin->sin_port));
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)addr;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		if (sin6->sin6_scope_id)
			snprintf(buf, len, "[%s%%%u]:%u", host, (unsigned)sin6->sin6_scope_id,
			         (unsigned)ntohs(sin6->sin6_port));
		else
			snprintf(buf, len, "[%s]:%u", host, (unsigned)ntohs(sin6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}
