"""The prims this backend has no OpenCL kernel for, on purpose: the core runs each as its
per-op CPU fallback (copy in, compute on the host, copy out; docs/backends/opencl.md).

LAPACK-style decompositions gain little from PoCL's CPU device and would need a
device-side solver library on a GPU; the special functions need series/continued
fractions per function (scipy's Cephes on the host). Listed, so that the tests can tell a
documented fallback from a kernel that went missing, and conformance-xfails.txt agrees."""
LINALG = ("linalg_cholesky", "linalg_eigh", "linalg_lu_factor", "linalg_qr",
          "linalg_solve_triangular", "linalg_svd")
SPECIAL = ("digamma", "i0", "igamma", "igammac", "lgamma", "nextafter", "special_bessel_j0",
           "special_bessel_j1", "special_bessel_y0", "special_bessel_y1", "special_erfcx",
           "special_i0e", "special_i1", "special_i1e", "special_log_ndtr",
           "special_modified_bessel_k0", "special_modified_bessel_k1", "special_ndtri",
           "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
           "special_zeta", "special_airy_ai")
# The FFT prims take or give complex tensors, and this backend has no complex dtypes
# (its devices do not list complex64 / complex128): a complex tensor, so any FFT of an
# opencl tensor (and linalg.eig's complex results), is refused with a TypeError naming the dtype and the device before a
# kernel or a fallback could run. Move the data to the cpu for torch.fft.
NO_COMPLEX_DTYPES = ("fft_c2c", "fft_c2r", "fft_r2c",
                     "linalg_eig")    # complex results, whatever the input's dtype
HOST_FALLBACK_PRIMS = frozenset(LINALG + SPECIAL + NO_COMPLEX_DTYPES)
