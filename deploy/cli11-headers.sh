#!/usr/bin/env bash
# Usage: deploy/cli11-headers.sh [--dest DIR] [--deb FILE] [--dry-run]   (prints DIR, for -DJETSWEEP_CLI11_ROOT=DIR)
#
# Puts the CLI11 2.1.2 headers under DIR/include/CLI (default DIR: /opt/jetsweep/cli11-2.1.2). CLI11 is the
# header-only flag library of every jetsweep binary; Ubuntu 22.04 (JetPack 6) ships libcli11-dev 2.1.2, Ubuntu
# 20.04 (JetPack 5) only 1.9. Debian's libcli11-dev_2.1.2+ds-1_all.deb (architecture all) is downloaded (or taken
# from --deb FILE, e.g. one carried to an offline board) and its SHA-256 checked before anything is unpacked; a
# mismatch stops with both hashes and leaves nothing behind. Does nothing when DIR already holds 2.1.2.
# Used by deploy/install-agent.sh and by the JetPack Dockerfiles. Logs go to stderr, DIR to stdout.
set -euo pipefail

CLI11_VERSION=2.1.2
CLI11_DEB=libcli11-dev_2.1.2+ds-1_all.deb
# SHA-256 of Debian's libcli11-dev_2.1.2+ds-1_all.deb (bookworm main), computed from the file apt fetched on the
# machine this script was written on.
CLI11_SHA256=f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8
# Debian's archive; override with JETSWEEP_CLI11_URL for a local mirror (the hash check still applies).
CLI11_URL=${JETSWEEP_CLI11_URL:-https://deb.debian.org/debian/pool/main/c/cli11/$CLI11_DEB}

# Arguments, download, hash check and the replacement of DIR: deploy/lib-headers.sh (copied along with this).
lib=$(dirname "${BASH_SOURCE[0]}")/lib-headers.sh
# shellcheck source=deploy/lib-headers.sh
. "$lib" || { printf '[cli11-headers] error: %s is missing (it goes with this script)\n' "$lib" >&2; exit 1; }
HEADERS_TAG=cli11-headers
HEADERS_NAME="CLI11 $CLI11_VERSION"
HEADERS_VERSION=$CLI11_VERSION
HEADERS_DEFAULT_DEST=/opt/jetsweep/cli11-$CLI11_VERSION
HEADERS_FILE_FLAG=--deb
HEADERS_FILE_NAME=$CLI11_DEB
HEADERS_URL=$CLI11_URL
HEADERS_SHA256=$CLI11_SHA256
HEADERS_MARKER=include/CLI/Version.hpp
HEADERS_UNPACKS=usr/include/CLI
HEADERS_INCLUDE=CLI

# The CLI11_VERSION string in DIR/include/CLI/Version.hpp, or nothing.
headers_version_in() {
  sed -n 's/^#define CLI11_VERSION "\([0-9.]*\)".*/\1/p' "$1/include/CLI/Version.hpp" 2>/dev/null | head -n 1
}

# headers_unpack DEB WORK: WORK/stage/include/CLI (and Debian's copyright file) from the package. A .deb is an
# ar archive; dpkg-deb is on every Debian/Ubuntu system and reads it without installing anything.
headers_unpack() {
  command -v dpkg-deb >/dev/null || die "dpkg-deb is not installed (needed to unpack $1)"
  dpkg-deb -x "$1" "$2/deb" || die "unpacking $1 failed"
  mkdir -p "$2/stage/include"
  mv "$2/deb/usr/include/CLI" "$2/stage/include/CLI" || die "$1 holds no usr/include/CLI"
  if [ -f "$2/deb/usr/share/doc/libcli11-dev/copyright" ]; then
    cp "$2/deb/usr/share/doc/libcli11-dev/copyright" "$2/stage/"
  fi
  [ "$(headers_version_in "$2/stage")" = "$CLI11_VERSION" ] || die "the package does not hold CLI11 $CLI11_VERSION headers"
}

headers_main "$@"
