#!/bin/sh
# test_deb.sh: the Debian package.  Builds it with dpkg-buildpackage in a
# copy of the source tree (nothing from a build folder), has lintian
# look at it, installs it into a throwaway root, checks the files, their
# modes, the bisectd user and the conffile, runs the installed bisectctl
# on the installed /etc/bisectd.conf, purges it and checks that nothing
# but the store is left.  Usage: test_deb.sh SOURCE_DIR
#
# The root: as root, where mounts are allowed, this system under an
# overlay (writes go to a folder of the test), dpkg --root chroots into
# it and the maintainer scripts run for real there.  Elsewhere (not
# root, or no mounts: a container), an empty folder with its own dpkg
# database, the scripts run without chroot (--force-script-chrootless,
# DPKG_ROOT set) and the commands that would change this system (adduser,
# chown, systemd's helpers) replaced by ones that log their arguments,
# which the test reads.  BISECTD_DEB_ROOT=chrootless forces the second.
set -u
export LC_ALL=C PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
# As root, the whole test in a mount namespace of its own: the overlay
# goes with it, whatever happens.
if [ "$(id -u)" = 0 ] && [ -z "${TEST_DEB_NS:-}" ] &&
    [ "${BISECTD_DEB_ROOT:-chroot}" = chroot ] && unshare -m true 2>/dev/null
then
	TEST_DEB_NS=1 exec unshare -m sh "$0" "$@"
fi
src=$(cd "$1" && pwd)
fail=0 n=0

bad() { echo "test_deb: $*" >&2; fail=$((fail + 1)); }
not() { ! "$@"; }
# check WHAT COMMAND...: one check, failing with WHAT when COMMAND fails.
check() {
	what=$1
	shift
	n=$((n + 1))
	"$@" || bad "$what"
}

missing=""
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
    cmake:cmake; do
	command -v "${tool%%:*}" >/dev/null 2>&1 ||
		missing="$missing ${tool#*:}"
done
if [ -n "$missing" ]; then
	echo "test_deb: missing programs; apt-get install$missing" \
	    "(scripts/deps.sh installs them)" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_deb.XXXXXX")
