#!/bin/sh
# report-demo.sh: makes docs/report-demo.png, the README's picture of the
# demo's HTML report.  The demo (BUILD/demo: its configuration, the seven
# fake-engine releases and the weights) is copied to DIR, bisected there
# with `bisect --now`, and its report drawn by headless Chromium and cut
# down to a small palette PNG.
#
# The report's reproduce lines are the exact command lines of the runs,
# the demo's folder included, and they are in the picture: DIR names that
# folder, so it should read like a place a reader would use.  The default,
# /srv/bisectd-demo, needs write access to /srv (root, or a folder made
# and given to you beforehand).  DIR must not exist; it is removed after.
#
# Usage: scripts/report-demo.sh [BUILD] [DIR]   (default: build, /srv/bisectd-demo)
# Needs: chromium, netpbm (pngtopnm, pnmquant, pnmtopng); the build's
# bisectctl and demo (cmake --build BUILD).
set -eu

build=$(cd "${1:-build}" && pwd)
dir=${2:-/srv/bisectd-demo}
out=$(cd "$(dirname "$0")/.." && pwd)/docs/report-demo.png
ctl=$build/bisectd/bisectctl

for tool in chromium pngtopnm pnmquant pnmtopng; do
	command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[ -x "$ctl" ] && [ -f "$build/demo/bisectd.conf" ] ||
    { echo "no $ctl or $build/demo: build first" >&2; exit 1; }
[ -e "$dir" ] && { echo "$dir exists: give a new folder" >&2; exit 1; }
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT INT TERM
cp -r "$build/demo/bisectd.conf" "$build/demo/releases" \
    "$build/demo/weights.bin" "$dir/"

echo "== bisect --now basert 0.2.0..0.2.6 in $dir"
rc=0
"$ctl" -c "$dir/bisectd.conf" bisect --now basert 0.2.0..0.2.6 >/dev/null ||
    rc=$?
[ "$rc" = 3 ] || { echo "the demo's bisect exited $rc, not 3" >&2; exit 1; }
rc=0
"$ctl" -c "$dir/bisectd.conf" report basert 0.2.0..0.2.6 --format html \
    > "$dir/report.html" || rc=$?
[ "$rc" = 3 ] || { echo "the report exited $rc, not 3" >&2; exit 1; }

# The verdict, the reproduce lines and the time plot in 760 x 1180 CSS
# pixels; 256 colours keep the file small without blurring the text.
HOME=$dir timeout 300 chromium --headless --no-sandbox --disable-gpu \
    --hide-scrollbars --user-data-dir="$dir/profile" \
    --window-size=760,1180 --screenshot="$dir/shot.png" \
    "file://$dir/report.html" >"$dir/chromium.log" 2>&1
pngtopnm "$dir/shot.png" | pnmquant 256 2>/dev/null | pnmtopng -compression 9 \
    > "$dir/small.png"
mv "$dir/small.png" "$out"
printf '%s: %s bytes\n' "$out" "$(wc -c < "$out")"
