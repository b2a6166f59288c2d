/* SPDX-License-Identifier: MIT */
/*
 * test_train.c - the MNIST model (initialization, gradient, loss, argmax
 * ties, SGD with momentum, libm-free exp/log) and data-parallel training:
 * learning a synthetic task, identical parameters on every rank, agreement
 * with one rank at the global batch, failures and cancellation that end
 * every rank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cd.h"
#include "jobs/mlp.h"
#include "jobs/train.h"

static double absd(double x)
{
	return x < 0 ? -x : x;
}

/* --- a learnable synthetic data set ----------------------------------------
 *
 * Noise 0..47 everywhere, and a bright 6x6 block in the 7x7 cell of a 4x4
 * grid that the label picks (cells 0..9), shifted by 0 or 1 pixel.
 */
struct dataset {
	struct train_set set;
	uint8_t *images, *labels;
};

static void dataset_make(struct dataset *d, size_t n, uint64_t seed)
{
	struct mlp_rng r;

	mlp_rng_seed(&r, seed);
	d->images = malloc(n * MLP_IN);
	d->labels = malloc(n);
	assert_non_null(d->images);
	assert_non_null(d->labels);
	for (size_t i = 0; i < n; i++) {
		uint8_t *img = d->images + i * MLP_IN;
		int label = (int)mlp_rng_below(&r, 10);
		int row = label / 4 * 7 + (int)mlp_rng_below(&r, 2);
		int col = label % 4 * 7 + (int)mlp_rng_below(&r, 2);

		for (int p = 0; p < MLP_IN; p++)
			img[p] = (uint8_t)mlp_rng_below(&r, 48);
		for (int y = row; y < row + 6; y++)
			for (int x = col; x < col + 6; x++)
				img[y * 28 + x] = (uint8_t)(160 + mlp_rng_below(&r, 96));
		d->labels[i] = (uint8_t)label;
	}
	d->set = (struct train_set){.images = d->images, .labels = d->labels, .n = n};
}

static void dataset_free(struct dataset *d)
{
	free(d->images);
	free(d->labels);
}

/* --- ranks as threads, with an in-process allreduce -------------------------
 *
 * Each rank publishes its buffer, waits for all, sums every rank's buffer
 * in rank order into its own scratch (so every rank gets the same bits),
 * waits again (nobody overwrites a buffer still being read), then copies
 * the sum back. A rank can be told to fail at its k-th call; it raises a
 * shared flag that ends every wait, so no test can hang; waits also give up
 * after 20 s.
 */
#define MAX_RANKS 3

struct group;

struct member {
	struct group *g;
	int rank;
	struct train_opts o;
	int calls;         /* allreduce calls made */
	int fail_at;       /* 0, or fail at this call */
	int stop_at_epoch; /* 0, or on_epoch asks to stop at this epoch */
	float *scratch;
	/* results */
	int rc;
	char err[CD_ERRLEN];
	struct train_result res;
	double seen_loss[TRAIN_MAX_EPOCHS]; /* what on_epoch was given */
};

struct group {
	int n;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int arrived;
	unsigned generation;
	int failed;
	float *bufs[MAX_RANKS];
	const struct train_set *train, *test;
	struct member m[MAX_RANKS];
};

/* Called with the lock held. 0 once all ranks have arrived, -1 when a rank
 * failed or 20 s passed. */
