"""What the CUDA build of PyTorch allocates that a CPU run with shape-only tensors does not.

Each rule says which PyTorch source it models (the 2.13/2.14 releases, read upstream);
record_trace.py applies them while it records. The rules, in one table (RULES) so that the
docs and the tests name the same ones:

cublas_workspace   aten/src/ATen/cuda/CublasHandlePool.cpp: the first cuBLAS call on a
                   (handle, stream) pair asks the caching allocator for a workspace that is
                   kept until exit (setWorkspaceForHandle / getNewWorkspace); its size is the
                   sum of SIZE KiB x COUNT over CUBLAS_WORKSPACE_CONFIG's ":SIZE:COUNT" pairs,
                   by default 4096 KiB x 8 = 32 MiB on compute capability 9.0 and
                   4096 KiB x 2 + 16 KiB x 8 = 8 MiB + 128 KiB elsewhere
                   (parseChosenWorkspaceSize).
                   The autograd engine runs backward on a thread of its own per CUDA device
                   (torch/csrc/autograd/engine.cpp), and the handle pool gives each thread its
                   own handle (the thread-local PoolWindow), so backward's first cuBLAS call
                   allocates a second workspace. The workspace is taken when the kernel calls
                   cuBLAS, after the op allocated its output.
cublas_operand_copy aten/src/ATen/native/cuda/Blas.cpp prepare_matrix_for_cublas and
                   prepare_batch_matrix_for_cublas: an operand of mm, bmm, addmm or baddbmm
                   whose last two dimensions are neither row-major nor column-major with a
                   usable leading dimension (an expanded gradient, stride 0) is first copied
                   contiguous; the copy lives for the call.
cublaslt_workspace same file: addmm with a 1-D bias runs through cuBLASLt (gemm_and_bias),
                   whose workspace is a second allocation per (handle, stream) of
                   CUBLASLT_WORKSPACE_SIZE KiB (default 1024), capped at the cuBLAS workspace;
                   TORCH_CUBLASLT_UNIFIED_WORKSPACE=1 shares the cuBLAS one instead
                   (getCUDABlasLtWorkspace, getCUDABlasLtWorkspaceSize).
sdpa_backend       aten/src/ATen/native/transformers/cuda/sdp_utils.cpp: scaled_dot_product_
                   attention tries flash, then memory-efficient, then math. Flash needs
                   compute capability 8.0 or more, float16/bfloat16, no attention mask and a
                   head size of at most 256; memory-efficient needs 5.0 or more (bfloat16:
                   8.0) and takes a mask; math materialises the attention matrix. What each
                   saves for backward is its autograd formula's (tools/autograd/
                   derivatives.yaml): flash and memory-efficient keep q, k, v, the output and
                   the float32 log-sum-exp, math keeps the softmax.
sdpa_rng_host      aten/src/ATen/native/transformers/cuda/attention.cu: without dropout the
                   flash and memory-efficient kernels return their RNG seed and offset as
                   empty host tensors, never device memory.
optimizer_foreach  torch/optim/optimizer.py _default_to_fused_or_foreach: on CUDA, Adam, AdamW,
                   SGD and the others default to their foreach (multi-tensor) implementation,
                   whose temporaries (_foreach_sqrt of every exp_avg_sq, ...) are live together;
                   fused=True runs the fused kernels, which allocate none.
subclass_like_branch aten/src/ATen/TensorSubclassLikeUtils.h: a meta tensor, or any tensor while
                   a dispatch mode is on, counts as "subclass-like", and autograd formulas of
                   torch/csrc/autograd/FunctionsManual.cpp then take their out-of-place branch
                   (value_selecting_reduction_backward: zeros then scatter instead of
                   scatter_; index_backward: index_put instead of index_put_), which allocates
                   a second buffer the CUDA build does not. In backward, such an op on the
                   buffer allocated just before it is recorded as the CUDA build runs it: in
                   place, no new block.
grad_accumulate_in_place torch/csrc/autograd/input_buffer.cpp accumulate(): when two gradients
                   of one input meet, the engine adds the second into the first in place if the
                   first is dense, unshared and not subclass-like (else into the second, else
                   out of place); meta tensors are subclass-like, so the CPU run allocates a
                   sum the CUDA build does not. An add the engine makes after the node's formula
                   ran is recorded in place into the dense operand.
autocast           aten/src/ATen/autocast_mode.cpp (the CUDA lists) and torch/amp/autocast_mode.py:
                   autocast("cuda") never touches meta tensors, so the recorder casts as its
                   CUDA dispatch key would: matmuls, convolutions and attention take their
                   floating-point inputs in the autocast dtype (lower_precision_fp), the
                   float32 list (softmax, norms, losses, exp, log, sum, ...) in float32; a
                   parameter's cast (a leaf that requires grad) is cached until the outermost
                   autocast region exits (cached_cast, clear_autocast_cache). Only the ops
                   called from Python are cast (an op inside a composite one is cast where the
                   composite's inputs are).
collective_wrap_alias torch/distributed/_functional_collectives.py:1325 _wrap_tensor_autograd
                   (2.13.0): a functional collective's result (tensor parallelism's
                   all-reduce, all-gather) is wrapped for autograd in an AsyncCollectiveTensor
                   over the same memory; the op's meta kernel (its register_fake, :1346)
                   returns a new empty_like tensor instead.
                   Recorded as the CUDA build runs it: an alias, no new block.
composite_in_inference c10/core/DispatchKeySet.cpp (math_dispatch_keyset): a
                   CompositeImplicitAutograd kernel (einsum, linear, matmul, reshape,
                   where with a scalar) serves the autograd and backend keys, not the Python
                   key. With autograd on, the dispatcher decomposes such an op before a
                   dispatch mode sees it; under torch.inference_mode no autograd key is
                   dispatched and the mode receives the op whole, where the CUDA build runs its
                   decomposition: einsum's bmm (and so the cuBLAS workspace), the contiguous
                   copy of an operand it cannot view as 3-D, where's scalar made a 0-d device
                   tensor. The recorder runs that decomposition under its mode, as
                   torch/_subclasses/fake_tensor.py does (func.decompose).
host_memory        pinned host memory (pin_memory, the DataLoader's pin_memory=True) and CPU
                   tensors are not device memory: left out.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Mapping, Optional, Tuple

#: rule name -> the PyTorch source it models (the docstring above says how)
RULES: Dict[str, str] = {
    "cublas_workspace": "aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize, setWorkspaceForHandle",
    "cublas_operand_copy": "aten/src/ATen/native/cuda/Blas.cpp prepare_(batch_)matrix_for_cublas",
    "cublaslt_workspace": "aten/src/ATen/cuda/CublasHandlePool.cpp getCUDABlasLtWorkspace(Size)",
    "sdpa_backend": "aten/src/ATen/native/transformers/cuda/sdp_utils.cpp select_sdp_backend",
    "sdpa_rng_host": "aten/src/ATen/native/transformers/cuda/attention.cu (seed, offset without dropout)",
    "optimizer_foreach": "torch/optim/optimizer.py _default_to_fused_or_foreach",
    "subclass_like_branch": "aten/src/ATen/TensorSubclassLikeUtils.h, torch/csrc/autograd/FunctionsManual.cpp",
    "grad_accumulate_in_place": "torch/csrc/autograd/input_buffer.cpp accumulate",
    "autocast": "aten/src/ATen/autocast_mode.cpp, torch/amp/autocast_mode.py",
    "collective_wrap_alias": "torch/distributed/_functional_collectives.py _wrap_tensor_autograd",
    "composite_in_inference": "c10/core/DispatchKeySet.cpp math_dispatch_keyset (no Python key)",
    "host_memory": "pinned and CPU tensors are not device memory",
}

KIB = 1024
MIB = 1024 * KIB


def parse_capability(cc: str) -> Tuple[int, int]:
    """"8.0" -> (8, 0); ValueError for anything else."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", cc)
    if not m:
        raise ValueError("compute capability: expected MAJOR.MINOR such as 8.0, not %r" % cc)
    return int(m.group(1)), int(m.group(2))


