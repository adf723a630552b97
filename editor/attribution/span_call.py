"""Calling the span network, whichever runtime holds it: arrays in, arrays out."""

from __future__ import annotations

import numpy as np


def run(network, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> tuple[np.ndarray, ...]:
    """``network``'s (pair, tokens, start, end) as float32 arrays: the ONNX network
    (``span_onnx.OnnxSpanNetwork``) takes and answers arrays; a torch one gets tensors on its
    device, without gradients."""
    if not hasattr(network, "parameters"):
        return tuple(np.asarray(o, np.float32) for o in network(ids, mask, types))
    import torch

    device = next(network.parameters()).device
    with torch.inference_mode():
        out = network(*(torch.from_numpy(a).to(device) for a in (ids, mask, types)))
    return tuple(o.float().cpu().numpy() for o in out)
