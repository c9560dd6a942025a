#!/bin/sh
# history-aa.sh: the false change points of the history's detection on
# unchanged releases, and the share of +15% steps it finds
# (BUILD/bench/history-aa: see its header).
#
# Usage: bench/history-aa.sh [BUILD_DIR] [TRIALS]   (default: build, 200)
set -eu

build=$(cd "${1:-build}" && pwd)
trials=${2:-200}
[ -x "$build/bench/history-aa" ] || { echo "no $build/bench/history-aa:" \
	"build first" >&2; exit 1; }
"$build/bench/history-aa" -n "$trials"
