"""Named tuples returned by ops such as max(dim) and sort, as torch.return_types."""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
var_mean = namedtuple("var_mean", ["var", "mean"])
std_mean = namedtuple("std_mean", ["std", "mean"])
aminmax = namedtuple("aminmax", ["min", "max"])
