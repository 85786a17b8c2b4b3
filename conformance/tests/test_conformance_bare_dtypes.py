"""The contract's storage check of the bare dtypes (uint16-64, float8) a device claims:
it passes on the CPU reference, catches a backend that changes bytes, and adds nothing
to the op x dtype table or to a device that does not claim them."""
import numpy as np

from dispatchtorch.backend import BARE, DTYPE_NAMES
from dispatchtorch_conformance import contract
from dispatchtorch_conformance.runner import Target


def test_cpu_claims_and_passes_every_bare_dtype():
    target = Target("cpu")
    ids = [c for c in contract.names(target.dtypes) if c.startswith("bare-roundtrip/")]
    assert ids == [f"bare-roundtrip/{d}" for d in BARE]
    assert all(contract.run_one(target, c).outcome == "pass" for c in ids)
    assert not [c for c in contract.names(DTYPE_NAMES) if c.startswith("bare")]


def test_a_backend_that_canonicalises_float8_nans_fails(monkeypatch):
    target = Target("cpu")
    bk = target.rt.backend
    real = bk.from_host

    def lossy(array, device, copy=True):        # through float32: NaN payloads are lost
        if array.dtype.itemsize == 1 and array.dtype.kind in "Vf":
            array = array.astype(np.float32).astype(array.dtype)
        return real(array, device, copy)
    monkeypatch.setattr(bk, "from_host", lossy)
    r = contract.run_one(target, "bare-roundtrip/float8_e5m2")
    assert r.outcome == "fail" and "bytes changed" in r.message, r
