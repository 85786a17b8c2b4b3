"""dispatchtorch.autograd loads its high-level parts (engine, Function, gradcheck, anomaly
mode) on first use, so that the ops below can import grad_mode: every name it lists must
then resolve (a listed submodule that does not exist made hasattr() raise ImportError)."""
import dispatchtorch as torch


def test_every_listed_name_resolves():
    for name in torch.autograd.__all__:
        assert getattr(torch.autograd, name) is not None, name
    assert not hasattr(torch.autograd, "no_such_part")
