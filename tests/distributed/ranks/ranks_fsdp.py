"""FullyShardedDataParallel inside an MPI job: training on N ranks (each rank a slice of
the batch) equals the same model trained in one process on the full batch, which every
rank computes itself; 59 parameters per unit, so 2 and 3 ranks both pad."""
from __future__ import annotations

import copy
import functools
import math

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch import nn
from dispatchtorch.distributed.fsdp import (CPUOffload, FullStateDictConfig, MixedPrecision,
                                            ShardingStrategy, StateDictType)
from dispatchtorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from dispatchtorch.distributed.fsdp.wrap import (ModuleWrapPolicy, enable_wrap,
                                                 size_based_auto_wrap_policy,
                                                 transformer_auto_wrap_policy, wrap)

from .fsdp_models import tiny_classes

N = 12          # samples: divides by 2 and 3 ranks
STRATEGIES = [ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
              ShardingStrategy.NO_SHARD]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 7), nn.Linear(7, 3)      # 35 + 24 = 59 parameters
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))) * self.scale


Tiny, Block = tiny_classes(torch)


def _make(cls=Net, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return cls().to(dtype)


def _data(dtype=torch.float64):
    g = np.random.default_rng(1)
    return (torch.tensor(g.normal(size=(N, 4))).to(dtype),
            torch.tensor(g.normal(size=(N, 3))).to(dtype))


def _mine(t, r, n):
    return t[r * N // n:(r + 1) * N // n]


def _loss(model, x, y):
    return nn.functional.mse_loss(model(x), y)


def _full(fsdp):
    """The FSDP model's original parameters, by name (gathered)."""
    with FSDP.summon_full_params(fsdp):
        return {k: v.detach().clone() for k, v in fsdp.named_parameters()}


def _assert_matches(fsdp, ref, atol=1e-9):
    got = _full(fsdp)
    want = dict(ref.named_parameters())
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k].float().numpy(), want[k].detach().float().numpy(),
                                   rtol=0, atol=atol, err_msg=k)


def _train(fsdp, ref, opt_cls, steps, r, n, **opt_kw):
    X, Y = _data(next(ref.parameters()).dtype)
    opt_ref = opt_cls(ref.parameters(), **opt_kw)
    opt = opt_cls(fsdp.parameters(), **opt_kw)
    for _ in range(steps):
        opt_ref.zero_grad()
        _loss(ref, X, Y).backward()
        opt_ref.step()
        opt.zero_grad()
        _loss(fsdp, _mine(X, r, n), _mine(Y, r, n)).backward()
        opt.step()


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
@pytest.mark.parametrize("opt_cls,kw", [(torch.optim.Adam, {"lr": 0.05}),
                                        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9})],
                         ids=["adam", "sgd"])
def test_training_equals_full_batch(world, strategy, opt_cls, kw):
    r, n = world
    ref = _make()
    fsdp = FSDP(_make(), sharding_strategy=strategy)
    (flat,) = list(fsdp.parameters())
    shard = math.ceil(59 / n) if strategy != ShardingStrategy.NO_SHARD else 59
    assert flat.numel() == shard
    assert [k for k, _ in fsdp.named_parameters()] == ["_fsdp_wrapped_module._flat_param"]
    _train(fsdp, ref, opt_cls, 6, r, n, **kw)
    _assert_matches(fsdp, ref, atol=1e-10)
    if strategy != ShardingStrategy.NO_SHARD and r == n - 1:
        pad = n * shard - 59                    # the padding's gradient is zero
        assert pad > 0 and flat.grad[shard - pad:].abs().sum().item() == 0


def test_shards_hold_the_flat_parameter_in_rank_order(world):
    r, n = world
    ref = _make()
    fsdp = FSDP(_make())
    every = [None] * n
    dist.all_gather_object(every, fsdp.parameters().__next__().detach().numpy().copy())
    flat = np.concatenate(every)
    want = np.concatenate([p.detach().numpy().reshape(-1) for p in ref.parameters()])
    np.testing.assert_array_equal(flat[:59], want)
    assert np.all(flat[59:] == 0)


