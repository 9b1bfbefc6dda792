#!/usr/bin/env bash
# Usage: sudo deploy/install-agent.sh --controller ws://HOST:PORT [--name NAME] [--secret-file FILE] [options]
#
# Builds and installs the jetsweep agent natively on a Jetson with JetPack 5 (L4T R35) or 6 (L4T R36):
#   1. reads the L4T release from /etc/nv_tegra_release (R32 / JetPack 4 is refused: GCC 7.5 is too old)
#   2. apt-get installs deploy/packages/jetpack-agent.txt
#   3. takes LibTorch from NVIDIA's PyTorch wheel (python3 -c 'import torch; ...cmake_prefix_path')
#   4. uses the system Boost headers if they are >= 1.81, else fetches 1.81.0 into /opt/jetsweep and checks
#      its SHA-256 (deploy/boost-headers.sh); the same for CLI11 >= 2.1 (Ubuntu 20.04 has 1.9): Debian's
#      libcli11-dev 2.1.2 package into /opt/jetsweep, hash-checked (deploy/cli11-headers.sh)
#   5. configures the agent-only profile (-DJETSWEEP_AGENT_ONLY=ON) and builds jetsweep-agent (as the
#      checkout's owner when that is not root)
#   6. installs /usr/local/bin/jetsweep-agent, /etc/systemd/system/jetsweep-agent.service,
#      /var/lib/jetsweep/journal, and /etc/jetsweep/agent.env (mode 0600) if it does not exist yet
#   7. with --enable: enables the service and (re)starts it
# Run it again to upgrade (after `git pull`): agent.env is kept, the binary and unit are replaced.
#
# Options:
#   --controller URL     ws://HOST:PORT of the controller (needed when agent.env does not exist yet)
#   --name NAME          agent name (default: the short host name)
#   --secret-file FILE   file whose first line is the controller's enrollment secret
#   --enable             systemctl enable jetsweep-agent and (re)start it
#   --jobs N             parallel compiles (default: CPUs, at most one per 2 GB of memory)
#   --build-dir DIR      build tree (default: build-agent in the checkout)
#   --torch-prefix DIR   CMake prefix of LibTorch (default: asked from python3's torch)
#   --boost-tarball FILE use this boost_1_81_0.tar.bz2 instead of downloading it (still hash-checked)
#   --cli11-deb FILE     use this libcli11-dev_2.1.2+ds-1_all.deb instead of downloading it (still hash-checked)
#   --no-apt             do not run apt-get (the packages are installed already)
#   --release-file FILE  read the L4T release from FILE instead of /etc/nv_tegra_release
#   --dry-run            print what would be done, change nothing (needs no root)
#   -h, --help           this text
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
package_list=$here/packages/jetpack-agent.txt
unit_src=$here/systemd/jetsweep-agent.service
boost_dest=/opt/jetsweep/boost-1.81.0
cli11_dest=/opt/jetsweep/cli11-2.1.2
bin_dest=/usr/local/bin/jetsweep-agent
unit_dest=/etc/systemd/system/jetsweep-agent.service
env_dir=/etc/jetsweep
env_file=$env_dir/agent.env
state_dir=/var/lib/jetsweep
# Where the system's Boost and CLI11 headers are looked for (deploy/check points it at an empty directory).
system_include=${JETSWEEP_SYSTEM_INCLUDE:-/usr/include}

log() { printf '[install-agent] %s\n' "$*" >&2; }
die() { printf '[install-agent] error: %s\n' "$*" >&2; exit 1; }

controller=""
name=""
secret_file=""
enable=0
jobs=""
build_dir=$src/build-agent
torch_prefix=""
boost_tarball=""
cli11_deb=""
use_apt=1
release_file=/etc/nv_tegra_release
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --controller|--name|--secret-file|--jobs|--build-dir|--torch-prefix|--boost-tarball|--cli11-deb|--release-file)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --controller) controller=$2 ;;
        --name) name=$2 ;;
        --secret-file) secret_file=$2 ;;
        --jobs) jobs=$2 ;;
        --build-dir) build_dir=$2 ;;
        --torch-prefix) torch_prefix=$2 ;;
        --boost-tarball) boost_tarball=$2 ;;
        --cli11-deb) cli11_deb=$2 ;;
        --release-file) release_file=$2 ;;
      esac
      shift 2 ;;
    --enable) enable=1; shift ;;
    --no-apt) use_apt=0; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

