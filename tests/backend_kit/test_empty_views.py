"""A fix to the CPU reference found while writing other backends against it: an empty
view whose offset points past the end of its storage (PyTorch allows it)."""
import dispatchtorch as torch


def test_an_empty_view_may_start_past_the_end_of_its_storage():
    x = torch.empty(0, 2)
    v = x[:, 1]
    assert v.shape == (0,) and v.storage_offset() == 1 and v.stride() == (2,)
    coords = torch.nonzero(torch.zeros(3, 2), as_tuple=True)
    assert [c.shape for c in coords] == [(0,), (0,)]
