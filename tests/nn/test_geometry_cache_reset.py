"""F.pad/interpolate cache index tensors per device; a backend reset must drop them, or the
next call gathers with a tensor of the unloaded backend (a 'cpu and cpu' device error)."""
import dispatchtorch as torch
import dispatchtorch.nn.functional as F
from dispatchtorch.dispatch.loader import reset_backends


def test_pad_and_interpolate_work_after_a_backend_reset():
    def run():
        x = torch.arange(10.).reshape(1, 1, 10)
        return (F.pad(x, (2, 3), mode="reflect").tolist(),
                F.interpolate(x, size=7, mode="nearest").tolist())
    before = run()
    reset_backends()
    assert run() == before
    # hand-computed: reflect pads mirror without repeating the edge
    assert before[0][0][0][:3] == [2.0, 1.0, 0.0] and before[0][0][0][-3:] == [8.0, 7.0, 6.0]
