#!/usr/bin/env bash
# fetch-bench.sh: bisectd's fetch path (download, sha256 while streaming,
# fsync, rename into the cache, unpack into a release directory) against
# the shell pipeline `curl -s URL | tee >(sha256sum >&2) | tar -xz` on the
# same ~200 MB tar.gz from the project's loopback test server, interleaved
# runs.  Prints both median wall times, their ratio (goal <= 1.5) and
# bisectd's peak RSS (goal < 32 MB).  A benchmark, not a test: run by hand.
#
#   bench/fetch-bench.sh [BUILD_DIR]
#
# BUILD_DIR (default: build) must hold the fetch-bench and testserver
# targets.  Environment: RUNS (5), SIZE_MB (200: archive size, roughly),
# NO_SYNC=1 (skip the syncfs of the unpacked tree), WORK (a scratch folder
# on the disk to measure; default a new one under /var/tmp, removed after).
# Needs bash, curl, GNU tar, gzip, sha256sum and GNU time (/usr/bin/time;
# Debian package "time").
set -euo pipefail

build=${1:-build}
runs=${RUNS:-5}
size_mb=${SIZE_MB:-200}
bench=$build/bench/fetch-bench
server=$build/tests/testserver

die() { echo "fetch-bench: $*" >&2; exit 1; }

[ -x "$bench" ] || die "no $bench: cmake --build $build --target fetch-bench"
for tool in curl tar gzip sha256sum /usr/bin/time; do
	command -v "$tool" >/dev/null || die "$tool is needed"
done

work=${WORK:-$(mktemp -d /var/tmp/fetch-bench.XXXXXX)}
server_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	[ -z "${WORK:-}" ] && rm -rf "$work"
	return 0
}
trap cleanup EXIT
mkdir -p "$work/www"

# The archive: three quarters random bytes in a few large files (does not
# compress, like weights or binaries), the rest base64 text (compresses
# about 4:3) and a thousand small files (the cost per entry).
echo "building a ~${size_mb} MB tar.gz in $work ..."
src=$work/src
rm -rf "$src"
mkdir -p "$src/engine/bin" "$src/engine/lib" "$src/engine/share/small"
for i in 1 2 3 4 5 6; do
	head -c $((size_mb * 1024 * 1024 * 3 / 4 / 6)) /dev/urandom \
	    > "$src/engine/lib/part$i.bin"
done
head -c $((size_mb * 1024 * 1024 / 4 * 3 / 4)) /dev/urandom | base64 \
    > "$src/engine/share/text.txt"
head -c $((1000 * 4096)) /dev/urandom |
    split -b 4096 -a 3 -d - "$src/engine/share/small/f"
printf '#!/bin/sh\necho engine\n' > "$src/engine/bin/engine"
chmod 0755 "$src/engine/bin/engine"
tar -C "$src" -czf "$work/www/release.tar.gz" engine
archive_bytes=$(stat -c %s "$work/www/release.tar.gz")
want_sha=$(sha256sum < "$work/www/release.tar.gz" | cut -d' ' -f1)

# The server: the project's, else Python's.
if [ -x "$server" ]; then
	"$server" --port-file "$work/port" --root "$work/www" &
	server_pid=$!
	for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
	[ -s "$work/port" ] || die "the test server did not start"
	url="http://127.0.0.1:$(cat "$work/port")/files/release.tar.gz"
elif command -v python3 >/dev/null; then
	port=$((20000 + RANDOM % 20000))
	python3 -m http.server "$port" --bind 127.0.0.1 \
	    --directory "$work/www" >/dev/null 2>&1 &
	server_pid=$!
	sleep 1
	url="http://127.0.0.1:$port/release.tar.gz"
else
	die "neither $server nor python3 is available"
fi

sync_flag=()
[ "${NO_SYNC:-0}" = 1 ] && sync_flag=(--no-sync)

run_bisectd() {
	rm -rf "$work/cache" "$work/dest"
	sync
	/usr/bin/time -f '%e %M' -o "$work/time" \
	    "$bench" "${sync_flag[@]}" "$url" "$work/cache" "$work/dest/rel" \
	    > "$work/out"
	grep -q "^sha256 $want_sha\$" "$work/out" ||
	    die "bisectd's hash differs: $(head -1 "$work/out")"
	read -r t rss < "$work/time"
	b_times+=("$t")
	b_rss+=("$rss")
	b_dl+=("$(awk '/^download/ { print $2 }' "$work/out")")
	b_un+=("$(awk '/^unpack/ { print $2 }' "$work/out")")
}

run_pipeline() {
	rm -rf "$work/pipe"
	mkdir -p "$work/pipe"
	sync
	/usr/bin/time -f '%e %M' -o "$work/time" bash -c \
	    'curl -s "$0" | tee >(sha256sum >&2) | tar -xz -C "$1"' \
	    "$url" "$work/pipe" 2> "$work/sum"
	sleep 0.2	# the hash's process substitution is not waited for
	grep -q "^$want_sha " "$work/sum" ||
	    die "the pipeline's hash differs: $(cat "$work/sum")"
	read -r t _ < "$work/time"
	p_times+=("$t")
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
	END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

b_times=() b_rss=() b_dl=() b_un=() p_times=()
echo "archive: $((archive_bytes / 1000000)) MB, sha256 $want_sha"
echo "$runs runs each, interleaved, from $url"
for i in $(seq "$runs"); do
	if [ $((i % 2)) = 1 ]; then run_pipeline; run_bisectd
	else run_bisectd; run_pipeline; fi
	echo "  run $i: pipeline ${p_times[-1]} s, bisectd ${b_times[-1]} s" \
	    "(download ${b_dl[-1]} s, unpack ${b_un[-1]} s), RSS ${b_rss[-1]} KB"
done
diff -r "$work/pipe/engine" "$work/dest/rel/engine" >/dev/null ||
    die "bisectd unpacked something else than tar"

p=$(median "${p_times[@]}")
b=$(median "${b_times[@]}")
rss_kb=$(printf '%s\n' "${b_rss[@]}" | sort -n | tail -1)
ratio=$(awk -v b="$b" -v p="$p" 'BEGIN { printf "%.2f", b / p }')
echo
echo "pipeline (curl | tee >(sha256sum) | tar -xz): median $p s"
echo "bisectd  (download, hash, fsync, unpack${NO_SYNC:+, no syncfs}): median $b s" \
    "(download $(median "${b_dl[@]}") s, unpack $(median "${b_un[@]}") s)"
awk -v r="$ratio" 'BEGIN { printf "ratio %s (goal <= 1.5: %s)\n", r,
	r <= 1.5 ? "met" : "missed" }'
awk -v k="$rss_kb" 'BEGIN { printf "bisectd peak RSS %.1f MB (goal < 32 MB: %s)\n",
	k / 1024, k < 32 * 1024 ? "met" : "missed" }'