def cublas_workspace_bytes(cc: Tuple[int, int], env: Optional[Mapping[str, str]] = None) -> int:
    """The cuBLAS workspace one (handle, stream) pair gets (rule cublas_workspace)."""
    env = os.environ if env is None else env
    default = 4096 * KIB * 8 if cc == (9, 0) else 4096 * KIB * 2 + 16 * KIB * 8
    config = env.get("CUBLAS_WORKSPACE_CONFIG")
    if config is None:
        return default
    pairs = re.findall(r":([0-9]+):([0-9]+)", config)
    if not pairs:
        return default  # PyTorch warns that it could not parse the variable and keeps the default
    return sum(int(size) * KIB * int(count) for size, count in pairs)


def cublaslt_workspace_bytes(cc: Tuple[int, int], env: Optional[Mapping[str, str]] = None) -> int:
    """The separate cuBLASLt workspace, or 0 when it shares the cuBLAS one (rule cublaslt_workspace)."""
    env = os.environ if env is None else env
    if env.get("TORCH_CUBLASLT_UNIFIED_WORKSPACE", "").strip().lower() in ("1", "true", "on", "yes"):
        return 0
    kib = 1024
    raw = env.get("CUBLASLT_WORKSPACE_SIZE")
    if raw is not None:
        try:
            kib = int(raw)
        except ValueError:
            pass  # PyTorch warns and keeps the default
    return min(kib * KIB, cublas_workspace_bytes(cc, env))