static int group_wait(struct group *g)
{
	unsigned gen = g->generation;
	struct timespec deadline;

	if (++g->arrived == g->n) {
		g->arrived = 0;
		g->generation++;
		pthread_cond_broadcast(&g->cond);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 20;
	while (g->generation == gen && !g->failed)
		if (pthread_cond_timedwait(&g->cond, &g->lock, &deadline) != 0)
			break;
	if (g->generation != gen)
		return 0;
	g->failed = 1;
	pthread_cond_broadcast(&g->cond);
	return -1;
}

static int group_allreduce(void *ctx, float *buf, size_t count, char *err, size_t errlen)
{
	struct member *me = ctx;
	struct group *g = me->g;
	int rc = -1;

	pthread_mutex_lock(&g->lock);
	if (++me->calls == me->fail_at) {
		g->failed = 1;
		pthread_cond_broadcast(&g->cond);
		cd_errf(err, errlen, -1, "injected failure at call %d", me->calls);
		goto out;
	}
	g->bufs[me->rank] = buf;
	if (group_wait(g) < 0)
		goto fail;
	pthread_mutex_unlock(&g->lock);
	for (size_t i = 0; i < count; i++) {
		float s = g->bufs[0][i];

		for (int r = 1; r < g->n; r++)
			s += g->bufs[r][i];
		me->scratch[i] = s;
	}
	pthread_mutex_lock(&g->lock);
	if (group_wait(g) < 0)
		goto fail;
	memcpy(buf, me->scratch, count * sizeof(float));
	rc = 0;
	goto out;
fail:
	cd_errf(err, errlen, -1, "a peer failed");
out:
	pthread_mutex_unlock(&g->lock);
	return rc;
}

static int member_on_epoch(void *ctx, int epoch, double loss, double seconds)
{
	struct member *me = ctx;

	me->seen_loss[epoch - 1] = loss;
	return epoch == me->stop_at_epoch;
}

static void *member_main(void *arg)
{
	struct member *me = arg;

	me->rc = train_run(&me->o, me->g->train, me->g->test, group_allreduce, member_on_epoch, me,
	                   &me->res, me->err, sizeof(me->err));
	return NULL;
}

/* n ranks with options o (rank and world set here), ready to run. */
static void group_init(struct group *g, int n, const struct train_opts *o,
                       const struct train_set *train, const struct train_set *test)
{
	memset(g, 0, sizeof(*g));
	g->n = n;
	g->train = train;
	g->test = test;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	for (int r = 0; r < n; r++) {
		g->m[r].g = g;
		g->m[r].rank = r;
		g->m[r].o = *o;
		g->m[r].o.rank = r;
		g->m[r].o.world = n;
		g->m[r].scratch = malloc(MLP_NPARAMS * sizeof(float));
		assert_non_null(g->m[r].scratch);
	}
}

static void group_run(struct group *g)
{
	pthread_t t[MAX_RANKS];

	for (int r = 0; r < g->n; r++)
		assert_int_equal(pthread_create(&t[r], NULL, member_main, &g->m[r]), 0);
	for (int r = 0; r < g->n; r++)
		pthread_join(t[r], NULL);
}

static void group_fini(struct group *g)
{
	for (int r = 0; r < g->n; r++)
		free(g->m[r].scratch);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
}

/* The allreduce calls a rank makes: per epoch one per step, the loss and
 * the stop flags; then the test counts. */
static int expected_calls(size_t n, int world, int batch, int epochs)
{
	size_t per = (n + (size_t)world - 1) / (size_t)world;
	size_t steps = (per + (size_t)batch - 1) / (size_t)batch;

	return epochs * (int)(steps + 2) + 1;
}

/* --- the model -------------------------------------------------------------- */

static void mlp_init_is_deterministic_for_a_seed(void **state)
{
	struct mlp a, b;
	char err[CD_ERRLEN];

	assert_int_equal(mlp_init(&a, 42, 8, err, sizeof(err)), 0);
	assert_int_equal(mlp_init(&b, 42, 8, err, sizeof(err)), 0);
	assert_int_equal(a.nparams, MLP_NPARAMS);
	assert_memory_equal(a.params, b.params, a.nparams * sizeof(float));
	mlp_fini(&a);
	mlp_fini(&b);
}

static void mlp_init_differs_between_seeds(void **state)
{
	struct mlp a, b;
	char err[CD_ERRLEN];
	size_t same = 0;

	assert_int_equal(mlp_init(&a, 1, 8, err, sizeof(err)), 0);
	assert_int_equal(mlp_init(&b, 2, 8, err, sizeof(err)), 0);
	for (size_t i = 0; i < a.nparams; i++)
		same += a.params[i] == b.params[i];
	assert_true(same < a.nparams / 1000);
	mlp_fini(&a);
	mlp_fini(&b);
}

/* Every value of a layer within +-1/sqrt(fan_in), the range filled (the
 * extremes near the bounds, the mean near 0). */
static void check_uniform(const float *p, size_t n, float bound)
{
	float lo = 0, hi = 0;
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		assert_true(p[i] >= -bound && p[i] <= bound);
		lo = p[i] < lo ? p[i] : lo;
		hi = p[i] > hi ? p[i] : hi;
		sum += p[i];
	}
	if (n >= 1000) {
		assert_true(lo < -0.99f * bound && hi > 0.99f * bound);
		/* |mean| within 5 standard deviations, 0.58 bound / sqrt(n) */
		assert_true((sum / n) * (sum / n) * n < 9.0 * bound * bound);
	}
}

