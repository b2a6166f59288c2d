/* SPDX-License-Identifier: MIT */
/* fuzz_idx.c - libFuzzer harness for the MNIST IDX parser: any bytes, read
 * as images and as labels, either parse to a result that accounts for every
 * byte, or fail with a parse error and a message. */
#include <stdint.h>
#include <stdlib.h>

#include "cd.h"
#include "idx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum idx_kind kinds[] = {IDX_IMAGES, IDX_LABELS};

	for (size_t k = 0; k < CD_ARRAY_LEN(kinds); k++) {
		size_t each = kinds[k] == IDX_IMAGES ? IDX_MNIST_SIDE * IDX_MNIST_SIDE : 1;
		char err[CD_ERRLEN] = "";
		struct idx_info info;
		unsigned sum = 0;
		int rc = idx_parse_mnist(data, size, kinds[k], &info, err, sizeof(err));

		if (rc) {
			if (rc != CD_ERR_PARSE || !err[0])
				abort();
			continue;
		}
		if (info.type != IDX_TYPE_U8 || info.data != data + info.header_bytes ||
		    info.count != info.dims[0] || info.header_bytes + info.count * each != size)
			abort();
		/* Read every element, so ASan sees any that lies outside. */
		for (size_t i = 0; i < info.count * each; i++)
			sum += info.data[i];
		if (kinds[k] == IDX_LABELS && sum > 9 * info.count)
			abort();
	}
	return 0;
}
