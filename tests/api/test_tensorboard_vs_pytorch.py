"""torch.utils.tensorboard's SummaryWriter against PyTorch 2.13's: the same calls write
the same events (read back with tensorboard's own loader): scalars of tensors and
numbers, add_scalars' runs, histograms with TensorFlow's bins and numpy's, text, images
in each layout, purge_step's events, writing again after close; the errors PyTorch
raises for bad input."""
import os

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

from dispatchtorch.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(root):
    """{run directory relative to root: [event without wall_time, as a dict]}."""
    from google.protobuf.json_format import MessageToDict
    runs = {}
    for path, _, files in sorted(os.walk(root)):
        for name in sorted(f for f in files if "tfevents" in f):
            events = []
            for ev in EventFileLoader(os.path.join(path, name)).Load():
                ev.ClearField("wall_time")
                events.append(MessageToDict(ev))
            runs.setdefault(os.path.relpath(path, root), []).extend(events)
    return runs


def _log(tl, SW, log_dir, rng):
    x = rng.standard_normal(500).astype(np.float32)
    img = rng.random((3, 6, 5)).astype(np.float32)
    w = SW(log_dir, purge_step=2, flush_secs=1)
    for step in range(3):
        w.add_scalar("loss", tl.tensor(1.5 / (step + 1)), step, walltime=10.0 + step)
        w.add_scalar("lr", 0.1 * step, step, walltime=1.0)
        w.add_scalar("acc", np.float64(0.25 * step), global_step=step, new_style=True)
        w.add_scalars("run/x", {"train": step * 2.0, "val": tl.tensor(step + 0.5)}, step)
    w.add_scalar("exact", tl.tensor(1 / 3, dtype=tl.float64), 0, new_style=True,
                 double_precision=True)
    w.add_scalar("half", tl.tensor(1 / 3, dtype=tl.bfloat16), 0)
    w.add_histogram("weights", tl.tensor(x), 1)
    w.add_histogram("weights_np", x * 3, 2, bins="auto")
    w.add_histogram("few_bins", tl.tensor(x), 3, bins=64, max_bins=10)
    w.add_text("note", "epoch done: ü", 4)
    w.add_image("chw", tl.tensor(img), 5)
    w.add_image("hwc", (img.transpose(1, 2, 0) * 255).astype(np.uint8), 5, dataformats="HWC")
    w.add_image("hw", img[0], 5, dataformats="HW")
    w.close()
    w.add_scalar("after_close", 1.0, 9)             # a new file in the same log_dir
    w.close()
    w.close()                                       # a second close does nothing


def test_summary_writer_writes_pytorchs_events(tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchSW
    _log(torch, TorchSW, str(tmp_path / "theirs"), np.random.default_rng(0))
    _log(dt, SummaryWriter, str(tmp_path / "ours"), np.random.default_rng(0))
    theirs, ours = _events(tmp_path / "theirs"), _events(tmp_path / "ours")
    assert set(ours) == set(theirs) == {".", "run_x_train", "run_x_val"}
    for run in theirs:
        assert ours[run] == theirs[run], run
    tags = [v["tag"] for e in ours["."] for v in e.get("summary", {}).get("value", [])]
    assert "note/text_summary" in tags and "after_close" in tags


def test_default_log_dir_and_context_manager(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        w.add_scalar("a", 1.0, 0)
        assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_lr0.1")
    assert len(os.listdir(tmp_path / "runs")) == 1


def test_bad_input_raises_as_pytorch(tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchSW
    ours, theirs = SummaryWriter(str(tmp_path / "o")), TorchSW(str(tmp_path / "t"))
    for w, tl in ((ours, dt), (theirs, torch)):
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("v", tl.ones(3), 0)
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", np.zeros(0), 0)
        with pytest.raises(AssertionError, match="input format are different"):
            w.add_image("i", np.zeros((3, 4, 4)), 0, dataformats="HW")
        with pytest.raises(NotImplementedError):
            w.add_scalar("s", [1.0], 0)
        w.close()
