# SPDX-License-Identifier: MIT
"""A stand-in for PyTorch's CUDA side, for `clusterdoc gpu-burn`'s tests on
machines without a GPU (tests/integration/test_gpu_burn.sh puts this folder
first on a node's PYTHONPATH). Only what collectives/gpuburn.py calls exists,
with the signatures and behaviour of torch's documented API:

  torch.__version__, torch.version.cuda         pytorch.org/docs/stable/generated/torch.version
  torch.cuda.is_available()                     pytorch.org/docs/stable/generated/torch.cuda.is_available.html
  torch.cuda.device_count()                     .../torch.cuda.device_count.html
  torch.cuda.get_device_name(device)            .../torch.cuda.get_device_name.html
  torch.cuda.get_device_properties(device)      .../torch.cuda.get_device_properties.html: name,
                                                total_memory, uuid, pci_bus_id, pci_device_id,
                                                pci_domain_id (the NVML stand-in's bus numbers:
                                                0x18 + 0x10 x the index; numbered in PCI bus
                                                order only under CUDA_DEVICE_ORDER=PCI_BUS_ID,
                                                else GPU 0 and 1 trade places, as CUDA's
                                                fastest-first order may)
  torch.cuda.is_bf16_supported()                .../torch.cuda.is_bf16_supported.html (the current device)
  torch.cuda.set_device(device)                 .../torch.cuda.set_device.html (per thread)
  torch.cuda.Event(enable_timing=True)          .../torch.cuda.Event.html: record() on the current
                                                device's stream, synchronize() waits until the work
                                                recorded before it is done, elapsed_time(end) is the
                                                milliseconds between the two records
  torch.device("cuda", i), torch.randn, torch.empty(..., device=, dtype=),
  torch.matmul(a, b, out=c), Tensor.copy_(src)   pytorch.org/docs/stable/torch.html

Each device is a queue: an operation starts when the previous one on that
device ends and takes the time its scenario gives it (2*n^3 flops at the
device's TFLOP/s for a product of n x n matrices; 2 x the bytes at its GB/s
for a copy), so events and synchronize behave as on a real GPU, in real time
(synchronize sleeps). Nothing is allocated.

The scenario: the file $CLUSTERDOC_FAKE_TORCH, one setting a line
("#" comments):
  count N                 GPUs (default 2)
  name TEXT               every GPU's name (default "NVIDIA H200")
  tflops X / gbps X       every GPU's speed (default 500 and 3000)
  cuda none               a CPU-only build: torch.version.cuda None, no GPU
  gpu I name TEXT         GPU I's own name (another model)
  gpu I tflops X          GPU I's own speed
  gpu I gbps X
  gpu I bf16 no           GPU I has no bf16 (is_bf16_supported() is False)
  gpu I lost-after S      S seconds after its first operation, every operation
                          on GPU I raises the RuntimeError CUDA reports for a
                          GPU that fell off the bus
  gpu I hang-after S      S seconds after its first operation, GPU I never
                          finishes its work: operations and synchronize block
"""
import os
import threading
import time

__version__ = "2.5.1+fake"


class _Version:
    cuda = "12.4"


version = _Version()


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


bfloat16 = dtype("bfloat16", 2)
float16 = dtype("float16", 2)
float32 = dtype("float32", 4)
uint8 = dtype("uint8", 1)


def _scenario():
    s = {"count": 2, "name": "NVIDIA H200", "tflops": 500.0, "gbps": 3000.0, "cuda": True, "gpu": {}}
    path = os.environ.get("CLUSTERDOC_FAKE_TORCH")
    if not path:
        return s
    with open(path) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if not w:
                continue
            if w[0] == "gpu":
                g = s["gpu"].setdefault(int(w[1]), {})
                g[w[2]] = " ".join(w[3:])
            elif w[0] == "cuda" and w[1] == "none":
                s["cuda"] = False
            elif w[0] == "name":
                s["name"] = " ".join(w[1:])
            elif w[0] == "count":
                s["count"] = int(w[1])
            else:
                s[w[0]] = float(w[1])
    return s


_S = _scenario()
if not _S["cuda"]:
    version.cuda = None


