"""TCPStore's server: the master's daemon thread accepting connections and one daemon
thread per client (socketserver.ThreadingTCPServer). Thread per client is the simplest
robust design here: a store has a handful of clients (the ranks), each with one request
in flight, and a blocking get/wait/queue_pop/barrier simply sleeps in its client's
thread on the state's condition variable until a set from another thread wakes it or its
timeout passes (no polling). The state is a HashStore holding the raw keys."""
from __future__ import annotations

import errno
import os
import socket
import socketserver
import threading
import time
import weakref

from .store import HashStore
from .store_args import _stoll, _wrap64
from .store_queues import has_key_or_queue, pop_front
from .tcp_wire import EMPTY, OK, TIMEOUT, encode, receive
from .errors import DistError, DistNetworkError, DistStoreError


class _Drop(Exception):
    """Close this client's connection (PyTorch's server does so on a value add cannot parse)."""


def _count(raw):
    try:
        return _stoll(raw)
    except (ValueError, IndexError):
        raise _Drop from None


class State:
    """The keys and queues, and the operations of the protocol on them."""

    def __init__(self):
        self.hs = HashStore()

    def waited(self, keys, timeout_ms, present=has_key_or_queue):
        try:
            self.hs._wait_for(lambda d: all(present(d, k) for k in keys), int(timeout_ms) / 1000)
            return True
        except DistStoreError:
            return False

    def add(self, key, delta):
        def op(d):
            n = _wrap64((_count(d[key]) if key in d else 0) + delta)
            d[key] = str(n).encode()
            return n
        return self.hs._apply(op)

    def handle(self, op, args):
        hs, s = self.hs, [a.decode() for a in args[:1]]
        if op == "set":
            hs.set(s[0], args[1])
        elif op == "get":
            if not self.waited(s, args[1]):
                return [TIMEOUT]
            return [OK, hs._apply(lambda d: d.get(s[0], b""))]
        elif op == "add":
            return [OK, str(self.add(s[0], int(args[1]))).encode()]
        elif op == "compare_set":
            return [OK, hs.compare_set(s[0], args[1], args[2])]
        elif op == "append":
            hs.append(s[0], args[1])
        elif op in ("wait", "multi_get"):
            keys = [k.decode() for k in args[1:]]
            if not self.waited(keys, args[0]):
                return [TIMEOUT]
            if op == "multi_get":
                return [OK] + hs._apply(lambda d: [d.get(k, b"") for k in keys])
        elif op == "multi_set":
            hs.multi_set([k.decode() for k in args[0::2]], args[1::2])
        elif op == "check":
            return [OK, b"1" if hs.check([k.decode() for k in args]) else b"0"]
        elif op == "delete_key":
            return [OK, b"1" if hs.delete_key(s[0]) else b"0"]
        elif op == "num_keys":
            return [OK, str(hs.num_keys()).encode()]
        elif op == "list_keys":
            return [OK] + [k.encode() for k in hs.list_keys()]
        elif op == "queue_push":
            hs.queue_push(s[0], args[1])
        elif op == "queue_len":
            return [OK, str(hs.queue_len(s[0])).encode()]
        elif op == "queue_pop":
            return self.pop(s[0], args[1] == b"1", args[2])
        elif op == "barrier":
            return self.barrier(s[0], int(args[1]), args[2])
        else:
            raise _Drop
        return [OK]

    def pop(self, key, block, timeout_ms):
        deadline = time.monotonic() + int(timeout_ms) / 1000
        while True:
            v = self.hs._apply(lambda d: pop_front(d, key))
            if v is not None:
                return [OK, v]
            if not block:
                return [EMPTY]
            left = max(deadline - time.monotonic(), 0)
            if not self.waited([key], int(left * 1000)):
                return [TIMEOUT]

    def at_least(self, key, n):
        def reached(d, k):
            try:
                return k in d and _stoll(d[k]) >= n
            except (ValueError, IndexError):
                return False
        return reached

    def barrier(self, key, world_size, timeout_ms):
        """PyTorch's TCPStore barrier: count in `key`, wait until world_size have come."""
        self.add(key, 1)
        ok = self.waited([key], timeout_ms, self.at_least(key, world_size))
        return [OK] if ok else [TIMEOUT]


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock, state = self.request, self.server.state
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                fields = receive(sock)
                reply = state.handle(fields[0].decode(), fields[1:])
                sock.sendall(encode(reply))
        except (_Drop, DistError, OSError, ValueError, IndexError):
            pass                               # the client left, or is dropped


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _listen_error(port, exc):
    code = exc.errno or 0
    return DistNetworkError(
        f"The server socket has failed to listen on any local network address. port: {port}, "
        f"useIpv6: false, code: {-code}, name: {errno.errorcode.get(code, 'UNKNOWN')}, "
        f"message: {(exc.strerror or str(exc)).lower()}")


class Server:
    """A started server: `port`, `state`. It stops listening once no store holds it."""

    def __init__(self, port, listen_fd=None):
        try:
            self._srv = _Server(("", port), _Handler, bind_and_activate=listen_fd is None)
        except OSError as exc:
            raise _listen_error(port, exc) from None
        if listen_fd is not None:             # the caller's bound socket (a copy of it)
            self._srv.socket.close()
            self._srv.socket = socket.socket(fileno=os.dup(listen_fd))
            self._srv.socket.listen()
        self.state = self._srv.state = State()
        self.port = self._srv.server_address[1] if listen_fd is None else \
            self._srv.socket.getsockname()[1]
        threading.Thread(target=self._srv.serve_forever, args=(0.2,), daemon=True,
                         name=f"TCPStore server :{self.port}").start()
        weakref.finalize(self, _stop_soon, self._srv)


def _stop_soon(srv):
    """shutdown() waits for serve_forever's loop: do it off the collecting thread."""
    def stop():
        srv.shutdown()
        srv.server_close()
    threading.Thread(target=stop, daemon=True).start()
