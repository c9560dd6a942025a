#!/bin/sh
# serve-client.sh: how many requests a second serve mode's load client
# drives on this machine without being the bottleneck.  It loads
# tests/fake-server set to answer at once (no prefill, no decode cost,
# slots enough for every request) at rising rates with equal gaps, and
# prints per rate what the client sent, the rate it kept and its own lag
# (how late requests left against their schedule) at p50, p99 and most;
# then the highest rate whose every request completed with lag p99
# under LAG_MS (goal: 1,000 a second with lag p99 under 1 ms).  The
# server shares the machine's cores with the client: on 2 cores the
# figure is a floor for the client alone.
#
# Usage: bench/serve-client.sh [BUILD_DIR]     (default: build)
#   RATES="..."   requests a second to try (default 100 250 500 1000
#                 2000 4000)
#   SECONDS_EACH  seconds of load per rate (default 5)
#   LAG_MS        the lag bound (default 1)
#   OUTPUT        tokens per answer (default 2)
set -eu

build=${1:-build}
rates=${RATES:-100 250 500 1000 2000 4000}
secs=${SECONDS_EACH:-5}
lag_ms=${LAG_MS:-1}
output=${OUTPUT:-2}
sc=$build/bench/serve-client
fs=$build/tests/fake-server

[ -x "$sc" ] || { echo "no $sc: build the serve-client target" >&2; exit 1; }
[ -x "$fs" ] || { echo "no $fs: build the fake-server target" >&2; exit 1; }
tmp=$(mktemp -d)
printf '%s\n' "version = bench" "slots = 1024" > "$tmp/release.conf"
port=$(( 20000 + $$ % 20000 ))
"$fs" --port "$port" --release "$tmp/release.conf" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
sleep 0.3
url=http://127.0.0.1:$port/v1/completions

echo "serve-client: $(nproc) cores, fake-server answering at once," \
    "$output tokens an answer, ${secs}s a rate"
best=0 kept=0
for r in $rates; do
	n=$(awk -v r="$r" -v s="$secs" 'BEGIN { printf "%d", r * s }')
	line=$("$sc" "$url" "$r" "$n" fixed "$output")
	echo "$line"
	ok=$(echo "$line" | awk -v lag="$lag_ms" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		k = v["failed"] == 0 && v["sent_per_s"] > 0.98 * v["rate"]
		print k + (k && v["lag_p99_ms"] < lag) }')
	[ "$ok" -ge 1 ] && kept=$r
	[ "$ok" = 2 ] && best=$r
done
echo "highest rate kept: $kept requests/s (every request complete, rate" \
    "within 2%)"
echo "highest rate sustained: $best requests/s (and lag p99 under" \
    "$lag_ms ms)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
