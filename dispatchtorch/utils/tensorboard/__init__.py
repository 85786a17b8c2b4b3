"""torch.utils.tensorboard: SummaryWriter on the `tensorboard` package's own event-file
writer and protocol buffers (the optional `dispatchtorch[tensorboard]` extra), so the
files are the ones TensorBoard reads and PyTorch writes. What it does not write:
docs/dropin.md."""
try:
    import tensorboard as _tensorboard
except ImportError as exc:          # as PyTorch: the import itself fails, naming the fix
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above: "
                      "pip install 'dispatchtorch[tensorboard]' (or tensorboard)") from exc

from packaging.version import Version as _Version

if _Version(getattr(_tensorboard, "__version__", "0")) < _Version("1.15"):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
