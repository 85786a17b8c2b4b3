"""The layers of dispatchtorch.nn, in PyTorch's files (torch.nn.modules.activation,
.rnn, .linear, ...), so class paths, pickles and isinstance checks carry over."""
from .activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                         LeakyReLU, LogSigmoid, LogSoftmax, Mish, MultiheadAttention, PReLU, ReLU,
                         ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus,
                         Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d,
                        LazyBatchNorm3d, SyncBatchNorm)
from .channelshuffle import ChannelShuffle
from .container import (Container, ModuleDict, ModuleList, ParameterDict, ParameterList,
                        Sequential)
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d)
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                      FeatureAlphaDropout)
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,
                           LazyInstanceNorm2d, LazyInstanceNorm3d)
from .lazy import LazyModuleMixin
from .linear import Bilinear, Identity, LazyLinear, Linear, NonDynamicallyQuantizableLinear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                   LinearCrossEntropyLoss,
                   MarginRankingLoss, MSELoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                   MultiMarginLoss, NLLLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss,
                   SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .module import Module, RemovableHandle
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                      ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d,
                      LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d,
                      MaxUnpool2d, MaxUnpool3d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer,
                          generate_square_subsequent_mask)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401

__all__ = [name for name, value in dict(globals()).items()
           if isinstance(value, type) and not name.startswith("_") and name not in
           ("LazyModuleMixin", "RemovableHandle")] + ["generate_square_subsequent_mask"]
