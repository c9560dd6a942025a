#!/bin/sh
# fuzz.sh [SECONDS [TARGET...]]: builds the libFuzzer targets of tests/fuzz
# with clang (AddressSanitizer + UndefinedBehaviorSanitizer) in build-fuzz
# and runs each for SECONDS (default 20, as many at once as there are
# cores), or only the TARGETs named
# (cron, version, template, sha256sums, http, github, parse, config,
# unpack, text, canary, result, route, slurm, node, git).  Each starts
# from its seeds in tests/fuzz/corpus/TARGET and from what earlier runs
# found, kept in build-fuzz/corpus/TARGET.
#
# A crash, a broken property, a leak, an input slower than 60 s or one
# that takes more than 2 GB fails the run; the input is kept in
# build-fuzz/crashes/TARGET/ (crash-*, leak-*, timeout-*, oom-*) and
# the command that replays it is printed.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-cron version template sha256sums http github parse config unpack text canary result route slurm node git sse}
dir=build-fuzz
jobs=$(nproc 2>/dev/null || echo 2)

CC=clang cmake -S . -B "$dir" -DBISECTD_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j "$jobs" >/dev/null

# Run one target; its report goes to $dir/fuzz_TARGET.result, 1 more line
# to $dir/fuzz_TARGET.failed if it failed.
run_one() {
	t=$1
	bin=$dir/tests/fuzz/fuzz_$t
	seeds=tests/fuzz/corpus/$t
	out=$dir/fuzz_$t.result
	rm -f "$out" "$dir/fuzz_$t.failed"
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "fuzz_$t: no such target" >"$out"
		echo >"$dir/fuzz_$t.failed"
		return
	fi
	corpus=$dir/corpus/$t
	crashes=$dir/crashes/$t
	log=$dir/fuzz_$t.log
	# A target's scratch folder: libFuzzer may end it without its
	# exit handlers, so the folder is emptied here.
	tmp=$dir/tmp/$t
	rm -rf "$tmp"
	mkdir -p "$corpus" "$crashes" "$tmp"
	# New inputs go to the first folder; the seeds are only read.
	if TMPDIR=$tmp ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    "$bin" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
	    -artifact_prefix="$crashes/" -print_final_stats=1 \
	    "$corpus" "$seeds" >"$log" 2>&1; then
		rm -rf "$tmp"
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "fuzz_$t: ok, ${runs:-?} inputs in ${secs} s" >"$out"
		return
	fi
	echo >"$dir/fuzz_$t.failed"
	found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" |
		tail -n 1)
	{
		echo "fuzz_$t: FAILED; log $log"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|property broken)' "$log" |
			head -n 3 || true
		if [ -n "$found" ]; then
			echo "  input kept in $found; replay with:"
			echo "  $bin $found"
		fi
	} >"$out"
}

# As many targets at once as there are cores, each for SECONDS.
status=0
set -- $targets
while [ $# -gt 0 ]; do
	batch=""
	while [ $# -gt 0 ] && [ "$(echo $batch | wc -w)" -lt "$jobs" ]; do
		batch="$batch $1"
		shift
	done
	for t in $batch; do
		run_one "$t" &
	done
	wait
	for t in $batch; do
		if [ -e "$dir/fuzz_$t.failed" ]; then
			status=1
			cat "$dir/fuzz_$t.result" >&2
		else
			cat "$dir/fuzz_$t.result"
		fi
	done
done
exit $status
