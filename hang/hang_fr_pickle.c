/* SPDX-License-Identifier: MIT */
/*
 * hang_fr_pickle.c - a bounded reader of the pickles a Flight Recorder
 * dump is (hang_fr.h): the opcodes of Python's pickle protocols 2-5 that
 * plain data needs, as documented in CPython's Lib/pickletools.py, and the
 * ones torch's C++ Pickler (torch/csrc/jit/serialization/pickler.cpp)
 * emits for a dict of lists, strings, ints, floats, bools and None.
 *
 * Nothing here runs code: a GLOBAL is accepted only for torch's list
 * builders, whose REDUCE just yields the list. A container may be changed
 * only while it is the one made by its EMPTY_* opcode and still on the
 * stack; one fetched from the memo is read-only, so no input can make a
 * cycle (which jansson could neither free nor print).
 */
#include "hang/hang_fr.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"

#define PK_MAX_STACK 100000
#define PK_MAX_MARKS 10000
#define PK_MAX_MEMO  (1u << 22)

/* A value on the stack; fresh: made by EMPTY_* here, so it may be filled.
 * A NULL v is torch's list builder (GLOBAL), waiting for its REDUCE. */
struct pk_slot {
	json_t *v;
	int fresh;
};

struct pk {
	const unsigned char *p, *end, *start;
	struct pk_slot *stack;
	size_t nstack, capstack;
	size_t marks[PK_MAX_MARKS];
	size_t nmarks;
	json_t **memo;
	size_t capmemo, nmemo;
	/* the fresh containers on the stack, bottom first (their nesting) */
	json_t **fresh;
	size_t nfresh, capfresh;
	char *err;
	size_t errlen;
};

static int pk_fail(struct pk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pk_fail(struct pk *k, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cd_errf(k->err, k->errlen, CD_ERR_PARSE, "pickle byte %zu: %s", (size_t)(k->p - k->start),
	        what);
	return -1;
}

/* n bytes of operand at the cursor, or the "truncated" refusal. */
static const unsigned char *pk_take(struct pk *k, size_t n, const char *op)
{
	const unsigned char *q = k->p;

	if ((size_t)(k->end - k->p) < n) {
		pk_fail(k, "truncated: %s needs %zu bytes, %zu left", op, n,
		        (size_t)(k->end - k->p));
		return NULL;
	}
	k->p += n;
	return q;
}

static uint64_t le(const unsigned char *q, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | q[i];
	return v;
}

static int pk_push(struct pk *k, json_t *v, int fresh)
{
	if (!v)
		return pk_fail(k, "a value jansson refused (a string not UTF-8?)");
	if (k->nstack == PK_MAX_STACK) {
		json_decref(v);
		return pk_fail(k, "more than %d values on the stack", PK_MAX_STACK);
	}
	if (k->nstack == k->capstack) {
		k->capstack = k->capstack ? k->capstack * 2 : 64;
		k->stack = cd_realloc(k->stack, k->capstack * sizeof(*k->stack));
	}
	if (fresh) {
		if (k->nfresh == k->capfresh) {
			k->capfresh = k->capfresh ? k->capfresh * 2 : 16;
			k->fresh = cd_realloc(k->fresh, k->capfresh * sizeof(*k->fresh));
		}
		k->fresh[k->nfresh++] = v;
	}
	k->stack[k->nstack++] = (struct pk_slot){v, fresh};
	return 0;
}

/* The stack's bottom that the innermost MARK left (0 without a mark). */
static size_t pk_base(const struct pk *k)
{
	return k->nmarks ? k->marks[k->nmarks - 1] : 0;
}

/* Values above the current base: at least n of them. */
static int pk_need(struct pk *k, size_t n, const char *op)
{
	if (k->nstack < pk_base(k) + n || k->nstack < n)
		return pk_fail(k, "%s on a stack of too few values", op);
	for (size_t i = k->nstack - n; i < k->nstack; i++)
		if (!k->stack[i].v)
			return pk_fail(k, "%s on a GLOBAL that was not called", op);
	return 0;
}

/* The MARK for op: its position, popped from the mark stack. */
static int pk_pop_mark(struct pk *k, const char *op, size_t *at)
{
	if (!k->nmarks)
		return pk_fail(k, "%s without a MARK", op);
	*at = k->marks[--k->nmarks];
	for (size_t i = *at; i < k->nstack; i++)
		if (!k->stack[i].v)
			return pk_fail(k, "%s on a GLOBAL that was not called", op);
	return 0;
}

static void pk_drop(struct pk *k, size_t to)
{
	while (k->nstack > to) {
		struct pk_slot *s = &k->stack[--k->nstack];
		if (s->fresh)
			k->nfresh--; /* slots leave in the order they came */
		json_decref(s->v);
	}
}

/* A tuple (as an array) of the values from position at up. */
static int pk_tuple(struct pk *k, size_t at)
{
	json_t *t = json_array();

	for (size_t i = at; i < k->nstack; i++)
		json_array_append(t, k->stack[i].v);
	pk_drop(k, at);
	return pk_push(k, t, 0);
}

/* Put the values from position from up into the container at position c. */
static int pk_fill(struct pk *k, size_t c, size_t from, int dict, const char *op)
{
	json_t *box = k->stack[c].v;

	if (!k->stack[c].fresh || (dict ? !json_is_object(box) : !json_is_array(box)))
		return pk_fail(k, "%s into something that is not a %s being built", op,
		               dict ? "dict" : "list");
	if (dict && (k->nstack - from) % 2)
		return pk_fail(k, "%s with a key and no value", op);
	for (size_t i = from; i < k->nstack; i += dict ? 2 : 1) {
		json_t *v = k->stack[dict ? i + 1 : i].v;
		char num[24];
		const char *key;

		if (!dict) {
			json_array_append(box, v);
			continue;
		}
		if (json_is_string(k->stack[i].v)) {
			key = json_string_value(k->stack[i].v);
		} else if (json_is_integer(k->stack[i].v)) {
			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			         json_integer_value(k->stack[i].v));
			key = num;
		} else {
			return pk_fail(k, "%s with a key that is neither a string nor an int", op);
		}
		json_object_set(box, key, v);
	}
	pk_drop(k, from);
	return 0;
}

