"""TCPStore as PyTorch's: the master (is_master=True) starts a server in this process
(tcp_server.py) and every instance, the master's too, is a client of it over one socket.
Keys travel under "/" (PyTorch's prefix, seen in its timeout messages); `init/` counts the
instances that joined when world_size is given, as PyTorch's does (num_keys counts it,
list_keys does not). Blocking operations wait in the server. The wire format is our own
(tcp_wire.py), so a PyTorch process cannot connect to it, nor this one to PyTorch's."""
from __future__ import annotations

import datetime
import math
import socket
import threading
import time
import weakref

from .errors import DistNetworkError, DistStoreError, QueueEmptyError
from .store import Store
from .store_args import _amount, _key, _seconds, _value
from .tcp_server import Server
from .tcp_wire import EMPTY, OK, TIMEOUT, encode, ms, receive

_INIT = "init/"
_LEGACY = "queues not implemented on legacy TCPStore backend"
_SIGNATURE = ("__init__(): incompatible constructor arguments. The following argument types are "
              "supported:\n    1. TCPStore(host_name: str, port: int, world_size: int | None = "
              "None, is_master: bool = False, timeout: datetime.timedelta = "
              "datetime.timedelta(seconds=300), wait_for_workers: bool = True, multi_tenant: "
              "bool = False, master_listen_fd: int | None = None, use_libuv: bool = True)")
_tenants = weakref.WeakValueDictionary()      # port -> the multi-tenant Server on it
_tenants_lock = threading.Lock()


def _check_args(host_name, port, world_size, is_master, timeout, master_listen_fd):
    ok = (isinstance(host_name, str) and isinstance(port, int) and 0 <= port <= 65535
          and (world_size is None or isinstance(world_size, int))
          and isinstance(is_master, bool) and isinstance(timeout, datetime.timedelta)
          and (master_listen_fd is None or isinstance(master_listen_fd, int)))
    if not ok:
        raise TypeError(_SIGNATURE)


def _connect(host, port, timeout):
    """Connect, retrying with backoff until timeout (the master may not listen yet)."""
    deadline, pause = time.monotonic() + timeout, 0.01
    while True:
        left = deadline - time.monotonic()
        try:
            sock = socket.create_connection((host, port), timeout=max(left, 0.001))
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError:
            if left <= 0:
                raise DistNetworkError(
                    f"The client socket has timed out after {int(timeout * 1000)}ms while "
                    f"trying to connect to ({host}, {port}).") from None
            time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
            pause = min(pause * 2, 0.5)


def _start_server(port, multi_tenant, listen_fd):
    if not multi_tenant:
        return Server(port, listen_fd)
    with _tenants_lock:
        server = _tenants.get(port) if port > 0 else None
        if server is None:
            server = Server(port, listen_fd)
            _tenants[server.port] = server
        return server


