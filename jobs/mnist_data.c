/* SPDX-License-Identifier: MIT */
/* mnist_data.c - MNIST on the head: cache, download, inflate, validate (see mnist_data.h). */
#include "jobs/mnist_data.h"
#include "cd.h"
#include "fetch.h"
#include "fsutil.h"
#include "idx.h"
#include "loop.h"
#include "sha256.h"

#include <openssl/evp.h>
#include <zlib.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MD5_FILE_MAX  (64u << 10)
#define SYNTH_MAX     1000000u
#define ADVICE_MIRROR "set --data-url to another mirror or --data-dir to a local copy"

static const struct mnist_file_info {
	const char *name;
	const char *md5; /* torchvision's, of the .gz */
	enum idx_kind kind;
} mnist_files[MNIST_NFILES] = {
    [MNIST_TRAIN_IMAGES] = {"train-images-idx3-ubyte", "f68b3c2dcbeaaa9fbdd348bbdeb94873",
                            IDX_IMAGES},
    [MNIST_TRAIN_LABELS] = {"train-labels-idx1-ubyte", "d53e105ee54ea40749a09fcbcd1e9432",
                            IDX_LABELS},
    [MNIST_TEST_IMAGES] = {"t10k-images-idx3-ubyte", "9fb629c4189551a2d022fa330f9573f3",
                           IDX_IMAGES},
    [MNIST_TEST_LABELS] = {"t10k-labels-idx1-ubyte", "ec29112dd5afa0611ce80d1b7f02629c",
                           IDX_LABELS},
};

enum prep_phase { PREP_CHECK, PREP_WAIT, PREP_LOAD, PREP_FAIL };

struct prep_fetch {
	struct mnist_prep *p;
	enum mnist_file f;
};

struct mnist_prep {
	struct loop *loop;
	struct fetcher *fetcher;
	char *url; /* ends in '/' */
	char *data_dir, *cache_dir;
	char md5[MNIST_NFILES][33];
	struct fetch_opts fo; /* the timeouts; url, dest and md5 set per file */
	mnist_progress_cb progress;
	mnist_ready_cb ready;
	void *arg;
	struct prep_fetch ctx[MNIST_NFILES];
	enum prep_phase phase;
	int next;    /* the file the next step works on */
	int pending; /* downloads not yet done */
	uint64_t timer;
	struct mnist_data *data;
	char err[CD_ERRLEN];
};

const char *mnist_file_name(enum mnist_file f)
{
	return (unsigned)f < MNIST_NFILES ? mnist_files[f].name : NULL;
}

void mnist_data_free(struct mnist_data *d)
{
	if (!d)
		return;
	for (int i = 0; i < MNIST_NFILES; i++)
		free(d->f[i].raw);
	free(d);
}

static void md5_buf_hex(const unsigned char *p, size_t len, char hex[33])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_Digest(p, len, d, &n, EVP_md5(), NULL))
		cd_fatal("OpenSSL has no MD5");
	for (unsigned int i = 0; i < n && i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* Inflate gzip data (members may be concatenated, as gzip allows) into at most cap bytes. */
static int gunzip(const char *path, const unsigned char *in, size_t inlen, size_t cap,
                  unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	z_stream zs = {0};
	size_t size = inlen * 4 + 4096 < cap ? inlen * 4 + 4096 : cap, used = 0;
	unsigned char *b = cd_malloc(size);
	int rc = 0, zrc;
	const char *why;

	*out = NULL;
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		cd_fatal("inflateInit2: out of memory");
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)inlen; /* inlen <= 64 MiB, the file cap */
	for (;;) {
		if (used == size) {
			if (size == cap) {
				rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
				             "%s: inflates to more than %zu bytes: not an MNIST "
				             "file; replace it",
				             path, cap);
				goto out;
			}
			size = size * 2 < cap ? size * 2 : cap;
			b = cd_realloc(b, size);
		}
		zs.next_out = b + used;
		zs.avail_out = (uInt)(size - used);
		zrc = inflate(&zs, Z_NO_FLUSH);
		used = size - zs.avail_out; /* not total_out: inflateReset clears that */
		if (zrc == Z_STREAM_END && zs.avail_in == 0)
			break;
		if (zrc == Z_STREAM_END) {
			inflateReset(&zs);
			continue;
		}
		if (zrc == Z_OK || (zrc == Z_BUF_ERROR && zs.avail_out == 0))
			continue;
		why = zrc == Z_BUF_ERROR ? "the stream ends early" : zs.msg ? zs.msg : "bad data";
		rc = cd_errf(
		    err, errlen, CD_ERR_PARSE,
		    "%s: truncated or corrupt gzip (%s, after %zu bytes inflated); replace it",
		    path, why, used);
		goto out;
	}
	*outlen = used;
	*out = b;
	b = NULL;
