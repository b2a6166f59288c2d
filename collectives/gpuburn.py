# SPDX-License-Identifier: MIT
# gpuburn.py - the node side of `clusterdoc gpu-burn` (collectives/gpuburn_agent.h):
# on every GPU torch sees, at once (one thread per GPU), a bf16 matrix product
# (fp16 where torch.cuda.is_bf16_supported() says no) and a device-memory copy,
# each for half of --seconds, timed with CUDA events. Prints JSON lines:
#
#   {"python": sys.executable, "torch": VERSION, "cuda": CUDA_VERSION, "count": N}
#     or, when nothing can run, that line with "error_code": "no-torch" |
#     "no-cuda" | "no-gpu" and "error": WHY (and no more lines);
#   {"gpu": {"index", "name", "uuid", "pci_bus_id", "dtype", "tflops", "gbps",
#            "matmuls", "copies", "matmul_ms", "copy_ms", "error" (only when that
#            GPU failed)}}
#     (uuid "GPU-..." and pci_bus_id "00000000:18:00.0" as NVML spells them,
#     where torch's device properties have them);
#     one per GPU, as each ends, so that a GPU that never ends (off the bus,
#     killed at the agent's deadline) leaves the others' results;
#   {"done": true}
#
# TFLOP/s: 2*n^3 per product over the events' time; GB/s: 2*bytes per copy
# (each byte read once and written once, as CUDA's bandwidthTest counts a
# device-to-device copy) over the events' time. A GPU that fails (a CUDA
# error, a GPU off the bus) has its "error"; the other GPUs go on.
# CUDA numbers the GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID
# (CUDA's "Environment Variables"), while NVML and nvidia-smi number them in
# PCI bus order: the script sets PCI_BUS_ID (unless the environment already
# says otherwise) so that GPU N here is NVML's GPU N in `clusterdoc check`.
# Uses only torch's documented API (pytorch.org/docs/stable/cuda.html:
# torch.cuda.is_available, device_count, get_device_name,
# get_device_properties, is_bf16_supported, set_device,
# Event(enable_timing=True).record/synchronize/elapsed_time; torch.matmul(out=),
# Tensor.copy_).
import argparse
import json
import os
import sys
import threading
import time


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def timed(torch, budget_s, step):
    """Run step() in batches until budget_s passed; the events' ms and the count."""
    ms, count, batch = 0.0, 0, 1
    end_at = time.monotonic() + budget_s
    while True:
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            step()
        stop.record()
        stop.synchronize()
        ms += start.elapsed_time(stop)
        count += batch
        if time.monotonic() >= end_at:
            return ms, count
        if batch < 64:
            batch *= 2


LOCK = threading.Lock()


def identify(torch, i, g):
    """The GPU's UUID and PCI bus id as NVML spells them, where torch's device
    properties have them (uuid: torch 2.0; pci_*_id: torch 2.3)."""
    try:
        props = torch.cuda.get_device_properties(i)
    except Exception:
        return
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        u = str(uuid)
        g["uuid"] = u if u.startswith("GPU-") else "GPU-" + u
    bus = getattr(props, "pci_bus_id", None)
    if isinstance(bus, int):
        g["pci_bus_id"] = "%08X:%02X:%02X.0" % (getattr(props, "pci_domain_id", 0) or 0, bus,
                                                getattr(props, "pci_device_id", 0) or 0)


def burn(torch, i, args):
    g = {"index": i}
    try:
        g["name"] = torch.cuda.get_device_name(i)
        identify(torch, i, g)
        torch.cuda.set_device(i)
        dev = torch.device("cuda", i)
        bf16 = torch.cuda.is_bf16_supported()
        dtype = torch.bfloat16 if bf16 else torch.float16
        g["dtype"] = "bf16" if bf16 else "fp16"
        n = args.size
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        c = torch.empty(n, n, device=dev, dtype=dtype)
        torch.matmul(a, b, out=c)  # warm-up: cuBLAS picks its kernel
        ms, k = timed(torch, args.seconds / 2, lambda: torch.matmul(a, b, out=c))
        g["matmuls"], g["matmul_ms"] = k, ms
        g["tflops"] = 2.0 * n * n * n * k / (ms / 1e3) / 1e12 if ms > 0 else 0.0
        del a, b, c
        nbytes = args.copy_mib << 20
        src = torch.empty(nbytes, device=dev, dtype=torch.uint8)
        dst = torch.empty(nbytes, device=dev, dtype=torch.uint8)
        dst.copy_(src)
        ms, k = timed(torch, args.seconds / 2, lambda: dst.copy_(src))
        g["copies"], g["copy_ms"] = k, ms
        g["gbps"] = 2.0 * nbytes * k / (ms / 1e3) / 1e9 if ms > 0 else 0.0
    except Exception as e:  # a CUDA error on this GPU: its own, the others go on
        g["error"] = ("%s: %s" % (type(e).__name__, e)).strip().splitlines()[0][:400]
    with LOCK:
        say({"gpu": g})


def orphan_watch():
    """End when the agent that started us is gone (killed with its node's
    session): nothing of the stress outlives it."""
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def main():
    threading.Thread(target=orphan_watch, daemon=True).start()
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--copy-mib", type=int, default=1024)
    args = p.parse_args()
    head = {"python": sys.executable}
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    head["device_order"] = os.environ["CUDA_DEVICE_ORDER"]
    try:
        import torch
    except Exception as e:
        head.update(error_code="no-torch", error="import torch failed: %s: %s" % (type(e).__name__, e))
        say(head)
        return
    head["torch"] = getattr(torch, "__version__", "")
    head["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
    if not torch.cuda.is_available():
        why = ("torch %s has no CUDA (a CPU-only build: torch.version.cuda is None)"
               % head["torch"]) if head["cuda"] is None else (
               "torch %s (CUDA %s) sees no usable GPU: torch.cuda.is_available() is False"
               % (head["torch"], head["cuda"]))
        head.update(error_code="no-cuda", error=why)
        say(head)
        return
    n = torch.cuda.device_count()
    if n == 0:
        head.update(error_code="no-gpu", error="torch.cuda.device_count() is 0")
        say(head)
        return
    head["count"] = n
    say(head)
    threads = [threading.Thread(target=burn, args=(torch, i, args)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    say({"done": True})


if __name__ == "__main__":
    main()
