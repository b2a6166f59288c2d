#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One rank of a PyTorch Gloo all_reduce timing, for tests/bench/allreduce_vs_gloo.sh.

Reads RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and GLOO_SOCKET_IFNAME) from the
environment, as torchrun sets them. For each size: checks one all_reduce (SUM of rank+1 must
be N(N+1)/2), runs warm-up calls, then times ITERS calls back to back (as nccl-tests and
clusterdoc bench do). Rank 0 prints one line per size: "bytes time_us".
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    sizes = [int(s) for s in sys.argv[1].split(",")]
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    want = world * (world + 1) / 2
    for nbytes in sizes:
        x = torch.full((max(1, nbytes // 4),), float(rank + 1), dtype=torch.float32)
        dist.all_reduce(x)
        if x[0].item() != want:
            print(f"rank {rank}: wrong result at {nbytes} B", file=sys.stderr)
            sys.exit(1)
        for _ in range(warmup):
            dist.all_reduce(x)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        us = (time.perf_counter() - t0) / iters * 1e6
        if rank == 0:
            print(f"{nbytes} {us:.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