static int pk_memo_put(struct pk *k, uint64_t idx)
{
	if (!k->nstack || !k->stack[k->nstack - 1].v)
		return pk_fail(k, "memo store of nothing");
	if (idx >= PK_MAX_MEMO)
		return pk_fail(k, "memo index %" PRIu64 " past %u", idx, PK_MAX_MEMO);
	if (idx >= k->capmemo) {
		size_t n = k->capmemo ? k->capmemo : 64;
		while (n <= idx)
			n *= 2;
		k->memo = cd_realloc(k->memo, n * sizeof(*k->memo));
		memset(k->memo + k->capmemo, 0, (n - k->capmemo) * sizeof(*k->memo));
		k->capmemo = n;
	}
	if (!k->memo[idx])
		k->nmemo++;
	json_decref(k->memo[idx]);
	k->memo[idx] = json_incref(k->stack[k->nstack - 1].v);
	return 0;
}

static int pk_memo_get(struct pk *k, uint64_t idx)
{
	if (idx >= k->capmemo || !k->memo[idx])
		return pk_fail(k, "memo index %" PRIu64 " never stored", idx);
	/* a container still being built, put elsewhere, could end up inside itself */
	for (size_t i = 0; i < k->nfresh; i++)
		if (k->fresh[i] == k->memo[idx])
			return pk_fail(k, "a container fetched before it was complete: refused");
	return pk_push(k, json_incref(k->memo[idx]), 0);
}

static int pk_string(struct pk *k, size_t lenbytes, const char *op)
{
	const unsigned char *q = pk_take(k, lenbytes, op), *s;
	uint64_t n;

	if (!q)
		return -1;
	n = le(q, lenbytes);
	if (n > (uint64_t)(k->end - k->p))
		return pk_fail(k, "truncated: a %" PRIu64 "-byte string, %zu bytes left", n,
		               (size_t)(k->end - k->p));
	s = pk_take(k, (size_t)n, op);
	return pk_push(k, json_stringn((const char *)s, (size_t)n), 0);
}

