"""torch.utils.tensorboard's SummaryWriter against PyTorch 2.13's: the same calls write
the same events (read back with tensorboard's loader) and files: scalars of tensors
and numbers, add_scalars' runs, histograms with TensorFlow's bins and numpy's, text,
images in each layout and batches, boxes, figures, audio, video without moviepy,
hparams' sub-run, PR curves, custom scalars, meshes, tensors, embeddings' projector
files, ONNX graphs, purge_step's events, writing again after close; the errors PyTorch
raises for bad input. add_graph: our GraphDef against a hand-written one (PyTorch's
node names come from TorchScript), the events around it against PyTorch's."""
import os
import time

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


def _log_plugins(tl, SW, log_dir, rng):
    """Every other add_* but add_graph, the same inputs on both sides."""
    w = SW(log_dir)
    w.add_hparams({"lr": 0.1, "bsize": 32, "opt": "adam", "amsgrad": True, "none": None,
                   "wd": tl.tensor([0.5])}, {"hp/acc": 0.75, "hp/loss": tl.tensor(0.25)},
                  hparam_domain_discrete={"opt": ["adam", "sgd"], "bsize": [16, 32]},
                  run_name="trial1", global_step=3)
    imgs = rng.random((11, 3, 4, 6)).astype(np.float32)
    w.add_images("nchw", tl.tensor(imgs), 1)
    w.add_images("nhwc", (imgs.transpose(0, 2, 3, 1) * 255).astype(np.uint8), 1,
                 dataformats="NHWC")
    w.add_images("gray", tl.tensor(imgs[:, :1]), 1)
    w.add_image("rescaled", tl.tensor(imgs[0]), 1)
    big = rng.random((3, 40, 60)).astype(np.float32)
    boxes = tl.tensor([[2.0, 3.0, 30.0, 20.0], [10.0, 12.0, 50.0, 35.0]])
    w.add_image_with_boxes("boxes", tl.tensor(big), boxes, 2, labels=["cat", "dog"])
    w.add_image_with_boxes("boxes_nolabel", tl.tensor(big), boxes, 2, rescale=2,
                           labels=["only one"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figs = []
    for k in range(2):
        fig = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot([0, 1, 2], [k, 2 - k, 1])
        figs.append(fig)
    w.add_figure("fig", figs[0], 3)
    w.add_figure("figs", figs, 3)
    w.add_video("video", tl.tensor(rng.random((3, 2, 3, 4, 5)).astype(np.float32)), 4)
    w.add_audio("audio", tl.tensor(np.sin(np.arange(800) / 10.0) * 1.2), 5, sample_rate=8000)
    w.add_histogram_raw("raw", 0.0, 5.0, 10, 20.0, 60.0, [1.0, 3.0, 5.0], [2, 5, 3], 6)
    labels = rng.integers(0, 2, 50)
    preds = rng.random(50)
    w.add_pr_curve("pr", tl.tensor(labels), tl.tensor(preds), 7, num_thresholds=20)
    w.add_pr_curve("pr_weighted", labels, preds.astype(np.float32), 7, num_thresholds=300,
                   weights=rng.random(50))
    counts = [tl.tensor(rng.random(5)) for _ in range(6)]
    w.add_pr_curve_raw("pr_raw", *counts, global_step=8, num_thresholds=5)
    w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                          "USA": {"dow": ["Margin", ["dow/a", "dow/b", "dow/c"]]}})
    w.add_custom_scalars_multilinechart(["a", "b"], category="cat", title="lines")
    w.add_custom_scalars_marginchart(["a", "lo", "hi"])
    verts = tl.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
    colors = tl.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]],
                       dtype=tl.int32)
    faces = tl.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=tl.int32)
    w.add_mesh("mesh", verts, colors=colors, faces=faces, global_step=9, config_dict={
        "material": {"size": 2}, "camera": {"fov": 75, "cls": "PerspectiveCamera"}})
    w.add_mesh("cloud", verts, global_step=9)
    for dtype in (tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int8, tl.uint8,
                  tl.int16, tl.int32, tl.int64, tl.bool, tl.complex64, tl.complex128):
        w.add_tensor("t_" + str(dtype).rsplit(".")[-1],
                     (tl.arange(6).reshape(2, 3) * 0.7 + 0.3).to(dtype), 10)
    emb = rng.standard_normal((10, 4)).astype(np.float32)
    w.add_embedding(tl.tensor(emb), metadata=[f"p{i}" for i in range(10)],
                    label_img=tl.tensor(rng.random((10, 3, 4, 5)).astype(np.float32)),
                    global_step=2, tag="feat/a%b")
    w.add_embedding(emb[:3], metadata=[[i, "x"] for i in range(3)],
                    metadata_header=["id", "name"])
    w.add_onnx_graph(_onnx_file(os.path.dirname(log_dir)))
    w.close()