@pytest.mark.parametrize("strategy", STRATEGIES[:2], ids=lambda s: s.name)
def test_nested_transformer_auto_wrap(world, strategy):
    r, n = world
    ref = _make(Tiny)
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=policy, sharding_strategy=strategy)
    units = FSDP.fsdp_modules(fsdp)
    assert len(units) == 3 and all(isinstance(fsdp.layers[i], FSDP) for i in range(2))
    assert FSDP.fsdp_modules(fsdp, root_only=True) == [fsdp]
    names = [k for k, _ in fsdp.named_parameters()]
    assert names == ["_fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.layers.0._fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.layers.1._fsdp_wrapped_module._flat_param"]
    _train(fsdp, ref, torch.optim.Adam, 5, r, n, lr=0.02)
    _assert_matches(fsdp, ref, atol=1e-10)


def test_size_based_and_module_wrap_policies(world):
    r, n = world
    small = FSDP(_make(Tiny), auto_wrap_policy=functools.partial(
        size_based_auto_wrap_policy, min_num_params=100))
    # a Block's mlp (136 parameters) is wrapped; what is left of the Block (54) is not, nor
    # the ModuleList (108 left, but a container); inp and head stay the root's
    wrapped = sorted(k for k, m in small.named_modules() if isinstance(m, FSDP) and k)
    assert wrapped == ["_fsdp_wrapped_module.layers.0.mlp", "_fsdp_wrapped_module.layers.1.mlp"]
    by_class = FSDP(_make(Tiny), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    assert len(FSDP.fsdp_modules(by_class)) == 1 + 2 + 2 * 3
    ref = _make(Tiny)
    _train(by_class, ref, torch.optim.SGD, 3, r, n, lr=0.1)
    _assert_matches(by_class, ref, atol=1e-10)


def test_enable_wrap_and_wrap(world):
    r, n = world
    ref = _make(Tiny)
    m = _make(Tiny)
    with enable_wrap(wrapper_cls=FSDP, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP):
        m.layers[0] = wrap(m.layers[0])
        fsdp = wrap(m)
    assert fsdp.sharding_strategy == m.layers[0].sharding_strategy == \
        ShardingStrategy.SHARD_GRAD_OP
    assert wrap(m.head) is m.head                     # outside the context: unchanged
    _train(fsdp, ref, torch.optim.Adam, 3, r, n, lr=0.02)
    _assert_matches(fsdp, ref, atol=1e-10)


def _hand_mixed_step(ref, opt, X, Y, r_all, n, dtype, reduce_dtype):
    """One step as FSDP mixed precision does it: each rank's slice in `dtype`, gradients
    summed (in float32, rounded to reduce_dtype), divided by the world in reduce_dtype,
    applied to the float32 parameters."""
    low = copy.deepcopy(ref).to(dtype)
    grads = [None] * len(list(ref.parameters()))
    for r in r_all:
        low.zero_grad()
        _loss(low, _mine(X, r, n).to(dtype), _mine(Y, r, n)).backward()
        for i, p in enumerate(low.parameters()):
            g = p.grad.to(reduce_dtype).float()
            grads[i] = g if grads[i] is None else grads[i] + g
    opt.zero_grad()
    for p, g in zip(ref.parameters(), grads):
        p.grad = (g.to(reduce_dtype) / n).float()
    opt.step()


@pytest.mark.parametrize("dtype,reduce_dtype", [(torch.bfloat16, None),
                                                (torch.float16, None),
                                                (torch.bfloat16, torch.float32)],
                         ids=["bf16", "fp16", "bf16-reduce-fp32"])
def test_mixed_precision_equals_hand_reference(world, dtype, reduce_dtype):
    r, n = world
    ref = _make(dtype=torch.float32)
    fsdp = FSDP(_make(dtype=torch.float32), mixed_precision=MixedPrecision(
        param_dtype=dtype, reduce_dtype=reduce_dtype))
    seen = []
    fsdp.module.fc1.register_forward_hook(lambda m, i, o: seen.append((m.weight.dtype, i[0].dtype)))
    X, Y = _data(torch.float32)
    opt_ref = torch.optim.Adam(ref.parameters(), lr=0.01)
    opt = torch.optim.Adam(fsdp.parameters(), lr=0.01)
    for _ in range(4):
        _hand_mixed_step(ref, opt_ref, X, Y, range(n), n, dtype, reduce_dtype or dtype)
        opt.zero_grad()
        _loss(fsdp, _mine(X, r, n), _mine(Y, r, n)).backward()
        assert next(fsdp.parameters()).grad.dtype == torch.float32
        opt.step()
    assert seen[0] == (dtype, dtype)                  # computed in param_dtype, inputs cast
    assert next(fsdp.parameters()).dtype == torch.float32
    _assert_matches(fsdp, ref, atol=1e-6)


@pytest.mark.parametrize("norm_type", [2.0, math.inf, 1.0])
@pytest.mark.parametrize("strategy", [ShardingStrategy.FULL_SHARD, ShardingStrategy.NO_SHARD],
                         ids=lambda s: s.name)
def test_clip_grad_norm_equals_full_model_clip(world, norm_type, strategy):
    r, n = world
    X, Y = _data()
    ref = _make(Tiny)
    policy = ModuleWrapPolicy({Block})
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=policy, sharding_strategy=strategy)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=1.0)
    opt = torch.optim.SGD(fsdp.parameters(), lr=1.0)
    _loss(ref, X, Y).backward()
    _loss(fsdp, _mine(X, r, n), _mine(Y, r, n)).backward()
    want = nn.utils.clip_grad_norm_(ref.parameters(), 0.05, norm_type=norm_type)
    got = fsdp.clip_grad_norm_(0.05, norm_type=norm_type)
    assert want.item() > 0.05                         # the clip did scale
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-10)
    opt_ref.step()
    opt.step()
    _assert_matches(fsdp, ref, atol=1e-10)
    with pytest.raises(RuntimeError, match="root FSDP instance"):
        fsdp.layers[0].clip_grad_norm_(1.0)