class TCPStore(Store):
    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=datetime.timedelta(seconds=300), wait_for_workers=True,
                 multi_tenant=False, master_listen_fd=None, use_libuv=True):
        _check_args(host_name, port, world_size, is_master, timeout, master_listen_fd)
        super().__init__()
        self._timeout, self._host, self._world_size = timeout, host_name, world_size
        self._libuv, self._lock = bool(use_libuv), threading.Lock()
        self._server = _start_server(port, multi_tenant, master_listen_fd) if is_master else None
        self._port = self._server.port if is_master else port
        self._sock = _connect(host_name, self._port, _seconds(timeout))
        if world_size is not None and wait_for_workers:
            self._join(world_size)

    def _join(self, world_size):
        """Count this instance in; the master then waits for world_size of them, as PyTorch's
        (which checks whole seconds elapsed > timeout, so it waits floor(timeout) + 1 s)."""
        self._call("add", _INIT, b"1")
        if self._server is None:
            return
        limit, start = math.floor(_seconds(self._timeout)) + 1, time.monotonic()
        state = self._server.state
        if not state.waited([_INIT], limit * 1000, state.at_least(_INIT, world_size)):
            joined = int(self._call("get", _INIT, b"0")[0])
            raise DistStoreError(
                f"Timed out after {int(time.monotonic() - start)} seconds waiting for clients. "
                f"{joined}/{world_size} clients joined.")

    @property
    def host(self):
        return self._host

    @property
    def port(self):
        return self._port

    @property
    def libuvBackend(self):   # noqa: N802 (PyTorch's name)
        return self._libuv

    def _call(self, op, *fields):
        """One request and its reply (status first, checked by the caller through _ok)."""
        msg = encode([op.encode()] + [f.encode() if isinstance(f, str) else f for f in fields])
        with self._lock:
            try:
                self._sock.sendall(msg)
                reply = receive(self._sock)
            except OSError as exc:
                raise DistNetworkError(exc.strerror or str(exc)) from None
        if reply[0] == TIMEOUT:
            raise _Timeout
        if reply[0] == EMPTY:
            raise QueueEmptyError("queue is empty")
        if reply[0] != OK:
            raise DistStoreError(f"TCPStore: unexpected reply {reply[0]!r} to {op}")
        return reply[1:]

    def _waiting(self, op, keys, timeout, *fields):
        try:
            return self._call(op, *fields)
        except _Timeout:
            raise DistStoreError(f"wait timeout after {int(_seconds(timeout) * 1000)}ms, keys: "
                                 f"{', '.join('/' + k for k in keys)}") from None

    def set(self, key, value):
        self._call("set", "/" + _key(key, "set"), _value(value, "set"))

    def get(self, key):
        k = _key(key, "get")
        return self._waiting("get", [k], self._timeout, "/" + k, ms(_seconds(self._timeout)))[0]

    def add(self, key, amount):
        k, n = _key(key, "add"), _amount(amount, "add")
        return int(self._call("add", "/" + k, str(n))[0])

    def append(self, key, value):
        self._call("append", "/" + _key(key, "append"), _value(value, "append"))

    def compare_set(self, key, expected_value, desired_value):
        k = _key(key, "compare_set")
        return self._call("compare_set", "/" + k, _value(expected_value, "compare_set"),
                          _value(desired_value, "compare_set"))[0]

    def multi_set(self, keys, values):
        ks = [_key(k, "multi_set") for k in keys]
        vs = [_value(v, "multi_set") for v in values]
        if len(ks) != len(vs):
            raise DistStoreError("multiSet keys and values vectors must be of same size")
        self._call("multi_set", *[f for kv in zip(ks, vs) for f in ("/" + kv[0], kv[1])])

    def multi_get(self, keys):
        ks = [_key(k, "multi_get") for k in keys]
        return self._waiting("multi_get", ks, self._timeout, ms(_seconds(self._timeout)),
                             *["/" + k for k in ks])

    def check(self, keys):
        ks = [_key(k, "check") for k in keys]
        return self._call("check", *["/" + k for k in ks])[0] == b"1"

    def wait(self, keys, timeout=None):
        ks = [_key(k, "wait") for k in keys]
        t = self._timeout if timeout is None else timeout
        self._waiting("wait", ks, t, ms(_seconds(t)), *["/" + k for k in ks])

    def delete_key(self, key):
        return self._call("delete_key", "/" + _key(key, "delete_key"))[0] == b"1"

    def num_keys(self):
        return int(self._call("num_keys")[0])

    def list_keys(self):
        return [k.decode()[1:] for k in self._call("list_keys") if k.startswith(b"/")]

    def has_extended_api(self):
        return True

    def clone(self):
        """Another connection to the same server (for another thread), as PyTorch's."""
        return TCPStore(self._host, self._port, None, False, self._timeout,
                        use_libuv=self._libuv)

    def barrier(self, key, world_size, timeout=None):
        """PyTorch's TCPStore barrier: the server counts arrivals in `key` and answers once
        world_size have come (a key reused counts on, so later rounds pass at once)."""
        k = _key(key, "barrier")
        if not isinstance(world_size, int) or isinstance(world_size, bool):
            raise TypeError("barrier(): incompatible function arguments: world_size must be an "
                            f"int, got {type(world_size).__name__}")
        t = self._timeout if timeout is None else timeout
        try:
            self._call("barrier", "/" + k, str(world_size), ms(_seconds(t)))
        except _Timeout:
            raise DistStoreError(f"barrier timeout after {int(_seconds(t) * 1000)}ms, key: "
                                 f"{k}") from None

    def queue_push(self, key, value):
        k, v = _key(key, "queue_push"), _value(value, "queue_push")
        self._queues()
        self._call("queue_push", "/" + k, v)

    def queue_pop(self, key, block=True):
        k = _key(key, "queue_pop")
        self._queues()
        return self._waiting("queue_pop", [k], self._timeout, "/" + k, b"1" if block else b"0",
                             ms(_seconds(self._timeout)))[0]

    def queue_len(self, key):
        k = _key(key, "queue_len")
        self._queues()
        return int(self._call("queue_len", "/" + k)[0])

    def _queues(self):
        if not self._libuv:
            raise NotImplementedError(_LEGACY)

    def __repr__(self):
        server = f", server=TCPServer(port={self._port})" if self._server else ""
        return f"TCPStore(client=TCPClient({self._host}:{self._port}){server})"

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()


class _Timeout(Exception):
    """The server's wait ran out (the caller words PyTorch's message)."""


TCPStore.__module__ = "dispatchtorch.distributed"
