# Shared by scripts/demo, scripts/test and bench/run: install, build, private PostgreSQL clusters.
# Sourced, not executed. Everything it prints goes to stderr.

JS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JS_BUILD=${JETSWEEP_BUILD_DIR:-$JS_ROOT/build}
JS_PG_USER=jetsweep

js_log() { printf '[jetsweep] %s\n' "$*" >&2; }
js_die() { printf '[jetsweep] error: %s\n' "$*" >&2; exit 1; }

# The Debian packages, from the one list shared with docker/Dockerfile (one per line, '#' comments).
JS_PACKAGE_LIST=$JS_ROOT/deploy/packages/debian-build.txt
[ -r "$JS_PACKAGE_LIST" ] || js_die "package list $JS_PACKAGE_LIST is missing"
mapfile -t JS_PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$JS_PACKAGE_LIST")
[ ${#JS_PACKAGES[@]} -gt 0 ] || js_die "package list $JS_PACKAGE_LIST names no package"

# Installs the Debian packages that are missing (needs root or sudo).
js_install_deps() {
  local missing=()
  for p in "${JS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  js_log "installing: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || js_die "missing packages (${missing[*]}) and not root; install them or run as root"
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || js_die "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
    || js_die "apt-get install failed"
}

# js_build [TARGET...]: configures and builds into $JS_BUILD (binaries in $JS_BUILD/bin): the TARGETs only
# (e.g. the demo's three binaries, not the tests and benchmarks), or everything.
js_build() {
  local jobs targets=()
  jobs=$(nproc 2>/dev/null || echo 2)
  [ $# -gt 0 ] && targets=(--target "$@")
  js_log "building ${*:-everything} into $JS_BUILD ($jobs jobs)"
  # -g1 (function names and line tables: backtraces and perf keep their symbols) instead of -g: full debug info
  # made the heaviest translation units ~1.6x slower to compile (agent_session.cpp 155 s of CPU against 95 s),
  # and the build is most of a fresh machine's scripts/test. The code generated is the same.
  cmake -S "$JS_ROOT" -B "$JS_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >&2 \
    || js_die "cmake configure failed"
  cmake --build "$JS_BUILD" -j"$jobs" "${targets[@]}" >&2 || js_die "build failed"
}

js_pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] || js_die "PostgreSQL server binaries not found under /usr/lib/postgresql"
  echo "$d"
}

# Runs a command as the cluster owner: ourselves, or an unprivileged user when we are root
# (PostgreSQL refuses to run as root).
js_as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$JS_PG_USER" -- "$@"; else "$@"; fi
}

js_free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  js_die "no free loopback port found"
}