def test_no_sync_accumulates_then_reduces(world):
    r, n = world
    X, Y = _data()
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=ModuleWrapPolicy({Block}))
    x, y = _mine(X, r, n), _mine(Y, r, n)
    half = len(x) // 2
    with fsdp.no_sync():
        _loss(fsdp, x[:half], y[:half]).backward()
    for p in fsdp.parameters():
        assert p.grad is None                         # kept unsharded, not reduced yet
    _loss(fsdp, x[half:], y[half:]).backward()
    ref = _make(Tiny)
    (2 * _loss(ref, X, Y)).backward()
    with FSDP.summon_full_params(fsdp):
        pass
    opt = torch.optim.SGD(fsdp.parameters(), lr=1.0)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=1.0)
    opt.step()
    opt_ref.step()
    _assert_matches(fsdp, ref, atol=1e-10)


def test_full_state_dict_round_trip(world):
    r, n = world
    ref = _make(Tiny)
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=policy)
    _train(fsdp, ref, torch.optim.Adam, 3, r, n, lr=0.02)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        sd = fsdp.state_dict()
    want = ref.state_dict()
    assert list(sd) == list(want)
    for k in want:
        np.testing.assert_allclose(sd[k].numpy(), want[k].numpy(), rtol=0, atol=1e-10,
                                   err_msg=k)
    assert not sd["head.weight"].requires_grad
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, cfg):
        only0 = fsdp.state_dict()
    assert fsdp._state_dict_config == FullStateDictConfig()       # restored on exit
    if r == 0:
        assert list(only0) == list(want) and all(v.device.type == "cpu" for v in only0.values())
    else:
        assert only0 == {}
    fresh = FSDP(_make(Tiny, seed=5), auto_wrap_policy=policy)
    X, _ = _data()
    assert not np.allclose(fresh(X).detach().numpy(), ref(X).detach().numpy())
    fresh.load_state_dict(sd)
    np.testing.assert_allclose(fresh(X).detach().numpy(), ref(X).detach().numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="Missing key"):
        fresh.load_state_dict({k: v for k, v in sd.items() if k != "head.bias"})


