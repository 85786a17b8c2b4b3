"""Process groups: the default (world) group set up by init_process_group, subgroups
from new_group, and which collectives engine serves a tensor's device in a group."""
from __future__ import annotations

import datetime
import os
import sys
import traceback

from ._mpi import mpi
from .engine_mpi import MPIEngine
from .watchdog import Watchdog, report_then_abort

# PyTorch's default_pg_timeout
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
# process-group backends the MPI engine serves on any device (gloo: PyTorch's CPU one)
HOST_BACKENDS = ("mpi", "gloo")


class Backend(str):
    """A backend name, as torch.distributed.Backend (compares equal to its string)."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        return super().__new__(cls, name.lower())


class _GroupMember:
    WORLD = None                      # the default group once init_process_group ran
    NON_GROUP_MEMBER = object()       # what new_group returns on ranks left out


GroupMember = _GroupMember
group = _GroupMember                  # dist.group.WORLD


def _parse_backend(backend):
    """{device type or "*": backend name} from "mpi", "nccl", "cpu:gloo,cuda:nccl"."""
    if backend is None:
        return {}
    if not isinstance(backend, str):
        raise ValueError(f"init_process_group: backend must be a string or None, got {backend!r}")
    b = backend.lower()
    if ":" not in b:
        return {"cuda": b} if b == "nccl" else {"*": b}
    out = {}
    for part in b.split(","):
        dev, sep, name = part.strip().partition(":")
        if not sep or not dev or not name:
            raise ValueError(f"init_process_group: backend '{backend}' is not of the form "
                             f"'<device>:<backend>,...'")
        out[dev] = name
    return out


class ProcessGroup:
    """A communicator over some ranks, with the engine each device type uses."""

    def __init__(self, comm, ranks, backend, timeout, watchdog):
        self.MPI = mpi()
        self.comm = comm
        self.ranks = list(ranks)                 # global ranks, in group-rank order
        self._rank, self._size = comm.Get_rank(), comm.Get_size()
        self.backend_spec = backend
        self._map = _parse_backend(backend)
        self.timeout = timeout
        self.timeout_s = timeout.total_seconds()
        self.watchdog = watchdog
        self.host = MPIEngine(comm)
        self._engines = {}
        self.in_flight = []                      # Works not completed yet (work.py)

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self.backend_name()

    def backend_name(self):
        if self.backend_spec is None:
            return "mpi"
        return self.backend_spec.lower()

    def group_rank(self, global_rank, what):
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what}: global rank {global_rank} is not part of the group "
                             f"(ranks {self.ranks})") from None

    def engine_for(self, tensor, what):
        """The engine that runs `what` on `tensor`'s device in this group."""
        place = tensor._place
        key = (place.type, place.index)
        eng = self._engines.get(key)
        if eng is None:
            eng = self._engines[key] = self._make_engine(place, what)
        return eng

    def _make_engine(self, place, what):
        name = self._map.get(place.type) or self._map.get("*")
        if name is None and self._map:
            raise RuntimeError(f"{what}: no backend type associated with device type "
                               f"{place.type} in process group backend '{self.backend_spec}'")
        bk = place.bk
        if name is None:
            offered = tuple(getattr(bk, "collectives_backends", ()) or ())
            name = offered[0] if offered else "mpi"
        if name in HOST_BACKENDS:
            return self.host
        maker = getattr(bk, "collectives_engine", None)
        eng = maker(name, self.comm, place.index) if maker is not None else None
        if eng is None:
            raise RuntimeError(f"{what}: process group backend '{name}' is not provided by the "
                               f"'{place.type}' backend package (its collectives_engine returned "
                               f"None); use backend='mpi', which serves every device through "
                               f"host buffers")
        return eng

    def free(self):
        for w in list(self.in_flight):           # MPI must not write into freed buffers
            w.wait()
        for eng in self._engines.values():
            close = getattr(eng, "close", None)
            if close is not None:
                close()
        self._engines.clear()
        if self.comm != self.MPI.COMM_WORLD and self.comm != self.MPI.COMM_NULL:
            self.comm.Free()

    def __repr__(self):
        return f"<ProcessGroup {self.backend_name()} rank {self._rank} of {self._size}>"


class _State:
    default = None
    groups = []
    watchdog = None
    new_group_calls = 0     # every rank counts every new_group call: the same tag on all
    pg_count = 0            # get_pg_count: groups made since init (members or not), as PyTorch
    excepthook = None       # sys.excepthook before init_process_group replaced it


STATE = _State()


def _timeout(timeout, what):
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, datetime.timedelta):
        if timeout.total_seconds() <= 0:
            raise ValueError(f"{what}: timeout must be positive, got {timeout}")
        return timeout
    raise TypeError(f"{what}: Expected timeout argument to be of type datetime.timedelta, "
                    f"got {type(timeout).__name__}")


