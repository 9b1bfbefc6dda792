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

# Arguments, download, hash check and the replacement of DIR: deploy/lib-headers.sh (copied along with this).
lib=$(dirname "${BASH_SOURCE[0]}")/lib-headers.sh
# shellcheck source=deploy/lib-headers.sh
. "$lib" || { printf '[boost-headers] error: %s is missing (it goes with this script)\n' "$lib" >&2; exit 1; }
HEADERS_TAG=boost-headers
HEADERS_NAME="Boost 1.81.0"
HEADERS_VERSION=$BOOST_VERSION_NUMBER
HEADERS_DEFAULT_DEST=/opt/jetsweep/boost-1.81.0
HEADERS_FILE_FLAG=--tarball
HEADERS_FILE_NAME=$BOOST_DIR_NAME.tar.bz2
HEADERS_URL=$BOOST_URL
HEADERS_SHA256=$BOOST_SHA256
HEADERS_MARKER=include/boost/version.hpp
HEADERS_UNPACKS=$BOOST_DIR_NAME/boost
HEADERS_INCLUDE=boost

# The BOOST_VERSION number in DIR/include/boost/version.hpp, or nothing.
headers_version_in() {
  sed -n 's/^#define BOOST_VERSION \([0-9][0-9]*\).*/\1/p' "$1/include/boost/version.hpp" 2>/dev/null | head -n 1
}

# headers_unpack TARBALL WORK: WORK/stage/include/boost and WORK/stage/LICENSE_1_0.txt from the archive.
headers_unpack() {
  command -v bzip2 >/dev/null || die "bzip2 is not installed (needed to unpack $1)"
  tar -xjf "$1" -C "$2" "$BOOST_DIR_NAME/boost" "$BOOST_DIR_NAME/LICENSE_1_0.txt" || die "unpacking $1 failed"
  mkdir -p "$2/stage/include"
  mv "$2/$BOOST_DIR_NAME/boost" "$2/stage/include/boost"
  mv "$2/$BOOST_DIR_NAME/LICENSE_1_0.txt" "$2/stage/"
  [ "$(headers_version_in "$2/stage")" = "$BOOST_VERSION_NUMBER" ] || die "the archive does not hold Boost 1.81.0 headers"
}

headers_main "$@"
