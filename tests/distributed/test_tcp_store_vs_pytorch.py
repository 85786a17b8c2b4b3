"""TCPStore against PyTorch's: the same operations on a torch.distributed.TCPStore and on
ours give the same values, counts, exception classes and messages; a master and clients in
other processes (concurrent adds, a get released by another process's set, wait timeouts,
the master waiting for its workers)."""
from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import dispatchtorch.distributed as dist

tdist = pytest.importorskip("torch.distributed")
MS = datetime.timedelta(milliseconds=150)


def _operations(s, outcome):
    """Every store operation, in an order that exercises PyTorch's TCPStore edge cases."""
    steps = [
        lambda: s.num_keys(),                         # PyTorch's "init/" counts here
        lambda: s.list_keys(),
        lambda: (s.set("a", "x"), s.set("b", b"\xff\x00"), s.get("a"), s.get("b")),
        lambda: (s.add("c", 5), s.add("c", -2), s.add("c", 0), s.get("c")),
        lambda: (s.set("w", " 41abc"), s.add("w", 1)),   # std::stoll reads the leading number
        lambda: (s.set("big", str(2 ** 63 - 1)), s.add("big", 1)),   # int64 wraps
        lambda: (s.compare_set("a", "x", "y"), s.get("a")),
        lambda: (s.compare_set("a", "zz", "w"), s.get("a")),
        lambda: (s.compare_set("a", "", "q"), s.get("a")),
        lambda: (s.compare_set("new", "", "v"), s.get("new")),
        lambda: (s.compare_set("new2", "nonempty", "v"), s.check(["new2"])),
        lambda: (s.check(["a", "b"]), s.check(["a", "nope"]), s.check([])),
        lambda: (s.append("k", "ab"), s.append("k", b"cd"), s.get("k")),
        lambda: (s.multi_set(["m", "n"], ["1", b"2"]), s.multi_get(["m", "n"]), s.multi_get([])),
        lambda: s.multi_set(["m", "n"], ["1"]),
        lambda: (s.delete_key("a"), s.delete_key("a"), s.check(["a"])),
        lambda: (s.num_keys(), sorted(s.list_keys())),
        lambda: s.set("i", 3),
        lambda: s.add("c", 1.5),
        lambda: (s.set_timeout(MS), s.timeout),
        lambda: s.get("missing"),
        lambda: s.multi_get(["b", "missing"]),
        lambda: s.wait(["missing", "m"]),
        lambda: s.wait(["missing"], datetime.timedelta(milliseconds=50)),
        lambda: s.wait(["b", "c"]),
        lambda: (s.barrier("bar", 1), s.get("bar"), s.barrier("bar", 1), s.get("bar")),
        lambda: s.barrier("bar2", 2, datetime.timedelta(milliseconds=50)),
        lambda: (s.barrier("bar0", 0), s.has_extended_api(), s.libuvBackend, s.host),
        lambda: (lambda c: (type(c).__name__, c.get("k"), c.timeout, c.port == s.port))(s.clone()),
        lambda: (s.num_keys(), sorted(s.list_keys())),
    ]
    return [outcome(f) for f in steps]


def test_operations_as_pytorch(outcome):
    ours = _operations(dist.TCPStore("127.0.0.1", 0, 1, True), outcome)
    theirs = _operations(tdist.TCPStore("127.0.0.1", 0, 1, True), outcome)
    assert ours == theirs
    # init/ and b c w big new k m n bar bar2 bar0 (a was deleted)
    assert ours[0] == 1 and ours[-1][0] == 12


def test_counts_without_workers_as_pytorch():
    for mk in (dist.TCPStore, tdist.TCPStore):
        assert mk("127.0.0.1", 0, None, True).num_keys() == 0
        assert mk("127.0.0.1", 0, 2, True, wait_for_workers=False).num_keys() == 0


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connect_timeout_as_pytorch(outcome):
    port, t = _free_port(), datetime.timedelta(milliseconds=300)
    start = time.monotonic()
    ours = outcome(lambda: dist.TCPStore("127.0.0.1", port, 1, False, t))
    assert 0.3 <= time.monotonic() - start < 3
    assert ours == outcome(lambda: tdist.TCPStore("127.0.0.1", port, 1, False, t))
    assert ours[1] == "DistNetworkError" and "(127.0.0.1, %d)" % port in ours[2]


def test_client_retries_until_the_master_listens():
    port, holder = _free_port(), []
    start_master = lambda: holder.append(dist.TCPStore("127.0.0.1", port, None, True))  # noqa: E731
    threading.Timer(0.3, start_master).start()
    client = dist.TCPStore("127.0.0.1", port, None, False, datetime.timedelta(seconds=10))
    client.set("k", "v")
    assert holder[0].get("k") == b"v"


