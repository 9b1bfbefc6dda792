#!/usr/bin/python3
"""The papers' PyTorch training harness, for comparison with `jetsweep-agent run` (bench/run).

LeNet-5 on Fashion-MNIST read from its IDX files, torch.utils.data.DataLoader with num_workers=w and
prefetch_factor 2, per-sample ToTensor + Normalize in __getitem__, SGD lr 0.01 momentum 0.9, cross-entropy,
shuffled per epoch; per minibatch the fetch stall and compute are timed as the harness does. One JSON line
per epoch, like the agent: {"type":"epoch","epoch":N,"e2e_s":..,"stall_s":..,"compute_s":..,"minibatches":..}

usage: pytorch_harness.py DATA_DIR BATCH_SIZE WORKERS EPOCHS THREADS SEED
"""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST, as the agent uses


def read_idx(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class IdxImages(Dataset):
    def __init__(self, root):
        self.images = read_idx(os.path.join(root, "train-images-idx3-ubyte"))
        self.labels = read_idx(os.path.join(root, "train-labels-idx1-ubyte")).astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        x = torch.from_numpy(self.images[i].astype(np.float32) / 255.0).unsqueeze(0)  # ToTensor
        return (x - MEAN) / STD, int(self.labels[i])                                    # Normalize


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    root, batch, workers, epochs, threads, seed = sys.argv[1], *map(int, sys.argv[2:])
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    data = IdxImages(root)
    generator = torch.Generator().manual_seed(seed)
    kwargs = {"prefetch_factor": 2} if workers > 0 else {}
    loader = DataLoader(data, batch_size=batch, shuffle=True, num_workers=workers, generator=generator, **kwargs)
    model = LeNet5()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        start = time.perf_counter()
        stall = compute = 0.0
        minibatches = 0
        fetch_start = time.perf_counter()
        for x, y in loader:
            c0 = time.perf_counter()
            stall += c0 - fetch_start
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            fetch_start = time.perf_counter()
            compute += fetch_start - c0
            minibatches += 1
        print(json.dumps({"type": "epoch", "epoch": epoch, "e2e_s": time.perf_counter() - start,
                          "stall_s": stall, "compute_s": compute, "minibatches": minibatches}, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
