/* SPDX-License-Identifier: MIT */
/* train.c - one rank of data-parallel MNIST training (see train.h). */
#include "jobs/train.h"
#include "cd.h"
#include "jobs/mlp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void train_opts_default(struct train_opts *o)
{
	*o = (struct train_opts){
	    .rank = 0,
	    .world = 1,
	    .epochs = 2,
	    .batch = 64,
	    .lr = 0.05f,
	    .momentum = 0.9f,
	    .seed = 1,
	};
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check_opts(const struct train_opts *o, train_allreduce_fn allreduce, char *err,
                      size_t errlen)
{
	if (o->world < 1 || o->world > TRAIN_MAX_WORLD)
		return cd_errf(err, errlen, CD_ERR_PARSE, "world size %d is not in 1..%d", o->world,
		               TRAIN_MAX_WORLD);
	if (o->rank < 0 || o->rank >= o->world)
		return cd_errf(err, errlen, CD_ERR_PARSE, "rank %d is not in 0..%d", o->rank,
		               o->world - 1);
	if (o->epochs < 1 || o->epochs > TRAIN_MAX_EPOCHS)
		return cd_errf(err, errlen, CD_ERR_PARSE, "epochs %d is not in 1..%d", o->epochs,
		               TRAIN_MAX_EPOCHS);
	if (o->batch < 1 || o->batch > MLP_MAX_BATCH)
		return cd_errf(err, errlen, CD_ERR_PARSE, "batch size %d is not in 1..%d", o->batch,
		               MLP_MAX_BATCH);
	/* Written so that NaN fails too. */
	if (!(o->lr > 0.0f && o->lr < __builtin_inff()))
		return cd_errf(err, errlen, CD_ERR_PARSE, "learning rate %g is not positive",
		               (double)o->lr);
	if (!(o->momentum >= 0.0f && o->momentum < 1.0f))
		return cd_errf(err, errlen, CD_ERR_PARSE, "momentum %g is not in [0, 1)",
		               (double)o->momentum);
	if (o->world > 1 && !allreduce)
		return cd_errf(err, errlen, CD_ERR_PARSE, "%d ranks need an allreduce", o->world);
	return 0;
}

static int check_set(const struct train_set *s, const char *name, char *err, size_t errlen)
{
	if (!s || !s->images || !s->labels || s->n < 1)
		return cd_errf(err, errlen, CD_ERR_PARSE, "the %s set is empty", name);
	if (s->n > TRAIN_MAX_SAMPLES)
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "the %s set has %zu samples, more than %d", name, s->n,
		               TRAIN_MAX_SAMPLES);
	for (size_t i = 0; i < s->n; i++)
		if (s->labels[i] >= MLP_OUT)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s sample %zu has label %u, not in 0..%d", name, i,
			               s->labels[i], MLP_OUT - 1);
	return 0;
}

/* The allreduce, with its failure turned into ours: CD_ERR_IO and its
 * message, prefixed with what was being summed. */
static int reduce(train_allreduce_fn allreduce, void *ctx, float *buf, size_t count,
                  const char *what, char *err, size_t errlen)
{
	char msg[CD_ERRLEN] = "";
	int rc = allreduce(ctx, buf, count, msg, sizeof(msg));

	if (rc == 0)
		return 0;
	return cd_errf(err, errlen, CD_ERR_IO, "allreduce of %s failed: %s", what, msg);
}

/* perm = a permutation of 0..n-1 drawn from (seed, epoch) by Fisher-Yates;
 * the same on every rank. The multiplier keeps these streams apart from
 * the one mlp_init draws from seed. */
