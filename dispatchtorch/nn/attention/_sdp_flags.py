"""Which scaled-dot-product-attention kernels are on: torch.backends.cuda's
enable_*_sdp / *_sdp_enabled and nn.attention.sdpa_kernel read and write this one dict
(kept here, below both, so F.scaled_dot_product_attention can check it)."""
SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