static void mlp_init_is_uniform_within_one_over_sqrt_fan_in(void **state)
{
	struct mlp m;
	char err[CD_ERRLEN];

	assert_int_equal(mlp_init(&m, 7, 8, err, sizeof(err)), 0);
	check_uniform(m.w1, MLP_IN * MLP_HIDDEN, 1.0f / 28); /* 1/sqrt(784) */
	check_uniform(m.b1, MLP_HIDDEN, 1.0f / 28);
	check_uniform(m.w2, MLP_HIDDEN * MLP_OUT, 1.0f / 16); /* 1/sqrt(256) */
	check_uniform(m.b2, MLP_OUT, 1.0f / 16);
	for (size_t i = 0; i < m.nparams; i++)
		assert_true(m.velocity[i] == 0.0f);
	mlp_fini(&m);
}

static void mlp_init_rejects_a_bad_batch_size(void **state)
{
	struct mlp m;
	char err[CD_ERRLEN];

	assert_int_equal(mlp_init(&m, 1, 0, err, sizeof(err)), CD_ERR_PARSE);
	assert_non_null(strstr(err, "batch size 0"));
	assert_int_equal(mlp_init(&m, 1, MLP_MAX_BATCH + 1, err, sizeof(err)), CD_ERR_PARSE);
}

static void mlp_exp_and_log_match_known_values(void **state)
{
	assert_true(mlp_exp(0) == 1.0);
	assert_true(absd(mlp_exp(-1) - 0.36787944117144233) < 1e-16);
	assert_true(absd(mlp_exp(1) / 2.718281828459045 - 1) < 4e-16);
	assert_true(absd(mlp_exp(-100) / 3.720075976020836e-44 - 1) < 4e-16);
	assert_true(mlp_exp(-800) == 0.0);
	assert_true(mlp_log(1) == 0.0);
	assert_true(absd(mlp_log(10) - 2.302585092994046) < 4e-16);
	assert_true(absd(mlp_log(0.5) + 0.6931471805599453) < 2e-16);
	assert_true(absd(mlp_log(1e-300) + 690.7755278982137) < 1e-12);
	for (double x = -30; x < 30; x += 0.37)
		assert_true(absd(mlp_log(mlp_exp(x)) - x) < 1e-14 * (1 + absd(x)));
}

static void mlp_normalize_matches_torchvision(void **state)
{
	const uint8_t px[3] = {0, 128, 255};
	float out[3];

	mlp_normalize(px, out, 3);
	assert_true(out[0] == (0.0f - 0.1307f) / 0.3081f);
	assert_true(out[1] == (128.0f / 255.0f - 0.1307f) / 0.3081f);
	assert_true(out[2] == (1.0f - 0.1307f) / 0.3081f);
}

/* The mean loss computed in double from float parameters p (layout of
 * mlp.h), with parameter i moved by delta. */
static double reference_loss(const float *p, size_t i, double delta, const float *x,
                             const uint8_t *y, int batch)
{
	const float *w1 = p, *b1 = w1 + MLP_IN * MLP_HIDDEN, *w2 = b1 + MLP_HIDDEN,
	            *b2 = w2 + MLP_HIDDEN * MLP_OUT;
	double loss = 0;

#define P(ptr, k) ((double)(ptr)[k] + ((size_t)(&(ptr)[k] - p) == i ? delta : 0.0))
	for (int b = 0; b < batch; b++) {
		double h[MLP_HIDDEN], z[MLP_OUT], max, sum = 0;

		for (int j = 0; j < MLP_HIDDEN; j++) {
			h[j] = P(b1, j);
			for (int k = 0; k < MLP_IN; k++)
				h[j] += x[b * MLP_IN + k] * P(w1, k * MLP_HIDDEN + j);
			h[j] = h[j] > 0 ? h[j] : 0;
		}
		for (int o = 0; o < MLP_OUT; o++) {
			z[o] = P(b2, o);
			for (int j = 0; j < MLP_HIDDEN; j++)
				z[o] += h[j] * P(w2, j * MLP_OUT + o);
		}
		max = z[0];
		for (int o = 1; o < MLP_OUT; o++)
			max = z[o] > max ? z[o] : max;
		for (int o = 0; o < MLP_OUT; o++)
			sum += mlp_exp(z[o] - max);
		loss += mlp_log(sum) - (z[y[b]] - max);
	}
#undef P
	return loss / batch;
}