out:
	inflateEnd(&zs);
	free(b);
	return rc;
}

/* Read, check, inflate and validate one file into b. md5: NULL = no check. */
static int blob_load(struct mnist_blob *b, enum mnist_file f, const char *path, int gz,
                     const char *md5, char *err, size_t errlen)
{
	unsigned char *file = NULL;
	size_t len = 0;
	char hex[33] = "", msg[CD_ERRLEN];
	int rc;

	rc = cd_read_file(path, MNIST_MAX_RAW_BYTES, &file, &len, err, errlen);
	if (rc)
		goto out;
	if (md5 && gz) {
		md5_buf_hex(file, len, hex);
		if (strcmp(hex, md5) != 0) {
			rc = cd_errf(err, errlen, CD_ERR_PARSE,
			             "%s: MD5 %s but expected %s: not the original MNIST file; "
			             "replace it, or leave out --data-dir to download it",
			             path, hex, md5);
			goto out;
		}
	}
	if (gz) {
		rc = gunzip(path, file, len, MNIST_MAX_RAW_BYTES, &b->raw, &b->len, err, errlen);
		if (rc)
			goto out;
	} else {
		b->raw = file;
		b->len = len;
		file = NULL;
	}
	rc = idx_parse_mnist(b->raw, b->len, mnist_files[f].kind, &b->idx, msg, sizeof(msg));
	if (rc) {
		cd_errf(err, errlen, rc, "%s: %s: not an MNIST %s file; replace it", path, msg,
		        mnist_files[f].name);
		goto out;
	}
	sha256_data_hex(b->raw, b->len, b->sha256);
out:
	free(file);
	return rc;
}

/* The first candidate path for f in dir that exists, and whether it is gzip. */
static int data_dir_find(const char *dir, enum mnist_file f, char **path, int *gz, char *err,
                         size_t errlen)
{
	static const struct {
		const char *sub, *ext;
	} forms[] = {{"", ""}, {"MNIST/raw/", ""}, {"", ".gz"}, {"MNIST/raw/", ".gz"}};
	char tried[CD_ERRLEN] = "";
	size_t used = 0;

	for (size_t i = 0; i < CD_ARRAY_LEN(forms); i++) {
		char *cand =
		    cd_asprintf("%s/%s%s%s", dir, forms[i].sub, mnist_files[f].name, forms[i].ext);

		if (access(cand, F_OK) == 0) {
			*path = cand;
			*gz = i >= 2;
			return 0;
		}
		used += (size_t)snprintf(tried + used, sizeof(tried) - used, "%s%s", i ? ", " : "",
		                         cand);
		if (used >= sizeof(tried))
			used = sizeof(tried) - 1;
		free(cand);
	}
	return cd_errf(err, errlen, CD_ERR_NOTFOUND,
	               "%s is missing: tried %s; put it there, or leave out --data-dir to download "
	               "it",
	               mnist_files[f].name, tried);
}

static int data_check_counts(struct mnist_data *d, char *err, size_t errlen)
{
	static const enum mnist_file pairs[2][2] = {{MNIST_TRAIN_IMAGES, MNIST_TRAIN_LABELS},
	                                            {MNIST_TEST_IMAGES, MNIST_TEST_LABELS}};

	for (int i = 0; i < 2; i++) {
		size_t ni = d->f[pairs[i][0]].idx.count, nl = d->f[pairs[i][1]].idx.count;

		if (ni != nl)
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "%s has %zu images but %s has %zu labels: they are not from "
			               "the same dataset; replace them",
			               mnist_files[pairs[i][0]].name, ni,
			               mnist_files[pairs[i][1]].name, nl);
	}
	d->ntrain = d->f[MNIST_TRAIN_IMAGES].idx.count;
	d->ntest = d->f[MNIST_TEST_IMAGES].idx.count;
	return 0;
}

