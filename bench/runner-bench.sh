#!/bin/sh
# runner-bench.sh: is the runner's clock honest, and is it cheap?  Times
# the same command through the runner (runner-bench) and through
# hyperfine, in A B B A blocks so that drift on a shared machine hits both
# alike, and prints both means and their ratio (goal: within 2%), and the
# medians' ratio, which one disturbed run on a shared machine moves less.  Then
# the runner's overhead per run on /bin/true, alternated run by run with a
# bare posix_spawn + wait4 (goal: under 1 ms), the runner's own timing of
# /bin/true against that bare spawn + wait (goal: within 0.3 ms: the run's
# clock holds the program, not the harness), medians, beside hyperfine's
# own figure for /bin/true.
#
# Usage: bench/runner-bench.sh [BUILD_DIR]     (default: build)
#   RUNS=N        runs per block of the main command (default 15)
#   TRUE_RUNS=N   runs of /bin/true (default 2000)
# Needs: hyperfine; the build's bench/runner-bench, and tests/fake-engine
# for the main command (else a CPU-bound shell loop stands in).
set -eu

build=${1:-build}
runs=${RUNS:-15}
true_runs=${TRUE_RUNS:-2000}
rb=$build/bench/runner-bench
fe=$build/tests/fake-engine

command -v hyperfine >/dev/null || { echo "hyperfine is needed" >&2; exit 1; }
[ -x "$rb" ] || { echo "no $rb: build the runner-bench target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ -x "$fe" ]; then
	printf '%s\n' "version = bench" "fixed_us = 20000" \
	    "prefill_us_per_token = 200" "decode_us_per_token = 1000" \
	    > "$tmp/release.conf"
	echo "pinned weights" > "$tmp/weights.bin"
	set -- "$fe" -m "$tmp/weights.bin" -p 512 -n 0 -r 1 \
	    --release "$tmp/release.conf"
	cmd="$*"	# hyperfine splits it again: no blanks in these paths
	what="fake-engine pp512 (20 ms fixed + 512 x 0.2 ms of CPU work)"
else
	# shellcheck disable=SC2016 # the loop's $i is for that shell
	loop='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'
	set -- sh -c "$loop"
	cmd="sh -c '$loop'"
	what="a CPU-bound shell loop (no fake-engine in $build)"
fi

# key=value output of runner-bench: the value of key $2 in file $1
get() { sed -n "s/^$2=//p" "$1"; }

runner_block() {	# $1: output file; the rest: the command
	out=$1
	shift
	"$rb" -n "$runs" -w 2 -- "$@" > "$out"
}

hyperfine_block() {	# $1: csv file
	hyperfine -N --style none --warmup 2 --runs "$runs" \
	    --export-csv "$1" "$cmd" > /dev/null 2>&1
}

# mean in ms of a hyperfine csv (command,mean,stddev,median,user,system,
# min,max in seconds; the command may hold commas, so count from the end)
hmean() { awk -F, 'NR == 2 { printf "%.4f", $(NF-6) * 1000 }' "$1"; }
hsd() { awk -F, 'NR == 2 { printf "%.4f", $(NF-5) * 1000 }' "$1"; }
hmedian() { awk -F, 'NR == 2 { printf "%.4f", $(NF-4) * 1000 }' "$1"; }
avg2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (a + b) / 2 }'; }

echo "runner vs hyperfine on $what"
echo "  $cmd"
runner_block "$tmp/r1" "$@"
hyperfine_block "$tmp/h1.csv"
hyperfine_block "$tmp/h2.csv"
runner_block "$tmp/r2" "$@"

r_mean=$(avg2 "$(get "$tmp/r1" runner_mean_ms)" "$(get "$tmp/r2" runner_mean_ms)")
h_mean=$(avg2 "$(hmean "$tmp/h1.csv")" "$(hmean "$tmp/h2.csv")")
ratio=$(awk -v r="$r_mean" -v h="$h_mean" 'BEGIN { printf "%.4f", r / h }')
r_med=$(avg2 "$(get "$tmp/r1" runner_median_ms)" "$(get "$tmp/r2" runner_median_ms)")
h_med=$(avg2 "$(hmedian "$tmp/h1.csv")" "$(hmedian "$tmp/h2.csv")")
med_ratio=$(awk -v r="$r_med" -v h="$h_med" 'BEGIN { printf "%.4f", r / h }')
verdict=$(awk -v q="$ratio" 'BEGIN { d = q - 1; if (d < 0) d = -d;
    print (d <= 0.02 ? "within 2%: met" : "outside 2%: missed") }')
printf '  runner     mean %10.3f ms  (blocks %.3f, %.3f; sd %.3f, %.3f; %s runs each; isolation %s)\n' \
    "$r_mean" "$(get "$tmp/r1" runner_mean_ms)" "$(get "$tmp/r2" runner_mean_ms)" \
    "$(get "$tmp/r1" runner_sd_ms)" "$(get "$tmp/r2" runner_sd_ms)" "$runs" \
    "$(get "$tmp/r1" isolation)"
printf '  hyperfine  mean %10.3f ms  (blocks %.3f, %.3f; sd %.3f, %.3f; %s runs each)\n' \
    "$h_mean" "$(hmean "$tmp/h1.csv")" "$(hmean "$tmp/h2.csv")" \
    "$(hsd "$tmp/h1.csv")" "$(hsd "$tmp/h2.csv")" "$runs"
printf '  ratio      %s of the means (%s); %s of the medians (%.3f / %.3f ms)\n' \
    "$ratio" "$verdict" "$med_ratio" "$r_med" "$h_med"

echo
echo "runner overhead on /bin/true ($true_runs runs, alternated with a bare posix_spawn + wait4)"
"$rb" -n "$true_runs" -w 20 -b -- /bin/true > "$tmp/t"
hyperfine -N --style none --warmup 20 --runs "$true_runs" \
    --export-csv "$tmp/ht.csv" /bin/true > /dev/null 2>&1
over=$(get "$tmp/t" overhead_median_ms)
verdict=$(awk -v o="$over" 'BEGIN { print (o < 1 ? "under 1 ms: met" : "1 ms or more: missed") }')
r_true=$(get "$tmp/t" runner_median_ms)
b_true=$(get "$tmp/t" bare_median_ms)
clock=$(awk -v r="$r_true" -v b="$b_true" 'BEGIN { d = r - b; if (d < 0) d = -d;
    printf "%.3f ms apart, ratio %.4f: %s", d, r / b,
    d <= 0.3 ? "within 0.3 ms: met" : "more than 0.3 ms: missed" }')
printf '  run_child call     %.3f ms median, %.3f ms mean (all of it: cgroup, pipes, spawn, wait, reaping)\n' \
    "$(get "$tmp/t" call_median_ms)" "$(get "$tmp/t" call_mean_ms)"
printf '  bare spawn + wait  %.3f ms median, %.3f ms mean\n' \
    "$b_true" "$(get "$tmp/t" bare_mean_ms)"
printf '  overhead           %.3f ms median, %.3f ms mean per run (%s; isolation %s)\n' \
    "$over" "$(get "$tmp/t" overhead_mean_ms)" "$verdict" \
    "$(get "$tmp/t" isolation)"
printf '  runner clock       %.3f ms median for /bin/true vs %.3f ms bare: %s\n' \
    "$r_true" "$b_true" "$clock"
printf '  hyperfine          %.3f ms mean for /bin/true (its own spawn and wait)\n' \
    "$(hmean "$tmp/ht.csv")"
printf '  load average       %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
