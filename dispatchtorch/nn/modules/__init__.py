"""The layers of dispatchtorch.nn."""
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, Mish, ReLU, ReLU6, Sigmoid,
                         SiLU, Softmax, Softmin, Softplus, Tanh)
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module, RemovableHandle
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                      MaxPool2d)
from .rnn import GRU, LSTM
from .sparse import Embedding
from .transformer import (TransformerEncoder, TransformerEncoderLayer,
                          generate_square_subsequent_mask)

__all__ = [name for name, value in dict(globals()).items()
           if isinstance(value, type) or name == "generate_square_subsequent_mask"]