def test_summon_full_params_writeback(world):
    r, n = world
    fsdp = FSDP(_make(), sharding_strategy=ShardingStrategy.FULL_SHARD)
    with FSDP.summon_full_params(fsdp):
        with torch.no_grad():
            fsdp.module.fc2.bias.fill_(float(n))      # the same on every rank
    with FSDP.summon_full_params(fsdp, writeback=False):
        assert fsdp.module.fc2.bias.tolist() == [float(n)] * 3
        with torch.no_grad():
            fsdp.module.fc2.bias.zero_()
    with FSDP.summon_full_params(fsdp, writeback=False, rank0_only=True):
        if r == 0:
            assert fsdp.module.fc2.bias.tolist() == [float(n)] * 3
        else:
            assert "fc2.bias" not in dict(fsdp.named_parameters())
    assert fsdp.module.fc2.bias.device.type == "meta"      # resharded: shape only
    assert tuple(fsdp.module.fc2.bias.shape) == (3,)


def test_sync_module_states_and_cpu_offload(world):
    r, n = world
    m = _make()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(r)                                 # ranks differ until the broadcast
    fsdp = FSDP(m, sync_module_states=True, cpu_offload=CPUOffload(offload_params=True))
    ref = _make()
    _assert_matches(fsdp, ref, atol=0)
    _train(fsdp, ref, torch.optim.SGD, 2, r, n, lr=0.1)
    _assert_matches(fsdp, ref, atol=1e-10)


@pytest.mark.parametrize("strategy", STRATEGIES[::2], ids=lambda s: s.name)
def test_optim_state_dict_round_trip(world, strategy):
    r, n = world
    ref = _make(Tiny)
    policy = ModuleWrapPolicy({Block})
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=policy, sharding_strategy=strategy)
    X, Y = _data()
    opt_ref = torch.optim.Adam(ref.parameters(), lr=0.02)
    opt = torch.optim.Adam(fsdp.parameters(), lr=0.02)

    def step(model, o, x, y):
        o.zero_grad()
        _loss(model, x, y).backward()
        o.step()
    for _ in range(3):
        step(ref, opt_ref, X, Y)
        step(fsdp, opt, _mine(X, r, n), _mine(Y, r, n))
    osd = FSDP.optim_state_dict(fsdp, opt)
    want = opt_ref.state_dict()
    names = [k for k, _ in ref.named_parameters()]
    assert sorted(osd["state"]) == sorted(names)
    assert sorted(osd["param_groups"][0]["params"]) == sorted(names)
    for i, name in enumerate(names):
        for k, v in want["state"][i].items():
            np.testing.assert_allclose(osd["state"][name][k].numpy(), v.numpy(), rtol=0,
                                       atol=1e-10, err_msg=f"{name} {k}")
    fresh = FSDP(_make(Tiny, seed=3), auto_wrap_policy=policy, sharding_strategy=strategy)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        fresh.load_state_dict(fsdp.state_dict())
    with pytest.warns(FutureWarning):
        old = FSDP.full_optim_state_dict(fsdp, opt)         # rank0_only by default
    assert (sorted(old["state"]) == sorted(names)) if r == 0 else old == {}
    opt2 = torch.optim.Adam(fresh.parameters(), lr=0.5)
    to_load = FSDP.optim_state_dict_to_load(fresh, opt2, osd)
    with pytest.warns(FutureWarning):
        older = FSDP.shard_full_optim_state_dict(osd, fresh)
    for i, s in to_load["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(np.asarray(older["state"][i][k]), np.asarray(v))
    opt2.load_state_dict(to_load)
    assert opt2.param_groups[0]["lr"] == 0.02
    for _ in range(2):
        step(ref, opt_ref, X, Y)
        step(fresh, opt2, _mine(X, r, n), _mine(Y, r, n))
    _assert_matches(fresh, ref, atol=1e-10)


class Tied(nn.Module):
    """A weight shared by two modules of one unit (as tied embeddings)."""

    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(4, 4, bias=False), nn.Linear(4, 4)
        self.dec.weight = self.enc.weight
        self.out = nn.Linear(4, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.dec(torch.tanh(self.enc(x)))))


def test_tied_weights_train_and_keep_both_names(world):
    r, n = world
    ref = _make(Tied)
    fsdp = FSDP(_make(Tied))
    assert next(fsdp.parameters()).numel() == math.ceil((16 + 4 + 15) / n)
    _train(fsdp, ref, torch.optim.Adam, 4, r, n, lr=0.02)
    _assert_matches(fsdp, ref, atol=1e-10)
    sd = fsdp.state_dict()
    assert list(sd) == list(ref.state_dict())
    np.testing.assert_array_equal(sd["enc.weight"].numpy(), sd["dec.weight"].numpy())


