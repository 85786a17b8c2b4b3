"""The (exception class, message) a call raises, with warnings silenced: the error-parity
tests compare dispatchtorch's against PyTorch's."""
import warnings

import pytest


def raised(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            call(lib)
    return type(info.value), str(info.value)
