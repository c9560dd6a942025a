#!/bin/sh
# watch-aa.sh: the false-alarm rate of the many-metric watch on releases
# that do the same work (BUILD/bench/watch-aa: see its header).
#
# Usage: bench/watch-aa.sh [BUILD_DIR] [TRIALS]   (default: build, 100)
set -eu

build=$(cd "${1:-build}" && pwd)
trials=${2:-100}
[ -x "$build/bench/watch-aa" ] || { echo "no $build/bench/watch-aa:" \
	"build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"
"$build/bench/watch-aa" "$build/tests/fake-engine" \
    "$build/demo/weights.bin" -n "$trials"
