"""torch.hub's cache directory, downloads and `load_state_dict_from_url`.

The cache is PyTorch's own (`$TORCH_HOME/hub`, ...): a file downloaded from a URL is the
same bytes whichever library asked for it, so both share one copy instead of two."""
from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen

# matches bfd8deac from resnet18-bfd8deac.pth
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


def get_dir():
    """The hub cache: set_dir's, else $TORCH_HOME/hub, $XDG_CACHE_HOME/torch/hub or
    ~/.cache/torch/hub (PyTorch's own, so downloads are shared)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """Use `d` as the hub cache for this process (over the environment variables)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _progress_bar(total, enabled):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None          # no tqdm: the download runs silently rather than pull in a dependency
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)


def _copy(response, f, sha256, bar):
    while buffer := response.read(READ_DATA_CHUNK):
        f.write(buffer)
        if sha256 is not None:
            sha256.update(buffer)
        if bar is not None:
            bar.update(len(buffer))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to `dst` through a temporary file renamed into place, so a download
    that fails (or fails the SHA256 prefix check) never leaves a partial `dst`."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            f = open(tmp, "xb")  # noqa: SIM115  (closed in finally)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            length = u.info().get_all("Content-Length")
            bar = _progress_bar(int(length[0]) if length else None, progress)
            try:
                _copy(u, f, sha256, bar)
            finally:
                if bar is not None:
                    bar.close()
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp, dst)
    finally:
        f.close()
        if os.path.exists(tmp):
            os.remove(tmp)


def _legacy_zip_member(filename):
    """The one file of a pre-1.6 style zipped checkpoint, or None when `filename` is not one."""
    if not zipfile.is_zipfile(filename):
        return None
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return members[0] if len(members) == 1 and not members[0].is_dir() else None


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Download `url` into `model_dir` (default <hub_dir>/checkpoints) unless already there,
    then `dispatchtorch.load` it."""
    from .. import serialization
    from ._zip import safe_extract_zip
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    model_dir = os.path.join(get_dir(), "checkpoints") if model_dir is None else model_dir
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    member = _legacy_zip_member(cached_file)
    if member is not None:
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                      "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                      "to save it in the new zipfile format.", FutureWarning, stacklevel=2)
        with zipfile.ZipFile(cached_file) as zf:
            safe_extract_zip(zf, model_dir)
        cached_file = os.path.join(model_dir, member.filename)
    return serialization.load(cached_file, map_location=map_location, weights_only=weights_only)
