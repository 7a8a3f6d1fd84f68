#!/usr/bin/env bash
# A two-node SLURM cluster on this machine (slurmctld + slurmdbd + two slurmd, n1 and n2, + munge +
# MariaDB), for the tests of profiles/slurm and for trying the profile by hand, and a third node n3
# alone in partition `smt`, declared as one core of two hardware threads (SMT) whatever this
# machine's CPUs are, for the tests of slurm.threads_per_core:
#   tests/slurm/cluster.sh start | stop | status | lose NODE | restore NODE
# `lose n2` takes node n2 away as a crash would (every process of the node killed, slurmctld told
# the node is DOWN, so its jobs end with NODE_FAIL); `restore n2` brings it back.
# Each slurmd is a node of its own as on a real cluster: its own port, its own hostname (a UTS
# namespace) and its own /tmp (a mount namespace whose /tmp is a private directory), so that what
# one node writes to /tmp the other cannot see, and PMIx's per-node files in /tmp do not collide.
# Everything else (/work, /var/tmp, /root, /etc) is shared, like a cluster's shared file system:
# run workflows from there, not from /tmp. One-node jobs run on either node.
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
nodes="n1 n2"  # partition debug, the default
smt_nodes="n3"  # partition smt: 1 socket x 1 core x 2 threads each
all_nodes="$nodes $smt_nodes"
gpu_node=n1  # its GPU is the character device $gpu_device (major 195, as NVIDIA's), not a GPU
gpu_device=/dev/nvidia0
gresconf=/etc/slurm/gres.conf
first_port=17001

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

