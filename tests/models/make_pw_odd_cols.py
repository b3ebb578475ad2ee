#!/usr/bin/python3
"""Writes tests/models/pw_odd_cols (model.onnx and a test data set, the expected output
computed with torch, independently of the graph):

  pw_odd_cols: an EfficientNet-B0 MBConv block at 14x14, narrowed: x [1, 16, 14, 14] ->
    1x1 Conv (16 -> 96) + SiLU -> 3x3 depthwise Conv pad 1 + SiLU -> squeeze and excite
    (GlobalAveragePool -> 1x1 Conv 96 -> 8 + SiLU -> 1x1 Conv 8 -> 96 + Sigmoid, times
    the depthwise output) -> 1x1 Conv (96 -> 80) -> y [1, 80, 14, 14]. The projection's
    80 output channels are 5 vectors of 16: on x86-64-zen4 its tiles hold one vector,
    not two with a partial block of one (passes/tile.c pw_odd_cols;
    tests/models/pw_odd_cols.sh).
usage: /usr/bin/python3 tests/models/make_pw_odd_cols.py"""

import numpy as np
from casegen import mbconv_se_case

mbconv_se_case("pw_odd_cols", 16, 96, 8, 80, 3, 1, 14, np.random.default_rng(16))
