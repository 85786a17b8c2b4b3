"""The example programs tests/examples_pytorch/test_more_examples.py runs: (module, its
run function). `python tests/examples_pytorch/more_examples_cases.py` runs each with
PyTorch and prints the figures the test holds (PyTorch 2.13 CPU)."""
import os
import sys

CASES = {
    "mnist_rnn": ("mnist_rnn", "run"),
    "mnist_forward_forward": ("mnist_forward_forward", "run"),
    "regression": ("regression", "run"),
    "reinforce": ("reinforcement_learning", "run_reinforce"),
    "actor_critic": ("reinforcement_learning", "run_actor_critic"),
    "gcn": ("graph_networks", "run_gcn"),
    "gat": ("graph_networks", "run_gat"),
    "language_translation": ("language_translation", "run"),
    "siamese_network": ("siamese_network", "run"),
    "imagenet_resnet": ("imagenet_resnet", "run"),
}


def run_case(case, lib):
    from runner import load
    module, fn = CASES[case]
    return getattr(load(module, lib), fn)()


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    torch.set_num_threads(1)
    print(f"# PyTorch {torch.__version__}")
    for case in CASES:
        print(f"    {case!r}: {run_case(case, 'torch')!r},")
