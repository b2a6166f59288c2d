/* SPDX-License-Identifier: MIT */
/*
 * mpi_allreduce.c - one rank of an MPI_Allreduce timing, for
 * tests/bench/allreduce_vs_gloo.sh (Open MPI over its TCP BTL there).
 *
 *   mpirun ... mpi_allreduce SIZES [ITERS [WARMUP]]     SIZES: bytes, comma-separated
 *
 * Timed as tests/bench/gloo_allreduce.py and clusterdoc bench time theirs:
 * for each size, one checked call (float32 SUM of rank + 1 must be
 * N(N+1)/2 everywhere), WARMUP calls, a barrier, then ITERS calls back to
 * back; the time per call is the elapsed time / ITERS, rank 0's view. Rank 0
 * prints one line per size: "bytes time_us". Exit status 1 on a wrong sum.
 *
 * Built by the bench script with mpicc, not by the project's Makefile (the
 * project does not link MPI).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(const float *x, size_t count, float want)
{
	for (size_t i = 0; i < count; i++) {
		if (x[i] != want)
			return -1;
	}
	return 0;
}

static int run_size(size_t bytes, int iters, int warmup, int rank, int world)
{
	size_t count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;
	float *send = malloc(count * sizeof(float)), *recv = malloc(count * sizeof(float));
	float want = (float)world * (float)(world + 1) / 2.0f;
	double t0, us;
	int bad = 0, anybad = 0;

	if (!send || !recv) {
		fprintf(stderr, "rank %d: out of memory at %zu bytes\n", rank, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < count; i++)
		send[i] = (float)(rank + 1);
	MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	bad = check(recv, count, want) < 0;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (anybad) {
		if (rank == 0)
			fprintf(stderr, "wrong result at %zu bytes\n", bytes);
		free(send);
		free(recv);
		return -1;
	}
	for (int i = 0; i < warmup; i++)
		MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	us = (MPI_Wtime() - t0) / iters * 1e6;
	if (rank == 0) {
		printf("%zu %.1f\n", bytes, us);
		fflush(stdout);
	}
	free(send);
	free(recv);
	return 0;
}

int main(int argc, char **argv)
{
	int rank, world, iters, warmup, rc = 0;
	char *sizes, *tok, *save = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &world);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_allreduce SIZES [ITERS [WARMUP]]\n");
		MPI_Finalize();
		return 2;
	}
	iters = argc > 2 ? atoi(argv[2]) : 20;
	warmup = argc > 3 ? atoi(argv[3]) : 5;
	if (iters < 1)
		iters = 1;
	sizes = strdup(argv[1]);
	for (tok = strtok_r(sizes, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		if (run_size(strtoull(tok, NULL, 10), iters, warmup, rank, world) < 0)
			rc = 1;
	}
	free(sizes);
	MPI_Finalize();
	return rc;
}
