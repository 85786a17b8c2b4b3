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
           "special_zeta")
HOST_FALLBACK_PRIMS = frozenset(LINALG + SPECIAL)
