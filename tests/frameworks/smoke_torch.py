"""PyTorch (the CPU build of scripts/frameworks-requirements.txt) runs real model code with
shape-only tensors: under FakeTensorMode a model moves to a CUDA device and runs forward on
a machine without a GPU, and autograd runs on the meta device; nothing is allocated. What
recording a model without its GPU is built on."""

from _smoke import check, finish, need

torch = need("torch")
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

check(torch.__version__.startswith("2.13.0"), "torch %s, want the pinned 2.13.0" % torch.__version__)
check(not torch.cuda.is_available(), "a CPU build sees no GPU")

# meta: shapes and dtypes only; 1024 x 4096 float16 would be 8 MiB
m = torch.empty(1024, 4096, dtype=torch.float16, device="meta")
check(m.is_meta and m.device.type == "meta", "a meta tensor")
check(m.untyped_storage().nbytes() == 1024 * 4096 * 2, "meta storage of 1024*4096*2 = 8388608 B")

# FakeTensorMode: CUDA device tensors without CUDA (PyTorch PRs #160431, #163016 and
# #163433 of 2025: module.to("cuda:0") and CUDA factories under fake mode on a CPU-only
# build), a model's forward on them, storages sized as the CUDA build sizes them
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))
with FakeTensorMode(allow_non_fake_inputs=True):
    cuda_model = model.to("cuda:0")
    devices = {p.device.type for p in cuda_model.parameters()}
    check(devices == {"cuda"}, "parameters moved to %s, want cuda" % devices)
    x = torch.empty(64, 1024, device="cuda:0")
    check(x.device.type == "cuda", "a fake tensor on device %s, want cuda" % x.device)
    with torch.no_grad():
        y = cuda_model(x)
    check(tuple(y.shape) == (64, 1024) and y.device.type == "cuda", "forward: %s on %s" % (tuple(y.shape), y.device))
    # 64 x 1024 float32 = 262144 B
    check(y.untyped_storage().nbytes() == 64 * 1024 * 4, "output storage of 262144 B")

# Autograd with shape-only tensors runs on the meta device. (On fake CUDA tensors the CPU
# build aborts in AccumulateGrad: it has no CUDA device guard; the recorder runs the
# backward pass on meta tensors for that reason.)
w = torch.empty(4096, 1024, device="meta", requires_grad=True)
y = torch.nn.functional.linear(torch.empty(64, 1024, device="meta"), w)
y.sum().backward()
check(w.grad is not None and tuple(w.grad.shape) == (4096, 1024) and w.grad.is_meta, "the weight's gradient on meta")
# 4096 x 1024 float32 = 16777216 B
check(w.grad.untyped_storage().nbytes() == 4096 * 1024 * 4, "gradient storage of 16777216 B")
finish()
