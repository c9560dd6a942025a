#!/bin/sh
# report-bench.sh: how long `bisectctl report` takes on a long history.
# Builds a store of RELEASES releases (1000) with RUNS runs each (100, so
# 100,000 in all; bench/report-store), then times the report of the whole
# range as HTML (goal: under 1 s) and as JSON (goal: under 100 ms),
# alternating the two with a baseline measured in the same run: the
# sqlite3 shell reading the same runs and samples (every run's cell and
# every sample's time, the rows the report is built from).  Prints the
# median of REPS timings of each, and each report's ratio to the
# baseline, which moves less than the absolute times on a shared machine.
# The reports read the summaries the store keeps of each release (sql/
# 011_release_summary.sql); "cold" is the JSON report with none kept
# (deleted before each timing), which reads every run, computes and
# keeps them: what the first report after a bisect stored runs pays.
# Also timed: `bisectctl --version`, the process start (loading its
# shared libraries) that every report pays before reading the store.
#
# Usage: bench/report-bench.sh [BUILD_DIR]     (default: build)
#   RELEASES=N  releases (default 1000)
#   RUNS=N      runs per release (default 100)
#   REPS=N      timings of each (default 7)
# Needs: sqlite3 (the shell), time (/usr/bin/time); the build's bisectctl
# and bench/report-store.
set -eu

build=${1:-build}
releases=${RELEASES:-1000}
runs=${RUNS:-100}
reps=${REPS:-7}
ctl=$build/bisectd/bisectctl
gen=$build/bench/report-store

command -v sqlite3 >/dev/null || { echo "sqlite3 is needed" >&2; exit 1; }
[ -x "$gen" ] || { echo "no $gen: build the report-store target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

mkdir "$tmp/releases"
echo "pinned weights" > "$tmp/weights.bin"
cat > "$tmp/bench.conf" <<EOF
[bisectd]
	database = state.db
	cache = cache
[weights "w"]
	path = weights.bin
	sha256 = c14922936e2cf23291cf6f5fa3e48b790c620950ea451777c6cd6586ac4e8e51
[engine "basert"]
	source = dir:releases
	asset = basert-{version}.tar.gz
	command = {bin}/bin/engine -m {weights} -p {prompt} -n {gen} -t 1
	parser = llama-bench
	weights = w
	prompts = 128,512,2048
	gen = 32
	fit = 512,2048
EOF
last=$((releases - 1))
range=1.0.0..1.0.$last
# seconds since $1 (a date +%s.%N)
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { print t1 - t0 }'; }
start=$(date +%s.%N)
"$gen" "$tmp/bench.conf" basert "$releases" "$runs"
printf 'store: %d releases x %d runs, built in %.1f s, %s\n' "$releases" \
    "$runs" "$(since "$start")" \
    "$(du -h "$tmp/state.db" | cut -f1)"

# "WALL CPU" seconds that "$@" takes (CPU: user + system), output
# discarded.  On a shared machine the wall time waits for the CPUs as
# well; the CPU time is the work itself.
timed() {
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	tail -n 1 "$tmp/time" | awk '{ print $1, $2 + $3 }'
}

basesql="SELECT r.release_id, r.kind, r.prompt_tokens, r.gen_tokens,
    s.run_id, s.engine_ns FROM run r JOIN sample s ON s.run_id = r.id
    WHERE r.warmup = 0 AND r.failure IS NULL
    ORDER BY r.release_id, r.kind, r.prompt_tokens, r.id, s.idx"

: > "$tmp/html"
: > "$tmp/json"
: > "$tmp/base"
: > "$tmp/start"
: > "$tmp/cold"
# One warm-up of each, then REPS rounds alternating them.
timed "$ctl" -c "$tmp/bench.conf" report basert "$range" --format html >/dev/null
timed "$ctl" -c "$tmp/bench.conf" report basert "$range" --format json >/dev/null
timed sqlite3 "$tmp/state.db" "$basesql" >/dev/null
i=0
while [ $i -lt "$reps" ]; do
	timed "$ctl" -c "$tmp/bench.conf" report basert "$range" \
	    --format html >> "$tmp/html"
	timed "$ctl" -c "$tmp/bench.conf" report basert "$range" \
	    --format json >> "$tmp/json"
	timed sqlite3 "$tmp/state.db" "$basesql" >> "$tmp/base"
	timed "$ctl" --version >> "$tmp/start"
	sqlite3 "$tmp/state.db" "DELETE FROM release_summary"
	timed "$ctl" -c "$tmp/bench.conf" report basert "$range" \
	    --format json >> "$tmp/cold"
	i=$((i + 1))
done
"$ctl" -c "$tmp/bench.conf" report basert "$range" --format html \
    > "$tmp/page.html" 2>/dev/null || true
"$ctl" -c "$tmp/bench.conf" report basert "$range" --format json \
    > "$tmp/report.json" 2>/dev/null || true

# median FILE COLUMN: of the wall (1) or CPU (2) times
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
html=$(median "$tmp/html" 1)
json=$(median "$tmp/json" 1)
base=$(median "$tmp/base" 1)
start=$(median "$tmp/start" 1)
htmlc=$(median "$tmp/html" 2)
jsonc=$(median "$tmp/json" 2)
basec=$(median "$tmp/base" 2)
startc=$(median "$tmp/start" 2)
cold=$(median "$tmp/cold" 1)
coldc=$(median "$tmp/cold" 2)
printf 'medians of %d, %s %s (wall s, CPU s; load %s):\n' "$reps" \
    "report basert" "$range" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  --format html   %6.3f %6.3f  (%.1fx the baseline, CPU %.1fx; goal < 1 s)   page %s\n' \
    "$html" "$htmlc" "$(ratio "$html" "$base")" "$(ratio "$htmlc" "$basec")" \
    "$(du -h "$tmp/page.html" | cut -f1)"
printf '  --format json   %6.3f %6.3f  (%.1fx the baseline, CPU %.1fx; goal < 0.1 s) %s\n' \
    "$json" "$jsonc" "$(ratio "$json" "$base")" "$(ratio "$jsonc" "$basec")" \
    "$(du -h "$tmp/report.json" | cut -f1)"
printf '  json, cold      %6.3f %6.3f  (%.1fx the baseline, CPU %.1fx; no summary kept: reads every run)\n' \
    "$cold" "$coldc" "$(ratio "$cold" "$base")" "$(ratio "$coldc" "$basec")"
printf '  baseline        %6.3f %6.3f  (sqlite3 reading the %d runs and samples)\n' \
    "$base" "$basec" "$((releases * runs))"
printf '  process start   %6.3f %6.3f  (bisectctl --version, in each figure above)\n' \
    "$start" "$startc"
