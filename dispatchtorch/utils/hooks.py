"""torch.utils.hooks: the handle every register_*_hook returns."""
from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle"]
