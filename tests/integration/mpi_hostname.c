/* SPDX-License-Identifier: MIT */
/* mpi_hostname.c - each rank prints "rank R of N on HOST" (test_mpi_ssh.sh
 * starts it with mpirun across the namespace nodes). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char host[256] = "";
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof(host) - 1);
	printf("rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
