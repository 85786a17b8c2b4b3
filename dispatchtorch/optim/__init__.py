"""dispatchtorch.optim: PyTorch's optimizers and learning-rate schedulers, written in
public in-place ops so each update runs on the parameters' own backend."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