int mnist_data_load_dir(const char *dir, struct mnist_data **out, char *err, size_t errlen)
{
	struct mnist_data *d = cd_calloc(1, sizeof(*d));
	int rc = 0;

	*out = NULL;
	for (int f = 0; f < MNIST_NFILES && !rc; f++) {
		char *path = NULL;
		int gz = 0;

		rc = data_dir_find(dir, f, &path, &gz, err, errlen);
		if (!rc)
			rc = blob_load(&d->f[f], f, path, gz, NULL, err, errlen);
		free(path);
	}
	if (!rc)
		rc = data_check_counts(d, err, errlen);
	if (rc)
		mnist_data_free(d);
	else
		*out = d;
	return rc;
}

/* "<32 hex>  <name>" or "<32 hex> *<name>" lines, as md5sum writes them. */
static int md5_file_read(const char *path, char md5[MNIST_NFILES][33], char *err, size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	char *line, *save = NULL;
	int rc, lineno = 0;

	rc = cd_read_file(path, MD5_FILE_MAX, &text, &len, err, errlen);
	if (rc)
		return rc;
	text[len] = '\0';
	for (line = strtok_r((char *)text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name;
		int i;

		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!line[strspn(line, " \t")])
			continue;
		for (i = 0; i < 32 && isxdigit((unsigned char)line[i]); i++)
			;
		if (i < 32 || line[32] != ' ' || (line[33] != ' ' && line[33] != '*') ||
		    !line[34]) {
			rc = cd_errf(
			    err, errlen, CD_ERR_PARSE,
			    "%s:%d: expected \"<32 hex digits>  <name>.gz\" as md5sum writes "
			    "it",
			    path, lineno);
			goto out;
		}
		name = strrchr(line + 34, '/') ? strrchr(line + 34, '/') + 1 : line + 34;
		for (int f = 0; f < MNIST_NFILES; f++) {
			size_t n = strlen(mnist_files[f].name);

			if (!strncmp(name, mnist_files[f].name, n) && !strcmp(name + n, ".gz"))
				for (int k = 0; k < 32; k++)
					md5[f][k] = (char)tolower((unsigned char)line[k]);
		}
	}
out:
	free(text);
	return rc;
}

static char *cache_dir_default(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return cd_asprintf("%s/clusterdoc/mnist", xdg);
	if (home && home[0] == '/')
		return cd_asprintf("%s/.cache/clusterdoc/mnist", home);
	return NULL;
}

static void prep_step(struct loop *loop, void *arg);

static void prep_schedule(struct mnist_prep *p)
{
	if (!p->timer)
		p->timer = loop_timer_add(p->loop, 0, prep_step, p);
}

static void prep_fail(struct mnist_prep *p)
{
	fetcher_free(p->fetcher); /* stops the other downloads; fine inside its callbacks */
	p->fetcher = NULL;
	p->phase = PREP_FAIL;
	prep_schedule(p);
}

static void on_fetch_progress(void *arg, long long got, long long total)
{
	struct prep_fetch *c = arg;

	if (c->p->progress)
		c->p->progress(c->p->arg, c->f, got, total);
}

static void on_fetch_done(void *arg, int err, const char *msg)
{
	struct prep_fetch *c = arg;
	struct mnist_prep *p = c->p;

	p->pending--;
	if (p->phase == PREP_FAIL)
		return;
	if (err) {
		snprintf(p->err, sizeof(p->err), "downloading MNIST: %s. Or %s", msg,
		         ADVICE_MIRROR);
		prep_fail(p);
		return;
	}
	if (!p->pending && p->phase == PREP_WAIT) {
		p->phase = PREP_LOAD;
		p->next = 0;
		prep_schedule(p);
	}
}

static char *cache_path(const struct mnist_prep *p, enum mnist_file f)
{
	return cd_asprintf("%s/%s.gz", p->cache_dir, mnist_files[f].name);
}

/* Reuse the cached .gz of f when its MD5 matches, else start downloading it. */
static int prep_check(struct mnist_prep *p, enum mnist_file f)
{
	char *path = cache_path(p, f), *url = NULL, hex[33] = "";
	unsigned char *file = NULL;
	size_t len = 0;
	int rc;

	if (cd_read_file(path, MNIST_MAX_RAW_BYTES, &file, &len, NULL, 0) == 0) {
		md5_buf_hex(file, len, hex);
		free(file);
		if (!strcmp(hex, p->md5[f])) {
			if (p->progress)
				p->progress(p->arg, f, (long long)len, (long long)len);
			rc = 0;
			goto out;
		}
	}
	url = cd_asprintf("%s%s.gz", p->url, mnist_files[f].name);
	p->fo.url = url;
	p->fo.dest_path = path;
	p->fo.expect_md5 = p->md5[f];
	p->ctx[f] = (struct prep_fetch){.p = p, .f = f};
	rc = fetcher_get(p->fetcher, &p->fo, on_fetch_progress, on_fetch_done, &p->ctx[f], p->err,
	                 sizeof(p->err));
	if (!rc)
		p->pending++;
out:
	free(url);
	free(path);
	return rc;
}

