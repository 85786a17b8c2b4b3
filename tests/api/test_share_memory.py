"""Tensor.share_memory_ / Module.share_memory on the cpu: a process forked afterwards
updates the parent's tensors in place (Hogwild training, pytorch/examples'
mnist_hogwild), also when the tensor reaches it through a Queue (spawn and forkserver
children: test_share_memory_spawn.py); other devices raise NotImplementedError naming the
device."""
import sys

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.multiprocessing as mp

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork start method")


def _worker(model, t, view, q):
    with torch.no_grad():
        model.weight.add_(1.0)
        model.bias.zero_()
        t[1] = 42.0
        view.mul_(2)
        q.get().fill_(7.0)


def test_forked_workers_updates_are_seen_by_the_parent():
    ctx = mp.get_context("fork")
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    w0 = model.weight.detach().clone()
    weight = model.weight
    assert not weight.is_shared()
    assert model.share_memory() is model
    assert model.weight is weight and weight.is_shared() and weight.requires_grad
    assert isinstance(weight, torch.nn.Parameter) and weight.grad is None
    t = torch.zeros(3)
    assert t.share_memory_() is t and t.is_shared()
    base = torch.ones(4, 4)
    view = base[1:, ::2]
    view.share_memory_()                      # the whole storage moves: base sees it too
    assert view.stride() == (4, 2) and view.shape == (3, 2) and base.is_shared()
    sent = torch.zeros(2).share_memory_()
    q = ctx.Queue()
    q.put(sent)
    p = ctx.Process(target=_worker, args=(model, t, view, q))
    p.start()
    p.join(20)
    assert p.exitcode == 0
    np.testing.assert_array_equal(model.weight.detach().numpy(), (w0 + 1.0).numpy())
    np.testing.assert_array_equal(model.bias.detach().numpy(), [0.0, 0.0])
    assert t.tolist() == [0.0, 42.0, 0.0]
    np.testing.assert_array_equal(base.numpy(), [[1, 1, 1, 1], [2, 1, 2, 1], [2, 1, 2, 1],
                                                 [2, 1, 2, 1]])
    assert sent.tolist() == [7.0, 7.0]
    # autograd still works on the shared parameters
    model(torch.ones(1, 3)).sum().backward()
    np.testing.assert_array_equal(model.weight.grad.numpy(), np.ones((2, 3)))


def test_unshared_tensors_pickle_by_value_and_deepcopy_unshares():
    import copy
    import pickle
    t = torch.arange(3.0).share_memory_()
    c = copy.deepcopy(t)
    assert not c.is_shared() and c.tolist() == [0.0, 1.0, 2.0]
    assert pickle.loads(pickle.dumps(t)).tolist() == [0.0, 1.0, 2.0]


def test_other_devices_raise_naming_the_device():
    if not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    x = torch.ones(2, device="opencl")
    with pytest.raises(NotImplementedError, match="opencl"):
        x.share_memory_()
    assert not x.is_shared() and x.tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="opencl"):
        torch.nn.Linear(2, 2).to("opencl").share_memory()


def test_the_shared_memory_lives_as_long_as_any_view_and_its_fds_close_with_it():
    import gc
    import os
    fds = len(os.listdir("/proc/self/fd"))
    t = torch.arange(6.0).share_memory_()
    v = t[2:]
    assert len(os.listdir("/proc/self/fd")) == fds + 2    # the storage's fd, mmap's own
    del t
    gc.collect()
    v.add_(1)
    assert v.is_shared() and v.tolist() == [3.0, 4.0, 5.0, 6.0]
    del v
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds


_FRESH_PROCESS_QUEUE = """
import faulthandler
import dispatchtorch as torch
import dispatchtorch.multiprocessing as mp

def worker(q):
    faulthandler.dump_traceback_later(20, exit=True)
    q.get().fill_(7.0)

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    sent = torch.zeros(2).share_memory_()
    q = ctx.Queue()
    q.put(sent)                    # the feeder thread pickles while the parent forks
    p = ctx.Process(target=worker, args=(q,))
    p.start()
    p.join(30)
    print(p.exitcode, sent.tolist())
"""


def test_fork_while_the_queue_feeder_pickles_in_a_fresh_process(tmp_path):
    """In a process that never sent a shared tensor before, the Queue's feeder thread used
    to import multiprocessing's resource_sharer while the main thread forked: the child
    inherited the held import lock and hung in its first get()."""
    import subprocess
    script = tmp_path / "fork_queue.py"
    script.write_text(_FRESH_PROCESS_QUEUE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "0 [7.0, 7.0]", done.stdout + done.stderr