def _onnx_file(where):
    """A two-op ONNX model: y = relu(x @ W)."""
    import onnx
    from onnx import TensorProto, helper
    path = os.path.join(where, "tiny.onnx")
    if not os.path.exists(path):
        g = helper.make_graph(
            [helper.make_node("MatMul", ["x", "W"], ["h"]),
             helper.make_node("LeakyRelu", ["h"], ["y"], alpha=0.1)], "tiny",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
            [helper.make_tensor("W", TensorProto.FLOAT, [3, 4], [0.5] * 12)])
        onnx.save(helper.make_model(g), path)
    return path


def _files(root):
    """{path relative to root: bytes} of everything but the event files."""
    out = {}
    for path, _, files in os.walk(root):
        for name in files:
            if "tfevents" not in name:
                with open(os.path.join(path, name), "rb") as f:
                    out[os.path.relpath(os.path.join(path, name), root)] = f.read()
    return out


def test_plugins_write_pytorchs_events_and_files(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("onnx")
    from torch.utils.tensorboard import SummaryWriter as TorchSW
    _log_plugins(torch, TorchSW, str(tmp_path / "theirs"), np.random.default_rng(1))
    _log_plugins(dt, SummaryWriter, str(tmp_path / "ours"), np.random.default_rng(1))
    theirs, ours = _events(tmp_path / "theirs"), _events(tmp_path / "ours")
    assert set(ours) == set(theirs) == {".", "trial1"}
    for run in theirs:
        assert len(ours[run]) == len(theirs[run]), run
        for a, b in zip(ours[run], theirs[run]):
            assert a == b, run
    hp_tags = [v["tag"] for e in ours["trial1"] for v in e.get("summary", {}).get("value", [])]
    assert hp_tags == ["_hparams_/experiment", "_hparams_/session_start_info",
                       "_hparams_/session_end_info", "hp/acc", "hp/loss"]
    files = _files(tmp_path / "ours")
    assert files == _files(tmp_path / "theirs")
    assert sorted(files) == ["00000/default/metadata.tsv", "00000/default/tensors.tsv",
                             "00002/feat%2fa%25b/metadata.tsv", "00002/feat%2fa%25b/sprite.png",
                             "00002/feat%2fa%25b/tensors.tsv", "projector_config.pbtxt"]
    assert files["00000/default/metadata.tsv"] == b"id\tname\n0\tx\n1\tx\n2\tx\n"
    out = capsys.readouterr().out
    assert "add_video needs package moviepy" in out and "auto clipped" in out


def test_hparams_default_run_is_a_timestamp(tmp_path):
    before = time.time()
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0})
    (run,) = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert before <= float(run) <= time.time()


