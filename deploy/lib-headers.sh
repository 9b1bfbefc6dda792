# shellcheck shell=bash
# deploy/lib-headers.sh: what deploy/boost-headers.sh and deploy/cli11-headers.sh share, sourced by both (keep
# it next to them wherever they are copied): arguments, the checks on DIR, the download with curl or wget, the
# SHA-256 check, and the replacement of DIR as a whole. Not run on its own.
#
# The sourcing script sets these, defines the two functions below, then calls headers_main "$@":
#   HEADERS_TAG          log prefix and work-directory name, e.g. boost-headers
#   HEADERS_NAME         LIBRARY VERSION, e.g. "Boost 1.81.0" (messages; "not a Boost headers directory")
#   HEADERS_VERSION      what headers_version_in prints for that version, e.g. 108100
#   HEADERS_DEFAULT_DEST the default DIR
#   HEADERS_FILE_FLAG    the flag naming a local archive, e.g. --tarball
#   HEADERS_FILE_NAME    the archive's file name when downloaded
#   HEADERS_URL          where it is downloaded from
#   HEADERS_SHA256       its expected SHA-256
#   HEADERS_MARKER       the file under DIR that marks a headers directory, e.g. include/boost/version.hpp
#   HEADERS_UNPACKS      what a dry run says is unpacked, e.g. boost_1_81_0/boost
#   HEADERS_INCLUDE      the directory under DIR/include, e.g. boost
#   headers_version_in DIR     prints the version the headers in DIR declare, or nothing
#   headers_unpack FILE WORK   unpacks the checked archive FILE in WORK into WORK/stage (include/ and the
#                              licence), checks the version there; calls die on any failure

log() { printf '[%s] %s\n' "$HEADERS_TAG" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$HEADERS_TAG" "$*" >&2; exit 1; }

# The script's leading comment, without the #! line and the comment marks.
headers_help() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

# Sets headers_dest, headers_file (empty: download) and headers_dry_run from the command line.
headers_parse_args() {
  headers_dest=$HEADERS_DEFAULT_DEST
  headers_file=""
  headers_dry_run=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --dest) [ $# -ge 2 ] || die "--dest needs a directory"; headers_dest=$2; shift 2 ;;
      "$HEADERS_FILE_FLAG") [ $# -ge 2 ] || die "$HEADERS_FILE_FLAG needs a file"; headers_file=$2; shift 2 ;;
      --dry-run) headers_dry_run=1; shift ;;
      -h|--help) headers_help; exit 0 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
  case "$headers_dest" in
    /*) ;;
    *) die "--dest must be an absolute path, got '$headers_dest'" ;;
  esac
  headers_dest=${headers_dest%/}
}

# DIR is replaced as a whole, so it must be ours: absent, empty, or a headers directory of this library.
headers_check_dest() {
  if [ -e "$headers_dest" ] && [ ! -f "$headers_dest/$HEADERS_MARKER" ] \
     && [ -n "$(ls -A "$headers_dest" 2>/dev/null)" ]; then
    die "$headers_dest exists and is not a ${HEADERS_NAME% *} headers directory; pass another --dest"
  fi
}

# headers_download FILE: downloads HEADERS_URL to FILE.
headers_download() {
  log "downloading $HEADERS_URL"
  if command -v curl >/dev/null; then
    curl -fL --retry 3 --connect-timeout 30 -o "$1" "$HEADERS_URL" || die "download of $HEADERS_URL failed"
  elif command -v wget >/dev/null; then
    wget -q -O "$1" "$HEADERS_URL" || die "download of $HEADERS_URL failed"
  else
    die "neither curl nor wget is installed; install curl, or pass $HEADERS_FILE_FLAG FILE"
  fi
}

# headers_verify FILE: stops unless FILE's SHA-256 is HEADERS_SHA256.
headers_verify() {
  [ -r "$1" ] || die "cannot read $1"
  local actual
  actual=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$actual" != "$HEADERS_SHA256" ]; then
    die "SHA-256 mismatch for $1: expected $HEADERS_SHA256, got $actual (wrong file or corrupted download; nothing was unpacked)"
  fi
  log "SHA-256 verified ($HEADERS_SHA256)"
}

# The whole run: prints DIR on stdout when the headers are there (or would be, on a dry run).
headers_main() {
  : "${HEADERS_TAG:?}" "${HEADERS_NAME:?}" "${HEADERS_VERSION:?}" "${HEADERS_DEFAULT_DEST:?}" "${HEADERS_FILE_FLAG:?}" \
    "${HEADERS_FILE_NAME:?}" "${HEADERS_URL:?}" "${HEADERS_SHA256:?}" "${HEADERS_MARKER:?}" \
    "${HEADERS_UNPACKS:?}" "${HEADERS_INCLUDE:?}"
  headers_parse_args "$@"
  headers_check_dest
  if [ "$(headers_version_in "$headers_dest")" = "$HEADERS_VERSION" ]; then
    log "$HEADERS_NAME headers already in $headers_dest/include"
    echo "$headers_dest"
    return 0
  fi
  if [ "$headers_dry_run" -eq 1 ]; then
    if [ -n "$headers_file" ]; then log "would check $headers_file against SHA-256 $HEADERS_SHA256"
    else log "would download $HEADERS_URL and check it against SHA-256 $HEADERS_SHA256"; fi
    log "would unpack $HEADERS_UNPACKS into $headers_dest/include/$HEADERS_INCLUDE"
    echo "$headers_dest"
    return 0
  fi

  local parent
  parent=$(dirname "$headers_dest")
  mkdir -p "$parent" || die "cannot create $parent"
  headers_work=$(mktemp -d "$parent/.$HEADERS_TAG.XXXXXX") || die "cannot create a work directory in $parent"
  trap 'rm -rf "$headers_work"' EXIT
  if [ -z "$headers_file" ]; then
    headers_file=$headers_work/$HEADERS_FILE_NAME
    headers_download "$headers_file"
  fi
  headers_verify "$headers_file"
  headers_unpack "$headers_file" "$headers_work"
  chmod -R a+rX "$headers_work/stage"
  # Replace an empty DIR or one with other headers of this library (checked above), then move the new one in.
  rm -rf "${headers_dest:?}"
  mv "$headers_work/stage" "$headers_dest"
  log "$HEADERS_NAME headers in $headers_dest/include"
  echo "$headers_dest"
}
