# SPDX-License-Identifier: MIT
# mnist_ddp.py - the DDP MNIST job that `clusterdoc mnist --mode torch` starts on
# every node through torchrun (or torch.distributed.launch on old torch).
#
# The model and the training loop are the ones users write from the tutorials:
# a 784-256-10 MLP, DistributedSampler with set_epoch, DistributedDataParallel,
# SGD, rank 0 saving a checkpoint. The data comes from the files clusterdoc
# pushed to <root>/MNIST/raw/ (torchvision's layout, read here directly so
# torchvision is not needed). Progress goes to stdout as lines
#     CDMNIST {"event": ..., ...}
# which clusterdoc parses; everything else is shown as the rank's log.
import argparse
import datetime
import json
import os
import sys
import socket
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def report(**event):
    print("CDMNIST " + json.dumps(event, sort_keys=True), flush=True)


def read_idx(path, magic, ndim):
    with open(path, "rb") as f:
        data = f.read()
    if int.from_bytes(data[0:4], "big") != magic:
        sys.exit(f"{path}: not an MNIST IDX file (magic {data[0:4].hex()})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return array.reshape(dims)


def load(root, split):
    raw = os.path.join(root, "MNIST", "raw")
    images = read_idx(os.path.join(raw, f"{split}-images-idx3-ubyte"), 0x803, 3)
    labels = read_idx(os.path.join(raw, f"{split}-labels-idx1-ubyte"), 0x801, 1)
    x = torch.from_numpy(images.astype(np.float32) / 255.0).view(-1, 784)
    x = (x - 0.1307) / 0.3081
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--backend", default="gloo")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--checkpoint", default="")
    p.add_argument("--timeout-s", type=int, default=120)
    p.add_argument("--local-rank", "--local_rank", type=int, default=None)
    args = p.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank or 0))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
    device = torch.device("cpu")
    if args.backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    elif args.backend == "hccl":
        # Ascend: torch_npu registers the "npu" device and the hccl backend
        import torch_npu  # noqa: F401
        torch.npu.set_device(local_rank)
        device = torch.device("npu", local_rank)
    # HCCL's all-reduce may lack float64; counts stay exact in float32 (< 2**24)
    sum_dtype = torch.float32 if args.backend == "hccl" else torch.float64
    report(event="start", rank=rank, world=world, local_rank=local_rank,
           torch=torch.__version__, backend=args.backend,
           master=f'{os.environ.get("MASTER_ADDR")}:{os.environ.get("MASTER_PORT")}')
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.timeout_s))
    report(event="joined", rank=rank)

    train, test = load(args.data_root, "train"), load(args.data_root, "t10k")
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10),
                          nn.LogSoftmax(dim=1)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank] if device.type in ("cuda", "npu") else None)
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch, sampler=sampler)

    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        start, total, count = time.time(), 0.0, 0
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * x.size(0)
            count += x.size(0)
        sums = torch.tensor([total, float(count)], dtype=sum_dtype, device=device)
        dist.all_reduce(sums)
        if rank == 0:
            report(event="epoch", epoch=epoch, loss=sums[0].item() / sums[1].item(),
                   seconds=time.time() - start)

    model.eval()
    shard = torch.utils.data.Subset(test, range(rank, len(test), world))  # no padding
    correct, seen = 0, 0
    with torch.no_grad():
        for x, y in DataLoader(shard, batch_size=1000):
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(dim=1) == y).sum().item()
            seen += x.size(0)
    counts = torch.tensor([correct, seen], dtype=sum_dtype, device=device)
    dist.all_reduce(counts)
    if rank == 0:
        report(event="test", correct=int(counts[0].item()), total=int(counts[1].item()),
               accuracy=counts[0].item() / counts[1].item())
        if args.checkpoint:
            os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
            # A temp name of this writer, then a rename: a reader (or a node
            # sharing this home) never sees a half-written checkpoint.
            tmp = "%s.tmp.%s.%d" % (args.checkpoint, socket.gethostname(), os.getpid())
            torch.save(model.module.state_dict(), tmp)
            os.replace(tmp, args.checkpoint)
            report(event="checkpoint", path=args.checkpoint)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
