/* SPDX-License-Identifier: MIT */
/*
 * mnist_data.h - the MNIST dataset on the head, for `clusterdoc mnist`.
 *
 * The four IDX files torchvision uses, downloaded (gzip) from a mirror into a
 * cache folder and checked against their MD5s, or taken from a local folder;
 * then inflated, validated (idx.h) and hashed (SHA-256 of the raw bytes, so
 * nodes can check what they were sent). The real files:
 *
 *   file                     MD5 of the .gz                    raw bytes
 *   train-images-idx3-ubyte  f68b3c2dcbeaaa9fbdd348bbdeb94873  47040016
 *   train-labels-idx1-ubyte  d53e105ee54ea40749a09fcbcd1e9432     60008
 *   t10k-images-idx3-ubyte   9fb629c4189551a2d022fa330f9573f3   7840016
 *   t10k-labels-idx1-ubyte   ec29112dd5afa0611ce80d1b7f02629c     10008
 *
 * Error messages name the file and say what to do; the front end adds
 * nothing but maybe a prefix.
 */
#ifndef CD_MNIST_DATA_H
#define CD_MNIST_DATA_H

#include <stddef.h>

#include "idx.h"

struct loop;
struct mnist_prep;

#define MNIST_DEFAULT_URL   "https://ossci-datasets.s3.amazonaws.com/mnist/"
#define MNIST_MAX_RAW_BYTES (64u << 20) /* cap on one inflated or raw file */

enum mnist_file {
	MNIST_TRAIN_IMAGES,
	MNIST_TRAIN_LABELS,
	MNIST_TEST_IMAGES,
	MNIST_TEST_LABELS,
	MNIST_NFILES
};

/* "train-images-idx3-ubyte", ... (without ".gz"); NULL for an unknown f. */
const char *mnist_file_name(enum mnist_file f);

struct mnist_blob {
	unsigned char *raw; /* the IDX file, inflated */
	size_t len;
	char sha256[65];     /* of raw, lowercase hex */
	struct idx_info idx; /* idx.data points into raw */
};

struct mnist_data {
	struct mnist_blob f[MNIST_NFILES];
	size_t ntrain, ntest; /* images (= labels) in each split */
};

/* Zero-initialise, then set what differs. */
struct mnist_data_opts {
	const char *url;       /* mirror base (file URL = base + name + ".gz", a '/' added
	                          when missing); NULL = MNIST_DEFAULT_URL */
	const char *data_dir;  /* use a local copy instead of downloading; NULL = download */
	const char *cache_dir; /* NULL = $XDG_CACHE_HOME/clusterdoc/mnist, or
	                          ~/.cache/clusterdoc/mnist; created 0700 when missing */
	const char *md5_file;  /* NULL, or `md5sum` output ("<32 hex>  <name>.gz" lines)
	                          overriding the MD5s of the files it lists */
	int retries;           /* passed to fetch (fetch.h): 0 = default, < 0 = none */
	int backoff_ms, connect_timeout_ms, stall_timeout_ms; /* 0 = defaults */
};

/* Download progress of file f: got of total bytes (-1 unknown). A cached
 * file reports once with got == total. Must not call mnist_prep_free. */
typedef void (*mnist_progress_cb)(void *arg, enum mnist_file f, long long got, long long total);

/* The end: data_take (the callee owns it; mnist_data_free) and err NULL, or
 * data_take NULL and err the one-line reason (valid during the call). */
typedef void (*mnist_ready_cb)(void *arg, struct mnist_data *data_take, const char *err);

/*
 * Start preparing the dataset on loop (borrowed; it must outlive the prep).
 *
 * Without data_dir: for each file, <cache_dir>/<name>.gz is reused when its
 * MD5 matches; the others are downloaded (all at once, fetch.h) from the
 * mirror into the cache. With data_dir: for each file the first of
 * <dir>/<name>, <dir>/MNIST/raw/<name>, <dir>/<name>.gz,
 * <dir>/MNIST/raw/<name>.gz that exists is used: raw files are only
 * IDX-validated (the MD5s are of the .gz), .gz files are MD5-checked. Every
 * .gz is inflated (at most MNIST_MAX_RAW_BYTES) and IDX-validated, the
 * SHA-256 of each raw file computed, and the image and label counts of each
 * split compared. The work runs on loop turns, one file per turn.
 *
 * Returns the handle, to free with mnist_prep_free after ready ran (or to
 * cancel); ready is then called exactly once, from a loop callback, errors
 * included: the caller's loop must run. Returns NULL with err filled (errlen
 * bytes) when it cannot even start (md5_file unreadable or malformed, no
 * cache folder, libcurl unusable); ready is never called then.
 */
struct mnist_prep *mnist_data_prepare(struct loop *loop, const struct mnist_data_opts *o,
                                      mnist_progress_cb progress, mnist_ready_cb ready, void *arg,
                                      char *err, size_t errlen);

/* Cancel (downloads stop, their .part files are removed, ready is not
 * called) and free. Allowed inside ready. NULL is a no-op. */
void mnist_prep_free(struct mnist_prep *p);

void mnist_data_free(struct mnist_data *d); /* NULL is a no-op */

/*
 * Load the four files from dir synchronously, found as in mnist_data_prepare
 * with data_dir, but without any MD5 check (the caller chose the folder, and
 * synthetic datasets have their own sums). Returns 0 and *out (free with
 * mnist_data_free), or a negative cd_err with err filled.
 */
int mnist_data_load_dir(const char *dir, struct mnist_data **out, char *err, size_t errlen);

/*
 * Write a synthetic MNIST-shaped dataset into dir (which must exist), for
 * tests: n_train and n_test 28x28 uint8 images whose label 0..9 sets where a
 * bright 5x5 block sits (two rows of five places, jittered by a pixel) on a
 * noisy background, all deterministic from seed, so a classifier can learn
 * it. Files are <dir>/<name>.gz when gzip, else <dir>/<name>. Returns 0 or
 * CD_ERR_IO / CD_ERR_TOOBIG (more than 1,000,000 images) with err filled.
 */
int mnist_data_write_synthetic(const char *dir, size_t n_train, size_t n_test, unsigned seed,
                               int gzip, char *err, size_t errlen);

#endif
