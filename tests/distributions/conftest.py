"""Argument validation on, in both libraries, for every test here: PyTorch's dynamo turns
torch.distributions' default validation off for the whole process once it compiles
anything (torch/_dynamo/eval_frame.py), which an earlier test in the same worker may do
(torch.cond on a tensor predicate compiles)."""
import pytest


@pytest.fixture(autouse=True)
def _validation_on():
    import dispatchtorch.distributions as ours
    try:
        import torch.distributions as theirs
    except ImportError:
        theirs = None
    libs = [ours] + ([theirs] if theirs is not None else [])
    before = [lib.Distribution._validate_args for lib in libs]
    for lib in libs:
        lib.Distribution.set_default_validate_args(True)
    yield
    for lib, value in zip(libs, before):
        lib.Distribution.set_default_validate_args(value)
