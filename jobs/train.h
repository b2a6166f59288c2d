/* SPDX-License-Identifier: MIT */
/*
 * train.h - one rank of data-parallel training of the MNIST model (mlp.h),
 * as PyTorch's DistributedDataParallel with a DistributedSampler would run
 * it. The caller runs one train_run per rank (a thread or a process each)
 * and supplies the allreduce (the TCP ring, or an in-process one in tests).
 * Agent side; libc only; no global state.
 *
 * Every rank starts from the same parameters (mlp_init with the seed) and
 * applies the same averaged gradient at every step, so the parameters stay
 * bit-identical on all ranks as long as the allreduce gives every rank the
 * same sum. param_sha256 lets the caller check that.
 *
 * Lockstep: every rank takes exactly the same number of steps and calls the
 * allreduce the same number of times with the same counts; see train_run.
 */
#ifndef CD_COLLECTIVES_TRAIN_H
#define CD_COLLECTIVES_TRAIN_H

#include "sha256.h"

#include <stddef.h>
#include <stdint.h>

#define TRAIN_MAX_EPOCHS 100
#define TRAIN_MAX_WORLD  4096
/* Sample counts are summed over ranks in float, exact below 2^24. */
#define TRAIN_MAX_SAMPLES (1 << 23)

struct train_set {
	const uint8_t *images; /* n x 784 pixels, row-major, borrowed */
	const uint8_t *labels; /* n labels 0..9, borrowed */
	size_t n;              /* 1 .. TRAIN_MAX_SAMPLES */
};

struct train_opts {
	int rank, world; /* 0 <= rank < world <= TRAIN_MAX_WORLD */
	int epochs;      /* 1 .. TRAIN_MAX_EPOCHS */
	int batch;       /* per rank, 1 .. MLP_MAX_BATCH */
	float lr;        /* > 0 */
	float momentum;  /* 0 <= momentum < 1 */
	uint64_t seed;   /* the initial parameters and the epoch permutations */
};

/*
 * The defaults: rank 0 of 1, 2 epochs, batch 64 per rank, lr 0.05,
 * momentum 0.9, seed 1. Measured on real MNIST with 2 ranks (global batch
 * 128, two threads of a 2-core VM): 97.5% test accuracy after 2 epochs,
 * about 2 s per epoch.
 */
void train_opts_default(struct train_opts *o);

/*
 * Sum buf[0 .. count) over all ranks, in place; every rank must get the
 * same result, bit for bit. 0, or -1 with the message in err.
 */
typedef int (*train_allreduce_fn)(void *ctx, float *buf, size_t count, char *err, size_t errlen);

/*
 * Called on every rank after each epoch with that epoch's mean training
 * loss over all ranks' samples (identical on every rank) and the epoch's
 * wall-clock seconds on this rank. Non-zero stops training after this epoch
 * on every rank: with world > 1 the ranks' answers are summed by one more
 * allreduce, so a stop asked by any rank stops them all at the same epoch.
 */
typedef int (*train_epoch_fn)(void *ctx, int epoch /* 1-based */, double loss, double seconds);

struct train_result {
	int epochs_done;                        /* < opts.epochs when on_epoch stopped it */
	double loss[TRAIN_MAX_EPOCHS];          /* [0 .. epochs_done) */
	double epoch_seconds[TRAIN_MAX_EPOCHS]; /* this rank's */
	long long test_correct, test_total;     /* over all ranks */
	double test_accuracy;                   /* test_correct / test_total */
	char param_sha256[SHA256_HEX_LEN];      /* of the final params' bytes
	                                           (float32, host byte order) */
};

/*
 * Train on train for o->epochs epochs, then evaluate on test; this is rank
 * o->rank of o->world. Every rank must be given the same options (but its
 * own rank), the same data and an allreduce joining the same ranks.
 *
 * Sampling (as DistributedSampler, drop_last false): each epoch a
 * permutation of 0..n-1 drawn from (seed, epoch), the same on every rank,
 * padded to a multiple of world by wrapping around; rank r takes positions
 * r, r + world, r + 2 world, ... So every rank has ceil(n / world) samples
 * per epoch, in batches of o->batch with a smaller last one (the same size
 * on every rank).
 *
 * Step: forward and backward on the local batch (gradient = mean over the
 * batch), allreduce of the gradient (MLP_NPARAMS floats) divided by world,
 * SGD with momentum. Then per epoch an allreduce of [loss sum, samples] for
 * the mean loss, on_epoch (may be NULL), and with world > 1 an allreduce of
 * the stop flags. Finally each rank counts the correct predictions on its
 * shard of test (positions r, r + world, ..., no padding) and one allreduce
 * of [correct, total] gives the accuracy. With world == 1 allreduce is never
 * called and may be NULL.
 *
 * Returns 0 with *res filled in, or a negative enum cd_err with the message
 * in err: CD_ERR_PARSE for invalid options or data (a label above 9), or
 * CD_ERR_IO when an allreduce failed (its message included), which ends the
 * run on this rank; the others then fail in their own allreduce, so the
 * caller's allreduce must not wait forever for a rank that has left. After
 * an error res->epochs_done and loss[] still tell the epochs completed.
 * Invalid options or data are found before the first allreduce, so ranks
 * given the same arguments fail alike. Allocation failure is fatal.
 */
int train_run(const struct train_opts *o, const struct train_set *train,
              const struct train_set *test, train_allreduce_fn allreduce, train_epoch_fn on_epoch,
              void *ctx, struct train_result *res, char *err, size_t errlen);

#endif