static int prep_load(struct mnist_prep *p, enum mnist_file f)
{
	char *path = NULL;
	int gz = 1, rc = 0;

	if (p->data_dir)
		rc = data_dir_find(p->data_dir, f, &path, &gz, p->err, sizeof(p->err));
	else
		path = cache_path(p, f); /* its MD5 was checked when cached or downloaded */
	if (!rc)
		rc = blob_load(&p->data->f[f], f, path, gz, p->data_dir ? p->md5[f] : NULL, p->err,
		               sizeof(p->err));
	free(path);
	return rc;
}

/* One loop turn of work: one file checked or loaded, or the result delivered. */
static void prep_step(struct loop *loop, void *arg)
{
	struct mnist_prep *p = arg;
	struct mnist_data *d;
	int rc = 0;

	p->timer = 0;
	if (p->phase == PREP_FAIL) {
		p->ready(p->arg, NULL, p->err); /* last: ready may free p */
		return;
	}
	if (p->phase == PREP_CHECK)
		rc = prep_check(p, p->next);
	else if (p->phase == PREP_LOAD)
		rc = prep_load(p, p->next);
	if (rc == 0 && ++p->next < MNIST_NFILES) {
		prep_schedule(p);
		return;
	}
	if (rc == 0 && p->phase == PREP_CHECK) {
		p->phase = p->pending ? PREP_WAIT : PREP_LOAD;
		p->next = 0;
		if (p->phase == PREP_LOAD)
			prep_schedule(p);
		return;
	}
	if (rc == 0)
		rc = data_check_counts(p->data, p->err, sizeof(p->err));
	if (rc) {
		prep_fail(p);
		return;
	}
	d = p->data;
	p->data = NULL;
	p->ready(p->arg, d, NULL); /* last: ready may free p */
}

struct mnist_prep *mnist_data_prepare(struct loop *loop, const struct mnist_data_opts *o,
                                      mnist_progress_cb progress, mnist_ready_cb ready, void *arg,
                                      char *err, size_t errlen)
{
	struct mnist_prep *p = cd_calloc(1, sizeof(*p));
	const char *url = o->url ? o->url : MNIST_DEFAULT_URL;
	size_t n = strlen(url);
	char why[CD_ERRLEN];
	int rc = 0;

	if (!ready)
		cd_fatal("mnist_data_prepare: no ready callback");
	p->loop = loop;
	p->progress = progress;
	p->ready = ready;
	p->arg = arg;
	p->url = cd_asprintf("%s%s", url, n && url[n - 1] == '/' ? "" : "/");
	p->fo = (struct fetch_opts){.retries = o->retries,
	                            .backoff_ms = o->backoff_ms,
	                            .connect_timeout_ms = o->connect_timeout_ms,
	                            .stall_timeout_ms = o->stall_timeout_ms};
	for (int f = 0; f < MNIST_NFILES; f++)
		memcpy(p->md5[f], mnist_files[f].md5, 33);
	if (o->md5_file && (rc = md5_file_read(o->md5_file, p->md5, err, errlen)) != 0)
		goto out;
	p->data = cd_calloc(1, sizeof(*p->data));
	if (o->data_dir) {
		p->data_dir = cd_strdup(o->data_dir);
		p->phase = PREP_LOAD;
	} else {
		p->cache_dir = o->cache_dir ? cd_strdup(o->cache_dir) : cache_dir_default();
		if (!p->cache_dir) {
			rc =
			    cd_errf(err, errlen, CD_ERR_NOTFOUND,
			            "no cache folder for MNIST: neither XDG_CACHE_HOME nor HOME is "
			            "set; set one, or use --data-dir with a local copy");
			goto out;
		}
		if ((rc = cd_mkdir_p(p->cache_dir, why, sizeof(why))) != 0) {
			cd_errf(err, errlen, rc, "the MNIST cache folder: %s; give another one",
			        why);
			goto out;
		}
		p->fetcher = fetcher_new(loop);
		if (!p->fetcher) {
			rc = cd_errf(err, errlen, CD_ERR_IO,
			             "libcurl does not initialise: cannot download MNIST; use "
			             "--data-dir with a local copy");
			goto out;
		}
		p->phase = PREP_CHECK;
	}
	prep_schedule(p);
out:
	if (rc) {
		mnist_prep_free(p);
		return NULL;
	}
	return p;
}

