# deps.sh: installs what building and testing bisectd needs on Debian 12,
# when it is missing.  Sourced by demo.sh and test.sh.

BISECTD_PACKAGES="gcc libc6-dev make cmake pkg-config git ca-certificates \
libgit2-dev libarchive-dev libsqlite3-dev libcurl4-openssl-dev \
libjansson-dev libssl-dev libmicrohttpd-dev libpcre2-dev zstd xz-utils zip procps \
curl prometheus groff-base man-db \
slurm-wlm slurm-client munge"

# The fuzz targets (scripts/fuzz.sh): clang, and the libFuzzer runtime
# -fsanitize=fuzzer links (libclang_rt.fuzzer), which clang-14 only
# recommends, so --no-install-recommends leaves it out.
BISECTD_FUZZ_PACKAGES="clang libclang-rt-14-dev"

# The HTML report's tests: xmllint parses the page, headless Chromium
# takes a screenshot of it, pngtopnm (netpbm) makes that a PPM to read.
BISECTD_BROWSER_PACKAGES="libxml2-utils chromium netpbm"

# The Debian package's test (tests/package/test_deb.sh): debhelper runs
# the CMake build and writes the maintainer scripts, dpkg-dev has
# dpkg-buildpackage, lintian checks the result, mount mounts the
# throwaway root it is installed into, and build-essential is what
# dpkg-buildpackage checks for before any build (g++ among it).
# debian/control says Rules-Requires-Root: no, so the build needs no
# fakeroot.
BISECTD_DEB_PACKAGES="debhelper dpkg-dev build-essential lintian mount"

# install_deps [MORE-PACKAGES...]
install_deps() {
	missing=""
	for p in $BISECTD_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages:$missing; run as root or install them" >&2
		return 1
	fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null &&
	apt-get install -y -q --no-install-recommends $missing >/dev/null
}
