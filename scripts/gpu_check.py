#!/usr/bin/env python3
"""The Python half of scripts/gpu-check (issue 30; docs/GPU_CHECK.md). No numpy: a PyTorch wheel does not need it.

  gpu_check.py locate
      One JSON object: the PyTorch this interpreter imports and the LibTorch CMake config of the libtorch it loads
      (a pip wheel: torch/share/cmake/Torch; Debian's python3-torch: the libtorch-dev config beside the
      libtorch_cpu.so it loads), their versions, CUDA, cuDNN and the GPU. Exit 1 when there is no such config or its
      version is not the imported torch's.
  gpu_check.py unpack DIR DEB...
      Unpacks the data of Debian packages into DIR as `dpkg -x` does (ar archive, data.tar.{xz,gz,zst}; no dpkg
      needed, so a GPU machine of another distribution can unpack the bundle), then re-points absolute symlinks
      that have a target inside DIR (zlib1g-dev's libz.so -> /lib/...) into DIR.
  gpu_check.py reference --model lenet5|resnet18 --dataset D --data DIR --batch B --workers W --minibatches N
                         --epochs E --threads T --seed S --device cuda|cpu --out FILE
      The papers' harness on the same data, model and batch size as the agent: torch DataLoader with W workers
      (per-sample ToTensor + Normalize in __getitem__), SGD lr 0.01 momentum 0.9, cross-entropy; every minibatch
      synchronised; stall = host wait for the minibatch until it is on the device, compute = forward + backward +
      step timed with torch.cuda.Event (the CPU: the host clock). JSON lines like the agent's `run --out`: one
      "minibatches" line and one "epoch" line per epoch.
  gpu_check.py cases --agent BIN --dir DIR --mode gpu|cpu-rehearsal [--timeout-s S]
      Makes the data (Fashion-MNIST where Debian's package is installed, else MNIST-format data from make-data;
      CIFAR-10-format data from make-data) and runs every case of the mode: per model (LeNet-5, ResNet-18) and
      loader workers (0, 2) the agent in `timing: paper` and `timing: pipelined` (`accelerator: cuda` on the GPU,
      so a missing GPU fails the run instead of falling back) and the reference. The rehearsal runs the same
      cases on the CPU with fewer minibatches and lists the CUDA cases as skipped. Plus one large-batch case
      (LARGE_BATCH) where the GPU, not the host's launches, sets the pace; ROUNDS interleaved rounds per case.
      Writes DIR/plan.json and DIR/cases/NAME-{paper,pipelined,python}[-rK].jsonl (+ .log).
  gpu_check.py summary --dir DIR --mode gpu|cpu-rehearsal
      Reads DIR/env.json, DIR/doctor.json and DIR/cases/*.jsonl, prints one JSON summary (also written to
      DIR/summary.json) and exits 1 when a check fails. Times compare epochs >= 1 (epoch 0 is warm-up: cuDNN
      autotuning, allocator growth, page cache); each mode's fastest round is compared, every round is checked.
      Goals judged only on a GPU: agent compute per minibatch within 2% of torch.cuda.Event timing (paper mode,
      medians; only where the reference is not dispatch-bound: host enqueue < DISPATCH_BOUND x its event time),
      agent e2e per minibatch <= 1.0x the harness with the same workers, pipelined e2e <= paper e2e. Checked everywhere: stall + compute <= e2e in every epoch, the compute
      device, copy_s present on the GPU (absent on the CPU), the versions.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

# Per-dataset Normalize() statistics, as the agent's loaders use them (agent/datasets/idx.cpp, cifar10.cpp).
NORMALIZE = {
    "fashion-mnist": ([0.2860], [0.3530]),
    "mnist": ([0.1307], [0.3081]),
    "cifar10": ([0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616]),
}
COMPUTE_TOLERANCE = 0.02   # agent compute per minibatch within 2% of torch.cuda.Event timing (paper mode)
SUM_SLACK_S = 1e-6         # stall + compute <= e2e, up to the rounding of printed seconds


def dump(obj):
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------- locate

def locate():
    import torch
    import torch.utils
    info = {"python": sys.executable, "torch_version": torch.__version__, "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "cxx11_abi": bool(torch.compiled_with_cxx11_abi()), "cuda_available": torch.cuda.is_available(),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    candidates = [os.path.join(torch.utils.cmake_prefix_path, "Torch")]
    with open("/proc/self/maps") as maps:   # the libtorch this interpreter actually loaded
        loaded = sorted({line.split()[-1] for line in maps if "libtorch_cpu.so" in line})
    info["libtorch_loaded"] = loaded
    for lib in loaded:
        candidates.append(os.path.join(os.path.dirname(os.path.realpath(lib)), "cmake", "Torch"))
    info["searched"] = candidates
    found = next((c for c in candidates if os.path.isfile(os.path.join(c, "TorchConfig.cmake"))), None)
    if found is None:
        print(dump(info))
        sys.exit("no TorchConfig.cmake for the imported torch in: " + ", ".join(candidates))
    info["torch_cmake_dir"] = found
    version = None
    with open(os.path.join(found, "TorchConfigVersion.cmake")) as f:
        for line in f:
            if line.startswith('set(PACKAGE_VERSION "'):
                version = line.split('"')[1]
                break
    info["libtorch_version"] = version
    print(dump(info))
    base = torch.__version__.split("+")[0]
    if version is None or version.split(".")[:2] != base.split(".")[:2]:
        sys.exit(f"{found}: LibTorch {version} is not the imported torch {torch.__version__}")


# ---------------------------------------------------------------- unpack

def unpack(a):
    import io
    import tarfile
    for deb in a.debs:
        with open(deb, "rb") as f:
            blob = f.read()
        if not blob.startswith(b"!<arch>\n"):
            sys.exit(f"{deb}: not a Debian package (no ar header)")
        pos, data = 8, None
        while pos + 60 <= len(blob):
            name = blob[pos:pos + 16].decode().strip().rstrip("/")
            size = int(blob[pos + 48:pos + 58].decode().strip())
            if name.startswith("data.tar"):
                data = (name, blob[pos + 60:pos + 60 + size])
                break
            pos += 60 + size + (size & 1)
        if data is None:
            sys.exit(f"{deb}: no data.tar member")
        if data[0].endswith(".zst"):
            sys.exit(f"{deb}: data.tar.zst needs dpkg-deb or zstd (not in Python's standard library)")
        with tarfile.open(fileobj=io.BytesIO(data[1]), mode="r:*") as tar:
            kwargs = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
            tar.extractall(a.dir, **kwargs)
    for root, dirs, files in os.walk(a.dir):
        for n in dirs + files:
            path = os.path.join(root, n)
            if os.path.islink(path):
                target = os.readlink(path)
                if target.startswith("/") and os.path.exists(a.dir + target):
                    os.remove(path)
                    os.symlink(os.path.abspath(a.dir + target), path)


# ---------------------------------------------------------------- reference

def reference(a):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset

    def read_idx(path):
        if not os.path.exists(path) and os.path.exists(path + ".gz"):
            path += ".gz"
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
            data = f.read()
        ndim = data[3]
        dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
        return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).view(*dims)

    def read_cifar(root):
        records = []
        for i in range(1, 6):
            path = os.path.join(root, f"data_batch_{i}.bin")
            if not os.path.exists(path):
                break
            with open(path, "rb") as f:
                records.append(torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).view(-1, 3073))
        if not records:
            sys.exit(f"{root}: no data_batch_1.bin")
        r = torch.cat(records)
        return r[:, 1:].reshape(-1, 3, 32, 32).contiguous(), r[:, 0].to(torch.int64)

    mean, std = NORMALIZE[a.dataset]

    class Images(Dataset):
        def __init__(self):
            if a.dataset == "cifar10":
                self.images, self.labels = read_cifar(a.data)
            else:
                self.images = read_idx(os.path.join(a.data, "train-images-idx3-ubyte")).unsqueeze(1)
                self.labels = read_idx(os.path.join(a.data, "train-labels-idx1-ubyte")).to(torch.int64)
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, i):
            x = self.images[i].to(torch.float32) / 255.0          # ToTensor
            return (x - self.mean) / self.std, int(self.labels[i])  # Normalize

    class LeNet5(nn.Module):   # agent/models/lenet.cpp
        def __init__(self, channels, side):
            super().__init__()
            self.conv1 = nn.Conv2d(channels, 6, 5, padding=2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            s = ((side // 2) - 4) // 2
            self.fc1, self.fc2, self.fc3 = nn.Linear(16 * s * s, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = torch.flatten(x, 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    def conv(i, o, k, s):
        return nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False)

    class Block(nn.Module):    # torchvision BasicBlock, as agent/models/resnet.cpp
        def __init__(self, i, o, s):
            super().__init__()
            self.conv1, self.bn1 = conv(i, o, 3, s), nn.BatchNorm2d(o)
            self.conv2, self.bn2 = conv(o, o, 3, 1), nn.BatchNorm2d(o)
            self.down = nn.Sequential(conv(i, o, 1, s), nn.BatchNorm2d(o)) if s != 1 or i != o else None

        def forward(self, x):
            y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(y + (self.down(x) if self.down is not None else x))

    class ResNet18(nn.Module):   # the agent's "resnet18": CIFAR stem (3x3 conv, no max-pool)
        def __init__(self, channels):
            super().__init__()
            self.conv1, self.bn1 = conv(channels, 64, 3, 1), nn.BatchNorm2d(64)
            layers, i = [], 64
            for w in (64, 128, 256, 512):
                layers += [Block(i, w, 1 if w == 64 else 2), Block(w, w, 1)]
                i = w
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 10)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.ones_(m.weight)
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            x = self.layers(F.relu(self.bn1(self.conv1(x))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("reference: --device cuda, but this torch sees no GPU")
    device = torch.device("cuda" if cuda else "cpu")
    data = Images()
    channels, side = data.images.shape[1], data.images.shape[2]
    model = (ResNet18(channels) if a.model == "resnet18" else LeNet5(channels, side)).to(device)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    kwargs = {"prefetch_factor": 2} if a.workers > 0 else {}
    loader = DataLoader(data, batch_size=a.batch, shuffle=True, num_workers=a.workers, pin_memory=cuda,
                        generator=torch.Generator().manual_seed(a.seed), **kwargs)
    start_evt = torch.cuda.Event(enable_timing=True) if cuda else None
    end_evt = torch.cuda.Event(enable_timing=True) if cuda else None
    with open(a.out, "w") as out:
        out.write(dump({"type": "run_started", "compute_device": str(device) + (
            f" ({torch.cuda.get_device_name(0)})" if cuda else ""), "torch_version": torch.__version__}) + "\n")
        for epoch in range(a.epochs):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            stalls, computes, enqueues = [], [], []
            loss_sum = torch.zeros((), dtype=torch.float64, device=device)
            fetch_start = time.perf_counter()
            for x, y in loader:
                x = x.to(device, non_blocking=cuda)
                y = y.to(device, non_blocking=cuda)
                if cuda:
                    torch.cuda.synchronize()   # the minibatch is on the device before its compute starts
                    start_evt.record()
                c0 = time.perf_counter()
                stalls.append(c0 - fetch_start)
                optimizer.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                loss_sum += loss.detach().to(torch.float64)
                # The host's time to queue the compute: when it is as long as the events' time, the GPU waited for
                # the host's launches (dispatch-bound) and the events measure Python's launch rate, not the GPU.
                enqueues.append(time.perf_counter() - c0)
                if cuda:
                    end_evt.record()
                    end_evt.synchronize()
                    computes.append(start_evt.elapsed_time(end_evt) / 1000.0)
                else:
                    computes.append(time.perf_counter() - c0)
                fetch_start = time.perf_counter()
                if len(computes) == a.minibatches:
                    break
            # The epoch ends with its last minibatch, as the agent's does: the loader's teardown (worker processes
            # joined when the iterator goes) is not in it.
            e2e = fetch_start - t0
            n = len(computes)
            out.write(dump({"type": "minibatches", "epoch": epoch, "first_index": 0, "stall_s": stalls,
                            "compute_s": computes, "enqueue_s": enqueues}) + "\n")
            out.write(dump({"type": "epoch", "epoch": epoch, "e2e_s": e2e, "stall_s": sum(stalls),
                            "compute_s": sum(computes), "minibatches": n,
                            "mean_loss": loss_sum.item() / max(n, 1)}) + "\n")
            out.flush()


# ---------------------------------------------------------------- cases

# Sizes per mode: enough minibatches on the GPU that an epoch takes seconds (loader start-up amortised), few on
# the 2-core CI machine. Epoch 0 is warm-up; epochs >= 1 are compared.
SIZES = {
    "gpu": {"lenet5": {"batch_size": 64, "minibatches": 200, "epochs": 3, "samples": 20000},
            "resnet18": {"batch_size": 128, "minibatches": 60, "epochs": 3, "samples": 10000}},
    "cpu-rehearsal": {"lenet5": {"batch_size": 16, "minibatches": 40, "epochs": 2, "samples": 2000},
                      "resnet18": {"batch_size": 8, "minibatches": 3, "epochs": 2, "samples": 256}},
}
WORKERS = (0, 2)
# Cases with a large batch, so that the GPU, not the host's kernel launches, sets the pace (on an H100 LeNet-5 at
# batch 64 and ResNet-18 at 128 are dispatch-bound: Python's launches are slower than LibTorch's, and the event
# times differ by that, not by how they are measured). (model, batch size, minibatches, workers)
LARGE_BATCH = {"gpu": [("resnet18", 1024, 8, 2)], "cpu-rehearsal": [("resnet18", 32, 2, 0)]}
# Rounds of (paper, pipelined, python) per case, interleaved; the summary compares each mode's fastest round
# (GPU machines are shared VMs: one round's e2e moved by 12% between two runs on 2026-11-26).
ROUNDS = {"gpu": 2, "cpu-rehearsal": 1}
DISPATCH_BOUND = 0.5   # host enqueue time / event compute time at or above which the GPU waits for launches
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def round_file(name, timing, r):
    """NAME-TIMING.jsonl for round 0, NAME-TIMING-rK.jsonl for round K."""
    return f"{name}-{timing}.jsonl" if r == 0 else f"{name}-{timing}-r{r}.jsonl"


def run_logged(cmd, log_path, timeout_s):
    """Runs cmd with stdout+stderr to log_path; returns None or an error naming the command and the log's tail."""
    import subprocess
    with open(log_path, "w") as log:
        try:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout_s).returncode
        except subprocess.TimeoutExpired:
            rc = f"timed out after {timeout_s} s"
    if rc == 0:
        return None
    with open(log_path) as log:
        tail = log.read()[-1500:]
    return f"{' '.join(cmd[:3])} ...: exit {rc}; {log_path}: {tail}"


