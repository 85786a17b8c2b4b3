"""Image arrays for the image, figure and video summaries, as PyTorch's
torch/utils/tensorboard/_utils.py lays them out: any dataformats to HWC (a batch as a
grid of 8 columns), matplotlib figures to CHW, a video batch to frames of a grid."""
from __future__ import annotations

import numpy as np


def make_grid(a, ncols=8):
    """N1HW or N3HW images as one 3HW canvas, row by row, the last row padded black."""
    if not isinstance(a, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if a.shape[1] == 1:
        a = np.concatenate([a] * 3, 1)
    if a.ndim != 4 or a.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = a.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=a.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = a[i]
    return canvas


def to_hwc(a, dataformats):
    """HWC with 3 (or 4) channels: a gray image repeated, a batch as make_grid's grid."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if a.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {a.shape}, input_format: {dataformats}")
    fmt = dataformats.upper()
    if len(fmt) == 4:
        return make_grid(a.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = a.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([a.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def figure_to_image(figures, close=True):
    """A matplotlib figure as a CHW uint8 array (a list of them as NCHW), drawn by Agg."""
    import matplotlib.backends.backend_agg as agg
    import matplotlib.pyplot as plt

    def render(figure):
        canvas = agg.FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(figure)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def video_frames(v):
    """NTCHW to THWC frames: the batch padded to a power of two and laid out as a grid
    2**(floor(log2 N)/2) rows high; uint8 scaled to [0, 1]."""
    b, t, c, h, w = v.shape
    if v.dtype == np.uint8:
        v = np.float32(v) / 255.0
    if b & (b - 1):
        v = np.concatenate((v, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), axis=0)
    rows = 2 ** ((b.bit_length() - 1) // 2)
    v = v.reshape(rows, v.shape[0] // rows, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return v.reshape(t, rows * h, -1, c)