# run CMD...: runs it, or prints it on a dry run.
run() {
  if [ $dry_run -eq 1 ]; then
    printf '[install-agent] would run:' >&2
    printf ' %q' "$@" >&2
    printf '\n' >&2
  else
    "$@"
  fi
}

# Settings go into a systemd EnvironmentFile and a docker --env-file, unquoted: keep them to characters
# both read the same way.
url_re='^ws://[A-Za-z0-9._-]+:[0-9]+(/[A-Za-z0-9._/-]*)?$'
[ -z "$controller" ] || [[ "$controller" =~ $url_re ]] \
  || die "--controller '$controller': expected ws://HOST:PORT (the controller's default port is 8420)"
[ -n "$name" ] || name=$(hostname -s 2>/dev/null || hostname)
[[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] \
  || die "agent name '$name': use letters, digits, '.', '_' and '-' (it names the journal directory)"
[ -z "$jobs" ] || [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$jobs': expected a positive integer"
if [ -n "$secret_file" ]; then
  [ -r "$secret_file" ] || die "cannot read the secret file $secret_file"
  secret=$(head -n 1 "$secret_file" | tr -d '\r\n')
  [ -n "$secret" ] || die "the secret file $secret_file is empty"
  [[ "$secret" =~ ^[A-Za-z0-9._~+/=:@%^-]+$ ]] \
    || die "the secret in $secret_file must be one word of letters, digits and ._~+/=:@%^- (e.g. hex from: openssl rand -hex 24)"
  if [ -n "$(find "$secret_file" -perm /044 2>/dev/null)" ]; then
    log "warning: $secret_file can be read by other users; chmod 600 it"
  fi
fi
[ $dry_run -eq 1 ] || [ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 ...), or add --dry-run to see what it would do"
[ -r "$package_list" ] || die "package list $package_list is missing"
[ -r "$unit_src" ] || die "unit file $unit_src is missing"

# 1. L4T release: "# R35 (release), REVISION: 4.1, GCID: ..., BOARD: ..., EABI: aarch64, ...".
[ -r "$release_file" ] || die "$release_file not found: this does not look like a Jetson running L4T (JetPack)"
release_line=$(head -n 1 "$release_file")
if [[ "$release_line" =~ ^#\ R([0-9]+)\ \(release\),\ REVISION:\ ([0-9.]+) ]]; then
  l4t_major=${BASH_REMATCH[1]}
  l4t_revision=${BASH_REMATCH[2]}
else
  die "cannot read the L4T release from $release_file (first line: '$release_line')"
fi
case "$l4t_major" in
  35) jetpack=5 ;;
  36) jetpack=6 ;;
  32) die "L4T R32.$l4t_revision is JetPack 4 (Ubuntu 18.04, GCC 7.5): the agent needs GCC >= 9 for C++17; see docs/DEPLOY.md, 'JetPack 4.6 and the Jetson Nano'" ;;
  *) die "L4T R$l4t_major.$l4t_revision is not supported by this script (JetPack 5 = R35, JetPack 6 = R36)" ;;
esac
log "L4T R$l4t_major.$l4t_revision: JetPack $jetpack"

# 2. Packages.
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$package_list")
[ ${#packages[@]} -gt 0 ] || die "package list $package_list names no package"
if [ $use_apt -eq 1 ]; then
  log "installing packages from $package_list: ${packages[*]}"
  run env DEBIAN_FRONTEND=noninteractive apt-get update -q
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
else
  log "--no-apt: expecting these packages to be installed: ${packages[*]}"
fi

# Toolchain: the agent-only profile needs CMake >= 3.16 and GCC >= 9.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
# need_tool PROGRAM NAME MIN PACKAGE [WHY]: stops unless PROGRAM (NAME in messages, from PACKAGE) is installed
# and at least version MIN (WHY follows the refusal); a dry run only notes a PROGRAM not installed yet.
need_tool() {
  local version
  if command -v "$1" >/dev/null; then
    case "$1" in
      cmake) version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p') ;;
      *) version=$("$1" -dumpfullversion -dumpversion 2>/dev/null | head -n 1) ;;
    esac
    version_ge "$version" "$3" || die "$2 $version is older than $3${5:+ ($5)}"
    log "$2 $version"
  elif [ $dry_run -eq 1 ]; then
    log "would check that $2 is >= $3 (not installed yet)"
  else
    die "$1 is not installed (package $4)"
  fi
}
need_tool cmake CMake 3.16 cmake
need_tool g++ GCC 9 build-essential "C++17 with the library features the agent uses"

