#!/usr/bin/env bash
# Usage: bash deploy/image-build-agent.sh SRC   (inside a JetPack agent image build; JOBS caps parallel compiles)
#
# The agent build both JetPack images run (deploy/jetpack5/Dockerfile, deploy/jetpack6/Dockerfile), after
# their own steps have installed the packages, PyTorch and the Boost and CLI11 headers under /opt/jetsweep:
# configures the agent-only profile of the checkout SRC against the image's PyTorch, builds jetsweep-agent,
# installs it and deploy/agent-entrypoint.sh to /usr/local/bin, creates /var/lib/jetsweep/journal (0700) and
# removes the build tree. SRC itself is left for the Dockerfile to remove.
set -euo pipefail

src=${1:?usage: image-build-agent.sh SRC}
build=/build-agent
python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)'
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S "$src" -B "$build" -DJETSWEEP_AGENT_ONLY=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
  -DBoost_ROOT=/opt/jetsweep/boost-1.81.0 -DJETSWEEP_CLI11_ROOT=/opt/jetsweep/cli11-2.1.2
cmake --build "$build" --target jetsweep-agent -j"${JOBS:-$(nproc)}"
install -m 0755 "$build/bin/jetsweep-agent" /usr/local/bin/jetsweep-agent
install -m 0755 "$src/deploy/agent-entrypoint.sh" /usr/local/bin/jetsweep-agent-entrypoint
rm -rf "$build"
install -d -m 0700 /var/lib/jetsweep /var/lib/jetsweep/journal