def test_device_mesh_and_state_dict_through_a_plain_parent(world):
    r, n = world
    mesh = dist.init_device_mesh("cpu", (n,))
    ref = nn.Sequential(_make(), nn.Linear(3, 2).double())
    torch.manual_seed(0)
    m = nn.Sequential(_make(), nn.Linear(3, 2).double())
    m[1].load_state_dict(ref[1].state_dict())
    m[0] = FSDP(m[0], device_mesh=mesh)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    X, Y = _data()
    for _ in range(3):
        opt_ref.zero_grad()
        nn.functional.mse_loss(ref(X), Y[:, :2]).backward()
        opt_ref.step()
        opt.zero_grad()
        nn.functional.mse_loss(m(_mine(X, r, n)), _mine(Y, r, n)[:, :2]).backward()
        for p in m[1].parameters():                 # the plain part: average by hand
            dist.all_reduce(p.grad)
            p.grad.div_(n)
        opt.step()
    sd, want = m.state_dict(), ref.state_dict()
    assert list(sd) == list(want)
    for k in want:
        np.testing.assert_allclose(sd[k].numpy(), want[k].numpy(), rtol=0, atol=1e-10,
                                   err_msg=k)
    fresh = nn.Sequential(FSDP(_make(seed=4), device_mesh=mesh), nn.Linear(3, 2).double())
    keys = list(sd)
    fresh.load_state_dict(sd)
    assert list(sd) == keys                         # the caller's dict as it was
    np.testing.assert_allclose(fresh(X).detach().numpy(), ref(X).detach().numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="Missing key"):
        fresh.load_state_dict({k: v for k, v in sd.items() if k != "0.fc1.bias"})
    with pytest.raises(ValueError, match="Cannot pass both process_group and device_mesh"):
        FSDP(_make(), device_mesh=mesh, process_group=dist.group.WORLD)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_use_orig_params_trains_the_original_parameters(world, strategy):
    r, n = world
    ref = _make(Tiny)
    policy = ModuleWrapPolicy({Block})
    fsdp = FSDP(_make(Tiny), auto_wrap_policy=policy, sharding_strategy=strategy,
                use_orig_params=True)
    names = [k.replace("_fsdp_wrapped_module.", "") for k, _ in fsdp.named_parameters()]
    assert names == [k for k, _ in ref.named_parameters()]
    sizes = [p.numel() for p in fsdp.parameters()]
    every = [None] * n
    dist.all_gather_object(every, sizes)
    want = [p.numel() for p in ref.parameters()]
    if strategy == ShardingStrategy.NO_SHARD:
        assert [tuple(p.shape) for p in fsdp.parameters()] == \
            [tuple(p.shape) for p in ref.parameters()]
    else:                                           # each rank holds a slice of each
        assert [sum(s) for s in zip(*every)] == want
    X, Y = _data()
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=0.02)
    opt = torch.optim.AdamW(fsdp.parameters(), lr=0.02)
    for i in range(4):
        opt_ref.zero_grad()
        _loss(ref, X, Y).backward()
        opt.zero_grad(set_to_none=i % 2 == 0)
        _loss(fsdp, _mine(X, r, n), _mine(Y, r, n)).backward()
        if i == 3:
            want_norm = nn.utils.clip_grad_norm_(ref.parameters(), 0.05)
            got_norm = fsdp.clip_grad_norm_(0.05)
            np.testing.assert_allclose(got_norm.item(), want_norm.item(), rtol=1e-10)
        opt_ref.step()
        opt.step()
    _assert_matches(fsdp, ref, atol=1e-10)
    sd = fsdp.state_dict()
    assert list(sd) == list(ref.state_dict())
    fresh = FSDP(_make(Tiny, seed=2), auto_wrap_policy=policy, sharding_strategy=strategy,
                 use_orig_params=True)
    fresh.load_state_dict(sd)
    np.testing.assert_allclose(fresh(X).detach().numpy(), ref(X).detach().numpy(), atol=1e-10)
