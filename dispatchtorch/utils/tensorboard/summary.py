"""Summary protocol buffers for scalars, tensors, histograms, text, images, video and
audio, as PyTorch's torch/utils/tensorboard/summary.py builds them (same fields, same
bins), from numpy."""
from __future__ import annotations

import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ...ops import view_as_real
from ._convert import to_numpy
from ._hparams import hparams
from ._images import to_hwc, video_frames
from ._plugins import compute_curve, custom_scalars, mesh, pr_curve, pr_curve_raw

# PyTorch's summary module holds every summary builder; the plugins' live in their files
__all__ = ["hparams", "scalar", "histogram_raw", "histogram", "image", "image_boxes", "video",
           "audio", "custom_scalars", "text", "tensor_proto", "pr_curve_raw", "pr_curve",
           "compute_curve", "mesh"]


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


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def _float_bits(t):
    """PyTorch's half_val: each value's float32 bit pattern as an int."""
    return np.asarray(t.flatten().float().tolist(), np.float32).view(np.int32).tolist()


def _complex_parts(t):
    return view_as_real(t).flatten().tolist()


def _values(t):
    return t.flatten().tolist()


# dtype name: (TensorProto dtype, value field, the values), PyTorch's table
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _float_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", _float_bits),
    "float32": ("DT_FLOAT", "float_val", _values),
    "float64": ("DT_DOUBLE", "double_val", _values),
    "int8": ("DT_INT8", "int_val", _values),
    "uint8": ("DT_UINT8", "uint32_val", _values),
    "int16": ("DT_INT16", "int_val", _values),
    "int32": ("DT_INT32", "int_val", _values),
    "int64": ("DT_INT64", "int64_val", _values),
    "complex32": ("DT_COMPLEX32", "scomplex_val", _complex_parts),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", _values),
}


def tensor_proto(tag, tensor):
    """The whole tensor, its values in the field PyTorch's type table names."""
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).rsplit(".", 1)[-1]
    if name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype torch.{name}")
    dtype, field, values = _TENSOR_TYPES[name]
    proto = TensorProto(dtype=dtype, tensor_shape=TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=n) for n in tensor.shape]), **{field: values(tensor)})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def text(tag, string):
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def image(tag, img, rescale=1, dataformats="NCHW", boxes=None, labels=None):
    """A PNG (pillow) of img, boxes drawn in red: uint8 as it is, other dtypes taken as
    [0, 1] and scaled; the proto keeps the size before rescale (as PyTorch's)."""
    from PIL import Image
    a = to_hwc(to_numpy(img), dataformats)
    scale = 1 if a.dtype == np.uint8 else 255
    a = (a.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = a.shape
    pic = Image.fromarray(a)
    if boxes is not None:
        _draw_boxes(pic, to_numpy(boxes), labels)
    pic = pic.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    png = io.BytesIO()
    pic.save(png, format="PNG")
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=png.getvalue()))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    return image(tag, tensor_image, rescale, dataformats, tensor_boxes, labels)


def _draw_boxes(pic, boxes, labels):
    """xyxy boxes as 2-pixel red outlines, each label on a red band above its bottom edge."""
    from PIL import ImageDraw, ImageFont
    font, draw = ImageFont.load_default(), ImageDraw.Draw(pic)
    for i, (left, top, right, bottom) in enumerate(boxes[:, :4]):
        draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
                  width=2, fill="Red")
        label = None if labels is None else labels[i]
        if label:
            x0, y0, x1, y1 = font.getbbox(label)
            margin = np.ceil(0.05 * (y1 - y0))
            draw.rectangle([(left, bottom - (y1 - y0) - 2 * margin), (left + x1 - x0, bottom)],
                           fill="Red")
            draw.text((left + margin, bottom - (y1 - y0) - margin), label, fill="black",
                      font=font)


def video(tag, vid, fps=4):
    """A GIF of the frames, written with moviepy's editor; without moviepy, PyTorch's
    message and a value with the tag only (what PyTorch writes then)."""
    a = video_frames(to_numpy(vid))
    scale = 1 if a.dtype == np.uint8 else 255
    a = (a.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=_gif(a, fps))])


def _gif(frames, fps):
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor as mpy
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.",
              "Some packages could be missing [imageio, requests]")
        return None
    import tempfile
    _, h, w, c = frames.shape
    clip = mpy.ImageSequenceClip(list(frames), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        try:                                    # the keyword moviepy's versions take
            clip.write_gif(f.name, verbose=False, logger=None)
        except TypeError:
            try:
                clip.write_gif(f.name, verbose=False, progress_bar=False)
            except TypeError:
                clip.write_gif(f.name, verbose=False)
        f.seek(0)
        return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=f.read())


def audio(tag, snd, sample_rate=44100):
    """One channel of 16-bit PCM in a WAV file; amplitudes beyond [-1, 1] clipped."""
    import wave
    a = to_numpy(snd).squeeze()
    if abs(a).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        a = a.clip(-1, 1)
    if a.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    a = (a * np.iinfo(np.int16).max).astype("<i2")
    wav = io.BytesIO()
    with wave.open(wav, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(a.data)
    return Summary(value=[Summary.Value(tag=tag, audio=Summary.Audio(
        sample_rate=sample_rate, num_channels=1, length_frames=a.shape[-1],
        encoded_audio_string=wav.getvalue(), content_type="audio/wav"))])
