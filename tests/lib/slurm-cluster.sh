#!/bin/sh
# slurm-cluster.sh: a private single-host Slurm cluster for the tests.
#
#   sh tests/lib/slurm-cluster.sh start DIR   # prints SLURM_CONF=DIR/slurm.conf
#   sh tests/lib/slurm-cluster.sh start DIR CLASS...
#   sh tests/lib/slurm-cluster.sh stop DIR
#
# With no CLASS, one node named after this host in partition "bench".
# With classes, one node per CLASS, bt1, bt2 ..., each its own slurmd on
# its own loopback address (127.0.0.2, .3 ...) and port, with its class
# as its feature; a partition per class holds its nodes, and "bench"
# holds them all.  "m1 m2 m1" is two classes, m1 on bt1 and bt3.
# Everything lives under DIR: its own munged (own socket and key), a
# slurmctld and a slurmd on two free ports, their state, spool and logs,
# so two copies (two test runs) do not meet.  Needs root (slurmd runs
# jobs as their users) and Debian's slurm-wlm and munge; exits 77 when it
# cannot run here, saying why.
set -eu

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
	echo "usage: slurm-cluster.sh start|stop DIR" >&2
	exit 2
}

stop_pid() {
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$1"
}

if [ "$cmd" = stop ]; then
	for f in "$dir"/slurmd*.pid; do
		stop_pid "$f"
	done
	stop_pid "$dir/slurmctld.pid"
	stop_pid "$dir/munged.pid"
	exit 0
fi
[ "$cmd" = start ] || { echo "slurm-cluster.sh: unknown command '$cmd'" >&2; exit 2; }
shift 2
nodes=$#

if [ "$(id -u)" != 0 ]; then
	echo "slurm-cluster.sh: not root: slurmd needs root to run jobs" >&2
	exit 77
fi
for t in munged slurmctld slurmd sbatch scontrol scancel sinfo; do
	if ! command -v "$t" >/dev/null 2>&1 &&
	    ! [ -x "/usr/sbin/$t" ]; then
		echo "slurm-cluster.sh: $t missing (apt-get install slurm-wlm munge)" >&2
		exit 77
	fi
done
PATH=$PATH:/usr/sbin
# slurmd starts its cgroup plugin whatever the process tracking, and
# fails without the cgroup filesystem (a chroot without /sys).
if ! awk '$2 == "/sys/fs/cgroup" { f = 1 } END { exit !f }' /proc/mounts; then
	echo "slurm-cluster.sh: no cgroup filesystem at /sys/fs/cgroup," \
	    "which slurmd needs (mount /sys)" >&2
	exit 1
fi

mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
chmod 0700 "$dir/munge"

# A port nobody listens on, in /proc/net/tcp's hex; two in a row.
listening() {
	hex=$(printf '%04X' "$1")
	awk -v p="$hex" 'NR > 1 { split($2, a, ":"); if (a[2] == p && $4 == "0A") f = 1 }
	    END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# A port nobody listens on, and one for each slurmd after it.
free_run() {
	k=0
	while [ $k -le "$nodes" ]; do
		listening $(($1 + k)) && return 1
		k=$((k + 1))
	done
	return 0
}
port=$((20000 + ($$ % 20000) * 2 % 20000))
while ! free_run $port; do
	port=$((port + nodes + 2))
	[ $port -lt 65000 ] || port=20000
done

# munged: a key of our own, its socket in DIR.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 0400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" \
	--socket="$dir/munge/munge.sock" --pid-file="$dir/munged.pid" \
	--log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed"

# The node's name is this host's, its address loopback: the cluster
# needs no name service (a fresh root may not resolve its own name).
host=$(hostname -s)
cpus=$(nproc)
cat > "$dir/slurm.conf" <<CONF
ClusterName=bisectd-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=3600
ReturnToService=2
MpiDefault=none
CONF
if [ "$nodes" = 0 ]; then
	mkdir -p "$dir/spool/$host"
	cat >> "$dir/slurm.conf" <<CONF
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=bench Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
else
	# The host's cores shared out; slurmd counts them all for each.
	each=$((cpus / nodes))
	[ $each -ge 1 ] || each=1
	k=1
	for class in "$@"; do
		mkdir -p "$dir/spool/bt$k"
		echo "NodeName=bt$k NodeHostname=$host NodeAddr=127.0.0.$((k + 1))" \
		    "Port=$((port + 1 + k)) CPUs=$each Features=$class" \
		    "State=UNKNOWN" >> "$dir/slurm.conf"
		k=$((k + 1))
	done
	echo "PartitionName=bench Nodes=bt[1-$nodes] Default=YES" \
	    "MaxTime=INFINITE State=UP" >> "$dir/slurm.conf"
	for class in $(printf '%s\n' "$@" | sort -u); do
		list= k=1
		for c in "$@"; do
			[ "$c" = "$class" ] && list=$list${list:+,}bt$k
			k=$((k + 1))
		done
		echo "PartitionName=$class Nodes=$list MaxTime=INFINITE" \
		    "State=UP" >> "$dir/slurm.conf"
	done
fi
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i -f "$SLURM_CONF"
if [ "$nodes" = 0 ]; then
	slurmd -f "$SLURM_CONF"
else
	k=1
	while [ $k -le "$nodes" ]; do
		slurmd -f "$SLURM_CONF" -N "bt$k"
		k=$((k + 1))
	done
fi
want=$nodes
[ "$want" -gt 0 ] || want=1
i=0
until [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' |
    sort -u | wc -l)" -ge "$want" ]; do
	i=$((i + 1))
	if [ $i -gt 300 ]; then
		echo "slurm-cluster.sh: the nodes did not come up in 30 s;" \
		    "see $dir/log" >&2
		sh "$0" stop "$dir"
		exit 1
	fi
	sleep 0.1
done
echo "SLURM_CONF=$SLURM_CONF"