alive() {  # alive PIDFILE: the daemon whose pid the file holds is running
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

install_packages() {
  if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null || ! command -v munged >/dev/null \
    || ! command -v mariadbd >/dev/null || ! command -v unshare >/dev/null; then
    log "installing $packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages util-linux >/dev/null
  fi
}

slurm_conf() {  # the cluster's slurm.conf on stdout
  local cpus mem_mb port=$first_port node
  cpus=$(nproc)
  # Both nodes share this machine's memory; each may use nearly all of it (one point at a time).
  mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  cat <<EOF
$marker
ClusterName=$cluster
SlurmctldHost=localhost
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmctldPidFile=$state/slurmctld.pid
SlurmctldLogFile=$state/log/slurmctld.log
# Several slurmd on one host: each node its own spool, pid file, log and port (%n: node name).
SlurmdSpoolDir=$state/%n/spool
SlurmdPidFile=$state/%n/slurmd.pid
SlurmdLogFile=$state/log/slurmd-%n.log
# No cgroups in a container: track processes by /proc. Tasks are bound to CPUs by
# sched_setaffinity (task/affinity), as srun --cpu-bind asks (snnbench.network.binding).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
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
# Take each node as slurm.conf declares it, not as the hardware is: the smt node's one core of two
# threads is a declaration (slurmd would otherwise drain a node whose hardware differs).
SlurmdParameters=config_overrides
# A GPU on the first node, backed by a dummy device file (gres.conf): jobs that ask for one get it
# (CUDA_VISIBLE_DEVICES set, gres/gpu in sacct's AllocTRES), though no CUDA can use it.
GresTypes=gpu
AccountingStorageTRES=gres/gpu
EOF
  local gres
  for node in $nodes; do
    gres=""
    [ "$node" = "$gpu_node" ] && gres=" Gres=gpu:1"
    echo "NodeName=$node NodeHostname=$node NodeAddr=127.0.0.1 Port=$port CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN$gres"
    port=$((port + 1))
  done
  for node in $smt_nodes; do
    echo "NodeName=$node NodeHostname=$node NodeAddr=127.0.0.1 Port=$port CPUs=2 Sockets=1 CoresPerSocket=1 ThreadsPerCore=2 RealMemory=$mem_mb State=UNKNOWN"
    port=$((port + 1))
  done
  echo "PartitionName=debug Nodes=${nodes// /,} Default=YES MaxTime=INFINITE State=UP"
  echo "PartitionName=smt Nodes=${smt_nodes// /,} MaxTime=INFINITE State=UP"
}

replace_if_changed() {  # replace_if_changed FILE: standard input becomes FILE where it differs, by a rename
  # Never truncated and rewritten in place: the running nodes read $state/hosts as their /etc/hosts (a bind mount
  # of that file), and a job resolving localhost (slurmctld's host) while a second test module's `start` rewrote it
  # found it empty for a moment (1 of 17 187 reads in a job during 10 starts).
  local file=$1
  cat >"$file.new"
  if cmp -s "$file.new" "$file"; then rm -f "$file.new"; else mv "$file.new" "$file"; fi
}

write_config() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    log "$conf exists and is not ours: not touching a real cluster's configuration"
    exit 1
  fi
  mkdir -p "$state"/{ctld,log} /etc/slurm
  local node
  for node in $all_nodes; do
    mkdir -p "$state/$node/spool" "$state/$node/tmp"
    chmod 1777 "$state/$node/tmp"
  done
  chown slurm:slurm "$state" "$state/ctld" "$state/log"
  # The nodes' own names resolve to this machine (loopback), inside their namespaces only.
  { grep -v -w -e ${all_nodes// / -e } /etc/hosts || true; echo "127.0.0.1 $all_nodes"; } | replace_if_changed "$state/hosts"
  slurm_conf >"$state/slurm.conf.new"
  if [ -f "$conf" ] && ! cmp -s "$state/slurm.conf.new" "$conf"; then
    # An older configuration (e.g. the one-node cluster) may be running: restart with this one.
    log "configuration changed: restarting SLURM's daemons"
    stop_slurm
    # Job ids start again at 1: the nodes' spools must go too, else a stale step socket of an old job
    # with the same id (stepd.slurm.pmix.<job>.<step>) makes the new job's MPI step fail to bind; so
    # must PMIx's step folders in the nodes' /tmp (spmix_appdir_<uid>_<job>.<step>: "File exists").
    rm -rf "${state:?}"/ctld/*
    for node in $all_nodes; do rm -rf "${state:?}/$node/spool/"* "${state:?}/$node/tmp/"spmix_appdir_*; done
  fi
  mv "$state/slurm.conf.new" "$conf"
  [ -e "$gpu_device" ] || mknod "$gpu_device" c 195 0
  printf '%s\nAutoDetect=off\nNodeName=%s Name=gpu File=%s Flags=nvidia_gpu_env\n' \
    "$marker" "$gpu_node" "$gpu_device" | replace_if_changed "$gresconf"
  replace_if_changed "$dbdconf" <<EOF
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

start_node() {  # start_node NAME: its slurmd in namespaces of its own (hostname, /tmp)
  local node=$1
  alive "$state/$node/slurmd.pid" && return 0
  unshare --mount --uts --propagation private sh -c "
    hostname $node &&
    mount --bind '$state/$node/tmp' /tmp &&
    mount --bind '$state/hosts' /etc/hosts &&
    exec slurmd -N $node"
}

nodes_in_service() {  # every node up and answering: idle, or busy with the jobs of a test module that started first
  local states node
  states=$(sinfo -h -N -o '%N %T' | sort -u)
  for node in $all_nodes; do
    grep -qxE "$node (idle|mixed|allocated|completing)" <<<"$states" || return 1
  done
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

  alive "$state/slurmdbd.pid" || slurmdbd
  wait_for 30 slurmdbd sacctmgr -n list cluster
  sacctmgr -i add cluster "$cluster" >/dev/null 2>&1 || true
  sacctmgr -i add account "$cluster" Description=tests Organization=snnbench >/dev/null 2>&1 || true
  sacctmgr -i add user root Account="$cluster" DefaultAccount="$cluster" >/dev/null 2>&1 || true

  alive "$state/slurmctld.pid" || slurmctld
  wait_for 30 slurmctld scontrol ping
  local node
  for node in $all_nodes; do start_node "$node"; done
  wait_for 60 "nodes $all_nodes in service" nodes_in_service
  log "up: $(sinfo -h -o '%P %D nodes (%N) %c cpus %t')"
}

stop_slurm() {  # the SLURM daemons this script started, by their pid files
  local pidfiles=("$state"/*/slurmd.pid "$state/slurmd.pid" "$state/slurmctld.pid" "$state/slurmdbd.pid")
  local pidfile pids=()
  for pidfile in "${pidfiles[@]}"; do
    if alive "$pidfile"; then pids+=("$(cat "$pidfile")"); fi
  done
  [ ${#pids[@]} = 0 ] && return 0
  kill "${pids[@]}" 2>/dev/null || true
  wait_for 20 "SLURM daemons to stop" sh -c "for p in ${pids[*]}; do kill -0 \$p 2>/dev/null && exit 1; done; exit 0" || kill -9 "${pids[@]}" 2>/dev/null || true
}

stop() {
  stop_slurm
  mysqladmin shutdown 2>/dev/null || true
  if alive /run/munge/munged.pid; then
    kill "$(cat /run/munge/munged.pid)"
    wait_for 10 "munged to stop" sh -c '! pgrep -x munged' || true
  fi
  log "stopped"
}

node_pids() {  # node_pids NODE: every process of the node (its slurmd's UTS namespace)
  local ns pid
  ns=$(readlink "/proc/$(cat "$state/$1/slurmd.pid")/ns/uts")
  # A slurmd in this machine's own namespace would make every process "of the node".
  [ "$ns" != "$(readlink /proc/$$/ns/uts)" ] || { log "$1 has no namespace of its own"; exit 1; }
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/ns/uts" 2>/dev/null)" = "$ns" ] && echo "$pid"
  done
  return 0
}

lose() {  # lose NODE: the node crashes (slurmd, step daemons, tasks) and slurmctld marks it DOWN
  local node=$1
  alive "$state/$node/slurmd.pid" || { log "$node is not running"; exit 1; }
  kill -9 $(node_pids "$node") 2>/dev/null || true
  scontrol update NodeName="$node" State=DOWN Reason="node lost (cluster.sh lose)"
  log "lost $node: $(sinfo -h -n "$node" -o %T)"
}

restore() {  # restore NODE: its slurmd again, and the node back in service
  local node=$1
  start_node "$node"
  scontrol update NodeName="$node" State=RESUME 2>/dev/null || true
  wait_for 60 "$node idle" sh -c "[ \"\$(sinfo -h -n $node -o %T)\" = idle ]"
  log "restored $node"
}

status() {
  local node
  printf '%-12s %s\n' munged "$(pgrep -x munged >/dev/null && echo running || echo stopped)"
  printf '%-12s %s\n' mariadbd "$(pgrep -x mariadbd >/dev/null && echo running || echo stopped)"
  printf '%-12s %s\n' slurmdbd "$(alive "$state/slurmdbd.pid" && echo running || echo stopped)"
  printf '%-12s %s\n' slurmctld "$(alive "$state/slurmctld.pid" && echo running || echo stopped)"
  for node in $all_nodes; do
    printf '%-12s %s\n' "slurmd $node" "$(alive "$state/$node/slurmd.pid" && echo running || echo stopped)"
  done
  sinfo -N 2>/dev/null || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  lose) lose "${2:?usage: $0 lose NODE}" ;;
  restore) restore "${2:?usage: $0 restore NODE}" ;;
  *) echo "usage: $0 start|stop|status|lose NODE|restore NODE" >&2; exit 2 ;;
esac
