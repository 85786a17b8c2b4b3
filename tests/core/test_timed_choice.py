"""timed_choice.TimedChoice: both ways tried, the faster one kept, the other re-timed
every EXPLORE-th call, a change of times followed (a fake clock: no timed assertions)."""
from dispatchtorch_cpu import timed_choice as TC


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _ways(clock, cost, log):
    def way(i):
        def run(arg):
            log.append((i, arg))
            clock.now += cost[i]
        return run
    return way(0), way(1)


def _setup(monkeypatch, cost):
    """A fresh TimedChoice on a fake clock, and two ways costing cost[0], cost[1]."""
    clock = _Clock()
    monkeypatch.setattr(TC, "perf_counter", clock)
    log = []
    first, second = _ways(clock, cost, log)
    return TC.TimedChoice(), first, second, log


def _calls(choice, key, n, first, second, log):
    del log[:]
    for k in range(n):
        choice.run(key, first, second, k)
    return [i for i, _ in log]


def test_tries_both_then_keeps_the_faster_and_explores(monkeypatch):
    cost = [3.0, 1.0]
    choice, first, second, log = _setup(monkeypatch, cost)
    ways = _calls(choice, "k", 6 + 4 * TC.EXPLORE, first, second, log)
    assert sorted(ways[:2 * TC.KEPT]) == [0] * TC.KEPT + [1] * TC.KEPT     # both timed
    later = ways[2 * TC.KEPT:]
    assert later.count(0) == 4 and later.count(1) == len(later) - 4       # second kept
    assert [arg for _, arg in log] == list(range(len(ways)))               # args passed


def test_follows_a_change_of_load(monkeypatch):
    cost = [1.0, 2.0]
    choice, first, second, log = _setup(monkeypatch, cost)
    assert _calls(choice, "k", 3 * TC.EXPLORE, first, second, log)[-TC.EXPLORE + 1:].count(0) \
        >= TC.EXPLORE - 2
    cost[0] = 5.0                                  # the first way became slow
    ways = _calls(choice, "k", (TC.KEPT + 2) * TC.EXPLORE, first, second, log)
    assert ways[-TC.EXPLORE + 1:].count(1) >= TC.EXPLORE - 2
    assert choice.state["k"][1][-1] == 5.0


def test_keys_are_timed_apart(monkeypatch):
    cost = [1.0, 2.0]
    choice, first, second, log = _setup(monkeypatch, cost)
    _calls(choice, "a", 20, first, second, log)
    assert choice.state["a"][0] == 20 and "b" not in choice.state
    _calls(choice, "b", 1, first, second, log)
    assert choice.state["b"][0] == 1 and choice.state["b"][1] == [1.0]