#: the aten ops that reach cuBLAS (at::cuda::blas), by their overload packet's name
CUBLAS_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot", "_addmm_activation",
                        "_scaled_mm", "_int_mm"})


#: the matrix operands' argument positions of the ops whose CUDA kernels prepare them for cuBLAS
CUBLAS_OPERANDS: Dict[str, Tuple[int, ...]] = {
    "mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2), "addbmm": (1, 2), "_addmm_activation": (1, 2),
}


def needs_operand_copy(shape: Tuple[int, ...], stride: Tuple[int, ...]) -> bool:
    """True when cuBLAS cannot read this operand as it is (rule cublas_operand_copy): its last two
    dimensions (rows, cols) are neither row-major (col stride 1, row stride >= max(1, cols)) nor
    column-major (row stride 1, col stride >= max(1, rows))."""
    if len(shape) < 2 or 0 in shape:
        return False
    rows, cols = shape[-2], shape[-1]
    srow, scol = stride[-2], stride[-1]
    if scol == 1 and (srow >= max(1, cols) or rows == 1):
        return False
    if srow == 1 and (scol >= max(1, rows) or cols == 1):
        return False
    return True


def uses_cublaslt(op: str, args: Tuple[Any, ...]) -> bool:
    """addmm (and _addmm_activation) with a 1-D bias goes through cuBLASLt's gemm_and_bias."""
    if op not in ("addmm", "_addmm_activation") or not args:
        return False
    bias = args[0]
    return bool(getattr(bias, "dim", None) is not None and bias.dim() == 1)


def sdpa_backend(cc: Tuple[int, int], dtype_name: str, head_dim: int, has_mask: bool) -> str:
    """"flash", "efficient" or "math" (rule sdpa_backend); dtype_name as in torch ("float16")."""
    half = dtype_name in ("float16", "bfloat16")
    if (cc >= (8, 0) and half and not has_mask and head_dim <= 256):
        return "flash"
    if cc >= (5, 0) and dtype_name in ("float32", "float16", "bfloat16"):
        if dtype_name == "bfloat16" and cc < (8, 0):
            return "math"
        return "efficient"
    return "math"


#: the out-of-place ops that autograd formulas use on meta tensors where the CUDA build runs the
#: in-place form on a buffer it just allocated (rule subclass_like_branch)
IN_PLACE_ON_CUDA = frozenset({"scatter", "scatter_add", "scatter_reduce", "index_put", "_index_put_impl",
                              "index_add", "index_copy", "index_fill", "masked_fill", "masked_scatter"})


#: autocast's lower_precision_fp functions, by the name the Python call has (rule autocast)
AUTOCAST_LOWER = ("linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv",
                  "addr", "mv", "dot", "vdot", "einsum", "chain_matmul", "multi_dot", "conv1d", "conv2d", "conv3d",
                  "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc", "prelu",
                  "scaled_dot_product_attention", "_convolution", "convolution", "cudnn_convolution")
#: autocast's float32 functions (rule autocast)
AUTOCAST_FP32 = ("softmax", "log_softmax", "layer_norm", "group_norm", "rms_norm", "cross_entropy", "nll_loss",
                 "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy_with_logits",
                 "cosine_similarity", "exp", "expm1", "log", "log10", "log2", "log1p", "pow", "reciprocal", "rsqrt",
                 "sum", "prod", "cumsum", "cumprod", "logsumexp", "norm", "dist", "cdist", "pdist", "softplus",
                 "acos", "asin", "cosh", "sinh", "tan", "erfinv")


#: per op: the outputs that are host tensors on the CUDA build when dropout_p (at that
#: argument index) is 0 (rule sdpa_rng_host)
HOST_OUTPUTS: Dict[str, Tuple[int, Tuple[int, ...]]] = {
    "_scaled_dot_product_flash_attention": (3, (6, 7)),
    "_scaled_dot_product_efficient_attention": (5, (2, 3)),
}


#: ops whose CUDA result is a view of their first argument where the meta kernel allocates
#: (rule collective_wrap_alias)
ALIAS_ON_CUDA = frozenset({"_wrap_tensor_autograd"})