def _env_int(name):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the ranks this job started with (mpiexec, dispatchtorch-run); rank and
    world size come from MPI, and any given ones (arguments, RANK/WORLD_SIZE) must agree."""
    if STATE.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    _parse_backend(backend)
    t = _timeout(timeout, "init_process_group")
    MPI = mpi()
    world = MPI.COMM_WORLD
    r, n = world.Get_rank(), world.Get_size()
    want_n = world_size if world_size not in (None, -1) else _env_int("WORLD_SIZE")
    want_r = rank if rank not in (None, -1) else _env_int("RANK")
    hint = ("the ranks of a dispatchtorch job are MPI processes: start them with "
            "`dispatchtorch-run --nproc-per-node=N script.py` or `mpiexec -n N python script.py`")
    if want_n is not None and want_n != n:
        raise ValueError(f"init_process_group: world_size={want_n} but this MPI job has {n} "
                         f"rank{'s' if n != 1 else ''}; {hint}")
    if want_r is not None and want_r != r:
        raise ValueError(f"init_process_group: rank={want_r} but MPI gave this process rank {r}; "
                         f"{hint}")
    if STATE.watchdog is None:
        STATE.watchdog = Watchdog(r, world.Abort)
    pg = ProcessGroup(world, range(n), backend, t, STATE.watchdog)
    _end_job_on_uncaught_exception(world, r)
    STATE.default = pg
    STATE.groups = [pg]
    STATE.pg_count = 1
    GroupMember.WORLD = pg


def _end_job_on_uncaught_exception(world, rank):
    """An uncaught exception prints its traceback, then ends the whole MPI job: left to
    itself the failed rank waits in MPI_Finalize and its peers in their next collective
    (the launcher's rank wrapper does the same for exceptions it sees first)."""
    if STATE.excepthook is not None:
        return
    previous = STATE.excepthook = sys.excepthook

    def hook(kind, value, tb):
        if previous is not sys.__excepthook__:
            previous(kind, value, tb)
            text = ""
        else:                         # one write: mpiexec forwards it whole before the abort
            text = "".join(traceback.format_exception(kind, value, tb))
        report_then_abort(f"{text}[rank {rank}] uncaught {kind.__name__}: ending the MPI job\n",
                          world.Abort, 1)
    sys.excepthook = hook


def is_initialized():
    return STATE.default is not None


def default_group(what="this call"):
    pg = STATE.default
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return pg


def resolve(group, what):
    """The ProcessGroup to use, or None on a rank outside `group`."""
    if group is None:
        return default_group(what)
    if group is GroupMember.NON_GROUP_MEMBER:
        default_group(what)
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{what}: group must be a ProcessGroup from new_group or None, "
                        f"got {type(group).__name__}")
    return group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None, sort_ranks=True):
    """A group of some ranks (every rank of the default group calls this, in the same order)."""
    world = default_group("new_group")
    n = world.size()
    ranks = list(range(n)) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    for r in ranks:
        if not isinstance(r, int) or not 0 <= r < n:
            raise ValueError(f"new_group: ranks must be integers in [0, {n}), got {r!r}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks contain duplicates: {ranks}")
    t = world.timeout if timeout is None else _timeout(timeout, "new_group")
    STATE.new_group_calls += 1
    STATE.pg_count += 1
    wgroup = world.comm.Get_group()
    sub = wgroup.Incl(ranks)
    wgroup.Free()
    if world.rank() not in ranks:
        sub.Free()
        return GroupMember.NON_GROUP_MEMBER
    comm = world.comm.Create_group(sub, tag=STATE.new_group_calls)
    sub.Free()
    pg = ProcessGroup(comm, ranks, world.backend_spec if backend is None else backend, t,
                      world.watchdog)
    STATE.groups.append(pg)
    return pg


def destroy_process_group(group=None):
    """Free `group`, or every group (the default one included) when None."""
    if group is None:
        for pg in reversed(STATE.groups):
            pg.free()
        STATE.groups = []
        STATE.default = None
        STATE.pg_count = 0
        GroupMember.WORLD = None
        if STATE.excepthook is not None:
            sys.excepthook, STATE.excepthook = STATE.excepthook, None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group, "destroy_process_group")
    if pg is STATE.default:
        return destroy_process_group(None)
    pg.free()
    STATE.groups = [g for g in STATE.groups if g is not pg]


def get_rank(group=None):
    """This process's rank in `group` (-1 outside it)."""
    pg = resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = resolve(group, "get_backend")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg.backend_name())


def get_process_group_ranks(group):
    pg = resolve(group, "get_process_group_ranks")
    return list(pg.ranks)


def get_global_rank(group, group_rank):
    pg = resolve(group, "get_global_rank")
    return pg.ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = resolve(group, "get_group_rank")
    return pg.group_rank(global_rank, "get_group_rank")

