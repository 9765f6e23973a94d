#!/usr/bin/env bash
# A one-node SLURM cluster on loopback, to test Snakemake's slurm executor without a real cluster
# (`make test-slurm`, tests/slurm_smoke.py). Debian bookworm (SLURM 22.05), run as root, no systemd
# needed. Daemons: munged, mariadbd (job accounting, so `sacct` and `sacctmgr` answer as on a real
# cluster), slurmdbd, slurmctld, slurmd. The node advertises what `slurmd -C` sees (CPUs, RealMemory)
# plus $GPUS fake GPUs (GRES whose device files are copies of /dev/null: slurmd drops file-less GPUs), so
# `--gpus=1` jobs get scheduled; they run on the CPU.
#
# `start` installs the Debian packages it needs if they are missing and remembers which it installed;
# `stop` stops the daemons it started and purges exactly those packages and the configuration it wrote,
# so the machine is left as it was found: a SLURM client left without a controller would add ~9 s to
# every later Snakemake start (the SLURM plugin asks `scontrol` for the cluster's configuration).
#
# Usage: local_slurm.sh start|stop|status
#   env: PARTITIONS="gpu cpu" (first is default)  ACCOUNT=local  GPUS=2  SLURM_USERS="root $SUDO_USER"
#        KEEP_PACKAGES=1: `stop` leaves the packages installed (faster restarts while developing)
# Logs: /var/log/slurm/*.log, /var/log/local_slurm_mariadb.log.  Idempotent: start twice is fine.
set -euo pipefail
PARTITIONS=${PARTITIONS:-gpu cpu}
ACCOUNT=${ACCOUNT:-local}
GPUS=${GPUS:-2}
SLURM_USERS=${SLURM_USERS:-root ${SUDO_USER:-}}
RUN=/run/local_slurm            # pidfiles of the daemons this script started
STARTED=$RUN/started            # one pidfile path a line: what `stop` may kill
STATE=/var/lib/local_slurm      # what `start` installed and wrote, for `stop` to take away
PACKAGES="slurmctld slurmd slurmdbd slurm-client munge mariadb-server"

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# start CMD... as a daemon unless its pidfile ($1) names a live process; remember that we started it
launch() {
  local pidfile=$1; shift
  if alive "$pidfile"; then echo "already running: $*"; return; fi
  "$@"
  for _ in $(seq 50); do alive "$pidfile" && break; sleep 0.2; done
  alive "$pidfile" || { echo "failed to start: $*" >&2; exit 1; }
  grep -qxF "$pidfile" "$STARTED" 2>/dev/null || echo "$pidfile" >> "$STARTED"
}

installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 == "ii" {print $2}' | sort; }

install() {
  mkdir -p $STATE
  command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null && return
  # keep the packages' init scripts from starting daemons during the install
  local prc=/usr/sbin/policy-rc.d tmp_prc=
  [[ -e $prc ]] || { printf '#!/bin/sh\nexit 101\n' > $prc; chmod +x $prc; tmp_prc=1; }
  installed_packages > $STATE/packages.before
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
  installed_packages | comm -13 $STATE/packages.before - > $STATE/packages.installed
  [[ -z $tmp_prc ]] || rm -f $prc
}

# Purge what install() added (and only that), and the configuration and state start() wrote.
uninstall() {
  [[ -s $STATE/packages.installed ]] || { rm -rf $STATE; return; }
  local prc=/usr/sbin/policy-rc.d tmp_prc=
  [[ -e $prc ]] || { printf '#!/bin/sh\nexit 101\n' > $prc; chmod +x $prc; tmp_prc=1; }
  # shellcheck disable=SC2046
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $(cat $STATE/packages.installed) >/dev/null
  [[ -z $tmp_prc ]] || rm -f $prc
  rm -rf /etc/slurm /var/lib/slurm /var/log/slurm /run/slurm /run/munge /var/log/local_slurm_mariadb.log \
    /var/lib/mysql /etc/mysql $RUN $STATE
  echo "purged the packages start installed"
}