/* GLOBAL "module\nname\n": only torch's list builders. */
static int pk_global(struct pk *k)
{
	static const char *const ok[] = {
	    "torch.jit._pickle\nbuild_intlist\n",  "torch.jit._pickle\nbuild_doublelist\n",
	    "torch.jit._pickle\nbuild_boollist\n", "torch.jit._pickle\nbuild_list\n",
	    "torch.jit._pickle\nbuild_strlist\n",
	};
	for (size_t i = 0; i < CD_ARRAY_LEN(ok); i++) {
		size_t n = strlen(ok[i]);
		if ((size_t)(k->end - k->p) >= n && memcmp(k->p, ok[i], n) == 0) {
			k->p += n;
			if (pk_push(k, json_null(), 0) < 0)
				return -1;
			json_decref(k->stack[k->nstack - 1].v);
			k->stack[k->nstack - 1].v = NULL;
			return 0;
		}
	}
	return pk_fail(k, "GLOBAL other than torch's list builders: refused");
}

/* REDUCE: builder, (list,) -> list */
static int pk_reduce(struct pk *k)
{
	json_t *args, *list;

	if (k->nstack < pk_base(k) + 2 || k->nstack < 2 || k->stack[k->nstack - 2].v ||
	    !json_is_array(k->stack[k->nstack - 1].v) ||
	    json_array_size(k->stack[k->nstack - 1].v) != 1)
		return pk_fail(k, "REDUCE other than a list builder on one list");
	args = k->stack[--k->nstack].v;
	list = json_incref(json_array_get(args, 0));
	json_decref(args);
	k->nstack--; /* the builder, a NULL slot */
	return pk_push(k, list, 0);
}

