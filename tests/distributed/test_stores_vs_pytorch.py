"""HashStore, FileStore and PrefixStore against PyTorch's: the same operations on both
give the same results and errors; FileStore shared with another process, get blocking."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
import threading
import time

import pytest

import dispatchtorch.distributed as dist

tdist = pytest.importorskip("torch.distributed")
MS = datetime.timedelta(milliseconds=150)


def _script(s):
    """Every operation of the API; the results (exception class names for errors)."""
    out = []

    def do(fn):
        try:
            out.append(fn())
        except Exception as exc:
            out.append(("raised", [c.__name__ for c in type(exc).__mro__][:3], str(exc)
                        if not isinstance(exc, TypeError) else ""))
    do(lambda: s.set("a", "x"))
    do(lambda: s.set("b", b"\xff\x00"))
    do(lambda: (s.get("a"), s.get("b")))
    do(lambda: (s.add("c", 5), s.add("c", -2), s.get("c")))
    do(lambda: s.add("a", 1))
    do(lambda: (s.compare_set("a", "x", "y"), s.get("a")))
    do(lambda: (s.compare_set("a", "zz", "w"), s.get("a")))
    do(lambda: (s.compare_set("new", "", "v"), s.get("new")))
    do(lambda: (s.compare_set("new2", "nonempty", "v"), s.check(["new2"])))
    do(lambda: (s.check(["a", "b"]), s.check(["a", "q"])))
    do(lambda: s.append("k", "ab"))
    do(lambda: (s.append("k", b"cd"), s.get("k")))
    do(lambda: (s.multi_set(["m", "n"], ["1", b"2"]), s.multi_get(["m", "n"])))
    do(lambda: (s.delete_key("a"), s.delete_key("a"), s.check(["a"])))
    do(lambda: s.set("i", 3))
    do(lambda: s.set_timeout(MS))
    do(lambda: s.timeout)
    do(lambda: s.get("missing"))
    do(lambda: s.wait(["missing"]))
    do(lambda: s.wait(["missing"], datetime.timedelta(milliseconds=50)))
    do(lambda: s.wait(["b", "c"]))
    return out


def test_hash_store_as_pytorch():
    assert _script(dist.HashStore()) == _script(tdist.HashStore())
    assert dist.HashStore().timeout == tdist.HashStore().timeout


def test_prefix_store_as_pytorch():
    ours, theirs = dist.HashStore(), tdist.HashStore()
    assert _script(dist.PrefixStore("p", ours)) == _script(tdist.PrefixStore("p", theirs))
    assert ours.get("p/b") == theirs.get("p/b") == b"\xff\x00"
    p = dist.PrefixStore("q", ours)
    assert p.underlying_store is ours and p.num_keys() == ours.num_keys()
    with pytest.raises(TypeError):
        dist.PrefixStore("p", 3)


def test_file_store_as_pytorch(tmp_path):
    ours = dist.FileStore(str(tmp_path / "ours"), 1)
    theirs = tdist.FileStore(str(tmp_path / "theirs"), 1)
    assert ours.num_keys() == theirs.num_keys()
    assert _script(ours) == _script(theirs)
    assert ours.num_keys() == theirs.num_keys()


def test_file_store_removed_after_world_size_closes(tmp_path):
    path = str(tmp_path / "fs")
    a, b = dist.FileStore(path, 2), dist.FileStore(path, 2)
    a.set("x", "1")
    assert b.get("x") == b"1"
    del a
    assert os.path.exists(path)
    del b
    assert not os.path.exists(path)


@pytest.mark.parametrize("put, take", [("set", "get"), ("queue_push", "queue_pop")])
def test_hash_store_blocks_until_another_thread_puts(put, take):
    s = dist.HashStore()
    other = s.clone()                                  # shares the data, as PyTorch's
    threading.Timer(0.2, lambda: getattr(other, put)("late", "v")).start()
    t = time.monotonic()
    assert getattr(s, take)("late") == b"v" and time.monotonic() - t >= 0.15


def test_file_store_shared_with_another_process(tmp_path):
    path = str(tmp_path / "shared")
    s = dist.FileStore(path, 2)
    code = ("import sys, time; import dispatchtorch.distributed as d; s = d.FileStore(sys.argv[1],"
            " 2); time.sleep(0.3); s.set('from_child', b'hi'); print(s.add('n', 10)); "
            "print(s.get('from_parent').decode())")
    p = subprocess.Popen([sys.executable, "-c", code, path], stdout=subprocess.PIPE, text=True,
                         env=os.environ.copy())
    s.set("from_parent", "yo")
    s.add("n", 1)
    assert s.get("from_child") == b"hi"
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0
    assert out.split() == ["11", "yo"] or out.split() == ["10", "yo"]
    s.wait(["n"])
    assert int(s.get("n")) == 11


def test_file_store_instances_alive_at_exit_close_and_remove_the_file(tmp_path):
    path = str(tmp_path / "at_exit")
    code = ("import sys, dispatchtorch.distributed as d; s = d.FileStore(sys.argv[1], 1); "
            "c = s.clone(); s.set('k', 'v')")
    p = subprocess.run([sys.executable, "-c", code, path], env=os.environ.copy(), timeout=60)
    assert p.returncode == 0 and not os.path.exists(path)