void mnist_prep_free(struct mnist_prep *p)
{
	if (!p)
		return;
	loop_timer_cancel(p->loop, p->timer);
	fetcher_free(p->fetcher);
	mnist_data_free(p->data);
	free(p->url);
	free(p->data_dir);
	free(p->cache_dir);
	free(p);
}

static uint32_t synth_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int synth_write(const char *dir, enum mnist_file f, const unsigned char *p, size_t len,
                       int gzip, char *err, size_t errlen)
{
	char *path = cd_asprintf("%s/%s%s", dir, mnist_files[f].name, gzip ? ".gz" : "");
	int rc = 0, fd;
	gzFile gz;

	if (gzip) {
		gz = gzopen(path, "wb");
		if (!gz || gzwrite(gz, p, (unsigned)len) != (int)len) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "%s: cannot write", path);
			if (gz)
				gzclose(gz);
		} else if (gzclose(gz) != Z_OK) {
			rc = cd_errf(err, errlen, CD_ERR_IO, "%s: cannot write", path);
		}
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = cd_errf(err, errlen, CD_ERR_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (write(fd, p, len) != (ssize_t)len)
		rc = cd_errf(err, errlen, CD_ERR_IO, "%s: cannot write", path);
	if (close(fd) != 0 && !rc)
		rc = cd_errf(err, errlen, CD_ERR_IO, "%s: %s", path, strerror(errno));
out:
	free(path);
	return rc;
}

/* One split: n images and labels, IDX headers included. */
static int synth_split(const char *dir, enum mnist_file images, enum mnist_file labels, size_t n,
                       uint32_t *rng, int gzip, char *err, size_t errlen)
{
	const size_t px = IDX_MNIST_SIDE * IDX_MNIST_SIDE;
	unsigned char *img = cd_calloc(1, 16 + n * px), *lab = cd_calloc(1, 8 + n);
	int rc;

	img[2] = IDX_TYPE_U8, img[3] = 3;
	lab[2] = IDX_TYPE_U8, lab[3] = 1;
	for (int i = 0; i < 4; i++)
		img[4 + i] = lab[4 + i] = (unsigned char)(n >> (24 - 8 * i));
	img[11] = img[15] = IDX_MNIST_SIDE;
	for (size_t i = 0; i < n; i++) {
		unsigned char *im = img + 16 + i * px;
		unsigned label = synth_rand(rng) % 10;
		/* A 5x5 block at one of 2 x 5 places, jittered by -1..1 pixel. */
		int x0 = 2 + 5 * (int)(label % 5) + (int)(synth_rand(rng) % 3) - 1;
		int y0 = 4 + 12 * (int)(label / 5) + (int)(synth_rand(rng) % 3) - 1;

		lab[8 + i] = (unsigned char)label;
		for (size_t k = 0; k < px; k++)
			im[k] = (unsigned char)(synth_rand(rng) % 48);
		for (int y = y0; y < y0 + 5; y++)
			for (int x = x0; x < x0 + 5; x++)
				im[y * IDX_MNIST_SIDE + x] =
				    (unsigned char)(180 + synth_rand(rng) % 76);
	}
	rc = synth_write(dir, images, img, 16 + n * px, gzip, err, errlen);
	if (!rc)
		rc = synth_write(dir, labels, lab, 8 + n, gzip, err, errlen);
	free(img);
	free(lab);
	return rc;
}

int mnist_data_write_synthetic(const char *dir, size_t n_train, size_t n_test, unsigned seed,
                               int gzip, char *err, size_t errlen)
{
	uint32_t rng = seed * 2654435761u + 1; /* xorshift needs a non-zero state */
	int rc;

	if (!rng)
		rng = 1;
	if (n_train > SYNTH_MAX || n_test > SYNTH_MAX)
		return cd_errf(err, errlen, CD_ERR_TOOBIG,
		               "synthetic MNIST: %zu and %zu images, more than %u", n_train, n_test,
		               SYNTH_MAX);
	rc = synth_split(dir, MNIST_TRAIN_IMAGES, MNIST_TRAIN_LABELS, n_train, &rng, gzip, err,
	                 errlen);
	if (!rc)
		rc = synth_split(dir, MNIST_TEST_IMAGES, MNIST_TEST_LABELS, n_test, &rng, gzip, err,
		                 errlen);
	return rc;
}
