#!/usr/bin/python3
"""Writes tests/models/dw_odd_rows_se (model.onnx and a test data set, the expected outputs
computed with torch, independently of the graph):

  dw_odd_rows_se: EfficientNet-B0's features.6.0 block, narrowed: x [1, 24, 14, 14] ->
    1x1 Conv (24 -> 672) + SiLU -> 5x5 depthwise Conv stride 2 pad 2 + SiLU -> squeeze
    and excite (GlobalAveragePool -> 1x1 Conv 672 -> 8 + SiLU -> 1x1 Conv 8 -> 672 +
    Sigmoid, times the depthwise output) -> 1x1 Conv (672 -> 8) -> y [1, 8, 7, 7]; the
    squeeze's means are a second output g [1, 672, 1, 1]. At 2 threads the depthwise
    kernel, which computes the squeeze, runs in 7 bands of one output row with each
    tile's sum kept and added after the bands (passes/depthwise.c dwc_odd_rows_banded,
    dwc_pool_tiles), not by channel blocks (tests/models/dw_odd_rows_se.sh).
usage: /usr/bin/python3 tests/models/make_dw_odd_rows_se.py"""

import numpy as np
from casegen import mbconv_se_case

mbconv_se_case("dw_odd_rows_se", 24, 672, 8, 8, 5, 2, 14, np.random.default_rng(12),
               squeeze_out=True)
