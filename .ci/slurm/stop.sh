#!/usr/bin/env bash
# .ci/slurm/stop.sh - stop the daemons that .ci/slurm/start.sh started, by the pid
# files in $SLURM_LOCAL_STATE (never by process name).  Cancels jobs still
# queued/running on the local cluster first so no slurmstepd is left behind.
set -uo pipefail

STATE=${SLURM_LOCAL_STATE:-/tmp/repro-slurm/state}
export SLURM_CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
log() { echo "slurm-stop: $*" >&2; }
alive() { [ -n "${1:-}" ] && [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }
pid_of() { [ -s "$1" ] && tr -dc '0-9' < "$1" || true; }

# cancel leftover jobs (only if our controller is the one answering)
if alive "$(pid_of "$STATE/slurmctld.pid")" slurmctld; then
  jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
  if [ -n "$jobs" ]; then
    log "cancelling jobs: $(echo $jobs)"
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
fi

stop_one() { # name pidfile
  local n=$1 pf=$2 p
  p=$(pid_of "$pf")
  if ! alive "$p" "$n"; then
    [ -e "$pf" ] && log "$n: pid file $pf stale, removing"
    rm -f "$pf"; return 0
  fi
  log "stopping $n (pid $p)"
  kill -TERM "$p" 2>/dev/null || true
  for _ in $(seq 100); do alive "$p" "$n" || break; sleep 0.1; done
  if alive "$p" "$n"; then log "$n (pid $p) ignored TERM, sending KILL"; kill -KILL "$p" 2>/dev/null || true; fi
  rm -f "$pf"
}
stop_one slurmd    "$STATE/slurmd.pid"
stop_one slurmctld "$STATE/slurmctld.pid"
stop_one munged    "$STATE/munged.pid"
log "done"