static void mlp_gradient_matches_finite_differences(void **state)
{
	enum { BATCH = 3 };
	static float x[BATCH * MLP_IN];
	const uint8_t y[BATCH] = {3, 7, 0};
	/* a dozen parameters in each of w1, b1, w2, b2 */
	const size_t base[4] = {0, MLP_IN * MLP_HIDDEN, MLP_IN * MLP_HIDDEN + MLP_HIDDEN,
	                        MLP_NPARAMS - MLP_OUT};
	const size_t len[4] = {MLP_IN * MLP_HIDDEN, MLP_HIDDEN, MLP_HIDDEN * MLP_OUT, MLP_OUT};
	struct mlp m;
	struct mlp_rng r;
	char err[CD_ERRLEN];
	float loss;
	int checked = 0;

	assert_int_equal(mlp_init(&m, 3, BATCH, err, sizeof(err)), 0);
	mlp_rng_seed(&r, 99);
	for (size_t i = 0; i < CD_ARRAY_LEN(x); i++)
		x[i] = (float)((int)mlp_rng_below(&r, 2001) - 1000) / 500.0f;
	loss = mlp_forward_backward(&m, x, y, BATCH);
	assert_true(absd(loss - reference_loss(m.params, (size_t)-1, 0, x, y, BATCH)) < 1e-5);

	for (int region = 0; region < 4; region++) {
		for (int t = 0; t < 12; t++) {
			size_t i = base[region] + (size_t)mlp_rng_below(&r, len[region]);
			double h = 1e-4;
			double fd = (reference_loss(m.params, i, h, x, y, BATCH) -
			             reference_loss(m.params, i, -h, x, y, BATCH)) /
			            (2 * h);

			assert_true(absd(m.grad[i] - fd) <= 1e-3 * absd(fd) + 1e-6);
			checked += fd != 0;
		}
	}
	assert_true(checked >= 30); /* most are not dead ReLU units */
	mlp_fini(&m);
}

static void mlp_zero_model_loss_is_ln10_and_ties_predict_class_0(void **state)
{
	enum { BATCH = 4 };
	static float x[BATCH * MLP_IN];
	const uint8_t y[BATCH] = {0, 3, 0, 9};
	struct mlp m;
	char err[CD_ERRLEN];

	assert_int_equal(mlp_init(&m, 1, BATCH, err, sizeof(err)), 0);
	memset(m.params, 0, m.nparams * sizeof(float));
	for (size_t i = 0; i < CD_ARRAY_LEN(x); i++)
		x[i] = (float)(i % 7) - 3.0f;
	assert_true(absd(mlp_forward_backward(&m, x, y, BATCH) - 2.302585092994046) < 1e-6);
	/* d loss / d b2 = mean(softmax - onehot) = 0.1 - share of the label */
	assert_true(absd(m.grad[MLP_NPARAMS - MLP_OUT] - (0.1 - 0.5)) < 1e-7);
	assert_true(absd(m.grad[MLP_NPARAMS - 1] - (0.1 - 0.25)) < 1e-7);
	assert_true(absd(m.grad[MLP_NPARAMS - 5] - 0.1) < 1e-7);
	/* all ten logits tie: every row predicts 0 */
	assert_int_equal(mlp_count_correct(&m, x, y, BATCH), 2);
	/* a tie between 3 and 7 goes to 3 */
	m.b2[3] = m.b2[7] = 1.0f;
	assert_int_equal(mlp_count_correct(&m, x, (const uint8_t[]){3, 7, 3, 3}, BATCH), 3);
	mlp_fini(&m);
}

