/* SPDX-License-Identifier: MIT */
/*
 * sockaddr.h - socket addresses from and to the text the protocol carries
 * ("10.0.0.1", "fe80::1" plus an interface index). libc only.
 */
#ifndef CD_CORE_SOCKADDR_H
#define CD_CORE_SOCKADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* addr from an address text, an interface index (IPv6 link-local needs it)
 * and a port; 0, or EINVAL when the text is neither IPv4 nor IPv6. */
int cd_sockaddr_from_text(const char *text, long long scope_id, int port,
                          struct sockaddr_storage *addr, socklen_t *len);

/* "10.0.0.1:41000", "[fe80::1%2]:41000" (the scope as its index) into buf;
 * "?" for another family. Returns buf. */
char *cd_sockaddr_text(const struct sockaddr *addr, char *buf, size_t len);

#endif
