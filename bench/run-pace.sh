#!/bin/sh
# run-pace.sh: what bisectd spends per run beyond the engine's own time.
# Benches the demo's fastest release (basert 0.2.0, about 28 ms a run at
# pp128) through `bisectctl bench`, twice: RUNS runs and 2 x RUNS runs,
# so that start-up, unpacking and the first busy sample cancel out, and
# prints the wall time per run beside the engine's time per run (the
# runner's wall_ns, stored with each run) and their ratio, at max-busy
# 100% (no busy sampling) and at 25% (busy share between runs).
#
# Usage: bench/run-pace.sh [BUILD_DIR]     (default: build)
#   RUNS=N       runs of the shorter bench (default 40)
#   MAX_WAIT=D   max-wait (default 0s: never wait, only flag)
# Needs: the build's bisectd/bisectctl, demo/ (the demo target) and jq.
set -eu

. "$(dirname "$0")/demo-lib.sh"
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-40}
max_wait=${MAX_WAIT:-0s}
ctl=$build/bisectd/bisectctl

command -v jq >/dev/null || { echo "jq is needed" >&2; exit 1; }
[ -x "$ctl" ] || { echo "no $ctl: build first" >&2; exit 1; }
[ -f "$build/demo/releases/basert-0.2.0.tar.gz" ] ||
    { echo "no demo releases in $build: build the demo target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

conf() {	# $1: max-busy
	{
		cat <<CONF
[bisectd]
	database = pace.db
	cache = cache
	max-busy = $1
	max-wait = $max_wait
[weights "demo"]
	path = $build/demo/weights.bin
CONF
		demo_engine basert "$build/demo/releases"
		printf '\twarmup = 0\n\ttimeout = 1m\n'
	} > "$tmp/pace.conf"
}

bench() {	# $1: reps; prints the wall ms the command took
	t0=$(now_ms)
	"$ctl" -c "$tmp/pace.conf" bench basert 0.2.0 --prompts 128 \
	    --reps "$1" --format json > /dev/null 2>&1
	echo $(( $(now_ms) - t0 ))
}

for busy in 100% 25%; do
	rm -f "$tmp"/pace.db*
	conf "$busy"
	bench 1 > /dev/null	# unpack, pin the weights
	short=$(bench "$runs")
	long=$(bench $((2 * runs)))
	engine=$("$ctl" -c "$tmp/pace.conf" runs basert 0.2.0 --format json |
	    jq '[.[] | select(.failure == null) | .wall_ns] | add / length / 1e6')
	awk -v s="$short" -v l="$long" -v n="$runs" -v e="$engine" -v b="$busy" \
	    'BEGIN { w = (l - s) / n;
	    printf "max-busy %-4s  wall %8.2f ms per run, engine %7.2f ms per run: ratio %.2f, %.2f ms per run beyond the engine\n",
	    b, w, e, w / e, w - e }'
done
printf 'load average %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