static void mlp_sgd_step_follows_pytorch_momentum(void **state)
{
	struct mlp m;
	char err[CD_ERRLEN];
	const float lr = 0.1f, mu = 0.9f;
	float p0 = 0.5f, g1 = 0.25f, g2 = -0.75f;

	assert_int_equal(mlp_init(&m, 1, 1, err, sizeof(err)), 0);
	m.params[5] = p0;
	m.grad[5] = g1;
	mlp_sgd_step(&m, lr, mu); /* v = g1 (the buffer starts as the gradient) */
	assert_true(m.velocity[5] == g1);
	assert_true(m.params[5] == p0 - lr * g1);
	m.grad[5] = g2;
	mlp_sgd_step(&m, lr, mu); /* v = mu v + g2 */
	assert_true(m.velocity[5] == mu * g1 + g2);
	assert_true(m.params[5] == (p0 - lr * g1) - lr * (mu * g1 + g2));
	mlp_fini(&m);
}

/* The gradient of a batch is the mean of the gradients of its two halves,
 * to rounding: what lets two ranks at batch B stand for one at 2B. */
static void mlp_batch_gradient_is_the_mean_of_its_halves(void **state)
{
	enum { HALF = 8 };
	static float x[2 * HALF * MLP_IN];
	uint8_t y[2 * HALF];
	struct mlp m;
	struct mlp_rng r;
	char err[CD_ERRLEN];
	float *full = malloc(MLP_NPARAMS * sizeof(float)),
	      *half = malloc(MLP_NPARAMS * sizeof(float));
	double worst = 0;

	assert_non_null(full);
	assert_non_null(half);
	assert_int_equal(mlp_init(&m, 5, 2 * HALF, err, sizeof(err)), 0);
	mlp_rng_seed(&r, 5);
	for (size_t i = 0; i < CD_ARRAY_LEN(x); i++)
		x[i] = (float)mlp_rng_below(&r, 1000) / 300.0f - 0.4f;
	for (int i = 0; i < 2 * HALF; i++)
		y[i] = (uint8_t)mlp_rng_below(&r, 10);
	mlp_forward_backward(&m, x, y, 2 * HALF);
	memcpy(full, m.grad, MLP_NPARAMS * sizeof(float));
	mlp_forward_backward(&m, x, y, HALF);
	memcpy(half, m.grad, MLP_NPARAMS * sizeof(float));
	mlp_forward_backward(&m, x + HALF * MLP_IN, y + HALF, HALF);
	for (size_t i = 0; i < MLP_NPARAMS; i++) {
		double d = absd((half[i] + m.grad[i]) / 2 - full[i]);

		worst = d > worst ? d : worst;
	}
	assert_true(worst < 1e-6);
	free(full);
	free(half);
	mlp_fini(&m);
}

/* --- training ---------------------------------------------------------------- */

static void small_opts(struct train_opts *o, int epochs, int batch)
{
	train_opts_default(o);
	o->epochs = epochs;
	o->batch = batch;
	o->seed = 11;
}

static void train_learns_synthetic_data_on_one_rank(void **state)
{
	struct dataset train, test;
	struct train_opts o;
	struct train_result res;
	char err[CD_ERRLEN];

	dataset_make(&train, 2000, 1);
	dataset_make(&test, 500, 2);
	small_opts(&o, 2, 64);
	assert_int_equal(
	    train_run(&o, &train.set, &test.set, NULL, NULL, NULL, &res, err, sizeof(err)), 0);
	assert_int_equal(res.epochs_done, 2);
	assert_true(res.loss[1] < res.loss[0]);
	assert_true(res.loss[0] < 2.302585);
	assert_int_equal(res.test_total, 500);
	assert_true(res.test_accuracy >= 0.9);
	assert_int_equal(strlen(res.param_sha256), 64);
	dataset_free(&train);
	dataset_free(&test);
}

