"""The queue operations, list_keys, clone, barrier and has_extended_api on every store
(Hash, File, Prefix, TCP, TCP without libuv) against PyTorch's: equal values, exception
classes and messages, including where PyTorch's store has no queues; queue_pop and
barrier released by another process (another thread: test_stores_vs_pytorch.py)."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys

import pytest

import dispatchtorch.distributed as dist

tdist = pytest.importorskip("torch.distributed")
SHORT = datetime.timedelta(milliseconds=60)


def _queue_script(s, outcome, waits=True):
    """waits=False leaves out the steps that time out (PyTorch's FileStore waits 1 s at
    least, whatever the timeout; test_stores_vs_pytorch.py compares its timeouts)."""
    s.set_timeout(SHORT)
    wait = (lambda f: f) if waits else (lambda f: lambda: "skipped")
    steps = [
        lambda: (s.num_keys(), sorted(s.list_keys()), s.has_extended_api()),
        lambda: s.queue_len("q"),
        lambda: (s.queue_push("q", "a"), s.queue_push("q", b"b"), s.queue_len("q")),
        lambda: (s.check(["q"]), s.num_keys(), sorted(s.list_keys())),   # a queue is no key
        wait(lambda: s.get("q")),                        # Hash: a timeout; TCP: b""
        lambda: (s.queue_pop("q"), s.queue_pop("q", False)),
        lambda: s.queue_pop("q", False),
        lambda: s.queue_pop("q"),
        lambda: s.queue_pop("q", block=True),
        lambda: (s.queue_len("q"), s.check(["q"])),
        lambda: (s.set("x", "1"), s.queue_len("x"), s.queue_push("x", "z"), s.get("x")),
        lambda: s.queue_pop("x", False),
        lambda: (s.delete_key("x"), s.queue_len("x"), s.check(["x"])),
        lambda: (s.queue_push("q4", "v"), s.delete_key("q4"), s.queue_len("q4")),
        lambda: s.queue_push("q2", 3),
        lambda: s.queue_len(7),
        wait(lambda: s.wait(["empty_queue"], datetime.timedelta(milliseconds=30))),
        lambda: (s.barrier("b", 1), s.barrier("b", 1)),
        wait(lambda: s.barrier("b2", 2, datetime.timedelta(milliseconds=30))),
        wait(lambda: s.barrier("b0", 0, datetime.timedelta(milliseconds=30))),
        lambda: sorted(s.list_keys()),
        lambda: [(k, s.get(k)) for k in sorted(s.list_keys()) if k.startswith("b")],
        lambda: (lambda c: (type(c).__name__, c.get("b/num_members") if "b/num_members" in
                            s.list_keys() else c.get("b")))(s.clone()),
        lambda: s.num_keys(),
    ]
    return [outcome(f) for f in steps]


def _stores(lib, tmp_path, tag):
    return {
        "hash": lambda: lib.HashStore(),
        "prefix(hash)": lambda: lib.PrefixStore("p", lib.HashStore()),
        "file": lambda: lib.FileStore(str(tmp_path / f"{tag}_f"), 1),
        "prefix(file)": lambda: lib.PrefixStore("p", lib.FileStore(str(tmp_path / f"{tag}_pf"), 1)),
        "tcp": lambda: lib.TCPStore("127.0.0.1", 0, 1, True),
        "tcp(legacy)": lambda: lib.TCPStore("127.0.0.1", 0, 1, True, use_libuv=False),
        "prefix(tcp)": lambda: lib.PrefixStore("p", lib.TCPStore("127.0.0.1", 0, 1, True)),
    }


@pytest.mark.parametrize("kind", list(_stores(dist, None, "")))
def test_queue_and_extended_operations_as_pytorch(kind, tmp_path, outcome):
    waits = "file" not in kind
    ours = _queue_script(_stores(dist, tmp_path, "ours")[kind](), outcome, waits)
    theirs = _queue_script(_stores(tdist, tmp_path, "theirs")[kind](), outcome, waits)
    assert ours == theirs
    if kind in ("hash", "tcp"):                    # the queue really ran FIFO
        assert ours[5] == (b"a", b"b") and ours[6] == ("raised", "QueueEmptyError",
                                                        "queue is empty")


def test_file_store_clones_keep_the_file_until_every_instance_closes(tmp_path):
    path = str(tmp_path / "fs")
    s = dist.FileStore(path, 1)
    s.set("x", "1")
    c = s.clone()
    assert c.get("x") == b"1" and c.timeout == datetime.timedelta(seconds=300)
    del c
    assert os.path.exists(path) and s.get("x") == b"1"
    del s
    assert not os.path.exists(path)


_CHILD = """
import datetime, sys, dispatchtorch.distributed as d
s = d.TCPStore("127.0.0.1", int(sys.argv[1]), None, False, datetime.timedelta(seconds=30))
print(s.queue_pop("work").decode())
s.barrier("all", 3)
s.queue_push("done", sys.argv[2])
"""


def test_tcp_queue_pop_and_barrier_across_processes():
    master = dist.TCPStore("127.0.0.1", 0, None, True, datetime.timedelta(seconds=30))
    kids = [subprocess.Popen([sys.executable, "-c", _CHILD, str(master.port), name],
                             stdout=subprocess.PIPE, text=True, env=os.environ.copy())
            for name in ("k1", "k2")]
    master.queue_push("work", "first")
    master.queue_push("work", "second")
    master.barrier("all", 3)                    # released once both children came
    got = sorted(master.queue_pop("done").decode() for _ in kids)
    outs = sorted(k.communicate(timeout=60)[0].strip() for k in kids)
    assert [k.returncode for k in kids] == [0, 0]
    assert got == ["k1", "k2"] and outs == ["first", "second"]
    assert master.queue_len("work") == 0 and master.get("all") == b"3"