def test_master_waiting_for_workers_times_out_as_pytorch(outcome):
    t = datetime.timedelta(milliseconds=200)           # PyTorch waits whole seconds: 1 s
    ours = outcome(lambda: dist.TCPStore("127.0.0.1", 0, 2, True, t))
    assert ours == outcome(lambda: tdist.TCPStore("127.0.0.1", 0, 2, True, t))
    assert ours == ("raised", "DistStoreError",
                    "Timed out after 1 seconds waiting for clients. 1/2 clients joined.")


def test_port_in_use_and_bad_arguments_as_pytorch(outcome):
    for mk in (dist.TCPStore, tdist.TCPStore):
        master = mk("127.0.0.1", 0, 1, True)
        err = outcome(lambda: mk("127.0.0.1", master.port, 1, True))
        assert err[:2] == ("raised", "DistNetworkError")
        assert err[2] == ("The server socket has failed to listen on any local network address. "
                          f"port: {master.port}, useIpv6: false, code: -98, name: EADDRINUSE, "
                          "message: address already in use")
        for bad in [("127.0.0.1", -1), ("127.0.0.1", 70000), (3, 0), ("127.0.0.1", "0")]:
            with pytest.raises(TypeError):
                mk(*bad, is_master=True)
        with pytest.raises(TypeError):
            mk("127.0.0.1", 0, 1, True, timeout=5)


def test_unparsable_add_drops_the_connection_as_pytorch(outcome):
    def run(mk):
        s = mk("127.0.0.1", 0, 1, True)
        s.set("x", "not a number")
        return [outcome(lambda: s.add("x", 1))[:2], outcome(lambda: s.check(["x"]))[:2]]
    assert run(dist.TCPStore) == run(tdist.TCPStore) == [("raised", "DistNetworkError")] * 2


def test_multi_tenant_master_shares_the_server():
    a = dist.TCPStore("127.0.0.1", 0, 1, True, multi_tenant=True)
    a.set("shared", "1")
    b = dist.TCPStore("127.0.0.1", a.port, 1, True, multi_tenant=True)
    assert b.get("shared") == b"1" and b.port == a.port


def test_master_serves_on_a_socket_the_caller_bound():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        master = dist.TCPStore("127.0.0.1", 0, 1, True, master_listen_fd=sock.fileno())
        assert master.port == sock.getsockname()[1]
        client = dist.TCPStore("127.0.0.1", master.port)
        client.set("k", "v")
        assert master.get("k") == b"v"


def test_blocked_get_waits_in_the_server_without_polling(monkeypatch):
    s = dist.TCPStore("127.0.0.1", 0, None, True)
    state, requests = s._server.state, []
    handle = state.handle
    monkeypatch.setattr(state, "handle", lambda op, args: requests.append(op) or handle(op, args))
    threading.Timer(0.5, lambda: s.clone().set("late", "v")).start()
    cpu, start = time.process_time(), time.monotonic()
    assert s.get("late") == b"v"
    assert time.monotonic() - start >= 0.45
    assert requests == ["get", "set"]                # one request waited: no client polling
    assert time.process_time() - cpu < 0.25          # and nothing spun meanwhile


_CHILD = """
import datetime, sys, dispatchtorch.distributed as d
port, role = int(sys.argv[1]), sys.argv[2]
s = d.TCPStore("127.0.0.1", port, 4, False, datetime.timedelta(seconds=30))
if role == "adder":
    print(" ".join(str(s.add("counter", 1)) for _ in range(200)))
else:
    s.set("from_child", "hi")
    print(s.get("go").decode())
    try:
        s.wait(["never"], datetime.timedelta(milliseconds=100))
    except d.DistStoreError as e:
        print(type(e).__name__, e)
"""


def _spawn(port, role):
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(port), role],
                            stdout=subprocess.PIPE, text=True, env=os.environ.copy())


def test_processes_add_concurrently_and_a_set_releases_another_process_get():
    port = _free_port()
    kids = [_spawn(port, "adder"), _spawn(port, "adder"), _spawn(port, "waiter")]
    master = dist.TCPStore("127.0.0.1", port, 4, True, datetime.timedelta(seconds=60))
    assert master.get("from_child") == b"hi"       # blocks until the waiter has set it
    time.sleep(0.2)
    master.set("go", "released")
    outs = [k.communicate(timeout=60)[0] for k in kids]
    assert [k.returncode for k in kids] == [0, 0, 0]
    counts = [int(v) for out in outs[:2] for v in out.split()]
    assert sorted(counts) == list(range(1, 401)) and int(master.get("counter")) == 400
    assert outs[2].splitlines() == ["released",
                                    "DistStoreError wait timeout after 100ms, keys: /never"]
    assert master.num_keys() == 1 + 3                # init/, counter, from_child, go