static void train_is_reproducible_for_a_seed(void **state)
{
	struct dataset d;
	struct train_opts o;
	struct train_result a, b, c;
	char err[CD_ERRLEN];

	dataset_make(&d, 300, 3);
	small_opts(&o, 1, 32);
	assert_int_equal(train_run(&o, &d.set, &d.set, NULL, NULL, NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(train_run(&o, &d.set, &d.set, NULL, NULL, NULL, &b, err, sizeof(err)), 0);
	o.seed++;
	assert_int_equal(train_run(&o, &d.set, &d.set, NULL, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_string_equal(a.param_sha256, b.param_sha256);
	assert_true(a.loss[0] == b.loss[0]);
	assert_string_not_equal(a.param_sha256, c.param_sha256);
	dataset_free(&d);
}

/* n = 1001 is a multiple of neither 2 nor 3: the last rank's share is
 * padded, and every rank still makes the same calls. */
static void check_ranks_agree(int world)
{
	struct dataset train, test;
	struct train_opts o;
	struct group g;

	dataset_make(&train, 1001, 4);
	dataset_make(&test, 301, 5);
	small_opts(&o, 2, 16);
	group_init(&g, world, &o, &train.set, &test.set);
	group_run(&g);
	for (int r = 0; r < world; r++) {
		struct member *m = &g.m[r];

		assert_int_equal(m->rc, 0);
		assert_int_equal(m->calls, expected_calls(1001, world, 16, 2));
		assert_string_equal(m->res.param_sha256, g.m[0].res.param_sha256);
		assert_true(m->res.loss[0] == g.m[0].res.loss[0]);
		assert_true(m->seen_loss[1] == m->res.loss[1]);
		assert_true(m->res.loss[1] < m->res.loss[0]);
		assert_int_equal(m->res.test_total, 301);
		assert_int_equal(m->res.test_correct, g.m[0].res.test_correct);
	}
	group_fini(&g);
	dataset_free(&train);
	dataset_free(&test);
}

static void train_two_ranks_end_with_identical_params(void **state)
{
	check_ranks_agree(2);
}

static void train_three_ranks_end_with_identical_params(void **state)
{
	check_ranks_agree(3);
}

/*
 * Two ranks at batch B see, step by step, the same samples as one rank at
 * 2B (n a multiple of 2B: no padding), and the mean of their gradients is
 * the gradient of the whole batch, but summed in another order: so the runs
 * agree to rounding, not bit for bit (the hashes differ). Over 16 steps the
 * epoch losses agree to 1e-5 relative.
 */
static void train_two_ranks_match_one_rank_at_twice_the_batch(void **state)
{
	struct dataset d;
	struct train_opts o;
	struct train_result one;
	struct group g;
	char err[CD_ERRLEN];

	dataset_make(&d, 512, 6);
	small_opts(&o, 2, 32);
	assert_int_equal(train_run(&o, &d.set, &d.set, NULL, NULL, NULL, &one, err, sizeof(err)),
	                 0);
	o.batch = 16;
	group_init(&g, 2, &o, &d.set, &d.set);
	group_run(&g);
	assert_int_equal(g.m[0].rc, 0);
	assert_int_equal(g.m[1].rc, 0);
	for (int e = 0; e < 2; e++)
		assert_true(absd(g.m[0].res.loss[e] / one.loss[e] - 1) < 1e-5);
	assert_true(llabs(g.m[0].res.test_correct - one.test_correct) <= 1);
	group_fini(&g);
	dataset_free(&d);
}

static void train_allreduce_failure_ends_every_rank(void **state)
{
	struct dataset d;
	struct train_opts o;
	struct group g;

	dataset_make(&d, 400, 7);
	small_opts(&o, 3, 20);
	group_init(&g, 3, &o, &d.set, &d.set);
	g.m[1].fail_at = 5; /* a gradient, in the first epoch */
	group_run(&g);
	assert_int_equal(g.m[1].rc, CD_ERR_IO);
	assert_non_null(strstr(g.m[1].err, "injected failure at call 5"));
	assert_non_null(strstr(g.m[1].err, "gradient"));
	for (int r = 0; r < 3; r++) {
		assert_true(g.m[r].rc < 0);
		assert_int_equal(g.m[r].res.epochs_done, 0);
		assert_true(g.m[r].calls <= 6);
	}
	assert_non_null(strstr(g.m[0].err, "a peer failed"));
	group_fini(&g);
	dataset_free(&d);
}

/* One rank asking to stop stops them all after that epoch; the test set is
 * still evaluated. */
static void train_on_epoch_nonzero_stops_every_rank_after_that_epoch(void **state)
{
	struct dataset d;
	struct train_opts o;
	struct group g;

	dataset_make(&d, 200, 8);
	small_opts(&o, 5, 50);
	group_init(&g, 2, &o, &d.set, &d.set);
	g.m[1].stop_at_epoch = 2;
	group_run(&g);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(g.m[r].rc, 0);
		assert_int_equal(g.m[r].res.epochs_done, 2);
		assert_int_equal(g.m[r].calls, expected_calls(200, 2, 50, 2));
		assert_int_equal(g.m[r].res.test_total, 200);
		assert_string_equal(g.m[r].res.param_sha256, g.m[0].res.param_sha256);
	}
	group_fini(&g);
	dataset_free(&d);
}

static void expect_rejected(const struct train_opts *o, const struct train_set *train,
                            const struct train_set *test, const char *msg)
{
	struct train_result res;
	char err[CD_ERRLEN] = "";

	assert_int_equal(train_run(o, train, test, NULL, NULL, NULL, &res, err, sizeof(err)),
	                 CD_ERR_PARSE);
	if (!strstr(err, msg))
		fail_msg("\"%s\" does not contain \"%s\"", err, msg);
}

static void train_rejects_invalid_options(void **state)
{
	struct dataset d;
	struct train_opts o, bad;

	dataset_make(&d, 10, 9);
	small_opts(&o, 1, 4);
	bad = o, bad.epochs = 0;
	expect_rejected(&bad, &d.set, &d.set, "epochs 0 is not in 1..100");
	bad = o, bad.epochs = TRAIN_MAX_EPOCHS + 1;
	expect_rejected(&bad, &d.set, &d.set, "epochs 101");
	bad = o, bad.batch = 0;
	expect_rejected(&bad, &d.set, &d.set, "batch size 0");
	bad = o, bad.rank = 2, bad.world = 2;
	expect_rejected(&bad, &d.set, &d.set, "rank 2 is not in 0..1");
	bad = o, bad.world = 0;
	expect_rejected(&bad, &d.set, &d.set, "world size 0");
	bad = o, bad.world = 2;
	expect_rejected(&bad, &d.set, &d.set, "2 ranks need an allreduce");
	bad = o, bad.lr = 0;
	expect_rejected(&bad, &d.set, &d.set, "learning rate");
	bad = o, bad.momentum = 1;
	expect_rejected(&bad, &d.set, &d.set, "momentum 1 is not in [0, 1)");
	dataset_free(&d);
}

static void train_rejects_bad_labels_and_empty_sets(void **state)
{
	struct dataset d;
	struct train_opts o;
	struct train_set empty = {.images = NULL, .labels = NULL, .n = 0};

	dataset_make(&d, 10, 10);
	small_opts(&o, 1, 4);
	expect_rejected(&o, &empty, &d.set, "the training set is empty");
	expect_rejected(&o, &d.set, &empty, "the test set is empty");
	expect_rejected(&o, &d.set, NULL, "the test set is empty");
	d.labels[7] = 10;
	expect_rejected(&o, &d.set, &d.set, "training sample 7 has label 10, not in 0..9");
	dataset_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mlp_init_is_deterministic_for_a_seed),
	    cmocka_unit_test(mlp_init_differs_between_seeds),
	    cmocka_unit_test(mlp_init_is_uniform_within_one_over_sqrt_fan_in),
	    cmocka_unit_test(mlp_init_rejects_a_bad_batch_size),
	    cmocka_unit_test(mlp_exp_and_log_match_known_values),
	    cmocka_unit_test(mlp_normalize_matches_torchvision),
	    cmocka_unit_test(mlp_gradient_matches_finite_differences),
	    cmocka_unit_test(mlp_zero_model_loss_is_ln10_and_ties_predict_class_0),
	    cmocka_unit_test(mlp_sgd_step_follows_pytorch_momentum),
	    cmocka_unit_test(mlp_batch_gradient_is_the_mean_of_its_halves),
	    cmocka_unit_test(train_learns_synthetic_data_on_one_rank),
	    cmocka_unit_test(train_is_reproducible_for_a_seed),
	    cmocka_unit_test(train_two_ranks_end_with_identical_params),
	    cmocka_unit_test(train_three_ranks_end_with_identical_params),
	    cmocka_unit_test(train_two_ranks_match_one_rank_at_twice_the_batch),
	    cmocka_unit_test(train_allreduce_failure_ends_every_rank),
	    cmocka_unit_test(train_on_epoch_nonzero_stops_every_rank_after_that_epoch),
	    cmocka_unit_test(train_rejects_invalid_options),
	    cmocka_unit_test(train_rejects_bad_labels_and_empty_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