class device:
    def __init__(self, kind, index=0):
        self.type, self.index = kind, index


class Tensor:
    def __init__(self, shape, dev, dt):
        self.shape, self.device, self.dtype = shape, dev, dt
        n = 1
        for d in shape:
            n *= d
        self.numel = n

    def copy_(self, src):
        _DEVICES[self.device.index].run(2.0 * self.numel * self.dtype.itemsize, "gbps", 1e9)
        return self


def _make(shape, dev, dt):
    if isinstance(dev, str):
        dev = device("cuda", int(dev.split(":")[1]) if ":" in dev else cuda.current_device())
    if not _S["cuda"] or dev.index >= _S["count"]:
        raise RuntimeError("CUDA error: invalid device ordinal")
    return Tensor(shape, dev, dt)


def randn(*shape, device=None, dtype=float32):
    return _make(shape, device, dtype)


def empty(*shape, device=None, dtype=float32):
    return _make(shape, device, dtype)


def matmul(a, b, out=None):
    n, k, m = a.shape[0], a.shape[1], b.shape[1]
    _DEVICES[a.device.index].run(2.0 * n * k * m, "tflops", 1e12)
    return out if out is not None else Tensor((n, m), a.device, a.dtype)


class _Device:
    def __init__(self, i):
        self.i, self.busy_until, self.first = i, 0.0, None
        self.lock = threading.Lock()

    def setting(self, key):
        return _S["gpu"].get(self.i, {}).get(key, _S.get(key))

    def check(self):
        lost = self.setting("lost-after")
        hang = self.setting("hang-after")
        now = time.monotonic()
        if self.first is None:
            self.first = now
        while hang is not None and now - self.first >= float(hang):
            time.sleep(3600)
        if lost is not None and now - self.first >= float(lost):
            raise RuntimeError("CUDA error: unspecified launch failure\nCUDA kernel errors "
                               "might be asynchronously reported at some other API call")

    def run(self, work, key, unit):
        self.check()
        with self.lock:
            start = max(time.monotonic(), self.busy_until)
            self.busy_until = start + work / (float(self.setting(key)) * unit)


_DEVICES = [_Device(i) for i in range(_S["count"])]


class _Cuda:
    _local = threading.local()

    def is_available(self):
        return _S["cuda"] and _S["count"] > 0

    def device_count(self):
        return _S["count"] if _S["cuda"] else 0

    def get_device_name(self, i=None):
        return _DEVICES[self.current_device() if i is None else i].setting("name")

    def current_device(self):
        return getattr(self._local, "dev", 0)

    def get_device_properties(self, i=None):
        i = self.current_device() if i is None else i
        if not _S["cuda"] or i >= _S["count"]:
            raise RuntimeError("CUDA error: invalid device ordinal")
        # the PCI position of CUDA's device i: PCI bus order only when asked
        pos = i
        if os.environ.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID" and _S["count"] > 1 and i < 2:
            pos = 1 - i

        class _Props:
            name = _DEVICES[i].setting("name")
            total_memory = 141 << 30
            uuid = "fa4e0000-0000-0000-0000-%012d" % pos
            pci_bus_id = 0x18 + 0x10 * pos
            pci_device_id = 0
            pci_domain_id = 0

        return _Props()

    def set_device(self, i):
        if not _S["cuda"] or i >= _S["count"]:
            raise RuntimeError("CUDA error: invalid device ordinal")
        self._local.dev = i

    def is_bf16_supported(self):
        return _DEVICES[self.current_device()].setting("bf16") != "no"

    def synchronize(self, d=None):
        dev = _DEVICES[self.current_device() if d is None else d]
        time.sleep(max(0.0, dev.busy_until - time.monotonic()))

    class Event:
        def __init__(self, enable_timing=False, blocking=False, interprocess=False):
            self.t = None

        def record(self, stream=None):
            dev = _DEVICES[cuda.current_device()]
            dev.check()
            self.dev = dev
            self.t = max(time.monotonic(), dev.busy_until)

        def synchronize(self):
            time.sleep(max(0.0, self.t - time.monotonic()))

        def elapsed_time(self, end):
            return (end.t - self.t) * 1000.0


cuda = _Cuda()
