/* MPI ping-pong latency with one-sided communication (thesis 6.3): rank 0 puts a message into
 * rank 1's window, rank 1 puts it back into rank 0's window; the round trip t2 - t1 is taken with
 * MPI_Wtime on rank 0. A fence closes each access epoch, so a put has landed when the fence
 * after it returns; one round trip is put, fence, put back, fence. Message sizes 1 B .. MAX (powers of two), ITER round trips per size after WARMUP.
 *
 * usage: pingpong [max_bytes=16384] [iterations=100]
 * output (rank 0): one line per size: "size avg_us min_us max_us"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 5

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long max_bytes = argc > 1 ? atol(argv[1]) : 16384;
    int iters = argc > 2 ? atoi(argv[2]) : 100;
    if (size != 2 || max_bytes < 1 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs exactly 2 ranks, max_bytes >= 1, iterations >= 1\n");
        MPI_Finalize();
        return 2;
    }
    char *sendbuf = malloc(max_bytes);
    char *winbuf;
    MPI_Win win;
    MPI_Win_allocate(max_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
    memset(sendbuf, rank + 1, max_bytes);
    memset(winbuf, 0, max_bytes);
    int peer = 1 - rank;
    if (rank == 0) {
        printf("# size avg_us min_us max_us\n");
        fflush(stdout);
    }
    for (long n = 1; n <= max_bytes; n *= 2) {
        double sum = 0, lo = 1e30, hi = 0;
        MPI_Win_fence(0, win);
        for (int i = 0; i < WARMUP + iters; i++) {
            double t1 = MPI_Wtime();
            if (rank == 0)
                MPI_Put(sendbuf, (int)n, MPI_CHAR, peer, 0, (int)n, MPI_CHAR, win);
            MPI_Win_fence(0, win);
            if (rank == 1)
                MPI_Put(winbuf, (int)n, MPI_CHAR, peer, 0, (int)n, MPI_CHAR, win);
            MPI_Win_fence(0, win);
            double dt = MPI_Wtime() - t1;
            if (i >= WARMUP) {
                sum += dt;
                lo = dt < lo ? dt : lo;
                hi = dt > hi ? dt : hi;
            }
        }
        if (rank == 0) {
            printf("%ld %.2f %.2f %.2f\n", n, 1e6 * sum / iters, 1e6 * lo, 1e6 * hi);
            fflush(stdout);
        }
    }
    MPI_Win_free(&win);
    free(sendbuf);
    MPI_Finalize();
    return 0;
}