write_configs() {
  local host node parts="" default=YES p
  host=$(hostname -s)
  node=$(slurmd -C | head -1)     # NodeName=<host> CPUs=.. Sockets.. RealMemory=..
  for p in $PARTITIONS; do
    parts+="PartitionName=$p Nodes=$host Default=$default MaxTime=INFINITE State=UP"$'\n'; default=NO
  done
  if [[ -f /etc/slurm/slurm.conf ]] && ! head -1 /etc/slurm/slurm.conf | grep -q "written by local_slurm.sh"; then
    echo "/etc/slurm/slurm.conf exists and was not written by this script: not touching a real SLURM" >&2; exit 1
  fi
  mkdir -p /etc/slurm /run/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
  chown slurm:slurm /run/slurm /var/lib/slurm/slurmctld /var/log/slurm
  cat > /etc/slurm/slurm.conf <<EOF
# written by local_slurm.sh: one node, loopback only
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# no cgroups in a container: track processes by /proc, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
# keep finished jobs visible to squeue for 10 min (the plugin's squeue status mode wants >= 120 s)
MinJobAge=600
ReturnToService=2
$node NodeAddr=127.0.0.1 Gres=gpu:$GPUS State=UNKNOWN
$parts
EOF
  # fake GPU device files: character devices 1:3 (= /dev/null), one per GPU
  for ((i = 0; i < GPUS; i++)); do [[ -c $RUN/fakegpu$i ]] || mknod $RUN/fakegpu$i c 1 3; done
  echo "NodeName=$host Name=gpu File=$RUN/fakegpu[0-$((GPUS - 1))]" > /etc/slurm/gres.conf
  cat > /etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=slurm
PidFile=/run/slurm/slurmdbd.pid
LogFile=/var/log/slurm/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm-local
StorageLoc=slurm_acct_db
EOF
  chown slurm:slurm /etc/slurm/slurmdbd.conf; chmod 600 /etc/slurm/slurmdbd.conf
}

start() {
  install
  mkdir -p $RUN /run/munge /run/mysqld
  touch /var/log/local_slurm_mariadb.log
  chown munge:munge /run/munge; chown mysql:mysql /run/mysqld /var/log/local_slurm_mariadb.log
  write_configs
  launch /run/munge/munged.pid runuser -u munge -- /usr/sbin/munged
  # MariaDB on its unix socket only (no TCP port)
  launch /run/mysqld/mysqld.pid bash -c 'mariadbd --user=mysql --skip-networking \
      --pid-file=/run/mysqld/mysqld.pid --log-error=/var/log/local_slurm_mariadb.log \
      2>>/var/log/local_slurm_mariadb.log &'
  for _ in $(seq 60); do mariadb -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
  mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm-local';
              GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
  launch /run/slurm/slurmdbd.pid slurmdbd
  for _ in $(seq 60); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
  # cluster, account and users must exist before slurmctld enforces associations
  sacctmgr -i add cluster local >/dev/null 2>&1 || true
  sacctmgr -i add account "$ACCOUNT" cluster=local >/dev/null 2>&1 || true
  for u in $SLURM_USERS; do sacctmgr -i add user "$u" account="$ACCOUNT" cluster=local >/dev/null 2>&1 || true; done
  launch /run/slurm/slurmctld.pid slurmctld
  launch /run/slurm/slurmd.pid slurmd
  local state
  for _ in $(seq 60); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
    [[ $state == idle ]] && { sinfo -N -o '%N %P %t %c %m %G'; return; }
    # a drain left in slurmctld's saved state by an earlier, different config: resume it
    [[ $state != drain* ]] || scontrol update nodename="$(hostname -s)" state=resume || true
    sleep 1
  done
  sinfo -R; echo "node did not become idle; see /var/log/slurm/" >&2; exit 1
}

stop() {
  local pidfile pid
  if [[ -s $STARTED ]]; then
    for pidfile in $(tac "$STARTED"); do       # reverse order: slurmd first, munged last
      alive "$pidfile" || continue
      pid=$(cat "$pidfile"); kill "$pid"
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      echo "stopped $pidfile ($pid)"
    done
    rm -f "$STARTED"
  else
    echo "no daemon started by this script"
  fi
  [[ ${KEEP_PACKAGES:-0} == 1 ]] || uninstall
}

status() {
  local f; for f in $(cat "$STARTED" 2>/dev/null); do alive "$f" && echo "up   $f" || echo "down $f"; done
  sinfo -N -o '%N %P %t %c %m %G' 2>/dev/null || true
}

case ${1:-} in
  start|stop|status) "$1" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
