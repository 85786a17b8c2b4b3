"""PyTorch's default DDP communication hooks: plain averaging, and averaging in float16 /
bfloat16 (cast, divide by the world size, all-reduce, cast back)."""
from __future__ import annotations

from .... import distributed as dist
from .... import _dtype

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    """Divide first (no float16 overflow), all-reduce; a Future of the tensor."""
    g = _group(process_group)
    tensor.div_(g.size())
    return dist.all_reduce(tensor, group=g, async_op=True).get_future().then(
        lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The bucket averaged over the ranks: what DDP does without a hook."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    g = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(g.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return dist.all_reduce(compressed, group=g, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average in float16: half the bytes on the wire."""
    return _compress_hook(_dtype.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average in bfloat16 (PyTorch refuses it without CUDA+NCCL 2.10; MPI serves it)."""
    return _compress_hook(_dtype.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapper_hook(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            out = bucket.buffer()
            out.copy_(fut.value())
            return out
        return fut.then(decompress)
    return wrapper_hook


def fp16_compress_wrapper(hook):
    """`hook` run on the bucket cast to float16; its result cast back."""
    w = _compress_wrapper(_dtype.float16, hook)
    w.__name__ = w.__qualname__ = "fp16_compress_wrapper_hook"
    return w


def bf16_compress_wrapper(hook):
    """`hook` run on the bucket cast to bfloat16; its result cast back."""
    w = _compress_wrapper(_dtype.bfloat16, hook)
    w.__name__ = w.__qualname__ = "bf16_compress_wrapper_hook"
    return w
