/* SPDX-License-Identifier: MIT */
/*
 * predict_internal.h - what the NCCL emulation (predict.c) and the Gloo one
 * (predict_gloo.c) share: small text helpers and the picking of an address.
 * Not a public interface: include it only from probes/predict*.c.
 */
#ifndef CD_PROBES_PREDICT_INTERNAL_H
#define CD_PROBES_PREDICT_INTERNAL_H

#include <stddef.h>

#include "probes/predict.h"

/* src into dst (len bytes), truncated, always NUL-terminated. */
void predict_copy_text(char *dst, size_t len, const char *src);

/* Append "NAME=value (from <source>)" to buf, the source only when value is
 * the node's own effective value (a caller may predict with a proposed one). */
void predict_append_variable(char *buf, size_t len, const struct nm_node *n, const char *name,
                             const char *value);

/* Whether the address text addr of family is a loopback address. */
int predict_text_is_loopback(int family, const char *addr);

/* Fill *p (interface, address, family, scope) from the model's address a. */
void predict_pick_from_addr(struct net_pick *p, const struct nm_addr *a);

#endif
