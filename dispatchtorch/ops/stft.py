"""torch.stft / torch.istft, as ATen's SpectralOps.cpp composes them: padding, framing
(a strided view), the window, one batched FFT, and for istft the overlap-add divided by
the window's squared envelope. Written in public ops, so both are differentiable."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import creation, gather_scatter, memory
from .complex_ops import view_as_real
from .fft_ops import fft as _fft, ifft as _ifft, irfft as _irfft, rfft as _rfft

_NP_PAD = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad(x, p, mode):
    """x padded by p on both ends of its last dim (torch.stft's center padding)."""
    if p == 0:
        return x
    if mode == "constant":
        z = creation.zeros(x.shape[:-1] + (p,), dtype=x.dtype, device=x.device)
        return memory.cat([z, x, z], -1)
    if mode not in _NP_PAD:
        raise RuntimeError(f"stft: unsupported pad_mode {mode!r}; expected 'constant', "
                           f"'reflect', 'replicate' or 'circular'")
    n = x.shape[-1]
    if mode == "reflect" and p >= n:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({p}, {p}) at dimension "
                           f"{x.dim() - 1} of input {list(x.shape)}")
    idx = np.pad(np.arange(n), p, mode=_NP_PAD[mode])
    return gather_scatter.index_select(x, -1, creation.tensor(idx, device=x.device))


def _window(window, win_length, n_fft, like, name):
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    if window is None:
        w = creation.ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    else:
        if window.dim() != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                               f"win_length={win_length}, but got window with size "
                               f"{list(window.shape)}")
        w = window
    if win_length < n_fft:                      # centred in n_fft, zeros around it
        left = (n_fft - win_length) // 2
        w = memory.cat([creation.zeros(left, dtype=w.dtype, device=w.device), w,
                      creation.zeros(n_fft - win_length - left, dtype=w.dtype, device=w.device)])
    return w


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_in = input.dtype.is_complex or window is not None and window.dtype.is_complex
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if not x.dtype.is_grad:
        x = x.float()
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if center:
        x = _pad(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    w = _window(window, win_length, n_fft, x, "stft")
    frames = x.unfold(-1, n_fft, hop) * w        # (B, n_frames, n_fft)
    onesided = (not complex_in) if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (_rfft if onesided else _fft)(frames, dim=-1, norm=norm).transpose(1, 2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else view_as_real(spec.contiguous())


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but "
                           f"got {input.dim()}")
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    n_freq, n_frames = spec.shape[1], spec.shape[2]
    onesided = (n_freq != n_fft) if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {n_freq}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    w = _window(window, win_length, n_fft, spec, "istft")
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(1, 2)                  # (B, n_frames, n_freq)
    if return_complex:
        frames = _ifft(frames, n=n_fft, dim=-1, norm=norm)
    else:       # ATen: a real signal comes from the onesided half, by c2r
        half = frames if onesided else frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = _irfft(half, n=n_fft, dim=-1, norm=norm)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    idx = creation.tensor((np.arange(n_frames)[:, None] * hop + np.arange(n_fft)).reshape(-1),
                      device=spec.device)
    b = frames.shape[0]
    y = creation.zeros((b, total), dtype=frames.dtype, device=spec.device).index_add(
        1, idx, frames.reshape(b, -1))
    env = creation.zeros(total, dtype=w.dtype, device=spec.device).index_add(
        0, idx, (w * w).repeat(n_frames))          # ATen: window.pow(2), complex too
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    stop = min(end, total)
    y, env = y[:, start:stop], env[start:stop]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError("istft(...): window overlap add min: 0")
    y = y / env
    if end > total:
        y = memory.cat([y, creation.zeros((b, end - total), dtype=y.dtype, device=y.device)], 1)
    return y.squeeze(0) if input.dim() == 2 else y


PUBLIC = {"stft": stft, "istft": istft}
METHODS = {"stft": stft, "istft": istft}
