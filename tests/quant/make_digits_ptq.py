"""Calibration and held-out images for the digits example (examples/digits), for the
post-training quantization test (tests/quant/ptq.sh). The split is the one
tools/make_digits_example.py trained with (seed 0, the same permutation, a fifth held
out): 100 calibration images from its training split, and its whole held-out split
(359 images) with labels.

    /usr/bin/python3 tests/quant/make_digits_ptq.py
writes tests/quant/digits/{calib.npy, heldout_images.npy, heldout_labels.npy}; running
it again gives the same bytes."""
import os

import numpy as np
from sklearn.datasets import load_digits

SEED = 0  # tools/make_digits_example.py's
N_CALIB = 100
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits")


def main():
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    perm = np.random.RandomState(SEED).permutation(len(x))
    n_test = len(x) // 5
    test_idx, train_idx = perm[:n_test], perm[n_test:]
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "calib.npy"), x[train_idx[:N_CALIB]])
    np.save(os.path.join(OUT, "heldout_images.npy"), x[test_idx])
    np.save(os.path.join(OUT, "heldout_labels.npy"), y[test_idx])


if __name__ == "__main__":
    main()
