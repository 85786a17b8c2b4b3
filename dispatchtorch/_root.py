"""The package namespace (torch.*), handed down by the root at import.

Layers below the root that must read or patch public names (autocast wraps torch.*
functions; a dynamic capture remakes torch.arange over symbolic sizes) take it from here
instead of importing the package, which imports them."""

ROOT: list = []       # [the dispatchtorch module], set by _dropin_names.attach