/* One opcode; 1 at STOP, 0 to go on, -1 on failure. */
static int pk_step(struct pk *k)
{
	const unsigned char *q;
	size_t at;
	uint8_t op;

	if (k->p >= k->end)
		return pk_fail(k, "truncated: the pickle ends before its STOP opcode");
	op = *k->p++;
	switch (op) {
	case 0x80: /* PROTO */
		if (!(q = pk_take(k, 1, "PROTO")))
			return -1;
		if (*q < 2 || *q > 5)
			return pk_fail(k, "protocol %u, not 2 to 5", *q);
		return 0;
	case 0x95: /* FRAME: an 8-byte length that only helps buffering */
		return pk_take(k, 8, "FRAME") ? 0 : -1;
	case '.':
		if (k->nstack != 1 || k->nmarks || !k->stack[0].v)
			return pk_fail(k, "STOP with %zu values and %zu marks left", k->nstack,
			               k->nmarks);
		return 1;
	case '(':
		if (k->nmarks == PK_MAX_MARKS)
			return pk_fail(k, "more than %d marks", PK_MAX_MARKS);
		k->marks[k->nmarks++] = k->nstack;
		return 0;
	case '}':
		return pk_push(k, json_object(), 1);
	case ']':
		return pk_push(k, json_array(), 1);
	case ')':
		return pk_push(k, json_array(), 0);
	case 'N':
		return pk_push(k, json_null(), 0);
	case 0x88:
		return pk_push(k, json_true(), 0);
	case 0x89:
		return pk_push(k, json_false(), 0);
	case 'K':
		return (q = pk_take(k, 1, "BININT1")) ? pk_push(k, json_integer(q[0]), 0) : -1;
	case 'M':
		return (q = pk_take(k, 2, "BININT2"))
		           ? pk_push(k, json_integer((json_int_t)le(q, 2)), 0)
		           : -1;
	case 'J':
		return (q = pk_take(k, 4, "BININT"))
		           ? pk_push(k, json_integer((int32_t)(uint32_t)le(q, 4)), 0)
		           : -1;
	case 0x8a: { /* LONG1: n bytes, little-endian two's complement */
		uint64_t v;
		if (!(q = pk_take(k, 1, "LONG1")))
			return -1;
		at = q[0];
		if (at > 8)
			return pk_fail(k, "an int of %zu bytes, more than 64 bits", at);
		if (!(q = pk_take(k, at, "LONG1")))
			return -1;
		v = le(q, at);
		if (at && at < 8 && (q[at - 1] & 0x80))
			v |= ~(uint64_t)0 << (8 * at);
		return pk_push(k, json_integer((json_int_t)v), 0);
	}
	case 'G': { /* BINFLOAT: big-endian double */
		uint64_t b = 0;
		double d;
		if (!(q = pk_take(k, 8, "BINFLOAT")))
			return -1;
		for (int i = 0; i < 8; i++)
			b = b << 8 | q[i];
		memcpy(&d, &b, sizeof(d));
		return pk_push(k, json_real(d), 0);
	}
	case 'X':
		return pk_string(k, 4, "BINUNICODE");
	case 0x8c:
		return pk_string(k, 1, "SHORT_BINUNICODE");
	case 0x8d:
		return pk_string(k, 8, "BINUNICODE8");
	case 'q':
		return (q = pk_take(k, 1, "BINPUT")) ? pk_memo_put(k, q[0]) : -1;
	case 'r':
		return (q = pk_take(k, 4, "LONG_BINPUT")) ? pk_memo_put(k, le(q, 4)) : -1;
	case 0x94: /* MEMOIZE: at the next index, the count stored so far */
		return pk_memo_put(k, k->nmemo);
	case 'h':
		return (q = pk_take(k, 1, "BINGET")) ? pk_memo_get(k, q[0]) : -1;
	case 'j':
		return (q = pk_take(k, 4, "LONG_BINGET")) ? pk_memo_get(k, le(q, 4)) : -1;
	case 0x85:
	case 0x86:
	case 0x87:
		if (pk_need(k, (size_t)(op - 0x84), "TUPLEn") < 0)
			return -1;
		return pk_tuple(k, k->nstack - (size_t)(op - 0x84));
	case 't':
		return pk_pop_mark(k, "TUPLE", &at) < 0 ? -1 : pk_tuple(k, at);
	case 'a':
		if (pk_need(k, 2, "APPEND") < 0)
			return -1;
		return pk_fill(k, k->nstack - 2, k->nstack - 1, 0, "APPEND");
	case 's':
		if (pk_need(k, 3, "SETITEM") < 0)
			return -1;
		return pk_fill(k, k->nstack - 3, k->nstack - 2, 1, "SETITEM");
	case 'e':
	case 'u':
		if (pk_pop_mark(k, op == 'e' ? "APPENDS" : "SETITEMS", &at) < 0)
			return -1;
		if (at == 0 || at - 1 < pk_base(k) || !k->stack[at - 1].v)
			return pk_fail(k, "%s with no container below its MARK",
			               op == 'e' ? "APPENDS" : "SETITEMS");
		return pk_fill(k, at - 1, at, op == 'u', op == 'e' ? "APPENDS" : "SETITEMS");
	case '0':
		if (pk_need(k, 1, "POP") < 0)
			return -1;
		pk_drop(k, k->nstack - 1);
		return 0;
	case 'c':
		return pk_global(k);
	case 'R':
		return pk_reduce(k);
	default:
		k->p--;
		return pk_fail(k, "opcode 0x%02x is not one a Flight Recorder dump holds: refused",
		               op);
	}
}

json_t *hang_fr_pickle_load(const unsigned char *data, size_t len, char *err, size_t errlen)
{
	struct pk k = {.p = data, .end = data + len, .start = data, .err = err, .errlen = errlen};
	json_t *out = NULL;
	int r;

	if (err && errlen)
		err[0] = '\0';
	while ((r = pk_step(&k)) == 0)
		;
	if (r == 1)
		out = json_incref(k.stack[0].v);
	pk_drop(&k, 0);
	free(k.stack);
	for (size_t i = 0; i < k.capmemo; i++)
		json_decref(k.memo[i]);
	free(k.memo);
	free(k.fresh);
	return out;
}
