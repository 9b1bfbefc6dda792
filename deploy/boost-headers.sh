#!/usr/bin/env bash
# Usage: deploy/boost-headers.sh [--dest DIR] [--tarball FILE] [--dry-run]   (prints DIR, for -DBoost_ROOT=DIR)
#
# Puts the Boost 1.81.0 headers under DIR/include/boost (default DIR: /opt/jetsweep/boost-1.81.0). The agent
# uses Boost header-only (Asio, Beast, JSON), so nothing is compiled. The archive is downloaded (or taken from
# --tarball FILE, e.g. one carried to an offline board) and its SHA-256 checked before anything is unpacked;
# a mismatch stops with both hashes and leaves nothing behind. Does nothing when DIR already holds 1.81.0.
# Used by deploy/install-agent.sh and by the JetPack Dockerfiles. Logs go to stderr, DIR to stdout.
set -euo pipefail

BOOST_VERSION_NUMBER=108100   # BOOST_VERSION in boost/version.hpp for 1.81.0
BOOST_DIR_NAME=boost_1_81_0
# SHA-256 of boost_1_81_0.tar.bz2 as published by the Boost project on its 1.81.0 release page
# (www.boost.org/users/history/version_1_81_0.html) and in the .json file next to the archive. The same value
# is pinned for this archive by Homebrew, Spack, nixpkgs and Bitcoin Core's depends system. It was not
# recomputed from the archive on the machine this script was written on (no network there).
BOOST_SHA256=71feeed900fbccca04a3b4f2f84a7c217186f28a940ed8b7ed4725986baf99fa
# The Boost project's download archive; override with JETSWEEP_BOOST_URL for a local mirror (the hash
# check still applies).
BOOST_URL=${JETSWEEP_BOOST_URL:-https://archives.boost.io/release/1.81.0/source/boost_1_81_0.tar.bz2}

log() { printf '[boost-headers] %s\n' "$*" >&2; }
die() { printf '[boost-headers] error: %s\n' "$*" >&2; exit 1; }

dest=/opt/jetsweep/boost-1.81.0
tarball=""
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dest) [ $# -ge 2 ] || die "--dest needs a directory"; dest=$2; shift 2 ;;
    --tarball) [ $# -ge 2 ] || die "--tarball needs a file"; tarball=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$dest" in
  /*) ;;
  *) die "--dest must be an absolute path, got '$dest'" ;;
esac
dest=${dest%/}
# DIR is replaced as a whole, so it must be ours: absent, empty, or a Boost headers directory.
if [ -e "$dest" ] && [ ! -f "$dest/include/boost/version.hpp" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
  die "$dest exists and is not a Boost headers directory; pass another --dest"
fi

# The BOOST_VERSION number in DIR/include/boost/version.hpp, or nothing.
boost_version_in() {
  sed -n 's/^#define BOOST_VERSION \([0-9][0-9]*\).*/\1/p' "$1/include/boost/version.hpp" 2>/dev/null | head -n 1
}

if [ "$(boost_version_in "$dest")" = "$BOOST_VERSION_NUMBER" ]; then
  log "Boost 1.81.0 headers already in $dest/include"
  echo "$dest"
  exit 0
fi

if [ $dry_run -eq 1 ]; then
  if [ -n "$tarball" ]; then log "would check $tarball against SHA-256 $BOOST_SHA256"
  else log "would download $BOOST_URL and check it against SHA-256 $BOOST_SHA256"; fi
  log "would unpack $BOOST_DIR_NAME/boost into $dest/include/boost"
  echo "$dest"
  exit 0
fi

parent=$(dirname "$dest")
mkdir -p "$parent" || die "cannot create $parent"
work=$(mktemp -d "$parent/.boost-headers.XXXXXX") || die "cannot create a work directory in $parent"
trap 'rm -rf "$work"' EXIT

if [ -z "$tarball" ]; then
  tarball=$work/$BOOST_DIR_NAME.tar.bz2
  log "downloading $BOOST_URL"
  if command -v curl >/dev/null; then
    curl -fL --retry 3 --connect-timeout 30 -o "$tarball" "$BOOST_URL" || die "download of $BOOST_URL failed"
  elif command -v wget >/dev/null; then
    wget -q -O "$tarball" "$BOOST_URL" || die "download of $BOOST_URL failed"
  else
    die "neither curl nor wget is installed; install curl, or pass --tarball FILE"
  fi
fi
[ -r "$tarball" ] || die "cannot read $tarball"

actual=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$actual" != "$BOOST_SHA256" ]; then
  die "SHA-256 mismatch for $tarball: expected $BOOST_SHA256, got $actual (wrong file or corrupted download; nothing was unpacked)"
fi
log "SHA-256 verified ($BOOST_SHA256)"

command -v bzip2 >/dev/null || die "bzip2 is not installed (needed to unpack $tarball)"
tar -xjf "$tarball" -C "$work" "$BOOST_DIR_NAME/boost" "$BOOST_DIR_NAME/LICENSE_1_0.txt" \
  || die "unpacking $tarball failed"
mkdir -p "$work/stage/include"
mv "$work/$BOOST_DIR_NAME/boost" "$work/stage/include/boost"
mv "$work/$BOOST_DIR_NAME/LICENSE_1_0.txt" "$work/stage/"
[ "$(boost_version_in "$work/stage")" = "$BOOST_VERSION_NUMBER" ] \
  || die "the archive does not hold Boost 1.81.0 headers"
chmod -R a+rX "$work/stage"
# Replace an empty DIR or one with other Boost headers (checked above), then move the new one in.
rm -rf "${dest:?}"
mv "$work/stage" "$dest"
log "Boost 1.81.0 headers in $dest/include"
echo "$dest"
