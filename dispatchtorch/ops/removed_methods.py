"""Tensor.eig / lstsq / solve / symeig: removed from PyTorch in 1.9 but still methods there
that raise a RuntimeError saying what replaces them; they raise the same text here, so a
program written for old PyTorch fails the same way, with the same advice."""
from __future__ import annotations

_REMOVED = {
    "solve": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.solve` is deprecated in favor of `torch.linalg.solve`. '
        '`torch.linalg.solve` has its arguments reversed and does not return the LU '
        'factorization.\n'
        '\n'
        'To get the LU factorization see `torch.lu`, which can be used with '
        '`torch.lu_solve` or `torch.lu_unpack`.\n'
        'X = torch.solve(B, A).solution should be replaced with:\n'
        'X = torch.linalg.solve(A, B)'
    ),
    "lstsq": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n'
        '`torch.linalg.lstsq` has reversed arguments and does not return the QR '
        'decomposition in the returned tuple (although it returns other information '
        'about the problem).\n'
        '\n'
        'To get the QR decomposition consider using `torch.linalg.qr`.\n'
        '\n'
        'The returned solution in `torch.lstsq` stored the residuals of the solution '
        'in the last m - n columns of the returned value whenever m > n. In '
        "torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
        'returned named tuple.\n'
        '\n'
        'The unpacking of the solution, as in\n'
        'X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n'
        'should be replaced with:\n'
        'X = torch.linalg.lstsq(A, B).solution'
    ),
    "symeig": (
        'This function was deprecated since version 1.9 and is now removed. The '
        'default behavior has changed from using the upper triangular portion of the '
        'matrix by default to using the lower triangular portion.\n'
        '\n'
        'L, _ = torch.symeig(A, upper=upper) should be replaced with:\n'
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n"
        '\n'
        'and\n'
        '\n'
        'L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n'
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    ),
    "eig": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` '
        'rather than real tensors mimicking complex tensors.\n'
        '\n'
        'L, _ = torch.eig(A) should be replaced with:\n'
        'L_complex = torch.linalg.eigvals(A)\n'
        '\n'
        'and\n'
        '\n'
        'L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n'
        'L_complex, V_complex = torch.linalg.eig(A)'
    ),
}



def _removed(name):
    def method(self, *args, **kwargs):
        raise RuntimeError(_REMOVED[name])
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Removed in PyTorch 1.9: raises its RuntimeError naming the replacement."
    return method


METHODS = {name: _removed(name) for name in _REMOVED}
