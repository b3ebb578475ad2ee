#!/usr/bin/python3
"""Build kiln's bundled example model: a small CNN on scikit-learn's 8x8 digits.

Loads sklearn's bundled digits data (no network), trains a tiny CNN with torch
on CPU (deterministic: fixed seeds, one thread), exports it to ONNX (opset 13,
input "image" [batch,1,8,8], output "logits" [batch,10]) and writes, into
examples/digits/:
  digits.onnx          the exported model
  test_images.npy      float32 [48,1,8,8]  first 48 held-out images, pixels in [0,1]
  test_labels.npy      int64   [48]        their labels
  expected_logits.npy  float32 [48,10]     torch's (eval-mode) output on them

Run with Debian's interpreter: /usr/bin/python3 tools/make_digits_example.py
"""
import os

import numpy as np
import onnx
import torch
from sklearn.datasets import load_digits
from torch import nn

SEED = 0
N_EXAMPLE = 48
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "examples", "digits")


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64, 32), nn.ReLU(),
        nn.Linear(32, 10),
    )


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    perm = np.random.RandomState(SEED).permutation(len(x))
    n_test = len(x) // 5
    test_idx, train_idx = perm[:n_test], perm[n_test:]
    x_train, y_train = torch.from_numpy(x[train_idx]), torch.from_numpy(y[train_idx])
    x_test, y_test = torch.from_numpy(x[test_idx]), torch.from_numpy(y[test_idx])

    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(30):
        model.train()
        order = torch.randperm(len(x_train), generator=gen)
        for i in range(0, len(order), 32):
            b = order[i:i + 32]
            opt.zero_grad()
            loss_fn(model(x_train[b]), y_train[b]).backward()
            opt.step()
        model.eval()
        acc = accuracy(model, x_test, y_test)
        if epoch >= 4 and acc > 0.97:
            break
    print(f"epochs: {epoch + 1}, test accuracy: {acc:.4f} "
          f"({len(x_test)} held-out images, {len(x_train)} train)")
    assert acc > 0.95, "training did not reach 95% held-out accuracy"

    model.eval()
    ex_images = x_test[:N_EXAMPLE].contiguous()
    ex_labels = y_test[:N_EXAMPLE].contiguous()
    with torch.no_grad():
        ex_logits = model(ex_images)

    os.makedirs(OUT_DIR, exist_ok=True)
    onnx_path = os.path.join(OUT_DIR, "digits.onnx")
    torch.onnx.export(
        model, ex_images[:1], onnx_path, opset_version=13,
        input_names=["image"], output_names=["logits"],
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=True)
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)

    np.save(os.path.join(OUT_DIR, "test_images.npy"),
            np.ascontiguousarray(ex_images.numpy(), dtype=np.float32))
    np.save(os.path.join(OUT_DIR, "test_labels.npy"),
            np.ascontiguousarray(ex_labels.numpy(), dtype=np.int64))
    np.save(os.path.join(OUT_DIR, "expected_logits.npy"),
            np.ascontiguousarray(ex_logits.numpy(), dtype=np.float32))

    ex_acc = (ex_logits.argmax(1) == ex_labels).float().mean().item()
    print(f"example subset accuracy: {ex_acc:.4f} ({N_EXAMPLE} images)")
    print("ops:", " ".join(n.op_type for n in m.graph.node))
    for name in ("digits.onnx", "test_images.npy", "test_labels.npy",
                 "expected_logits.npy"):
        print(f"  {name}: {os.path.getsize(os.path.join(OUT_DIR, name))} bytes")


if __name__ == "__main__":
    main()
