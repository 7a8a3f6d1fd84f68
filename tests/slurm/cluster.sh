#!/usr/bin/env bash
# A one-node SLURM cluster on localhost (slurmctld + slurmd + slurmdbd + munge + MariaDB), for
# the tests of profiles/slurm and for trying the profile by hand:
#   tests/slurm/cluster.sh start | stop | status
# Debian bookworm's SLURM 22.05, started by hand (no systemd). Needs root; installs the Debian
# packages it needs. Writes /etc/slurm/slurm.conf and slurmdbd.conf (marked as ours; a foreign
# slurm.conf is left alone and the script refuses to start).
set -euo pipefail

state=${SNNBENCH_SLURM_STATE:-/var/tmp/snnbench-slurm}
conf=/etc/slurm/slurm.conf
dbdconf=/etc/slurm/slurmdbd.conf
marker="# written by snnbench tests/slurm/cluster.sh"
packages="slurm-wlm slurmdbd munge mariadb-server"
cluster=snnbench

log() { echo "[slurm-cluster] $*"; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  log "gave up waiting for $what"
  return 1
}

install_packages() {
  if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null || ! command -v munged >/dev/null \
    || ! command -v mariadbd >/dev/null; then
    log "installing $packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  fi
}

write_config() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    log "$conf exists and is not ours: not touching a real cluster's configuration"
    exit 1
  fi
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc)
  mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  mkdir -p "$state"/{ctld,d,log} /etc/slurm
  chown -R slurm:slurm "$state"
  cat >"$conf" <<EOF
$marker
ClusterName=$cluster
SlurmctldHost=localhost
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
# No cgroups in a container: track processes by /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Cores and memory are consumable, so jobs get what they ask for and run side by side.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
# Reject jobs no partition can run instead of letting them pend forever.
EnforcePartLimits=ALL
# Debian's Open MPI speaks PMIx, not PMI2.
MpiDefault=pmix
# Keep finished jobs visible to squeue long enough for status polling.
MinJobAge=300
KillWait=10
ReturnToService=2
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$dbdconf" <<EOF
$marker
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
PidFile=$state/slurmdbd.pid
LogFile=$state/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=snnbench
StorageLoc=slurm_acct_db
EOF
  chown slurm:slurm "$dbdconf"
  chmod 600 "$dbdconf"
}

start() {
  [ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
  install_packages
  write_config

  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- /usr/sbin/munged
  fi
  wait_for 10 munge sh -c 'munge -n | unmunge'

  if ! pgrep -x mariadbd >/dev/null; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    (mariadbd --user=mysql >"$state/log/mariadb.log" 2>&1 &)
  fi
  wait_for 30 MariaDB mysqladmin ping
  mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'snnbench';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"

  pgrep -x slurmdbd >/dev/null || slurmdbd
  wait_for 30 slurmdbd sacctmgr -n list cluster
  sacctmgr -i add cluster "$cluster" >/dev/null 2>&1 || true
  sacctmgr -i add account "$cluster" Description=tests Organization=snnbench >/dev/null 2>&1 || true
  sacctmgr -i add user root Account="$cluster" DefaultAccount="$cluster" >/dev/null 2>&1 || true

  pgrep -x slurmctld >/dev/null || slurmctld
  wait_for 30 slurmctld scontrol ping
  pgrep -x slurmd >/dev/null || slurmd
  wait_for 30 "an idle node" sh -c 'sinfo -h -o %t | grep -qx idle'
  log "up: $(sinfo -h -o '%P %D nodes %c cpus %t')"
}

stop() {
  for daemon in slurmd slurmctld slurmdbd; do
    pkill -x "$daemon" 2>/dev/null || true
  done
  wait_for 20 "SLURM daemons to stop" sh -c '! pgrep -x "slurmd|slurmctld|slurmdbd"' || pkill -9 -x "slurmd|slurmctld|slurmdbd" || true
  mysqladmin shutdown 2>/dev/null || true
  pkill -x munged 2>/dev/null || true
  log "stopped"
}

status() {
  for daemon in munged mariadbd slurmdbd slurmctld slurmd; do
    printf '%-10s %s\n' "$daemon" "$(pgrep -x "$daemon" >/dev/null && echo running || echo stopped)"
  done
  sinfo 2>/dev/null || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
