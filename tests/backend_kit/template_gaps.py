"""The prims the backend template's numpy kernels leave to the CPU fallback: the special
functions numpy lacks (scipy has them; a generated backend must not depend on scipy)."""
from dispatchtorch.backend.prims import SPECIAL_BINARY, SPECIAL_UNARY

NUMPY_LACKS = sorted(["erf", "erfc", "erfinv", "special_airy_ai", *SPECIAL_UNARY,
                      *(n for n in SPECIAL_BINARY if n != "nextafter")])