static void shuffle(uint32_t *perm, size_t n, uint64_t seed, int epoch)
{
	struct mlp_rng r;

	mlp_rng_seed(&r, seed ^ (0xd1b54a32d192ed03ull * (uint64_t)epoch));
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)mlp_rng_below(&r, i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Normalize sample idx of s into row i of x, its label into y[i]. */
static void load_sample(const struct train_set *s, size_t idx, float *x, uint8_t *y, int i)
{
	mlp_normalize(s->images + idx * MLP_IN, x + (size_t)i * MLP_IN, MLP_IN);
	y[i] = s->labels[idx];
}

struct rank {
	const struct train_opts *o;
	train_allreduce_fn allreduce;
	void *ctx;
	struct mlp m;
	float *x;       /* batch x MLP_IN */
	uint8_t *y;     /* batch */
	uint32_t *perm; /* train->n */
};

/* One epoch; *loss = the mean loss over all ranks' samples. */
static int run_epoch(struct rank *k, const struct train_set *train, int epoch, double *loss,
                     char *err, size_t errlen)
{
	const struct train_opts *o = k->o;
	size_t per = (train->n + (size_t)o->world - 1) / (size_t)o->world;
	double sum = 0.0;
	float total[2];
	int rc;

	shuffle(k->perm, train->n, o->seed, epoch);
	for (size_t start = 0; start < per; start += (size_t)o->batch) {
		int bs = per - start < (size_t)o->batch ? (int)(per - start) : o->batch;

		for (int i = 0; i < bs; i++) {
			/* position in the padded permutation; past n it wraps */
			size_t pos = (size_t)o->rank + (start + (size_t)i) * (size_t)o->world;

			load_sample(train, k->perm[pos % train->n], k->x, k->y, i);
		}
		sum += (double)mlp_forward_backward(&k->m, k->x, k->y, bs) * bs;
		if (o->world > 1) {
			rc = reduce(k->allreduce, k->ctx, k->m.grad, k->m.nparams, "the gradient",
			            err, errlen);
			if (rc < 0)
				return rc;
			for (size_t i = 0; i < k->m.nparams; i++)
				k->m.grad[i] /= (float)o->world;
		}
		mlp_sgd_step(&k->m, o->lr, o->momentum);
	}

	total[0] = (float)sum;
	total[1] = (float)per;
	if (o->world > 1) {
		rc = reduce(k->allreduce, k->ctx, total, 2, "the epoch loss", err, errlen);
		if (rc < 0)
			return rc;
	}
	*loss = (double)total[0] / (double)total[1];
	return 0;
}

/* Count correct predictions on this rank's shard of test, summed over all
 * ranks into res. */
static int evaluate(struct rank *k, const struct train_set *test, struct train_result *res,
                    char *err, size_t errlen)
{
	const struct train_opts *o = k->o;
	size_t mine = test->n > (size_t)o->rank
	                  ? (test->n - (size_t)o->rank + (size_t)o->world - 1) / (size_t)o->world
	                  : 0;
	float count[2] = {0.0f, (float)mine};
	long long correct = 0;
	int rc;

	for (size_t start = 0; start < mine; start += (size_t)o->batch) {
		int bs = mine - start < (size_t)o->batch ? (int)(mine - start) : o->batch;

		for (int i = 0; i < bs; i++)
			load_sample(test, (size_t)o->rank + (start + (size_t)i) * (size_t)o->world,
			            k->x, k->y, i);
		correct += mlp_count_correct(&k->m, k->x, k->y, bs);
	}
	count[0] = (float)correct;
	if (o->world > 1) {
		rc = reduce(k->allreduce, k->ctx, count, 2, "the test counts", err, errlen);
		if (rc < 0)
			return rc;
	}
	res->test_correct = (long long)count[0];
	res->test_total = (long long)count[1];
	res->test_accuracy = res->test_total ? (double)res->test_correct / res->test_total : 0.0;
	return 0;
}

static void hash_params(const struct mlp *m, char hex[SHA256_HEX_LEN])
{
	struct sha256 s;
	unsigned char digest[32];

	sha256_init(&s);
	sha256_update(&s, m->params, m->nparams * sizeof(float));
	sha256_final(&s, digest);
	sha256_hex(digest, hex);
}

int train_run(const struct train_opts *o, const struct train_set *train,
              const struct train_set *test, train_allreduce_fn allreduce, train_epoch_fn on_epoch,
              void *ctx, struct train_result *res, char *err, size_t errlen)
{
	struct rank k = {.o = o, .allreduce = allreduce, .ctx = ctx};
	int rc;

	memset(res, 0, sizeof(*res));
	if ((rc = check_opts(o, allreduce, err, errlen)) < 0 ||
	    (rc = check_set(train, "training", err, errlen)) < 0 ||
	    (rc = check_set(test, "test", err, errlen)) < 0)
		return rc;
	if ((rc = mlp_init(&k.m, o->seed, o->batch, err, errlen)) < 0)
		return rc;
	k.x = cd_malloc((size_t)o->batch * MLP_IN * sizeof(float));
	k.y = cd_malloc((size_t)o->batch);
	k.perm = cd_malloc(train->n * sizeof(uint32_t));

	for (int epoch = 1; epoch <= o->epochs; epoch++) {
		double t0 = now_seconds(), loss, seconds;
		float stop = 0.0f;

		if ((rc = run_epoch(&k, train, epoch, &loss, err, errlen)) < 0)
			goto out;
		seconds = now_seconds() - t0;
		res->loss[epoch - 1] = loss;
		res->epoch_seconds[epoch - 1] = seconds;
		res->epochs_done = epoch;
		if (on_epoch && on_epoch(ctx, epoch, loss, seconds))
			stop = 1.0f;
		/* Agree on stopping, so that no rank is left alone in an allreduce. */
		if (o->world > 1 &&
		    (rc = reduce(allreduce, ctx, &stop, 1, "the stop flags", err, errlen)) < 0)
			goto out;
		if (stop > 0.0f)
			break;
	}
	if ((rc = evaluate(&k, test, res, err, errlen)) < 0)
		goto out;
	hash_params(&k.m, res->param_sha256);
	rc = 0;
out:
	free(k.x);
	free(k.y);
	free(k.perm);
	mlp_fini(&k.m);
	return rc;
}
