#!/bin/sh
# demo.sh: installs what is missing, builds bisectd, and replays the BaseRT
# story on the embedded demo: seven releases of a fake engine, one of
# which makes every prompt token about 3.5 times more expensive.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-demo -j "$jobs" >/dev/null
conf=build-demo/demo/bisectd.conf
ctl=build-demo/bisectd/bisectctl
$ctl -c "$conf" check-config
