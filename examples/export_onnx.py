"""Export the digits CNN and the tiny transformer to ONNX and run them with onnxruntime.

    python examples/export_onnx.py                    # writes to a temporary directory
    python examples/export_onnx.py --out models/      # keeps the .onnx files

Needs `pip install dispatchtorch[onnx]` (onnx and onnxruntime). Each model is exported
with a dynamic batch axis (opset 17), checked with onnx.checker, run by onnxruntime at
two batch sizes and compared with dispatchtorch's own output; the largest difference
is printed. The digits CNN is trained for one epoch first (or loaded from the
checkpoint examples/train_digits.py wrote), so the comparison runs on real weights;
its ExportedProgram is also saved and loaded back (code-free, safetensors).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

import dispatchtorch as torch
import dispatchtorch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_transformer as tt  # noqa: E402
import train_digits as td  # noqa: E402

TOLERANCE = 1e-4


def digits_cnn(checkpoint):
    """The CNN of train_digits.py: its checkpoint when there is one, else one epoch."""
    model = td.make_model()
    if os.path.exists(checkpoint):
        model.load_state_dict(torch.load(checkpoint)["model"])
        print(f"digits CNN: weights from {checkpoint}")
    else:
        x, y, _, _ = td.load_data("cpu", 0)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        for i in range(0, len(x), 64):
            loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"digits CNN: trained one epoch (loss {loss.item():.3f})")
    _, _, x_te, _ = td.load_data("cpu", 0)
    return model.eval(), x_te


def char_transformer():
    text = open(tt.TEXT, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text[:4000]], dtype=np.int64)
    context = 48
    model = tt.CharTransformer(len(chars), context).eval()
    windows = ids[: (len(ids) // context) * context].reshape(-1, context)
    return model, torch.from_numpy(windows)


def check(name, model, data, path, batches=(1, 7, 32)):
    import onnx
    import onnxruntime as ort
    torch.onnx.export(model, (data[:2],), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    onnx.checker.check_model(onnx.load(path), full_check=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    worst = 0.0
    for n in batches:
        x = data[:n]
        with torch.no_grad():
            want = model(x).numpy()
        got, = session.run(None, {"x": x.numpy()})
        worst = max(worst, float(np.abs(got - want).max()))
    size = os.path.getsize(path) / 1024
    print(f"{name}: {path} ({size:.0f} KiB), onnxruntime vs dispatchtorch at batch "
          f"{', '.join(map(str, batches))}: largest difference {worst:.2e}")
    return worst


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=None, help="directory for the .onnx files")
    p.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(),
                                                        "dispatchtorch_digits_cnn.pt"))
    args = p.parse_args(argv)
    torch.manual_seed(0)
    out = args.out or tempfile.mkdtemp(prefix="dispatchtorch_onnx_")
    os.makedirs(out, exist_ok=True)

    cnn, digits = digits_cnn(args.checkpoint)
    worst = check("digits CNN", cnn, digits, os.path.join(out, "digits_cnn.onnx"))

    ep = torch.export.export(cnn, (digits[:2],),
                             dynamic_shapes=({0: torch.export.Dim("batch")},))
    saved = os.path.join(out, "digits_cnn.dtexport")
    torch.export.save(ep, saved)
    again = torch.export.load(saved).module()(digits[:9])
    with torch.no_grad():
        diff = float((again - cnn(digits[:9])).abs().max())
    print(f"digits CNN: ExportedProgram saved to {saved} and loaded back: largest "
          f"difference {diff:.2e}")

    model, windows = char_transformer()
    worst = max(worst, diff, check("tiny transformer", model, windows,
                                   os.path.join(out, "tiny_transformer.onnx")))
    if worst > TOLERANCE:
        raise SystemExit(f"largest difference {worst:.2e} is above {TOLERANCE}")
    return worst


if __name__ == "__main__":
    main()