# 3. LibTorch from NVIDIA's PyTorch wheel.
if [ -z "$torch_prefix" ]; then
  # NVIDIA's guide installs the wheel with pip as the user (~/.local), where root's python3 does not look:
  # ask the user who ran sudo too.
  py=(python3)
  torch_prefix=$("${py[@]}" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || torch_prefix=""
  if [ -z "$torch_prefix" ] && [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
    py=(runuser -u "$SUDO_USER" -- python3)
    torch_prefix=$("${py[@]}" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || torch_prefix=""
  fi
  if [ -z "$torch_prefix" ]; then
    hint="install NVIDIA's PyTorch wheel for JetPack $jetpack for python3 (guide: 'Installing PyTorch for Jetson Platform'"
    [ "$jetpack" = 6 ] && hint="$hint; its prerequisites are in $here/packages/jetpack6-torch-wheel.txt"
    die "python3 cannot import torch: $hint), or pass --torch-prefix DIR"
  fi
  torch_info=$("${py[@]}" -c 'import torch; print(torch.__version__, torch.version.cuda or "none", torch.cuda.is_available())' 2>/dev/null || true)
  read -r torch_version torch_cuda cuda_available <<< "$torch_info"
  log "PyTorch ${torch_version:-?} (CUDA ${torch_cuda:-?}, GPU usable now: ${cuda_available:-?}) at $torch_prefix"
  if [ "${torch_cuda:-none}" = none ]; then
    log "warning: this PyTorch has no CUDA (a CPU-only wheel): the agent will train on the CPU; install NVIDIA's wheel for JetPack $jetpack"
  fi
fi
[ -f "$torch_prefix/Torch/TorchConfig.cmake" ] || die "no Torch/TorchConfig.cmake under --torch-prefix $torch_prefix"
# Torch's CMake files look for the CUDA toolkit through nvcc.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
  log "CUDA toolkit: /usr/local/cuda"
fi

# fetch_headers SCRIPT DEST FLAG FILE: runs deploy/SCRIPT --dest DEST, with FLAG FILE when FILE (a local
# archive) is given and --dry-run on a dry run.
fetch_headers() {
  local cmd=("$here/$1" --dest "$2")
  [ -z "$4" ] || cmd+=("$3" "$4")
  [ $dry_run -eq 0 ] || cmd+=(--dry-run)
  "${cmd[@]}" >/dev/null
}

# 4. Boost headers: the system's if >= 1.81, else 1.81.0 under /opt/jetsweep. (Without system headers sed
# fails: hence || true, under pipefail.)
system_boost=$(sed -n 's/^#define BOOST_VERSION \([0-9][0-9]*\).*/\1/p' "$system_include/boost/version.hpp" 2>/dev/null | head -n 1 || true)
header_args=()
if [ -n "$system_boost" ] && [ "$system_boost" -ge 108100 ]; then
  log "system Boost $((system_boost / 100000)).$((system_boost / 100 % 1000)) is new enough"
else
  if [ -n "$system_boost" ]; then
    log "system Boost $((system_boost / 100000)).$((system_boost / 100 % 1000)) is older than 1.81: using Boost 1.81.0 headers in $boost_dest"
  else
    log "no system Boost headers: using Boost 1.81.0 headers in $boost_dest"
  fi
  fetch_headers boost-headers.sh "$boost_dest" --tarball "$boost_tarball"
  header_args=(-DBoost_ROOT="$boost_dest")
fi
# CLI11 headers: the system's if >= 2.1 (Ubuntu 22.04), else 2.1.2 under /opt/jetsweep (Ubuntu 20.04 has 1.9).
system_cli11=$(sed -n 's/^#define CLI11_VERSION "\([0-9.]*\)".*/\1/p' "$system_include/CLI/Version.hpp" 2>/dev/null | head -n 1 || true)
if [ -n "$system_cli11" ] && version_ge "$system_cli11" 2.1; then
  log "system CLI11 $system_cli11 is new enough"
else
  log "${system_cli11:+system CLI11 $system_cli11 is older than 2.1: }using CLI11 2.1.2 headers in $cli11_dest"
  fetch_headers cli11-headers.sh "$cli11_dest" --deb "$cli11_deb"
  header_args+=(-DJETSWEEP_CLI11_ROOT="$cli11_dest")
fi

# 5. Configure and build the agent only.
if [ -z "$jobs" ]; then
  cpus=$(nproc)
  mem_gb=$(awk '/^MemTotal:/ { print int($2 / 1048576) }' /proc/meminfo)
  jobs=$(( mem_gb / 2 < cpus ? mem_gb / 2 : cpus ))
  [ "$jobs" -ge 1 ] || jobs=1
fi
# Build as the owner of the checkout when that is not root: no root-owned files in their tree, and git
# (which CMake asks for the source's sha) refuses to read a repository owned by another user.
as_owner=()
owner=$(stat -c %U "$src")
if [ "$(id -u)" -eq 0 ] && [ "$owner" != root ] && [ "$owner" != UNKNOWN ]; then
  as_owner=(runuser -u "$owner" -- env PATH="$PATH")
fi
log "building jetsweep-agent in $build_dir ($jobs jobs${as_owner[*]:+, as $owner})"
run "${as_owner[@]}" cmake -S "$src" -B "$build_dir" -DJETSWEEP_AGENT_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_prefix" "${header_args[@]}"
run "${as_owner[@]}" cmake --build "$build_dir" --target jetsweep-agent -j "$jobs"
built=$build_dir/bin/jetsweep-agent
if [ $dry_run -eq 0 ]; then
  [ -x "$built" ] || die "the build did not produce $built"
  missing_libs=$(ldd "$built" | grep 'not found' || true)
  [ -z "$missing_libs" ] || die "$built cannot find shared libraries: $missing_libs"
  # Read-only look at the board: what the device layer recognises (a failure is reported, not fatal).
  "$built" probe >&2 || log "warning: 'jetsweep-agent probe' failed; the jetson backend may not work on this board"
fi

# 6. Install.
run install -D -m 0755 "$built" "$bin_dest"
run install -d -m 0700 "$state_dir" "$state_dir/journal"
run install -d -m 0755 "$env_dir"
if [ -e "$env_file" ]; then
  log "$env_file exists: kept as it is (edit it, or remove it and rerun to write a new one)"
  if [ -n "$(find "$env_file" -perm /077 2>/dev/null)" ]; then
    log "$env_file is readable by others: setting mode 0600"
    run chmod 0600 "$env_file"
  fi
else
  [ -n "$controller" ] || die "$env_file does not exist yet: pass --controller ws://HOST:PORT (and --secret-file FILE)"
  if [ -z "$secret_file" ]; then
    log "warning: no --secret-file: the agent presents no enrollment secret; a controller that has one will refuse it"
  fi
  if [ $dry_run -eq 1 ]; then
    log "would write $env_file (mode 0600): JETSWEEP_CONTROLLER=$controller JETSWEEP_AGENT_NAME=$name" \
      "${secret_file:+JETSWEEP_ENROLL_SECRET=<the first line of $secret_file>} JETSWEEP_AGENT_ARGS="
  else
    tmp_env=$(mktemp "$env_dir/.agent.env.XXXXXX")
    chmod 0600 "$tmp_env"
    {
      echo "# jetsweep agent settings (docs/DEPLOY.md). Read by jetsweep-agent.service and usable as"
      echo "# docker run --env-file. KEY=value lines without quotes; keep this file mode 0600."
      echo "JETSWEEP_CONTROLLER=$controller"
      echo "JETSWEEP_AGENT_NAME=$name"
      if [ -n "$secret_file" ]; then echo "JETSWEEP_ENROLL_SECRET=$secret"; fi
      echo "# Extra agent flags, separated by spaces, e.g. --storage ssd=/mnt/ssd/data --idle-restore-s 600"
      echo "JETSWEEP_AGENT_ARGS="
    } > "$tmp_env"
    mv "$tmp_env" "$env_file"
    log "wrote $env_file (mode 0600)"
  fi
fi
run install -m 0644 "$unit_src" "$unit_dest"
if [ -d /run/systemd/system ]; then
  run systemctl daemon-reload
  if [ $enable -eq 1 ]; then
    run systemctl enable jetsweep-agent.service
    run systemctl restart jetsweep-agent.service
    log "started; follow it with: journalctl -u jetsweep-agent -f"
  else
    log "installed; start it with: systemctl enable --now jetsweep-agent (after an upgrade: systemctl restart jetsweep-agent)"
  fi
else
  log "systemd is not running here: the unit is not loaded (systemctl daemon-reload once it runs)"
fi
[ $dry_run -eq 0 ] || log "dry run: nothing was changed"
