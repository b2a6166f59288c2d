/* SPDX-License-Identifier: MIT */
/*
 * idx.h - a pure parser for the IDX files of the MNIST dataset.
 *
 * IDX: a 4-byte magic (two zero bytes, the element type, the number of
 * dimensions), one big-endian uint32 size per dimension, then the elements in
 * row-major order. MNIST uses two shapes, both of uint8:
 *   images  magic 0x00000803, dims N x 28 x 28
 *   labels  magic 0x00000801, dims N, every label 0..9
 * No I/O and no allocation: the result points into the caller's buffer.
 */
#ifndef CD_IDX_H
#define CD_IDX_H

#include <stddef.h>
#include <stdint.h>

/* IDX element type codes (byte 2 of the magic). */
#define IDX_TYPE_U8  0x08
#define IDX_TYPE_I8  0x09
#define IDX_TYPE_I16 0x0B
#define IDX_TYPE_I32 0x0C
#define IDX_TYPE_F32 0x0D
#define IDX_TYPE_F64 0x0E

#define IDX_MNIST_SIDE 28 /* images are 28 x 28 pixels */

enum idx_kind { IDX_IMAGES, IDX_LABELS };

struct idx_info {
	int type;                  /* IDX_TYPE_U8 for MNIST */
	int ndim;                  /* 3 for images, 1 for labels */
	uint32_t dims[3];          /* dims[0] = count; unused ones are 0 */
	size_t header_bytes;       /* 4 + 4 * ndim */
	size_t count;              /* dims[0]: images or labels */
	const unsigned char *data; /* the first element, inside the parsed buffer */
};

/*
 * Parse and validate p[0..len) as an MNIST images or labels file (kind): the
 * magic, element type uint8, the number of dimensions (3, with 28 x 28
 * images; or 1), and a length of exactly header + product of the dims. For
 * labels, every value must be 0..9. Hostile sizes (0xffffffff...) are
 * computed without overflow.
 *
 * Returns 0 and fills *out (out->data points into p, valid as long as p), or
 * CD_ERR_PARSE with a one-line message in err (errlen bytes, may be NULL)
 * that says what is wrong, e.g. "truncated: 100 bytes, expected 47040016",
 * "12 trailing bytes after 60000 labels", "label 10 at index 3 is not
 * 0..9". The message does not name the file: the caller adds that. *out is
 * unspecified on error.
 */
int idx_parse_mnist(const unsigned char *p, size_t len, enum idx_kind kind, struct idx_info *out,
                    char *err, size_t errlen);

#endif
