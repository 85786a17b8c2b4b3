"""Late-bound access to the public ops, kept only for the op modules merged from main after
the explicit-imports conversion (native_norms, ldl, nonzero_padded, householder and the
gradient_histogram is converted). Every other op module imports the modules it
calls explicitly; convert these the same way (see docs/architecture.md) and delete this.
"""
import sys


def __getattr__(name):
    return getattr(sys.modules["dispatchtorch.ops"], name)
