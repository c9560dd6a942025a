#!/bin/sh
# slurm-bench.sh: four bisects of the demo's releases, each its own engine
# (a copy of basert under another name), queued together on one daemon
# whose engines are measured through a slurm runner (max-jobs = 4) on a
# single-host cluster started here, against the same four run one after
# the other with the local runner.  Each side runs RUNS times from a
# fresh database and cache; prints every wall time, the medians and
# their ratio, and checks every bisect named the same first bad release.
#
# Usage: bench/slurm-bench.sh [BUILD_DIR]    (default: build)
#   RANGE=A..B   the range bisected (default 0.2.0..0.2.6)
#   RUNS=N       repetitions of each side (default 3)
# Needs root (slurmd), slurm-wlm and munge, and the build's demo target.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/bench/demo-lib.sh"
build=$(cd "${1:-build}" && pwd)
range=${RANGE:-0.2.0..0.2.6}
runs=${RUNS:-3}
ctl=$build/bisectd/bisectctl
daemon=$build/bisectd/bisectd

[ -x "$ctl" ] && [ -x "$daemon" ] || { echo "no $ctl or $daemon: build first" >&2; exit 1; }
[ -f "$build/demo/releases/basert-0.2.0.tar.gz" ] ||
    { echo "no demo releases in $build: build the demo target" >&2; exit 1; }
tmp=$(mktemp -d)
cluster=$tmp/cluster
dpid=
cleanup() {
	[ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true
	sh "$src/tests/lib/slurm-cluster.sh" stop "$cluster"
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
eval "$(sh "$src/tests/lib/slurm-cluster.sh" start "$cluster")"
export SLURM_CONF

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
engines="e1 e2 e3 e4"

conf() {	# $1: folder, $2: local or slurm
	{
		cat <<CONF
[bisectd]
	database = bench.db
	cache = cache
	socket = bisectd.sock
	max-busy = 100%
[weights "demo"]
	path = $build/demo/weights.bin
[runner "slurm"]
	kind = slurm
	spool = spool
	max-jobs = 4
	# Slurm may start two on this 2-core node; the node's benchmark
	# lock still runs one measurement at a time there.
	exclusive = no
CONF
		for e in $engines; do
			demo_engine "$e" "$build"
			echo "	timeout = 1m"
			[ "$2" = local ] || echo "	runner = slurm"
		done
	} > "$1/bench.conf"
}

first_bad() {	# $1: folder, $2: engine
	"$ctl" -c "$1/bench.conf" --format json report "$2" "$range" |
	    sed -n 's/.*"first_bad": *"\([^"]*\)".*/\1/p' | head -1
}

median() {	# the numbers on stdin
	sort -n | awk '{ v[NR] = $1 }
	    END { if (NR % 2) print v[(NR + 1) / 2]
		  else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# One after the other on this machine, as bisect --now.
run_local() {	# $1: folder; sets ms
	t0=$(now_ms)
	for e in $engines; do
		"$ctl" -c "$1/bench.conf" bisect --now "$e" "$range" \
		    >/dev/null 2>>"$1/bench.log" || true
	done
	ms=$(( $(now_ms) - t0 ))
}

# All four queued on a daemon that runs them at once through Slurm.
run_slurm() {	# $1: folder; sets ms
	"$daemon" -c "$1/bench.conf" 2>>"$1/daemon.log" &
	dpid=$!
	t0=$(now_ms)
	for e in $engines; do
		"$ctl" -c "$1/bench.conf" bisect "$e" "$range" \
		    >/dev/null 2>>"$1/bench.log"
	done
	while "$ctl" -c "$1/bench.conf" --format json status 2>/dev/null |
	    grep -q '"state": "\(queued\|running\)"'; do
		sleep 0.2
	done
	ms=$(( $(now_ms) - t0 ))
	kill "$dpid"
	wait "$dpid" || true
	dpid=
}

lms= sms=
i=1
while [ $i -le "$runs" ]; do
	for side in local slurm; do
		d=$tmp/$side-$i
		mkdir -p "$d"
		conf "$d" $side
		run_$side "$d"
		for e in $engines; do
			fb=$(first_bad "$d" $e)
			[ "$fb" = 0.2.4 ] || echo "warning: $side run $i: $e's first bad is '$fb', not 0.2.4" >&2
		done
		echo "run $i: $side $ms ms"
		if [ $side = local ]; then lms="$lms $ms"; else sms="$sms $ms"; fi
	done
	i=$((i + 1))
done
lm=$(echo $lms | tr ' ' '\n' | median)
sm=$(echo $sms | tr ' ' '\n' | median)
echo "4 bisects of $range, median of $runs: one after the other locally" \
    "${lm} ms; at once through Slurm (one node, 2 cores) ${sm} ms;" \
    "ratio slurm/local $(awk -v a="$sm" -v b="$lm" 'BEGIN { printf "%.2f", a / b }')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
