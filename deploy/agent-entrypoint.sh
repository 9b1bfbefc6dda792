#!/usr/bin/env bash
# Entrypoint of the JetPack agent images (deploy/jetpack5, deploy/jetpack6). Usage: see those Dockerfiles.
# With arguments it runs `jetsweep-agent ARGS...` (e.g. `probe`, `restore`, `set-mode ...`). Without, it
# serves a controller with the settings of /etc/jetsweep/agent.env given as `docker run --env-file`, with
# the same flags as deploy/systemd/jetsweep-agent.service: the enrollment secret stays in the environment
# (JETSWEEP_ENROLL_SECRET), and JETSWEEP_AGENT_ARGS holds extra flags separated by spaces.
set -euo pipefail
agent=/usr/local/bin/jetsweep-agent
if [ $# -gt 0 ]; then exec "$agent" "$@"; fi
if [ -z "${JETSWEEP_CONTROLLER:-}" ] || [ -z "${JETSWEEP_AGENT_NAME:-}" ]; then
  echo "jetsweep-agent image: JETSWEEP_CONTROLLER and JETSWEEP_AGENT_NAME must be set" \
    "(docker run --env-file /etc/jetsweep/agent.env ...), or give jetsweep-agent arguments" >&2
  exit 2
fi
read -r -a extra <<< "${JETSWEEP_AGENT_ARGS:-}"
exec "$agent" --controller "$JETSWEEP_CONTROLLER" --name "$JETSWEEP_AGENT_NAME" --backend jetson \
  --state-dir /var/lib/jetsweep --journal-dir "/var/lib/jetsweep/journal/$JETSWEEP_AGENT_NAME" "${extra[@]}"
