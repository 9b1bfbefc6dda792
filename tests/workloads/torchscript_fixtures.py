#!/usr/bin/python3
"""TorchScript files that break the workload contract in each way a user will hit (tests/workloads/test_torchscript.cpp).

  torchscript_fixtures.py OUT_DIR GOOD.pt

GOOD.pt is a valid export (scripts/export-torchscript lenet5 ...), rewritten as a newer PyTorch would write it.
"""
import sys
import zipfile

import torch
import torch.nn.functional as F
from torch import nn

out, good = sys.argv[1], sys.argv[2]


class Cifar(nn.Module):
    """Needs 3x32x32 images: its Linear layer does not fit a 1x28x28 sample."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


class FiveClasses(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 5)

    def forward(self, x):
        return self.fc(x.flatten(1))


class VectorLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))

    @torch.jit.export
    def training_loss(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.forward(inputs), targets, reduction="none")


class NanFromFourthStep(nn.Module):
    """Its loss turns NaN from its fourth training minibatch on (minibatch index 3 of epoch 0)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        return self.fc(x.flatten(1))

    @torch.jit.export
    def training_loss(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        loss = F.cross_entropy(self.forward(inputs), targets)
        if self.training:
            self.steps += 1
        if bool(self.steps > 3):
            loss = loss * float("nan")
        return loss


class RaisesOnOneSample(nn.Module):
    """Passes the two-sample contract probe, then raises (a script's own exception) on a one-sample input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)

    def forward(self, x):
        if x.size(0) == 1:
            raise ValueError("this model refuses single samples")
        return self.fc(x.flatten(1))


torch.manual_seed(1)
for name, module in [("raises_on_one", RaisesOnOneSample()), ("cifar_only", Cifar()), ("five_classes", FiveClasses()), ("vector_loss", VectorLoss()),
                     ("nan_loss", NanFromFourthStep())]:
    torch.jit.save(torch.jit.script(module), f"{out}/{name}.pt")
torch.save(FiveClasses().state_dict(), f"{out}/state_dict.pt")
with open(f"{out}/not_a_model.pt", "w") as f:
    f.write("this is a text file, not a model\n")
# A newer PyTorch writes a higher file format version into the archive's `version` record.
with zipfile.ZipFile(good) as src, zipfile.ZipFile(f"{out}/newer_pytorch.pt", "w", zipfile.ZIP_STORED) as dst:
    for item in src.infolist():
        data = src.read(item.filename)
        if item.filename.endswith("/version") and "/" not in item.filename[:-len("/version")]:
            data = b"99\n"
        dst.writestr(item, data)
