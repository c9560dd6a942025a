#!/bin/sh
# demo.sh: installs what is missing, builds bisectd, and replays the BaseRT
# story of the field report on the embedded demo: seven releases of a fake
# engine (0.2.0 ... 0.2.6) that do real CPU work per prompt token; 0.2.1
# makes every token about 5% dearer, 0.2.4 about 3.5 times dearer.  The
# bisect finds 0.2.4 and says the slowdown is per token.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps

jobs=$(nproc 2>/dev/null || echo 2)
echo "== building"
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-demo -j "$jobs" >/dev/null
conf=build-demo/demo/bisectd.conf
ctl=build-demo/bisectd/bisectctl
# A fresh store each time, so the demo measures everything it reports.
rm -rf build-demo/demo/state
$ctl -c "$conf" check-config
echo
echo "== bisectctl bisect --now basert 0.2.0..0.2.6"
set +e
$ctl -c "$conf" bisect --now basert 0.2.0..0.2.6
status=$?
set -e
echo
echo "bisectctl exited $status (0 no regression, 3 regression, 4 unknown)."
echo "The same report, from the store alone, in other formats:"
echo "  $ctl -c $conf report basert 0.2.0..0.2.6 --format markdown"
echo "  $ctl -c $conf report basert 0.2.0..0.2.6 --format json"
echo "The 5% step at 0.2.1 is below the default 20% threshold; to look for it:"
echo "  $ctl -c $conf bisect --now --all --threshold 3% basert 0.2.0..0.2.6"
[ "$status" = 3 ]
