#!/bin/sh
# test.sh: installs what is missing, builds bisectd twice (a normal build,
# and one with AddressSanitizer and UndefinedBehaviorSanitizer), and runs
# the whole CTest suite on each.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps

jobs=$(nproc 2>/dev/null || echo 2)
status=0
for kind in normal sanitize; do
	dir=build-test-$kind
	# Warnings are errors in the normal build; the sanitizers change
	# what the optimiser sees, so there they are shown, not fatal.
	flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBISECTD_WERROR=ON"
	[ "$kind" = sanitize ] &&
		flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBISECTD_SANITIZE=ON"
	echo "== $kind build"
	cmake -S . -B "$dir" $flags >/dev/null
	cmake --build "$dir" -j "$jobs" >/dev/null
	echo "== $kind tests"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir "$dir" --output-on-failure -j "$jobs" ||
		status=1
done
exit $status
