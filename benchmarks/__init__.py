"""dispatchtorch's benchmarks: every case timed side by side on numpy, PyTorch's CPU
build and each ready dispatchtorch device, in one run (`python -m benchmarks`).

PyTorch is a benchmark-only dependency; dispatchtorch never imports it.
"""
