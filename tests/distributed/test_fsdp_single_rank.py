"""FullyShardedDataParallel in a world of one rank (plain pytest), against PyTorch's own
FSDP run on one gloo rank: the same parameter names, FSDP units and state-dict keys for
the same model and wrap policy; the gradients of the flat parameter against the unwrapped
model's; and the API's errors."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch as pt

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch.distributed import fsdp as dfsdp
from dispatchtorch.distributed.fsdp import wrap as dwrap
from ranks.fsdp_models import tiny_classes     # tests/distributed/ranks/fsdp_models.py

pytestmark = [pytest.mark.skipif(not dist.is_available(), reason="mpi4py is not installed"),
              pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]


@pytest.fixture(scope="module", autouse=True)
def groups(beside_pytorch_groups):
    yield


def _policies(lib, wrap_mod, block):
    return {
        "none": None,
        "transformer": functools.partial(wrap_mod.transformer_auto_wrap_policy,
                                         transformer_layer_cls={block}),
        "module": wrap_mod.ModuleWrapPolicy({lib.nn.Linear}),
        "size": functools.partial(wrap_mod.size_based_auto_wrap_policy, min_num_params=100),
        "always": wrap_mod.always_wrap_policy,
        "lambda": functools.partial(wrap_mod.lambda_auto_wrap_policy,
                                    lambda_fn=lambda m: isinstance(m, lib.nn.LayerNorm)),
    }


def _theirs(policy_name, **kw):
    from torch.distributed.fsdp import FullyShardedDataParallel
    from torch.distributed.fsdp import wrap as twrap
    Tiny, Block = tiny_classes(pt)
    policy = _policies(pt, twrap, Block)[policy_name]
    return FullyShardedDataParallel(Tiny(), auto_wrap_policy=policy,
                                    device_id=pt.device("cpu"), **kw)


def _ours(policy_name, **kw):
    Tiny, Block = tiny_classes(torch)
    policy = _policies(torch, dwrap, Block)[policy_name]
    torch.manual_seed(0)
    return dfsdp.FullyShardedDataParallel(Tiny(), auto_wrap_policy=policy, **kw), Tiny


def _summary(model, fsdp_cls):
    return ([(k, tuple(p.shape)) for k, p in model.named_parameters()],
            [k for k, m in model.named_modules() if isinstance(m, fsdp_cls)],
            list(model.state_dict()))


@pytest.mark.parametrize("policy", ["none", "transformer", "module", "size", "always", "lambda"])
def test_names_units_and_state_dict_keys_equal_pytorchs(policy):
    from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
    theirs = _summary(_theirs(policy), TFSDP)
    ours = _summary(_ours(policy)[0], dfsdp.FullyShardedDataParallel)
    assert ours == theirs


@pytest.mark.parametrize("policy", ["none", "transformer", "size"])
def test_use_orig_params_names_and_shapes_equal_pytorchs(policy):
    from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
    theirs = _summary(_theirs(policy, use_orig_params=True), TFSDP)
    ours = _summary(_ours(policy, use_orig_params=True)[0], dfsdp.FullyShardedDataParallel)
    assert ours == theirs


def test_summon_full_params_names_equal_pytorchs():
    from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
    theirs, ours = _theirs("transformer"), _ours("transformer")[0]
    with TFSDP.summon_full_params(theirs):
        want = [(k, tuple(p.shape), type(p).__name__) for k, p in theirs.named_parameters()]
    with dfsdp.FullyShardedDataParallel.summon_full_params(ours):
        got = [(k, tuple(p.shape), type(p).__name__) for k, p in ours.named_parameters()]
    assert got == want


def test_one_rank_gradients_and_state_dict_equal_the_unwrapped_model():
    with pytest.warns(UserWarning, match="switching to use `NO_SHARD` instead of "
                                         "ShardingStrategy.FULL_SHARD"):
        model, Tiny = _ours("transformer")
    assert model.sharding_strategy == dfsdp.ShardingStrategy.NO_SHARD     # as PyTorch's
    torch.manual_seed(0)
    ref = Tiny()
    x = torch.randn(5, 4)
    model(x).pow(2).sum().backward()
    ref(x).pow(2).sum().backward()
    flat = {k: p for k, p in model.named_parameters()}
    root = flat["_fsdp_wrapped_module._flat_param"]
    want = np.concatenate([ref.get_parameter(k).grad.numpy().reshape(-1)
                           for k in ("inp.weight", "inp.bias", "head.weight", "head.bias")])
    np.testing.assert_allclose(root.grad.numpy(), want, rtol=1e-6, atol=1e-7)
    sd = model.state_dict()
    for k, v in ref.state_dict().items():
        np.testing.assert_array_equal(sd[k].numpy(), v.numpy())


def test_meta_device_module_is_materialised_by_param_init_fn():
    calls = []

    def init(m):
        calls.append(type(m).__name__)
        m.to_empty(device="cpu")
        with torch.no_grad():
            for p in m.parameters():
                p.fill_(0.5)
    lin = torch.nn.Linear(3, 2, device="meta")
    model = dfsdp.FullyShardedDataParallel(lin, param_init_fn=init)
    assert calls == ["Linear"]
    assert model(torch.ones(1, 3)).tolist() == [[2.0, 2.0]]


def test_ignored_modules_keep_their_parameters():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
    model = dfsdp.FullyShardedDataParallel(m, ignored_modules=[m[1]])
    names = [k for k, _ in model.named_parameters()]
    assert names == ["_fsdp_wrapped_module._flat_param", "_fsdp_wrapped_module.1.weight",
                     "_fsdp_wrapped_module.1.bias"]
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_buffer_dtype_is_restored_in_the_state_dict():
    Tiny, _ = tiny_classes(torch)
    model = dfsdp.FullyShardedDataParallel(Tiny(), mixed_precision=dfsdp.MixedPrecision(
        param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16))
    assert model.module.layers[0].scale.dtype == torch.bfloat16
    assert model.state_dict()["layers.0.scale"].dtype == torch.float32
    assert model(torch.ones(2, 4)).dtype == torch.bfloat16


def test_clip_grad_norm_inf_and_returned_dtype():
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 2).double()
    model = dfsdp.FullyShardedDataParallel(torch.nn.Linear(3, 2).double())
    with dfsdp.FullyShardedDataParallel.summon_full_params(model):
        with torch.no_grad():
            model.module.weight.copy_(ref.weight)
            model.module.bias.copy_(ref.bias)
    x = torch.randn(4, 3).double()
    ref(x).sum().backward()
    model(x).sum().backward()
    want = torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.1, norm_type=math.inf)
    got = model.clip_grad_norm_(0.1, norm_type=math.inf)
    assert got.dtype == torch.float64 and got.item() == pytest.approx(want.item())


def _lin():
    return torch.nn.Linear(2, 2)


FSDP = dfsdp.FullyShardedDataParallel


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="module must be an nn.Module"):
        FSDP("x")
    with pytest.raises(TypeError, match="sharding_strategy must be a ShardingStrategy"):
        FSDP(_lin(), sharding_strategy="FULL_SHARD")
    for s in (dfsdp.ShardingStrategy.HYBRID_SHARD, dfsdp.ShardingStrategy._HYBRID_SHARD_ZERO2):
        with pytest.raises(NotImplementedError, match="HYBRID_SHARD"):
            FSDP(_lin(), sharding_strategy=s)
    m = _lin()
    m.bias.requires_grad_(False)
    with pytest.raises(NotImplementedError, match="use_orig_params=True"):
        FSDP(m, use_orig_params=True)
    model = FSDP(_lin(), use_orig_params=True)
    with pytest.raises(NotImplementedError, match="use_orig_params=True"):
        FSDP.optim_state_dict(model, torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(TypeError, match="mixed_precision must be a MixedPrecision"):
        FSDP(_lin(), mixed_precision=torch.bfloat16)
    with pytest.raises(TypeError, match="cpu_offload must be a CPUOffload"):
        FSDP(_lin(), cpu_offload=True)
    with pytest.raises(NotImplementedError, match="keep_low_precision_grads"):
        FSDP(_lin(), mixed_precision=dfsdp.MixedPrecision(keep_low_precision_grads=True))


def test_errors_as_pytorchs():
    m = _lin()
    m.bias.requires_grad_(False)
    with pytest.raises(ValueError, match="uniform `requires_grad`"):
        FSDP(m)
    m = _lin()
    m.bias = torch.nn.Parameter(m.bias.detach().double())
    with pytest.raises(ValueError, match="uniform dtype but got dispatchtorch.float32 and "
                                         "dispatchtorch.float64"):
        FSDP(m)
    model = FSDP(torch.nn.Sequential(_lin(), _lin()),
                 auto_wrap_policy=dwrap.ModuleWrapPolicy({torch.nn.Linear}))
    with pytest.raises(NotImplementedError, match="writeback=True and rank0_only=True"):
        with FSDP.summon_full_params(model, rank0_only=True):
            pass
    with pytest.raises(RuntimeError, match="Expected state_dict_config of type"):
        with FSDP.state_dict_type(model, dfsdp.StateDictType.FULL_STATE_DICT,
                                  dfsdp.ShardedStateDictConfig()):
            pass
    for t in (dfsdp.StateDictType.SHARDED_STATE_DICT, dfsdp.StateDictType.LOCAL_STATE_DICT):
        with pytest.raises(NotImplementedError, match=t.name):
            with FSDP.state_dict_type(model, t):
                pass
    with pytest.raises(NotImplementedError, match="already within an autowrap context"):
        with dwrap.enable_wrap(wrapper_cls=FSDP):
            with dwrap.enable_wrap(wrapper_cls=FSDP):
                pass
    with pytest.raises(RuntimeError, match="no_sync"):
        with model[0].no_sync():
            pass
    with pytest.raises(RuntimeError, match="root FSDP instance"):
        model[0].clip_grad_norm_(1.0)
    with pytest.raises(TypeError, match="pickled"):
        import pickle
        pickle.dumps(model)


def _layout(osd):
    return ({k: (sorted(s), tuple(s["exp_avg"].shape)) for k, s in osd["state"].items()},
            [g["params"] for g in osd["param_groups"]])


def _optim_summary(fsdp_cls, model, lib):
    opt = lib.optim.Adam(model.parameters(), lr=0.1)
    model(lib.ones(3, 4)).sum().backward()
    opt.step()
    osd = fsdp_cls.optim_state_dict(model, opt)
    with pytest.warns(FutureWarning, match="full_optim_state_dict``is being deprecated"):
        old = fsdp_cls.full_optim_state_dict(model, opt)
    with pytest.warns(FutureWarning, match="shard_full_optim_state_dict``is being deprecated"):
        sharded = fsdp_cls.shard_full_optim_state_dict(old, model)
    return _layout(osd), _layout(old), _layout(sharded)


def test_optim_state_dict_layouts_equal_pytorchs():
    from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
    theirs = _optim_summary(TFSDP, _theirs("transformer"), pt)
    ours = _optim_summary(FSDP, _ours("transformer")[0], torch)
    assert ours == theirs


def test_meta_device_module_without_param_init_fn_is_reset():
    torch.manual_seed(0)
    want = torch.nn.Linear(3, 2)
    torch.manual_seed(0)
    model = FSDP(torch.nn.Linear(3, 2, device="meta"))
    x = torch.ones(2, 3)
    np.testing.assert_allclose(model(x).detach().numpy(), want(x).detach().numpy())


def test_state_dict_offload_to_cpu_does_not_warn(recwarn):
    model = FSDP(_lin())
    with FSDP.state_dict_type(model, dfsdp.StateDictType.FULL_STATE_DICT,
                              dfsdp.FullStateDictConfig(offload_to_cpu=True)):
        sd = model.state_dict()
    assert list(sd) == ["weight", "bias"]
    assert not [w for w in recwarn if "offload_to_cpu" in str(w.message)]
    with pytest.warns(UserWarning, match="offload_to_cpu=True and rank0_only=False"):
        with FSDP.summon_full_params(model, offload_to_cpu=True):
            pass


def test_ignored_states_parameters_stay_out_of_the_flat_parameter():
    m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
    model = FSDP(m, ignored_states=[m[1].weight])
    assert [(k, tuple(p.shape)) for k, p in model.named_parameters()] == [
        ("_fsdp_wrapped_module._flat_param", (3 * 3 + 3 + 2,)),
        ("_fsdp_wrapped_module.1.weight", (2, 3))]
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
