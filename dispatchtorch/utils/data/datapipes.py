"""DataPipes (torch.utils.data's IterDataPipe / MapDataPipe API, deprecated in PyTorch
since 2.x but still exported): composable datasets whose operations are registered as
methods (`dp.map(fn).filter(pred).batch(4)`), with the decorators and switches of that
API. The functional forms provided: map, filter, batch, unbatch, zip, concat (iterable)
and map, batch, concat (map-style); PyTorch's others (shuffle, fork, demux, mux,
groupby, collate, sharding_filter, the file and DataFrame ones) are absent. New ones
register with functional_datapipe as in PyTorch."""
from __future__ import annotations

import contextlib
import functools
import inspect
import typing
from typing import Generic, TypeVar

from .dataset import Dataset, IterableDataset

__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
           "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "runtime_validation", "runtime_validation_disabled"]

T_co = TypeVar("T_co", covariant=True)
_flags = {"determinism": False, "runtime_validation": True}


class _Registry:
    """Functional forms: `dp.name(...)` builds the registered class around dp."""

    functions: dict

    def __getattr__(self, name):
        fn = type(self).functions.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return functools.partial(fn, self)

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            f"already taken")
        cls.functions[function_name] = cls_to_register

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(type(self).functions))


class IterDataPipe(_Registry, IterableDataset, Generic[T_co]):
    """An iterable DataPipe."""
    functions: dict = {}

    def __repr__(self):
        return type(self).__qualname__


class MapDataPipe(_Registry, Dataset, Generic[T_co]):
    """A map-style DataPipe (__getitem__ and __len__)."""
    functions: dict = {}

    def __repr__(self):
        return type(self).__qualname__


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe over DataFrames (the marker class of PyTorch's API)."""

    def _is_dfpipe(self):
        return True


class DataChunk(list, Generic[T_co]):
    """A batch of a DataPipe: a list that prints itself indented."""

    def __init__(self, items=()):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


def functional_datapipe(name, enable_df_api_tracing=False):
    """Class decorator: register the DataPipe class as the method `name` of every
    DataPipe of its kind."""
    def register(cls):
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(name, cls, enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(name, cls)
        else:
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe or "
                            "MapDataPipe")
        return cls
    return register


@contextlib.contextmanager
def guaranteed_datapipes_determinism():
    """Within the block, building a DataPipe marked non_deterministic raises TypeError."""
    before = _flags["determinism"]
    _flags["determinism"] = True
    try:
        yield
    finally:
        _flags["determinism"] = before


def non_deterministic(arg):
    """Mark a DataPipe class as non-deterministic, or (given a function of the
    DataPipe's arguments returning bool) mark it so when that function says so."""
    if isinstance(arg, type):
        if not issubclass(arg, (IterDataPipe, MapDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, "
                            f"but {arg.__name__} is found")
        return _guarded(arg, lambda *a, **k: True)
    if not callable(arg):
        raise TypeError(f"DataPipe with function argument is expected, but {arg} is found")
    return lambda cls: _guarded(cls, arg)


def _guarded(cls, is_nondeterministic):
    original = cls.__new__

    def __new__(c, *args, **kwargs):
        if _flags["determinism"] and is_nondeterministic(*args, **kwargs):
            raise TypeError(f"{cls.__name__} is non-deterministic, but you set "
                            f"'guaranteed_datapipes_determinism'. You can turn off determinism "
                            f"for this DataPipe if that is acceptable for your application")
        return original(c) if original is object.__new__ else original(c, *args, **kwargs)
    cls.__new__ = __new__
    return cls


def _datapipe_kind(annotation):
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
        return origin
    return None


def argument_validation(f):
    """Decorate a DataPipe's __init__: arguments annotated as a DataPipe type must be one."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f) if f.__annotations__ else {}

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            kind = _datapipe_kind(hints.get(name))
            if kind is not None and not isinstance(value, kind):
                raise TypeError(f"Expected argument '{name}' as a {kind.__name__}, but found "
                                f"{type(value)}")
        return f(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def runtime_validation_disabled():
    before = _flags["runtime_validation"]
    _flags["runtime_validation"] = False
    try:
        yield
    finally:
        _flags["runtime_validation"] = before


def _declared_type(dp):
    for base in getattr(type(dp), "__orig_bases__", ()):
        if _datapipe_kind(base) is not None:
            args = typing.get_args(base)
            if args and isinstance(args[0], type):
                return args[0]
    return None


def runtime_validation(f):
    """Decorate a DataPipe's __iter__: each item must be of the DataPipe's declared type
    (`class P(IterDataPipe[int])`), unless inside runtime_validation_disabled()."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        expected = _declared_type(self)
        for item in f(self):
            if _flags["runtime_validation"] and expected is not None and \
                    not isinstance(item, expected):
                raise RuntimeError(f"Expected an instance as subtype of {expected}, but found "
                                   f"{item}({type(item)})")
            yield item
    return wrapper


# -- the functional forms --------------------------------------------------------------------

@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __iter__(self):
        for item in self.datapipe:
            yield self.fn(item)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, filter_fn):
        self.datapipe, self.filter_fn = datapipe, filter_fn

    def __iter__(self):
        for item in self.datapipe:
            keep = self.filter_fn(item)
            if not isinstance(keep, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 "FilterIterDataPipe, got", type(keep))
            if keep:
                yield item


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch = []
        for item in self.datapipe:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, unbatch_level=1):
        if unbatch_level < -1 or unbatch_level == 0:
            raise ValueError("unbatch_level must be -1 or >= 1")
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, -1)
            else:
                yield element
        elif level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             f"DataPipe")


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __getitem__(self, index):
        start = index * self.batch_size
        if index < 0 or index >= len(self):
            raise IndexError(f"Index {index} is out of bound.")
        stop = min(start + self.batch_size, len(self.datapipe))
        return self.wrapper_class([self.datapipe[i] for i in range(start, stop)])

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `MapDataPipe`")
        self.datapipes = datapipes

    def __getitem__(self, index):
        offset = index
        for dp in self.datapipes:
            if offset < len(dp):
                return dp[offset]
            offset -= len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)
