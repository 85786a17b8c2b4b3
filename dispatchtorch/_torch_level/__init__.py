"""The torch.* names PyTorch keeps at top level beside torch.nn.functional and the Tensor
methods, with ATen's signatures: the nn forms (nn_forms, nn_more, rnn_cells), the
functional RNNs (rnn_functions), small functions of tensors (tensors), the *_copy forms
of views (copies), torch.cond (control_flow), from_file (files), lobpcg, poisson and
binomial (random_counts), process-wide switches (flags) and deprecated setters of
defaults (defaults). attach() binds them into the dispatchtorch namespace."""
from __future__ import annotations

from . import (control_flow, copies, defaults, flags, nn_forms, nn_more, random_counts,
               files, lobpcg, rnn_cells, rnn_functions, tensors)


def public_names():
    """{name: object} of every torch-level name these modules define."""
    names = {}
    for module in (nn_forms, nn_more, rnn_cells, tensors, random_counts, flags, defaults,
                   copies, control_flow, rnn_functions, files, lobpcg):
        names.update(module.PUBLIC)
    return names


def attach(ns):
    """Bind the names into the dispatchtorch namespace dict `ns` (not over existing ones)."""
    for name, obj in public_names().items():
        ns.setdefault(name, obj)
