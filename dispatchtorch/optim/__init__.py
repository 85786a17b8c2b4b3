"""dispatchtorch.optim: PyTorch's optimizers and learning-rate schedulers, written in
public in-place ops so each update runs on the parameters' own backend."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from ._stateless import swap_in_optimizer_params_and_state
from .sparse_adam import SparseAdam
from . import swa_utils  # noqa: E402

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler",
           "swa_utils", "swap_in_optimizer_params_and_state"]
