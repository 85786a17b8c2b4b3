"""Late-bound access to the public ops from inside the ops package.

Derivative rules and decompositions are written in public ops; reaching them through
this module avoids import cycles between the op modules.
"""
import sys


def __getattr__(name):
    return getattr(sys.modules["dispatchtorch.ops"], name)
