#!/bin/sh
# matrix-cost.sh: what measuring the whole matrix on the ends and the
# boundary pair costs a bisect.  It bisects the demo's releases (timed by
# the CPU clock) with `bisect --now`, under the demo's matrix (prompts
# 128,512, gen 16) and under a wider one (prompts 128,512,2048, fit
# 512,2048, gen 32,128), and splits the runs it stored into those of the
# searched cells (what the bisect measured before the whole matrix) and
# the others, warm-ups and confirmations included: runs and
# engine-seconds of each, and the ratio of the whole to the searched
# part (the goal: at most 1.30 in engine-seconds).
#
# Usage: bench/matrix-cost.sh [BUILD_DIR]     (default: build)
# Needs: the build's bisectd/bisectctl and its tests/demo-cpu releases,
# sqlite3 and bc.
set -eu

build=$(cd "${1:-build}" && pwd)
ctl=$build/bisectd/bisectctl
for tool in sqlite3 bc; do
	command -v $tool >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[ -x "$ctl" ] || { echo "no $ctl: build first" >&2; exit 1; }
[ -d "$build/tests/demo-cpu" ] || { echo "no $build/tests/demo-cpu: build" \
	"the fake-releases target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

# $1: name, $2: the matrix lines, $3: the searched cells as SQL
one() {
	cat >"$1.conf" <<EOF
[bisectd]
	database = $1.db
	cache = cache
	max-busy = 100%
[weights "demo"]
	path = $build/demo/weights.bin
[engine "basert"]
	source = dir:$build/tests/demo-cpu
	asset = basert-{version}.tar.gz
	command = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -t 1 -r 1 -o json
	parser = llama-bench
$2
EOF
	rc=0
	"$ctl" -c "$1.conf" bisect --now basert 0.2.0..0.2.6 >/dev/null \
	    2>&1 || rc=$?
	sqlite3 -separator ' ' "$1.db" "
	    SELECT count(*), sum(wall_ns) / 1e9,
	      sum(CASE WHEN $3 THEN 1 ELSE 0 END),
	      sum(CASE WHEN $3 THEN wall_ns ELSE 0 END) / 1e9
	    FROM run" | while read -r all all_s s s_s; do
		printf '%-8s exit %d  searched cells: %4d runs %7.2f s   ' \
		    "$1" "$rc" "$s" "$s_s"
		printf 'whole matrix: %4d runs %7.2f s   ratio %.2f (runs %.2f)\n' \
		    "$all" "$all_s" "$(echo "$all_s / $s_s" | bc -l)" \
		    "$(echo "$all / $s" | bc -l)"
	done
}

one demo "	prompts = 128,512
	gen = 16" "kind = 'pp'"
one wide "	prompts = 128,512,2048
	fit = 512,2048
	gen = 32,128" "kind = 'pp' AND prompt_tokens IN (512, 2048)"
