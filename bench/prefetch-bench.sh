#!/bin/sh
# prefetch-bench.sh: what downloading ahead saves a bisect.  Packs eleven
# releases of the fake engine (its cost per prompt token +50% from 1.0.6;
# a run of 256 tokens sleeps RUN_MS, clock = wall, so that the bisect has
# something to measure beside a download), each archive padded with SIZE_MB of
# random bytes, serves them from the tests' HTTP server at RATE_MB a
# second (its /rate/ path), and bisects 1.0.0..1.0.10 from an empty cache
# twice: prefetch = off, then prefetch = 2 with a cap above the server's
# rate.  Prints each bisect's wall time and the part of it not spent in
# runs (downloads, unpacks, the bisect's own work: the runs themselves
# differ between two bisects as the noise makes the ladder climb), the
# archives taken from downloads ahead, one archive's download time, and
# the ratio of the two times not in runs, also in archive downloads
# (goal: the downloads hidden but for the first two releases, those the
# bisect has nothing to measure beside).
#
# Usage: bench/prefetch-bench.sh [BUILD_DIR]     (default: build)
#   SIZE_MB   padding of each archive (default 200)
#   RATE_MB   the server's rate, MiB a second (default 20)
#   RUN_MS    a 256-token run's time before the step (default 3000)
#   REPS      runs a cell at first (default 3)
#   WORK=DIR  scratch folder (default: a new one, removed after)
set -eu

build=$(cd "${1:-build}" && pwd)
size_mb=${SIZE_MB:-200}
rate_mb=${RATE_MB:-20}
run_ms=${RUN_MS:-3000}
reps=${REPS:-3}
ctl=$build/bisectd/bisectctl
srv=$build/tests/testserver
eng=$build/tests/releases/bump-1.0.0/bin/fake-engine
weights=$build/demo/weights.bin

for f in "$ctl" "$srv" "$eng" "$weights"; do
	[ -e "$f" ] || { echo "prefetch-bench: no $f: build bisectd and its tests" >&2; exit 1; }
done
if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d /var/tmp/prefetch-bench.XXXXXX)
fi
work=$(cd "$work" && pwd)
cleanup() {
	if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null || :; fi
	if [ -z "${WORK:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

# ---- the releases ----
# Packed again when their parameters change.
mkdir -p "$work/srv"
if [ "$(cat "$work/srv/params" 2>/dev/null)" != "$size_mb $run_ms" ]; then
	rm -f "$work"/srv/*.tar
	echo "$size_mb $run_ms" > "$work/srv/params"
fi
for i in 0 1 2 3 4 5 6 7 8 9 10; do
	v=1.0.$i
	a=$work/srv/bump-$v.tar
	[ -s "$a" ] && continue
	per=$((run_ms * 1000 / 256))
	[ "$i" -ge 6 ] && per=$((per * 3 / 2))
	st=$work/stage/$v
	mkdir -p "$st/bin"
	cp "$eng" "$st/bin/"
	printf '%s\n' "version = $v" "fixed_us = 2000" \
	    "prefill_us_per_token = $per" "decode_us_per_token = 100" \
	    "noise_cv = 0.02" "clock = wall" > "$st/release.conf"
	head -c "$((size_mb * 1048576))" /dev/urandom > "$st/pad.bin"
	tar -C "$st" -cf "$a" bin release.conf pad.bin
	rm -rf "$st"
done
echo "releases: 11 archives of $(du -m "$work/srv/bump-1.0.0.tar" | cut -f1) MiB at $rate_mb MiB/s"

# ---- the server ----
rm -f "$work/port"
"$srv" --port-file "$work/port" --root "$work/srv" --log "$work/server.log" &
server=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
base=http://127.0.0.1:$port/rate/$((rate_mb * 1024))
t0=$(date +%s%N)
curl -s -o /dev/null "$base/bump-1.0.0.tar"
one_ns=$(( $(date +%s%N) - t0 ))

run() {	# $1: off or a number
	dir=$work/run-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cat > "$dir/b.conf" <<EOF
[bisectd]
	database = b.db
	cache = cache
	max-busy = 100%
	max-wait = 1s
[weights "demo"]
	path = $weights
[engine "bump"]
	source = url:$base/bump-{version}.tar
	versions = 1.0.0,1.0.1,1.0.2,1.0.3,1.0.4,1.0.5,1.0.6,1.0.7,1.0.8,1.0.9,1.0.10
	allow-http = yes
	prefetch = $1
	prefetch-rate = $((rate_mb * 4))M
	command = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -t 1 -r 1 -o json
	parser = llama-bench
	prompts = 64,256
	gen = 16
	reps = $reps
	warmup = 0
	timeout = 5m
EOF
	s=$(date +%s%N)
	(cd "$dir" && "$ctl" -c b.conf bisect --now bump 1.0.0..1.0.10 \
	    > out.txt 2> notes.txt) || [ $? = 3 ] ||
	    { tail -n 5 "$dir/notes.txt" >&2; exit 1; }
	wall=$(( $(date +%s%N) - s ))
	measured=$(grep -c '^bisectctl: measure ' "$dir/notes.txt" || true)
	ahead=$(grep -c 'downloaded ahead$' "$dir/notes.txt" || true)
	part=$(grep -c 'downloaded ahead in part' "$dir/notes.txt" || true)
	# Time not spent in runs: downloads, unpacks and the bisect's own.
	runs_ns=$(sqlite3 "$dir/b.db" "SELECT coalesce(sum(wall_ns), 0) FROM run")
	fb=$(sed -n 's/.*first bad \([^ ,]*\).*/\1/p' "$dir/out.txt" | head -n 1)
	echo "$((wall - runs_ns))" > "$dir/idle"
	printf 'prefetch %-4s wall %6.1f s, of it %6.1f s not in runs; first bad %s; %s measure steps; archives downloaded ahead %s, in part %s\n' \
	    "$1" "$(echo "$wall" | awk '{ print $1 / 1e9 }')" \
	    "$(echo "$((wall - runs_ns))" | awk '{ print $1 / 1e9 }')" "$fb" \
	    "$measured" "$ahead" "$part"
}

printf 'one archive: %.1f s to download\n' "$(echo "$one_ns" | awk '{ print $1 / 1e9 }')"
run off
run 2
awk -v a="$(cat "$work/run-2/idle")" -v b="$(cat "$work/run-off/idle")" \
    -v one="$one_ns" 'BEGIN { printf "time not in runs: prefetch 2 / off %.2f; %.1f archive downloads with prefetch, %.1f without\n", a / b, a / one, b / one }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
