#!/bin/sh
# slurm-bench.sh: four bisects of the demo's releases, each its own engine
# (a copy of basert under another name) and database, run at once through
# a slurm runner on a single-host cluster started here, against the same
# four run one after the other with the local runner.  Prints both wall
# times and their ratio, and checks every bisect named the same first bad
# release.
#
# Usage: bench/slurm-bench.sh [BUILD_DIR]    (default: build)
#   RANGE=A..B   the range bisected (default 0.2.0..0.2.6)
# Needs root (slurmd), slurm-wlm and munge, and the build's demo target.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
range=${RANGE:-0.2.0..0.2.6}
ctl=$build/bisectd/bisectctl

[ -x "$ctl" ] || { echo "no $ctl: build first" >&2; exit 1; }
[ -f "$build/demo/releases/basert-0.2.0.tar.gz" ] ||
    { echo "no demo releases in $build: build the demo target" >&2; exit 1; }
tmp=$(mktemp -d)
cluster=$tmp/cluster
trap 'sh "$src/tests/slurm-cluster.sh" stop "$cluster"; rm -rf "$tmp"' EXIT INT TERM
eval "$(sh "$src/tests/slurm-cluster.sh" start "$cluster")"
export SLURM_CONF

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

conf() {	# $1: engine name, $2: local or slurm
	cat > "$tmp/$1-$2.conf" <<CONF
[bisectd]
	database = $1-$2.db
	cache = cache-$1-$2
	max-busy = 100%
[weights "demo"]
	path = $build/demo/weights.bin
[engine "$1"]
	source = dir:$build/demo/releases
	asset = basert-{version}.tar.gz
	command = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -t 1 -r 1 -o json
	parser = llama-bench
	prompts = 128,512
	gen = 16
	timeout = 1m
	runner = $2
[runner "local"]
	kind = local
[runner "slurm"]
	kind = slurm
	spool = spool
	# one job per core: the box has as many as Slurm's node
	exclusive = no
CONF
}

first_bad() {	# $1: engine, $2: local or slurm
	"$ctl" -c "$tmp/$1-$2.conf" --format json report "$1" "$range" |
	    sed -n 's/.*"first_bad": *"\([^"]*\)".*/\1/p' | head -1
}

engines="e1 e2 e3 e4"
cd "$tmp"
for e in $engines; do conf $e local; conf $e slurm; done

t0=$(now_ms)
for e in $engines; do
	"$ctl" -c "$e-local.conf" bisect --now "$e" "$range" >/dev/null 2>&1 || true
done
local_ms=$(( $(now_ms) - t0 ))

t0=$(now_ms)
pids=""
for e in $engines; do
	"$ctl" -c "$e-slurm.conf" bisect --now "$e" "$range" >/dev/null 2>&1 &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || true; done
slurm_ms=$(( $(now_ms) - t0 ))

for e in $engines; do
	echo "$e: first bad $(first_bad $e local) local, $(first_bad $e slurm) slurm"
done
echo "4 bisects of $range: one after the other locally ${local_ms} ms;" \
    "at once through Slurm ${slurm_ms} ms;" \
    "ratio $(awk -v a=$slurm_ms -v b=$local_ms 'BEGIN { printf "%.2f", a / b }')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
