/* SPDX-License-Identifier: MIT */
/*
 * mlp.h - the MNIST model the agent trains: PyTorch's
 *     nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10),
 *                   nn.LogSoftmax(dim=1))
 * with NLLLoss (softmax cross-entropy) and SGD with momentum, in float32.
 * Pure computation: no threads, no allocation after mlp_init, no libm (exp
 * and log are our own, so the agent links libc only and every machine
 * computes the same). Agent side.
 *
 * Determinism: everything here is a fixed sequence of IEEE float operations
 * (no threads, no runtime dispatch on the CPU), so one build gives
 * bit-identical results for the same parameters and inputs on every
 * machine. The initial parameters depend only on the seed.
 *
 * Parameter layout (params, grad and velocity alike; nparams floats):
 *     w1[k * MLP_HIDDEN + j]  input k -> hidden j   (MLP_IN x MLP_HIDDEN)
 *     b1[j]                                          (MLP_HIDDEN)
 *     w2[j * MLP_OUT + o]     hidden j -> output o   (MLP_HIDDEN x MLP_OUT)
 *     b2[o]                                          (MLP_OUT)
 * that is, PyTorch's weight matrices transposed (input-major), so that the
 * inner loops of the matrix products run over contiguous outputs.
 */
#ifndef CD_COLLECTIVES_MLP_H
#define CD_COLLECTIVES_MLP_H

#include <stddef.h>
#include <stdint.h>

#define MLP_IN        784
#define MLP_HIDDEN    256
#define MLP_OUT       10
#define MLP_NPARAMS   (MLP_IN * MLP_HIDDEN + MLP_HIDDEN + MLP_HIDDEN * MLP_OUT + MLP_OUT)
#define MLP_MAX_BATCH 4096

/* MNIST's normalization, as torchvision's Normalize((0.1307,), (0.3081,)). */
#define MLP_PIXEL_MEAN 0.1307f
#define MLP_PIXEL_STD  0.3081f

struct mlp {
	float *params;            /* nparams floats, owned */
	float *grad;              /* of the last mlp_forward_backward, owned */
	float *velocity;          /* the momentum buffer, owned, zero after mlp_init */
	size_t nparams;           /* MLP_NPARAMS */
	float *w1, *b1, *w2, *b2; /* views into params (layout above) */
	int max_batch;

	/* scratch for one batch, owned */
	float *hidden; /* max_batch x MLP_HIDDEN: ReLU output */
	float *dhid;   /* max_batch x MLP_HIDDEN: d loss / d pre-activation */
	float *logits; /* max_batch x MLP_OUT; after backward: d loss / d logit */
};

/*
 * Allocate the model for batches of up to max_batch rows (1..MLP_MAX_BATCH)
 * and initialize it as PyTorch does by default: every weight and bias of a
 * layer uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (1/28 for the first,
 * 1/16 for the second), drawn in layout order from mlp_rng seeded with seed.
 * 0, or CD_ERR_PARSE (bad max_batch) with the message in err. Allocation
 * failure is fatal (cd_malloc). Free with mlp_fini.
 */
int mlp_init(struct mlp *m, uint64_t seed, int max_batch, char *err, size_t errlen);

/* Free what mlp_init allocated; m is zeroed. Safe on a zeroed struct. */
void mlp_fini(struct mlp *m);

/* out[i] = (pixels[i] / 255 - MLP_PIXEL_MEAN) / MLP_PIXEL_STD in float32,
 * exactly as ToTensor + Normalize compute it. */
void mlp_normalize(const uint8_t *pixels, float *out, size_t n);

/*
 * The mean loss over the batch, and m->grad = the gradient of that mean
 * loss with respect to params (overwritten, not accumulated). x: batch rows
 * of MLP_IN normalized floats; y: labels 0..9 (larger labels are a
 * programmer error: cd_fatal). 1 <= batch <= max_batch, else cd_fatal.
 */
float mlp_forward_backward(struct mlp *m, const float *x, const uint8_t *y, int batch);

/*
 * The number of rows whose predicted class equals y. The prediction is the
 * argmax of the logits; ties go to the lowest index (all-equal logits
 * predict 0). 1 <= batch <= max_batch, else cd_fatal.
 */
int mlp_count_correct(struct mlp *m, const float *x, const uint8_t *y, int batch);

/* One SGD step with momentum as torch.optim.SGD computes it (dampening 0,
 * no weight decay): v = momentum * v + grad; params -= lr * v. */
void mlp_sgd_step(struct mlp *m, float lr, float momentum);

/*
 * The deterministic generator behind the initialization and the epoch
 * permutations: xoshiro256** seeded through splitmix64, identical on every
 * machine for a seed.
 */
struct mlp_rng {
	uint64_t s[4];
};

void mlp_rng_seed(struct mlp_rng *r, uint64_t seed);
uint64_t mlp_rng_next(struct mlp_rng *r);
/* Uniform in [0, bound) without bias (bound >= 1). */
uint64_t mlp_rng_below(struct mlp_rng *r, uint64_t bound);

/* exp and log in double without libm, accurate to a few ulp: mlp_exp for
 * any x (0 below -745.2, +inf where the result overflows), mlp_log for x > 0 (and -inf at 0,
 * NaN below). Exposed for the tests. */
double mlp_exp(double x);
double mlp_log(double x);

#endif
