"""Summary protocol buffers for scalars, histograms, text and images, as PyTorch's
torch/utils/tensorboard/summary.py builds them (same fields, same bins), from numpy."""
from __future__ import annotations

import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._dtype import bfloat16
from ..._tensor import Tensor


def to_numpy(x):
    """A tensor, a numpy array or a Python number as an array (a number as shape (1,),
    bfloat16 through float16, as PyTorch's make_np)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.detach()
        if x.dtype is bfloat16:
            x = x.half()
        return x.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name, value, new_style=False, double_precision=False):
    v = to_numpy(value).squeeze()
    if v.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {v.size} and {v.ndim} dimensions.")
    v = float(v)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=v)])
    proto = TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision else \
        TensorProto(float_val=[v], dtype="DT_FLOAT")
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


def default_bins():
    """TensorFlow's histogram bucket limits: +-1e-12 growing by 10% to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


def histogram(name, values, bins, max_bins=None):
    values = to_numpy(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        every = len(counts) // max_bins
        if len(counts) % every:
            counts = np.pad(counts, (0, every - len(counts) % every))
        counts = counts.reshape(-1, every).sum(axis=-1)
        limits = np.concatenate([limits[:-1:every], limits[-1:]])
    # TensorBoard stores right bin limits only: keep the occupied range and one empty bin
    # left of it (an added one when the first bin is occupied)
    occupied = np.cumsum(counts > 0)
    start, end = (int(i) for i in np.searchsorted(occupied, [0, occupied[-1] - 1], side="right"))
    end += 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    hist = HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def text(tag, string):
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def _to_hwc(a, dataformats):
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if a.ndim != len(fmt):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {a.shape}, input_format: {dataformats}")
    if len(fmt) == 4:
        raise NotImplementedError("add_image: a batch of images (dataformats with N, a grid "
                                  "of them) is not supported; log each image")
    if len(fmt) == 3:
        hwc = a.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([a.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def image(tag, img, dataformats="CHW"):
    """A PNG (pillow) of img: uint8 as it is, other dtypes taken as [0, 1] and scaled."""
    from PIL import Image
    a = _to_hwc(to_numpy(img), dataformats)
    scale = 1 if a.dtype == np.uint8 else 255
    a = (a.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = a.shape
    png = io.BytesIO()
    Image.fromarray(a).resize((width, height), Image.Resampling.LANCZOS).save(png, format="PNG")
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=png.getvalue()))])
