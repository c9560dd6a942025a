#!/bin/sh
# slurm-bench.sh: four bisects of the demo's releases, each its own engine
# (a copy of basert under another name), queued together on one daemon
# whose engines are measured through a slurm runner (max-jobs = 4) on a
# single-host cluster started here, against the same four run one after
# the other with the local runner.  Each side runs RUNS times from a
# fresh database and cache; prints every wall time, the medians and
# their ratio, and checks every bisect named the same first bad release.
#
# MATRIX=1: the same four bisects as one matrix (docs/fleet.md) of two
# machine classes by two weights files, on a two-node cluster of two
# partitions, against its four cells bisected one after another with
# local runners; counts the squeue and scontrol calls the daemon makes.
#
# Usage: bench/slurm-bench.sh [BUILD_DIR]    (default: build)
#   RANGE=A..B   the range bisected (default 0.2.0..0.2.6)
#   RUNS=N       repetitions of each side (default 3)
#   MATRIX=1     the matrix instead of four engines
#   KEEP=1       leave the temporary folder (each run's calls.log: the
#                squeue and scontrol calls with their first arguments)
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
# The demo's releases timed by the CPU clock: a busy machine slows the
# bisects down, never turns a verdict.
releases=$build/tests/demo-cpu
[ -f "$releases/basert-0.2.0.tar.gz" ] ||
    { echo "no $releases: build the fake-releases target" >&2; exit 1; }
tmp=$(mktemp -d)
cluster=$tmp/cluster
dpid=
cleanup() {
	[ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true
	sh "$src/tests/lib/slurm-cluster.sh" stop "$cluster"
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
matrix=${MATRIX:-0}
if [ "$matrix" = 1 ]; then
	eval "$(sh "$src/tests/lib/slurm-cluster.sh" start "$cluster" c1 c2)"
else
	eval "$(sh "$src/tests/lib/slurm-cluster.sh" start "$cluster")"
fi
export SLURM_CONF
# squeue and scontrol counted: each call appends its name to calls.log.
mkdir -p "$tmp/shim"
for t in squeue scontrol; do
	real=$(command -v $t)
	printf '#!/bin/sh\necho "%s $1 $2" >> %s/calls.log\nexec %s "$@"\n' \
	    $t "$tmp" "$real" > "$tmp/shim/$t"
	chmod +x "$tmp/shim/$t"
done
PATH=$tmp/shim:$PATH
cp "$build/demo/weights.bin" "$tmp/weights2.bin"

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
		if [ "$matrix" = 1 ]; then
			printf '[weights "w2"]\n\tpath = %s/weights2.bin\n' "$tmp"
			for c in c1 c2; do
				printf '[runner "%s"]\n\tkind = %s\n' $c $2
				[ "$2" = local ] || printf '\tspool = spool\n\t%s\n\t%s\n' \
				    "partition = $c" "max-jobs = 2"
			done
			demo_engine fleet "$releases"
			printf '\ttimeout = 1m\n\trunner = c1, c2\n'
			printf '\tweights = demo, w2\n'
			return
		fi
		for e in $engines; do
			demo_engine "$e" "$releases"
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
[ "$matrix" = 1 ] && engines=fleet

# All four queued on a daemon that runs them at once through Slurm.
run_slurm() {	# $1: folder; sets ms
	"$daemon" -c "$1/bench.conf" 2>>"$1/daemon.log" &
	dpid=$!
	t0=$(now_ms)
	for e in $engines; do
		"$ctl" -c "$1/bench.conf" bisect "$e" "$range" \
		    >/dev/null 2>>"$1/bench.log"
	done
	: > "$tmp/calls.log"
	while "$ctl" -c "$1/bench.conf" --format json status 2>/dev/null |
	    grep -q '"state": "\(queued\|running\)"'; do
		sleep 0.2
	done
	ms=$(( $(now_ms) - t0 ))
	calls="$calls $(grep -c '^squeue ' "$tmp/calls.log")"
	others="$others $(grep -vc '^squeue ' "$tmp/calls.log")"
	cp "$tmp/calls.log" "$1/calls.log"
	kill "$dpid"
	wait "$dpid" || true
	dpid=
}

lms= sms= calls= others=
i=1
while [ $i -le "$runs" ]; do
	for side in local slurm; do
		d=$tmp/$side-$i
		mkdir -p "$d"
		conf "$d" $side
		run_$side "$d"
		if [ "$matrix" = 1 ]; then
			cells="fleet/c1/demo fleet/c1/w2 fleet/c2/demo fleet/c2/w2"
		else
			cells=$engines
		fi
		for e in $cells; do
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
if [ "$matrix" = 1 ]; then
	what="a matrix of 2 classes x 2 weights ($range), median of $runs:"
	what="$what its 4 cells one after the other locally ${lm} ms; at once"
	what="$what through Slurm (2 nodes of 2 partitions, 2 cores) ${sm} ms"
else
	what="4 bisects of $range, median of $runs: one after the other"
	what="$what locally ${lm} ms; at once through Slurm (one node, 2 cores)"
	what="$what ${sm} ms"
fi
echo "$what; ratio slurm/local $(awk -v a="$sm" -v b="$lm" 'BEGIN { printf "%.2f", a / b }')"
# One squeue a poll of every 0.5 s, however many jobs are in flight
# (scontrol only for a job squeue does not list, and a pinned node).
set -- $others
k=1
for ms in $sms; do
	c=$(echo $calls | cut -d' ' -f$k)
	echo "slurm run $k: $c squeue calls in $ms ms, $(awk -v c="$c" \
	    -v t="$ms" 'BEGIN { printf "%.2f", c / (t / 1000) }') a second" \
	    "(one a poll every 0.5 s is 2.00), and $1 scontrol calls"
	shift
	k=$((k + 1))
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