def test_plugin_errors_as_pytorch(tmp_path, monkeypatch):
    from torch.utils.tensorboard import SummaryWriter as TorchSW
    ours, theirs = SummaryWriter(str(tmp_path / "o")), TorchSW(str(tmp_path / "t"))
    for w, tl in ((ours, dt), (theirs, torch)):
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list"):
            w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(ValueError, match="one of int, float, str, bool"):
            w.add_hparams({"lr": [0.1]}, {})
        with pytest.raises(AssertionError, match="Expected 3 tags, got 2"):
            w.add_custom_scalars_marginchart(["a", "b"])
        with pytest.raises(AssertionError, match=r"len\(tags\) != 3"):
            w.add_custom_scalars({"c": {"m": ["Margin", ["a"]]}})
        with pytest.raises(ValueError, match="bucket_counts"):
            w.add_histogram_raw("r", 0, 1, 2, 1, 1, [1.0, 2.0], [2])
        with pytest.raises(AssertionError, match="1 dimensional"):
            w.add_audio("a", tl.zeros(2, 5))
        with pytest.raises(AssertionError, match="#labels should equal"):
            w.add_embedding(tl.zeros(3, 2), metadata=["a"], tag="bad")
        with pytest.raises(AssertionError, match="mat should be 2D"):
            w.add_embedding(tl.zeros(3), tag="bad1d")
        with pytest.raises(AssertionError, match="same dimension shorthand twice"):
            w.add_images("i", np.zeros((2, 3, 4, 4)), dataformats="NCHH")
        monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
        with pytest.raises(ImportError):
            w.add_figure("f", object())
        monkeypatch.undo()
        w.close()
        with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
            w.add_graph(tl.nn.Linear(3, 2))


def test_video_frames_as_pytorchs_grid():
    """The frames add_video hands moviepy (not installed here, so not in the events)."""
    from torch.utils.tensorboard._utils import _prepare_video

    from dispatchtorch.utils.tensorboard._images import video_frames
    rng = np.random.default_rng(2)
    for b in (1, 2, 3, 5, 8):
        v = rng.random((b, 2, 3, 4, 5)).astype(np.float32)
        np.testing.assert_array_equal(video_frames(v), _prepare_video(v))
    v = rng.integers(0, 256, (3, 2, 1, 4, 5)).astype(np.uint8)
    np.testing.assert_array_equal(video_frames(v), _prepare_video(v))


def _graph_events(root):
    """(GraphDef nodes as (name, op, inputs, output shapes, attr), the other events; the
    loader adds the graph again as a __run_graph__ summary: taken out, once checked)."""
    import base64

    from tensorboard.compat.proto.graph_pb2 import GraphDef
    (events,) = _events(root).values()
    raw = events[1].pop("graphDef")
    (copy,) = events.pop(2)["summary"]["value"]
    assert copy["tag"] == "__run_graph__" and copy["tensor"]["stringVal"] == [raw]
    graph = GraphDef.FromString(base64.b64decode(raw))
    nodes = [(n.name, n.op, list(n.input),
              [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape],
              n.attr["attr"].s.decode()) for n in graph.node]
    return nodes, events


