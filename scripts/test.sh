#!/bin/sh
# test.sh: installs what is missing, builds bisectd twice (a normal build,
# and one with AddressSanitizer and UndefinedBehaviorSanitizer), runs the
# whole CTest suite on each, then every fuzz target for 20 s
# (scripts/fuzz.sh; BISECTD_FUZZ_SECONDS changes it, 0 skips them).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $BISECTD_FUZZ_PACKAGES $BISECTD_BROWSER_PACKAGES \
    $BISECTD_DEB_PACKAGES

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
fuzz_secs=${BISECTD_FUZZ_SECONDS:-20}
if [ "$fuzz_secs" -gt 0 ]; then
	echo "== fuzz targets, $fuzz_secs s each"
	sh scripts/fuzz.sh "$fuzz_secs" || status=1
fi
exit $status