root=$tmp/root
cleanup() {
	for m in dev proc run tmp; do
		umount "$root/$m" 2>/dev/null
	done
	umount "$root" 2>/dev/null
	if [ "$fail" -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "test_deb: kept $tmp" >&2
	fi
}
trap cleanup EXIT

# --- the package, from a copy of the tree as it is (uncommitted edits
# included), without any build folder in it.
mkdir "$tmp/src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	    xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f";
	    done' sh | tar --null -T - -cf -) | tar -C "$tmp/src" -xf -
else
	tar -C "$src" --exclude='./build*' --exclude=./obj-\* -cf - . |
	    tar -C "$tmp/src" -xf -
fi
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
deb=$tmp/bisectd_${version}_${arch}.deb
start=$(date +%s)
if ! (cd "$tmp/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
    dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1; then
	tail -n 30 "$tmp/build.log" >&2
	bad "dpkg-buildpackage failed; its log is $tmp/build.log"
	exit 1
fi
echo "test_deb: built $(basename "$deb") in $(($(date +%s) - start)) s"
check "no $deb" [ -f "$deb" ]

# lintian: no error; its warnings are shown (docs/packaging.md says
# which it gives and why they stay).
lintian --tag-display-limit 0 "$deb" > "$tmp/lintian.txt" 2>&1
grep -v '^running with root' "$tmp/lintian.txt" >&2
check "lintian reports errors" not grep -q '^E:' "$tmp/lintian.txt"

# --- the root to install into: this system under an overlay where the
# namespace allows the mount, else an empty folder.
mkdir -p "$root" "$tmp/upper" "$tmp/work" "$tmp/stub"
mode=chrootless
if [ -n "${TEST_DEB_NS:-}" ] && mount -t overlay overlay \
    -o "lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work" "$root"; then
	mode=chroot
	# What a booted system has: this one's /dev, a /proc, an empty
	# /run and /tmp (tmpfs) for the maintainer scripts' programs.
	mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc" &&
	    mount -t tmpfs tmpfs "$root/run" && mount -t tmpfs tmpfs "$root/tmp" ||
		bad "cannot mount /dev, /proc, /run or /tmp in the root"
else
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
	: > "$root/var/lib/dpkg/status"
fi
echo "test_deb: installing into a $mode root"

# In chrootless mode: the commands that would act on this system.
for cmd in adduser chown deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n' "$cmd" "$tmp" \
	    > "$tmp/stub/$cmd"
	chmod +x "$tmp/stub/$cmd"
done
# getent knows no bisectd user: postinst must make one.
printf '#!/bin/sh\nexit 2\n' > "$tmp/stub/getent"
chmod +x "$tmp/stub/getent"

# dpkg ARGS...: dpkg on the root.
pkg() {
	if [ "$mode" = chroot ]; then
		dpkg --root="$root" "$@"
	else
		PATH="$tmp/stub:$PATH" dpkg --root="$root" \
		    --force-script-chrootless --force-not-root \
		    --force-depends --log=/dev/null "$@"
	fi
}
# inroot CMD...: a command of the installed package, as the bisectd user
# where the root has one.
inroot() {
	if [ "$mode" = chroot ]; then
		chroot --userspec=bisectd:bisectd "$root" "$@"
	else
		bin=$1
		shift
		"$root$bin" "$@"
	fi
}

install_check_purge() {
	pkg -i "$deb" > "$tmp/install.log" 2>&1 ||
		{ cat "$tmp/install.log" >&2; bad "dpkg -i failed"; return; }
	check_installed
	pkg --purge bisectd > "$tmp/purge.log" 2>&1 ||
		{ cat "$tmp/purge.log" >&2; bad "dpkg --purge failed"; }
	check_purged
}

# has_line TEXT REGEX: a line of TEXT matches the basic regex.
has_line() { printf '%s\n' "$1" | grep -q -- "$2"; }

# mode_owner PATH MODE OWNER: the root's PATH has this mode and owner,
# named from the root's own passwd and group; in an empty root, which
# has neither (and dpkg not run as root cannot chown), the mode only.
mode_owner() {
	st=$(stat -c '%a %u %g' "$root$1" 2>/dev/null)
	if [ "$mode" = chrootless ]; then
		check "$1 has mode '${st%% *}', not $2" [ "${st%% *}" = "$2" ]
		return
	fi
	set -- "$1" "$2" "$3" $st
	owner=$(awk -F: -v id="$5" '$3 == id { print $1; exit }' \
	    "$root/etc/passwd"):$(awk -F: -v id="$6" '$3 == id { print $1;
	    exit }' "$root/etc/group")
	check "$1 is $4 $owner, not $2 $3" [ "$4 $owner" = "$2 $3" ]
}

check_installed() {
	for f in /usr/bin/bisectd /usr/bin/bisectctl; do
		mode_owner "$f" 755 root:root
	done
	for f in /usr/share/man/man1/bisectctl.1.gz \
	    /usr/share/man/man5/bisectd.conf.5.gz \
	    /usr/share/man/man8/bisectd.8.gz \
	    /usr/share/bash-completion/completions/bisectctl \
	    /lib/systemd/system/bisectd.service /etc/bisectd.conf \
	    /usr/share/doc/bisectd/bisectd.conf.example.gz \
	    /usr/share/doc/bisectd/README.Debian; do
		mode_owner "$f" 644 root:root
	done
	unit=$root/lib/systemd/system/bisectd.service
	for line in User=bisectd Group=bisectd Delegate=yes \
	    NoNewPrivileges=yes ProtectSystem=full PrivateTmp=yes UMask=0077 \
	    StateDirectoryMode=0700 "ExecStart=/usr/bin/bisectd -c /etc/bisectd.conf"; do
		check "the unit lacks $line" grep -qxF "$line" "$unit"
	done
	conffiles=$(dpkg-query --admindir="$root/var/lib/dpkg" -W \
	    -f='${Conffiles}' bisectd)
	check "/etc/bisectd.conf is not a conffile: $conffiles" \
	    has_line "$conffiles" '^ /etc/bisectd.conf [0-9a-f]\{32\}$'

	if [ "$mode" = chroot ]; then
		pw=$(grep '^bisectd:' "$root/etc/passwd")
		check "no bisectd user in the root's passwd" [ -n "$pw" ]
		uid=$(echo "$pw" | cut -d: -f3)
		check "bisectd's uid $uid is not a system one" \
		    [ "${uid:-1000}" -lt 1000 ]
		check "bisectd's home and shell: $pw" \
		    has_line "$pw" ':/var/lib/bisectd:/usr/sbin/nologin$'
		check "no bisectd group" grep -q '^bisectd:' "$root/etc/group"
		check "the unit is not enabled" [ -L \
		    "$root/etc/systemd/system/multi-user.target.wants/bisectd.service" ]
		# systemd's own reading of the unit, where systemd is here:
		# any unknown key or missing program is a line of output.
		if [ -x "$root/usr/bin/systemd-analyze" ]; then
			out=$(chroot "$root" systemd-analyze verify \
			    /lib/systemd/system/bisectd.service 2>&1)
			rc=$?
			check "systemd-analyze verify failed ($rc): $out" \
			    [ "$rc" -eq 0 ]
			check "systemd-analyze verify says: $out" [ -z "$out" ]
		fi
		mode_owner /var/lib/bisectd 700 bisectd:bisectd
		mode_owner /var/cache/bisectd 700 bisectd:bisectd
	else
		# What postinst asked for, from the stand-ins' log.
		for call in "adduser --system --group --quiet --home /var/lib/bisectd --no-create-home --gecos bisectd benchmark daemon bisectd" \
		    "chown bisectd:bisectd $root/var/lib/bisectd" \
		    "chown bisectd:bisectd $root/var/cache/bisectd" \
		    "deb-systemd-helper enable bisectd.service"; do
			check "postinst did not run '$call'" \
			    grep -qxF "$call" "$tmp/calls"
		done
		check "/var/lib/bisectd is not 0700" \
		    [ "$(stat -c %a "$root/var/lib/bisectd")" = 700 ]
	fi
	out=$(inroot /usr/bin/bisectctl --version 2>&1)
	check "installed bisectctl --version says '$out'" \
	    [ "$out" = "bisectctl $version" ]
	conf=/etc/bisectd.conf
	[ "$mode" = chroot ] || conf=$root/etc/bisectd.conf
	out=$(inroot /usr/bin/bisectctl -c "$conf" check-config 2>&1)
	check "check-config of the installed config: $out" \
	    has_line "$out" "^config $conf: ok$"
	check "the installed config's database is not the store: $out" \
	    has_line "$out" '^  database  /var/lib/bisectd/bisectd.db$'
	# The store has something in it that purging must keep.
	echo run > "$root/var/lib/bisectd/bisectd.db"
}

check_purged() {
	check "purge removed the store" [ -f "$root/var/lib/bisectd/bisectd.db" ]
	check "purge left the cache" [ ! -e "$root/var/cache/bisectd" ]
	check "purge left /etc/bisectd.conf" [ ! -e "$root/etc/bisectd.conf" ]
	if [ "$mode" = chroot ]; then
		# What the install and purge changed is the overlay's upper
		# folder: this system's own folders (copied up), dpkg's, the
		# users' and man-db's databases and the store may be there,
		# and what was removed (whiteouts: character devices 0:0),
		# nothing else.
		(cd "$tmp/upper" && find . -mindepth 1) | sed 's/^\.//' |
		while read -r p; do
			case $p in
			/var/lib/bisectd|/var/lib/bisectd/*) continue ;;
			/var/lib/dpkg/*|/var/log/*|/var/cache/man/*) continue ;;
			/etc/passwd*|/etc/group*|/etc/shadow*|/etc/gshadow*) continue ;;
			/etc/.pwd.lock) continue ;;
			esac
			[ -d "$tmp/upper$p" ] && [ ! -L "$tmp/upper$p" ] &&
			    [ -d "$p" ] && continue
			[ -c "$tmp/upper$p" ] &&
			    [ "$(stat -c %t:%T "$tmp/upper$p")" = 0:0 ] && continue
			echo "$p"
		done > "$tmp/left"
	else
		(cd "$root" && find . -mindepth 1 ! -type d) | sed 's/^\.//' |
		    grep -v '^/var/lib/dpkg/\|^/var/lib/bisectd/' > "$tmp/left"
		# postrm calls it where init-system-helpers is installed.
		[ -x /usr/bin/deb-systemd-helper ] &&
		    check "purge did not ask for deb-systemd-helper purge" \
		    grep -qxF "deb-systemd-helper purge bisectd.service" \
		    "$tmp/calls"
	fi
	check "purge left: $(tr '\n' ' ' < "$tmp/left")" [ ! -s "$tmp/left" ]
}

install_check_purge
echo "test_deb: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
