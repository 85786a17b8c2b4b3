"""Print each example's loss difference and time against PyTorch (a warm-up run of
each first): `python tests/examples_pytorch/compare.py` (needs PyTorch)."""
from __future__ import annotations

import os
import sys



sys.path.insert(0, os.path.dirname(__file__))
import test_examples_pytorch as t  # noqa: E402


def main():
    cases = [(f"test_word_language_model[{m}]", lambda m=m, tied=tied:
              t.test_word_language_model(m, tied))
             for m, tied in (("LSTM", True), ("GRU", False), ("RNN_TANH", False),
                             ("Transformer", False))]
    cases += [("test_dcgan", t.test_dcgan), ("test_vae", t.test_vae),
              ("test_super_resolution", t.test_super_resolution),
              ("test_fast_neural_style", t.test_fast_neural_style)]
    for name, fn in cases:
        fn()                       # warm-up (first calls, caches)
    t.TIMES.clear()
    for name, fn in cases:
        fn()
    print("\n| program | max relative loss difference | dispatchtorch s | PyTorch s |")
    print("| --- | --- | --- | --- |")
    for name, (rel, ours, theirs) in t.TIMES.items():
        print(f"| {name} | {rel:.1e} | {ours:.2f} | {theirs:.2f} |")



if __name__ == "__main__":
    main()