def cases(a):
    data_dir = os.path.join(a.dir, "data")
    cases_dir = os.path.join(a.dir, "cases")
    os.makedirs(cases_dir, exist_ok=True)
    os.makedirs(data_dir, exist_ok=True)
    sizes = SIZES[a.mode]
    gpu = a.mode == "gpu"
    datasets = {}
    if any(os.path.isfile(os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte" + gz)) for gz in ("", ".gz")):
        datasets["lenet5"] = ("fashion-mnist", FASHION_MNIST)   # Debian's dataset-fashion-mnist: real data
    else:
        datasets["lenet5"] = ("mnist", os.path.join(data_dir, "mnist"))
    datasets["resnet18"] = ("cifar10", os.path.join(data_dir, "cifar10"))
    errors = []
    for model, (dataset, root) in datasets.items():
        if root.startswith(data_dir):
            fmt = "cifar10" if dataset == "cifar10" else "mnist"
            err = run_logged([a.agent, "make-data", "--format", fmt, "--out", root, "--samples",
                              str(sizes[model]["samples"])], os.path.join(data_dir, fmt + ".log"), a.timeout_s)
            if err:
                errors.append("make-data: " + err)
    plan = {"mode": a.mode, "cases": []}
    shapes = [(m, sizes[m]["batch_size"], sizes[m]["minibatches"], w, f"{m}-w{w}") for m in datasets for w in WORKERS]
    shapes += [(m, b, n, w, f"{m}-b{b}-w{w}") for m, b, n, w in LARGE_BATCH[a.mode]]
    rounds = ROUNDS[a.mode]
    for device in ("cuda", "cpu"):
        for model, batch, minibatches, w, stem in shapes:
            dataset, root = datasets[model]
            size = dict(sizes[model], batch_size=batch, minibatches=minibatches)
            case = {"name": f"{stem}-{device}", "model": model, "dataset": dataset, "data": root,
                    "workers": w, "device": device, "batch_size": size["batch_size"],
                    "minibatches": size["minibatches"], "epochs": size["epochs"], "rounds": rounds}
            plan["cases"].append(case)
            if (device == "cuda") != gpu:
                case["skipped"] = ("no GPU: the CPU rehearsal runs the cpu cases" if not gpu
                                   else "on the GPU machine only the cuda cases run")
                continue
            if errors:
                case["skipped"] = "no data (make-data failed)"
                continue
            for r in range(rounds):
                for timing in ("paper", "pipelined"):
                    spec = os.path.join(cases_dir, f"{case['name']}-{timing}.yaml")
                    with open(spec, "w") as f:
                        f.write(f"model: {model}\ndataset: {dataset}\ndata: {root}\nbatch_size: {size['batch_size']}\n"
                                f"workers: {w}\nprefetch: 2\nepochs: {size['epochs']}\nthreads: 1\nseed: 1\n"
                                f"max_minibatches: {size['minibatches']}\naccelerator: {device}\ntiming: {timing}\n")
                    out = os.path.join(cases_dir, round_file(case["name"], timing, r))
                    err = run_logged([a.agent, "run", "--spec", spec, "--out", out], out[:-6] + ".log", a.timeout_s)
                    if err:
                        errors.append(f"{case['name']} {timing} round {r}: " + err)
                out = os.path.join(cases_dir, round_file(case["name"], "python", r))
                err = run_logged([sys.executable, os.path.abspath(__file__), "reference", "--model", model,
                                  "--dataset", dataset, "--data", root, "--batch", str(size["batch_size"]),
                                  "--workers", str(w), "--minibatches", str(size["minibatches"]), "--epochs",
                                  str(size["epochs"]), "--threads", "1", "--seed", "1", "--device", device,
                                  "--out", out], out[:-6] + ".log", a.timeout_s)
                if err:
                    errors.append(f"{case['name']} python round {r}: " + err)
    if not errors:
        plan["own_model"] = own_model_case(a, datasets["lenet5"], sizes["lenet5"], "cuda" if gpu else "cpu", errors)
    plan["errors"] = errors
    with open(os.path.join(a.dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=2)
    for e in errors:
        print("gpu_check.py cases: " + e, file=sys.stderr)


def own_model_case(a, data, size, device, errors):
    """A user's own model (issue 31): LeNet-5 exported as TorchScript by this machine's PyTorch, trained by the agent
    from its model cache with the built-in lenet5-w0 case's settings (paper timing), so the two can be compared."""
    cases_dir = os.path.join(a.dir, "cases")
    dataset, root = data
    name = f"lenet5-torchscript-{device}"
    export = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export-torchscript")
    model_file = os.path.join(cases_dir, "own-lenet5.pt")
    err = run_logged([sys.executable, export, "lenet5", "--channels", "1", "--size", "28", "--classes", "10",
                      "-o", model_file], os.path.join(cases_dir, "own-lenet5-export.log"), a.timeout_s)
    if err:
        errors.append("export-torchscript: " + err)
        return None
    import hashlib
    with open(model_file, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    spec = os.path.join(cases_dir, f"{name}-paper.yaml")
    with open(spec, "w") as f:
        f.write(f"model: torchscript:own-lenet5.pt\ndataset: {dataset}\ndata: {root}\nbatch_size: {size['batch_size']}\n"
                f"workers: 0\nprefetch: 2\nepochs: {size['epochs']}\nthreads: 1\nseed: 1\n"
                f"max_minibatches: {size['minibatches']}\naccelerator: {device}\ntiming: paper\n")
    out = os.path.join(cases_dir, f"{name}-paper.jsonl")
    err = run_logged([a.agent, "run", "--spec", spec, "--out", out, "--model-dir", os.path.join(a.dir, "model-cache")],
                     out[:-6] + ".log", a.timeout_s)
    if err:
        errors.append(f"{name}: " + err)
    return {"name": name, "builtin": f"lenet5-w0-{device}", "device": device, "sha256": sha,
            "epochs": size["epochs"], "minibatches": size["minibatches"]}


def own_model_summary(own, cases_dir, failures):
    """The own-model run checked as every agent run, plus: it trained the exported file (its hash), LeNet-5's 61,706
    parameters, and the built-in model's losses (the same architecture and seed; within 1e-3 on a GPU, whose
    kernels need not be deterministic, 1e-6 on the CPU); its e2e time relative to the built-in model's, reported."""
    on_gpu = own["device"] == "cuda"
    where = own["name"]
    try:
        lines = read_lines(os.path.join(cases_dir, f"{where}-paper.jsonl"))
        builtin = read_lines(os.path.join(cases_dir, round_file(own["builtin"], "paper", 0)))
    except (OSError, ValueError) as e:
        failures.append(f"{where}: output missing or not JSON lines: {e}")
        return {"case": where}
    stats = check_agent_run(own, lines, where, on_gpu, failures)
    workload = next((o for o in lines if o.get("type") == "run_started"), {}).get("workload") or {}
    if workload.get("model_sha256") != own["sha256"]:
        failures.append(f"{where}: trained {workload.get('model_sha256')}, not the exported file {own['sha256']}")
    if workload.get("parameters") != 61706:
        failures.append(f"{where}: {workload.get('parameters')} parameters measured, LeNet-5 has 61706")
    losses = [o.get("loss") for o in lines if o.get("type") == "epoch"]
    builtin_losses = [o.get("loss") for o in builtin if o.get("type") == "epoch"]
    tolerance = 1e-3 if on_gpu else 1e-6
    same = len(losses) == len(builtin_losses) and all(
        x is not None and y is not None and abs(x - y) <= tolerance * max(1.0, abs(y)) for x, y in zip(losses, builtin_losses))
    if not same:
        failures.append(f"{where}: losses {losses} differ from the built-in lenet5's {builtin_losses} "
                        f"(tolerance {tolerance})")
    return {"case": where, "device": own["device"], "agent": stats, "losses": losses, "builtin_losses": builtin_losses,
            "e2e_vs_builtin": ratio(stats["e2e_per_minibatch_s"], e2e_per_minibatch(builtin)),
            "workload": workload}


# ---------------------------------------------------------------- summary

def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def later(lines, kind):
    return [o for o in lines if o.get("type") == kind and o.get("epoch", 0) >= 1]


def per_minibatch(lines, key):
    return [v for o in later(lines, "minibatches") for v in o.get(key, [])]


def e2e_per_minibatch(lines):
    epochs = later(lines, "epoch")
    n = sum(o["minibatches"] for o in epochs)
    return sum(o["e2e_s"] for o in epochs) / n if n else None


def ratio(a, b):
    return round(a / b, 4) if a is not None and b else None


def check_agent_run(case, lines, where, on_gpu, failures):
    """Checks one agent run (finished, device, epochs, stall + compute <= e2e, copies); returns its statistics."""
    started = next((o for o in lines if o.get("type") == "run_started"), {})
    device = started.get("compute_device", "")
    finished = next((o for o in lines if o.get("type") == "run_finished"), {})
    if finished.get("status") != "done":
        failures.append(f"{where}: run did not finish: {finished}")
    if on_gpu and not device.startswith("cuda"):
        failures.append(f"{where}: compute device '{device}', expected cuda (a silent CPU fallback)")
    if not on_gpu and device != "cpu":
        failures.append(f"{where}: compute device '{device}', expected cpu")
    epochs = [o for o in lines if o.get("type") == "epoch"]
    if len(epochs) != case["epochs"]:
        failures.append(f"{where}: {len(epochs)} epochs reported, expected {case['epochs']}")
    worst = None
    for e in epochs:
        excess = e["stall_s"] + e["compute_s"] - e["e2e_s"]
        worst = excess if worst is None else max(worst, excess)
        if excess > SUM_SLACK_S:
            failures.append(f"{where}: epoch {e['epoch']}: stall {e['stall_s']} + compute {e['compute_s']} "
                            f"> e2e {e['e2e_s']}")
        if e["minibatches"] != case["minibatches"]:
            failures.append(f"{where}: epoch {e['epoch']}: {e['minibatches']} minibatches, expected "
                            f"{case['minibatches']}")
        if on_gpu and e.get("copy_s") is None:
            failures.append(f"{where}: epoch {e['epoch']}: copy_s missing on the GPU")
        if not on_gpu and e.get("copy_s") is not None:
            failures.append(f"{where}: epoch {e['epoch']}: copy_s {e['copy_s']} on the CPU (nothing is copied)")
    compute = per_minibatch(lines, "compute_s")
    copies = per_minibatch(lines, "copy_s")
    if on_gpu and len(copies) != len(compute):
        failures.append(f"{where}: {len(copies)} per-minibatch copy_s values for {len(compute)} minibatches")
    return {
        "compute_device": device,
        "compute_per_minibatch_median_s": statistics.median(compute) if compute else None,
        "compute_per_minibatch_mean_s": statistics.fmean(compute) if compute else None,
        "e2e_per_minibatch_s": e2e_per_minibatch(lines),
        "copy_per_minibatch_median_s": statistics.median(copies) if copies else None,
        "max_stall_plus_compute_minus_e2e_s": worst,
    }


def summary(a):
    mode_gpu = a.mode == "gpu"
    env = json.load(open(os.path.join(a.dir, "env.json")))
    doctor = json.load(open(os.path.join(a.dir, "doctor.json")))
    cases_dir = os.path.join(a.dir, "cases")
    failures = []
    doctor_cuda = next((i for i in doctor.get("items", []) if i.get("name") == "cuda"), None)
    out = {"mode": a.mode, "gpu": env.get("gpu"), "python_torch": env.get("torch_version"),
           "libtorch": env.get("libtorch_version"), "torch_cmake_dir": env.get("torch_cmake_dir"),
           "cuda": env.get("torch_cuda"), "cudnn": env.get("cudnn"),
           "agent_doctor_cuda": doctor_cuda, "doctor_ready": doctor.get("ready"),
           "build": env.get("build"), "cases": []}
    if mode_gpu and (doctor_cuda is None or doctor_cuda.get("verdict") != "ok"):
        failures.append("doctor: the agent's cuda item is not ok: " + json.dumps(doctor_cuda))
    if mode_gpu and not env.get("gpu"):
        failures.append("the machine's PyTorch sees no GPU")

    plan = json.load(open(os.path.join(a.dir, "plan.json")))
    failures += plan.get("errors", [])
    for case in plan["cases"]:
        name = case["name"]
        entry = {"case": name, "model": case["model"], "dataset": case["dataset"], "workers": case["workers"],
                 "batch_size": case["batch_size"], "minibatches_per_epoch": case["minibatches"],
                 "device": case["device"]}
        if case.get("skipped"):
            entry["skipped"] = case["skipped"]
            out["cases"].append(entry)
            continue
        on_gpu = case["device"] == "cuda"
        rounds = case.get("rounds", 1)
        try:
            # Every round of every mode is checked; the ratios use each mode's fastest round (least e2e).
            all_runs = {t: [read_lines(os.path.join(cases_dir, round_file(name, t, r))) for r in range(rounds)]
                        for t in ("paper", "pipelined", "python")}
        except (OSError, ValueError) as e:
            failures.append(f"{name}: output missing or not JSON lines: {e}")
            out["cases"].append(entry)
            continue
        fastest = {t: min(range(rounds), key=lambda r: e2e_per_minibatch(all_runs[t][r]) or float("inf"))
                   for t in all_runs}
        ref = all_runs["python"][fastest["python"]]
        ref_compute = per_minibatch(ref, "compute_s")
        ref_enqueue = per_minibatch(ref, "enqueue_s")
        ref_e2e = e2e_per_minibatch(ref)
        ref_compute_median = statistics.median(ref_compute) if ref_compute else None
        enqueue_share = ratio(statistics.median(ref_enqueue), ref_compute_median) if ref_enqueue else None
        entry["python"] = {"compute_per_minibatch_median_s": ref_compute_median,
                           "compute_per_minibatch_mean_s": statistics.fmean(ref_compute) if ref_compute else None,
                           "host_enqueue_per_minibatch_median_s": statistics.median(ref_enqueue) if ref_enqueue else None,
                           "host_enqueue_vs_compute": enqueue_share,
                           "e2e_per_minibatch_s": ref_e2e,
                           "e2e_per_minibatch_s_rounds": [e2e_per_minibatch(x) for x in all_runs["python"]]}
        agent = {}
        for timing in ("paper", "pipelined"):
            for r in range(rounds):
                where = f"{name} {timing}" + (f" round {r}" if r else "")
                stats = check_agent_run(case, all_runs[timing][r], where, on_gpu, failures)
                if r == fastest[timing]:
                    agent[timing] = dict(stats, e2e_per_minibatch_s_rounds=[e2e_per_minibatch(x)
                                                                           for x in all_runs[timing]])
        entry["agent"] = agent
        paper, pipelined = agent["paper"], agent["pipelined"]
        r = {
            "paper_compute_vs_python_event": ratio(paper["compute_per_minibatch_median_s"], ref_compute_median),
            "paper_e2e_vs_python": ratio(paper["e2e_per_minibatch_s"], ref_e2e),
            "pipelined_e2e_vs_python": ratio(pipelined["e2e_per_minibatch_s"], ref_e2e),
            "pipelined_e2e_vs_paper_e2e": ratio(pipelined["e2e_per_minibatch_s"], paper["e2e_per_minibatch_s"]),
        }
        entry["ratios"] = r
        if on_gpu:
            goals = {
                "paper_e2e_at_most_python": r["paper_e2e_vs_python"] is not None and r["paper_e2e_vs_python"] <= 1.0,
                "pipelined_no_worse_than_paper": r["pipelined_e2e_vs_paper_e2e"] is not None
                and r["pipelined_e2e_vs_paper_e2e"] <= 1.0,
            }
            if enqueue_share is not None and enqueue_share >= DISPATCH_BOUND:
                # The GPU waited for Python's launches: the reference's events time its dispatch, which LibTorch
                # does faster. Not a measure of the agent's timing, so not judged (the large-batch case is).
                entry["not_judged"] = {"compute_within_2pct": (
                    f"dispatch-bound: the reference's host enqueue time is {enqueue_share:.2f}x its event time "
                    f"(>= {DISPATCH_BOUND}), so its compute is Python's launch rate")}
            else:
                goals["compute_within_2pct"] = (r["paper_compute_vs_python_event"] is not None
                                                and abs(r["paper_compute_vs_python_event"] - 1) <= COMPUTE_TOLERANCE)
            entry["goals"] = goals
            failures += [f"{name}: goal {g} missed ({r})" for g, ok in goals.items() if not ok]
        else:
            entry["goals"] = "not judged on the CPU (the rehearsal checks the path, not the speed)"
        out["cases"].append(entry)
    if plan.get("own_model"):
        out["own_model"] = own_model_summary(plan["own_model"], cases_dir, failures)
    out["failures"] = failures
    out["ok"] = not failures
    text = json.dumps(out, indent=2, sort_keys=True)
    with open(os.path.join(a.dir, "summary.json"), "w") as f:
        f.write(text + "\n")
    print(text)
    sys.exit(0 if not failures else 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("locate")
    u = sub.add_parser("unpack")
    u.add_argument("dir")
    u.add_argument("debs", nargs="+")
    r = sub.add_parser("reference")
    r.add_argument("--model", choices=["lenet5", "resnet18"], required=True)
    r.add_argument("--dataset", choices=sorted(NORMALIZE), required=True)
    r.add_argument("--data", required=True)
    r.add_argument("--batch", type=int, required=True)
    r.add_argument("--workers", type=int, required=True)
    r.add_argument("--minibatches", type=int, required=True)
    r.add_argument("--epochs", type=int, required=True)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--device", choices=["cuda", "cpu"], required=True)
    r.add_argument("--out", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--agent", required=True)
    c.add_argument("--dir", required=True)
    c.add_argument("--mode", choices=sorted(SIZES), required=True)
    c.add_argument("--timeout-s", type=int, default=300)
    s = sub.add_parser("summary")
    s.add_argument("--dir", required=True)
    s.add_argument("--mode", choices=["gpu", "cpu-rehearsal"], required=True)
    a = p.parse_args()
    if a.cmd == "locate":
        locate()
    elif a.cmd == "unpack":
        unpack(a)
    elif a.cmd == "reference":
        reference(a)
    elif a.cmd == "cases":
        cases(a)
    else:
        summary(a)


if __name__ == "__main__":
    main()
