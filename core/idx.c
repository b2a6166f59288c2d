/* SPDX-License-Identifier: MIT */
/* idx.c - validating parser for MNIST IDX files (see idx.h). */
#include "idx.h"
#include "cd.h"

#include <inttypes.h>
#include <string.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int idx_parse_mnist(const unsigned char *p, size_t len, enum idx_kind kind, struct idx_info *out,
                    char *err, size_t errlen)
{
	int want_ndim = kind == IDX_IMAGES ? 3 : 1;
	const char *what = kind == IDX_IMAGES ? "images" : "labels";
	uint64_t elems, want;

	memset(out, 0, sizeof(*out));
	if (len < 4)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "truncated: %zu bytes, expected at least 4 (the IDX magic)", len);
	if (p[0] != 0 || p[1] != 0)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "not an IDX file: magic 0x%08" PRIx32
		               ", expected 0x%08x for MNIST %s",
		               be32(p), IDX_TYPE_U8 << 8 | want_ndim, what);
	out->type = p[2];
	out->ndim = p[3];
	if (out->type != IDX_TYPE_U8)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "IDX element type 0x%02x, expected 0x%02x (uint8) for MNIST %s",
		               out->type, IDX_TYPE_U8, what);
	if (out->ndim != want_ndim)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%d dimensions, expected %d for MNIST %s (magic 0x%08x)", out->ndim,
		               want_ndim, what, IDX_TYPE_U8 << 8 | want_ndim);
	out->header_bytes = 4 + 4 * (size_t)out->ndim;
	if (len < out->header_bytes)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "truncated: %zu bytes, expected at least %zu (the IDX header)", len,
		               out->header_bytes);
	for (int i = 0; i < out->ndim; i++)
		out->dims[i] = be32(p + 4 + 4 * i);
	/* The image sides are checked to be 28 before they multiply, so the
	 * element count stays below 2^32 * 784 < 2^42: no overflow in 64 bits. */
	elems = out->dims[0];
	if (kind == IDX_IMAGES) {
		if (out->dims[1] != IDX_MNIST_SIDE || out->dims[2] != IDX_MNIST_SIDE)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "images of %" PRIu32 "x%" PRIu32 " pixels, expected %dx%d",
			               out->dims[1], out->dims[2], IDX_MNIST_SIDE, IDX_MNIST_SIDE);
		elems *= IDX_MNIST_SIDE * IDX_MNIST_SIDE;
	}
	out->count = out->dims[0];
	want = out->header_bytes + elems;
	if ((uint64_t)len < want)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "truncated: %zu bytes, expected %" PRIu64 " for %" PRIu32 " %s", len,
		               want, out->dims[0], what);
	if ((uint64_t)len > want)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "%" PRIu64 " trailing bytes after %" PRIu32 " %s",
		               (uint64_t)len - want, out->dims[0], what);
	out->data = p + out->header_bytes;
	if (kind == IDX_LABELS) {
		for (size_t i = 0; i < out->count; i++)
			if (out->data[i] > 9)
				return cd_errf(err, errlen, CD_ERR_PARSE,
				               "label %u at index %zu is not 0..9", out->data[i],
				               i);
	}
	return 0;
}
