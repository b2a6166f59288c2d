/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run a harness's seed inputs once each, without libFuzzer.
 *
 * `make test` only replays the seed corpora (tests/run-fuzz.sh smoke). Linked
 * with this driver, a harness needs no coverage instrumentation: it is built
 * with gcc against the ASan+UBSan library the ASan head is built from, instead
 * of compiling the whole library again with clang's (`make fuzz` still builds
 * the libFuzzer harnesses). The command line is libFuzzer's: options (-runs=0)
 * are ignored, every other argument is a file or a directory of files, each
 * given to LLVMFuzzerTestOneInput once. Exit status 1 when an input cannot be
 * read; an input that breaks the code aborts, as under libFuzzer.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/replay.h"

/* Give the file at path to the harness in a buffer of exactly its size, so
 * that ASan catches a read one past the input. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	unsigned char *buf;
	size_t len;

	if (!f || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "replay: %s: %s\n", path, buf ? "short read" : "out of memory");
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int replay_path(const char *path, int *inputs)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*inputs)++;
		return replay_file(path);
	}
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char child[4096];

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >=
		    sizeof(child)) {
			fprintf(stderr, "replay: %s/%s: path too long\n", path, e->d_name);
			rc = -1;
			continue;
		}
		if (stat(child, &st) == 0 && S_ISREG(st.st_mode)) {
			(*inputs)++;
			if (replay_file(child) != 0)
				rc = -1;
		}
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0, inputs = 0;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue; /* a libFuzzer option */
		if (replay_path(argv[i], &inputs) != 0)
			rc = 1;
	}
	printf("replay: %d input(s) run\n", inputs);
	return rc;
}
