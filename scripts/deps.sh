# deps.sh: installs what building and testing bisectd needs on Debian 12,
# when it is missing.  Sourced by demo.sh and test.sh.

BISECTD_PACKAGES="gcc libc6-dev make cmake pkg-config git ca-certificates \
libgit2-dev libarchive-dev libsqlite3-dev libcurl4-openssl-dev \
libjansson-dev libssl-dev zstd xz-utils zip procps"

install_deps() {
	missing=""
	for p in $BISECTD_PACKAGES; do
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