# js_pg_start DIR: starts (creating on first use) a private cluster whose state lives in DIR and sets
# JS_PG_DSN (database jetsweep), JS_PG_ADMIN_DSN (database postgres) and JS_PG_DIR. The DSNs carry no password:
# it is in DIR/pgpass (libpq's password file, mode 0600), exported as PGPASSFILE to everything started from here
# (docs/SECURITY.md: a password in a DSN is visible in /proc/PID/cmdline).
# JS_PG_INITDB_ARGS (more initdb arguments when the cluster is created, e.g. --waldir=/mnt/wal --wal-segsize=1) and
# JS_PG_SERVER_OPTIONS (more server options, e.g. "-c max_wal_size=4MB") are for tests that need a cluster of their own.
js_pg_start() {
  local dir=$1 pgbin initdb_args
  read -ra initdb_args <<< "${JS_PG_INITDB_ARGS:-}"
  pgbin=$(js_pg_bin)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    id "$JS_PG_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$JS_PG_USER" \
      || js_die "cannot create user $JS_PG_USER to run PostgreSQL"
    chown "$JS_PG_USER" "$dir"
    if ! runuser -u "$JS_PG_USER" -- test -w "$dir"; then
      # The checkout sits under a directory the unprivileged user cannot enter (e.g. /root): keep the
      # cluster in a per-checkout directory it can use, and point at it from DIR.
      local alt
      alt=$(js_pg_alt_dir "$dir")
      mkdir -p "$alt" && chown "$JS_PG_USER" "$alt" && chmod 700 "$alt"
      js_log "cluster directory $dir not reachable by user $JS_PG_USER; using $alt"
      dir=$alt
    fi
  fi
  JS_PG_DIR=$dir
  local data=$dir/data port password
  if [ ! -f "$data/PG_VERSION" ]; then
    password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    echo "$password" > "$dir/password"
    chmod 600 "$dir/password"
    [ "$(id -u)" -eq 0 ] && chown "$JS_PG_USER" "$dir/password"
    js_log "creating PostgreSQL cluster in $data"
    js_as_pg "$pgbin/initdb" -D "$data" -U jetsweep --pwfile="$dir/password" --auth-local=scram-sha-256 \
      --auth-host=scram-sha-256 -E UTF8 "${initdb_args[@]}" >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; js_die "initdb failed"; }
  fi
  password=$(cat "$dir/password")
  if js_as_pg "$pgbin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    port=$(cat "$dir/port")
  else
    port=$(cat "$dir/port" 2>/dev/null || true)
    local attempt
    for attempt in 1 2 3; do
      if [ -z "$port" ] || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then port=$(js_free_port); fi
      echo "$port" > "$dir/port"
      js_log "starting PostgreSQL on 127.0.0.1:$port"
      if js_as_pg "$pgbin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=on ${JS_PG_SERVER_OPTIONS:-}" \
        start >&2; then
        break
      fi
      tail -n 30 "$data/server.log" >&2
      # The port was free when picked and taken before the server bound it (another process on the machine):
      # another port. Any other failure is final.
      if [ "$attempt" = 3 ] || ! tail -n 30 "$data/server.log" | grep -q "Address already in use"; then
        js_die "PostgreSQL did not start"
      fi
      port=""
    done
  fi
  (umask 077 && printf '127.0.0.1:%s:*:jetsweep:%s\n' "$port" "$password" > "$JS_PG_DIR/pgpass.$$" &&
    mv "$JS_PG_DIR/pgpass.$$" "$JS_PG_DIR/pgpass") || js_die "cannot write $JS_PG_DIR/pgpass"
  export PGPASSFILE=$JS_PG_DIR/pgpass
  JS_PG_ADMIN_DSN="host=127.0.0.1 port=$port user=jetsweep dbname=postgres"
  # shellcheck disable=SC2034  # used by the scripts that source this file (demo, bench/run)
  JS_PG_DSN="host=127.0.0.1 port=$port user=jetsweep dbname=jetsweep"
  if ! psql "$JS_PG_ADMIN_DSN" -tAc "SELECT 1 FROM pg_database WHERE datname = 'jetsweep'" | grep -q 1; then
    psql "$JS_PG_ADMIN_DSN" -qc "CREATE DATABASE jetsweep" >&2 || js_die "cannot create database jetsweep"
  fi
}

# Where a cluster asked for in DIR lives when DIR is out of the unprivileged user's reach (js_pg_start).
js_pg_alt_dir() { echo "/var/tmp/jetsweep-pg-$(echo "$1" | md5sum | cut -c1-12)"; }

# The directory that holds the cluster js_pg_start DIR started: DIR, or its stand-in under /var/tmp.
js_pg_dir_of() {
  local dir=$1 alt
  alt=$(js_pg_alt_dir "$dir")
  if [ ! -f "$dir/data/PG_VERSION" ] && [ -f "$alt/data/PG_VERSION" ]; then echo "$alt"; else echo "$dir"; fi
}

# A shell command that restarts the cluster in DIR (fast shutdown, same options), for fault tests.
js_pg_restart_command() {
  local dir runas=""
  dir=$(js_pg_dir_of "${1:-$JS_PG_DIR}")
  [ "$(id -u)" -eq 0 ] && runas="runuser -u $JS_PG_USER -- "
  echo "${runas}$(js_pg_bin)/pg_ctl -D $dir/data -l $dir/data/server.log -m fast -w -t 60 restart"
}

# Stops the cluster js_pg_start DIR started (kept for the next start).
js_pg_stop() {
  local dir
  dir=$(js_pg_dir_of "${1:-$JS_PG_DIR}")
  [ -n "$dir" ] && [ -f "$dir/data/PG_VERSION" ] || return 0
  js_as_pg "$(js_pg_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

# Stops a throw-away cluster (tests, benchmarks) and deletes it, its /var/tmp stand-in included: the caller
# deletes DIR itself.
js_pg_discard() {
  local dir=$1 alt
  js_pg_stop "$dir"
  alt=$(js_pg_alt_dir "$dir")
  [ -d "$alt" ] && rm -rf "$alt"
  return 0
}

# js_wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds or the time is up, every
# JS_WAIT_INTERVAL_S seconds (default 0.2).
js_wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || js_die "timed out after ${limit}s waiting for $what"
    sleep "${JS_WAIT_INTERVAL_S:-0.2}"
  done
}
