"""The DataPipe API (torch.utils.data's IterDataPipe / MapDataPipe and its decorators)
against PyTorch's: the same pipelines give the same items; the switches and checks
raise as PyTorch's do."""
from __future__ import annotations

import warnings

import pytest

import dispatchtorch.utils.data as ours

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*DataPipe.*")
theirs = torch.utils.data


def _source(lib, n=9):
    class Source(lib.IterDataPipe):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n
    return Source()


def _map_source(lib, n=7):
    class Items(lib.MapDataPipe):
        def __getitem__(self, i):
            if not 0 <= i < n:
                raise IndexError(i)
            return i * 10

        def __len__(self):
            return n
    return Items()


PIPELINES = {
    "map-filter-batch": lambda dp: dp.map(lambda x: x * 3).filter(lambda x: x % 2 == 1).batch(2),
    "batch-drop-last": lambda dp: dp.batch(4, drop_last=True),
    "batch-unbatch": lambda dp: dp.batch(2).batch(2).unbatch(),
    "unbatch-all": lambda dp: dp.batch(2).batch(3).unbatch(unbatch_level=-1),
    "zip-concat": lambda dp, fresh: dp.zip(fresh().map(str)).concat(fresh().map(lambda x: (x, x))),
}


@pytest.mark.parametrize("name", list(PIPELINES))
def test_iter_pipelines_match_pytorch(name):
    def run(lib):
        make = PIPELINES[name]
        pipe = make(_source(lib), lambda: _source(lib)) if name == "zip-concat" \
            else make(_source(lib))
        return [list(b) if isinstance(b, list) else b for b in pipe]
    got, want = run(ours), run(theirs)
    assert got == want


def test_filter_must_return_a_bool_as_in_pytorch():
    for lib in (ours, theirs):
        with pytest.raises(ValueError, match="Boolean output is required"):
            list(_source(lib).filter(lambda x: x % 2))


def test_map_pipelines_and_data_chunks_match_pytorch():
    for lib in (ours, theirs):
        dp = _map_source(lib).map(lambda x: x + 1).batch(3)
        assert len(dp) == 3 and list(dp[2]) == [61]
        assert isinstance(dp[0], lib.DataChunk) and dp[0].as_str("  ") == "  [1, 11, 21]"
        cat = _map_source(lib).concat(_map_source(lib, 2))
        assert len(cat) == 9 and cat[8] == 10


def test_functional_datapipe_registers_a_method():
    @ours.functional_datapipe("dropin_double")
    class Double(ours.IterDataPipe):
        def __init__(self, dp):
            self.dp = dp

        def __iter__(self):
            return (2 * x for x in self.dp)
    assert list(_source(ours, 3).dropin_double()) == [0, 2, 4]
    with pytest.raises(TypeError, match="can only decorate IterDataPipe"):
        ours.functional_datapipe("x")(int)
    with pytest.raises(AttributeError):
        _source(ours).no_such_function


def test_determinism_guard_and_validation_decorators():
    @ours.non_deterministic
    class Shuffled(ours.IterDataPipe):
        def __init__(self, dp):
            self.dp = dp

        def __iter__(self):
            return iter(self.dp)
    Shuffled(_source(ours))
    with ours.guaranteed_datapipes_determinism():
        with pytest.raises(TypeError, match="Shuffled is non-deterministic"):
            Shuffled(_source(ours))
    Shuffled(_source(ours))

    class Typed(ours.IterDataPipe[int]):
        @ours.argument_validation
        def __init__(self, dp: ours.IterDataPipe[int], bad=False):
            self.dp, self.bad = dp, bad

        @ours.runtime_validation
        def __iter__(self):
            for x in self.dp:
                yield str(x) if self.bad else x
    assert list(Typed(_source(ours, 3))) == [0, 1, 2]
    with pytest.raises(TypeError, match="Expected argument 'dp' as a IterDataPipe"):
        Typed([1, 2])
    with pytest.raises(RuntimeError, match="Expected an instance as subtype of"):
        list(Typed(_source(ours, 2), bad=True))
    with ours.runtime_validation_disabled():
        assert list(Typed(_source(ours, 2), bad=True)) == ["0", "1"]
    assert issubclass(ours.DFIterDataPipe, ours.IterDataPipe)
