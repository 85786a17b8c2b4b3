"""dispatchtorch.signal: torch.signal's window functions (signal.windows)."""
from . import windows  # noqa: F401