def test_add_graph_of_a_sequential(tmp_path):
    """PyTorch's node names and ops come from TorchScript (input/input.1, aten::linear,
    prim::GetAttr weight nodes); ours from dispatchtorch's capture: the same scopes,
    inputs, outputs and shapes, our own node names, written in the same two events."""
    from torch.utils.tensorboard import SummaryWriter as TorchSW
    for tl, SW, name in ((torch, TorchSW, "theirs"), (dt, SummaryWriter, "ours")):
        model = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
        model.train()
        with SW(str(tmp_path / name)) as w:
            w.add_graph(model, tl.randn(5, 3))
        assert model.training                      # traced in eval mode, then restored
    ours, ours_events = _graph_events(tmp_path / "ours")
    theirs, theirs_events = _graph_events(tmp_path / "theirs")
    assert ours_events == theirs_events           # file version, the step1 run metadata
    s, lin0, lin2 = "Sequential", "Sequential/Linear[0]", "Sequential/Linear[2]"
    f32 = "{ dtype : float32 }"
    assert ours == [
        ("input/input", "IO Node", [], [[5, 3]], f32),
        (lin0 + "/weight", "Parameter", [], [[4, 3]], f32),
        (lin0 + "/bias", "Parameter", [], [[4]], f32),
        (lin2 + "/weight", "Parameter", [], [[2, 4]], f32),
        (lin2 + "/bias", "Parameter", [], [[2]], f32),
        (lin0 + "/linear_0", "linear", ["input/input", lin0 + "/weight", lin0 + "/bias"],
         [[5, 4]], "{}"),
        (s + "/ReLU[1]/relu_1", "relu", [lin0 + "/linear_0"], [[5, 4]], "{}"),
        (lin2 + "/linear_2", "linear", [s + "/ReLU[1]/relu_1", lin2 + "/weight",
                                        lin2 + "/bias"], [[5, 2]], "{}"),
        ("output/out[0]", "IO Node", [lin2 + "/linear_2"], [[5, 2]], ""),
    ]
    # PyTorch's: the same op scopes and shapes under TorchScript's names
    ops = [(n[0].rsplit("/", 1)[0], n[1], n[3]) for n in theirs if n[1].startswith("aten::")]
    assert ops == [(lin0, "aten::linear", [[5, 4]]), (s + "/ReLU[1]", "aten::relu", [[5, 4]]),
                   (lin2, "aten::linear", [[5, 2]])]


def test_add_graph_follows_writes_through_views(tmp_path):
    """An in-place write into a slice: the reader after it reads the write, not the
    value before; constants carry their value."""
    class Net(dt.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = dt.nn.Linear(4, 2)

        def forward(self, x):
            y = x + 1.0
            y[:, 0] *= 2
            return self.fc(y)

    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Net(), (dt.randn(3, 4),))
    nodes, _ = _graph_events(tmp_path)
    by_name = {n[0]: n for n in nodes}
    (fc,) = [n for n in nodes if n[1] == "linear"]
    assert fc[0].startswith("Net/Linear[fc]/linear_")
    (copy,) = [n for n in nodes if n[1] == "copy_"]
    assert fc[2][0] == copy[0] and fc[2][1:] == ["Net/Linear[fc]/weight", "Net/Linear[fc]/bias"]
    assert [n[4] for n in nodes if n[1] == "Constant"] == [
        "{ dtype : float32, value : 1.0 }", "{ dtype : float32, value : 2.0 }"]
    assert by_name["output/out[0]"][2] == [fc[0]]


def test_summary_module_builders_as_pytorchs():
    """`from torch.utils.tensorboard.summary import hparams` (hparams in the run itself,
    through writer.file_writer.add_summary) and the other builders give PyTorch's protos."""
    import torch.utils.tensorboard.summary as theirs
    from google.protobuf.json_format import MessageToDict

    import dispatchtorch.utils.tensorboard.summary as ours
    hp = ({"lr": 0.01, "layers": 3, "act": "gelu"}, {"val/acc": 0.5}, {"act": ["gelu", "relu"]})
    for a, b in zip(ours.hparams(*hp), theirs.hparams(*hp)):
        assert MessageToDict(a) == MessageToDict(b)
    labels, preds = np.array([0, 1, 1, 0, 1]), np.array([0.1, 0.8, 0.4, 0.3, 0.9])
    for a, b in ((ours.pr_curve("p", labels, preds, 9), theirs.pr_curve("p", labels, preds, 9)),
                 (ours.image_boxes("b", np.ones((3, 8, 8)), np.array([[1, 1, 6, 6]])),
                  theirs.image_boxes("b", np.ones((3, 8, 8)), np.array([[1, 1, 6, 6]]))),
                 (ours.tensor_proto("t", dt.tensor([1.5, 2.5], dtype=dt.float16)),
                  theirs.tensor_proto("t", torch.tensor([1.5, 2.5], dtype=torch.float16)))):
        assert MessageToDict(a) == MessageToDict(b)
    assert set(ours.__all__) <= set(theirs.__all__)
