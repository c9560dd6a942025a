#!/bin/sh
# test_man.sh: the manual pages agree with what they are rendered from:
# every command and option of 'bisectctl -h' and 'bisectd -h' and every
# section and key of the example configuration is in its page, groff
# reads each page without a warning, and 'cmake --install' puts them in
# place.  Usage: test_man.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
man=$build/docs/man
ctl=$build/bisectd/bisectctl
daemon=$build/bisectd/bisectd
fail=0 n=0

bad() { echo "test_man: $*" >&2; fail=$((fail + 1)); }

# has PAGE LINE: the page has exactly this line.
has() {
	n=$((n + 1))
	grep -qxF -- "$2" "$1" || bad "$(basename "$1") lacks '$2'"
}

for page in bisectctl.1 bisectd.8 bisectd.conf.5; do
	n=$((n + 1))
	[ -s "$man/$page" ] || { bad "$page was not rendered"; continue; }
	warnings=$(groff -man -ww -z "$man/$page" 2>&1)
	[ -z "$warnings" ] || bad "$page: groff says: $warnings"
done

# Commands and options of bisectctl, as --help lists them.
"$ctl" -h | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' > cmds
[ "$(wc -l < cmds)" -ge 10 ] || bad "bisectctl -h lists too few commands"
while read -r cmd; do
	has "$man/bisectctl.1" ".B $cmd"
	usage=$("$ctl" "$cmd" -h | sed -n '1s/^usage: //p')
	n=$((n + 1))
	grep -qF -- "$(printf '%s' "$usage" | sed 's/\\/\\e/g')" \
	    "$man/bisectctl.1" || bad "bisectctl.1 lacks the usage of $cmd"
done < cmds
for prog in "$ctl" "$daemon"; do
	page=$man/bisectctl.1
	[ "$prog" = "$daemon" ] && page=$man/bisectd.8
	# An option line: two spaces, the option, two or more spaces.
	"$prog" -h | awk '/^  -/ { l = substr($0, 3); i = match(l, /  +/)
	    print i ? substr(l, 1, i - 1) : l }' > opts
	[ -s opts ] || bad "$prog -h lists no options"
	while read -r opt; do
		has "$page" ".B $(printf '%s' "$opt" | sed 's/-/\\-/g')"
	done < opts
done
for code in 0 1 2 3 4; do
	has "$man/bisectctl.1" ".B $code"
done
for code in 0 1 2; do
	has "$man/bisectd.8" ".B $code"
done

# Every section header and key of the example configuration.
example=$src/config/bisectd.conf.example
grep '^\[' "$example" > sections
[ "$(wc -l < sections)" -ge 5 ] || bad "too few sections read"
while read -r section; do
	has "$man/bisectd.conf.5" ".SS $section"
done < sections
sed -n 's/^[[:space:]]\{1,\}\([a-z0-9-]\{1,\}\) *=.*/\1/p' "$example" |
    sort -u > keys
[ "$(wc -l < keys)" -ge 40 ] || bad "too few keys read"
while read -r key; do
	has "$man/bisectd.conf.5" ".B $key"
done < keys

# Installed where man looks.
rm -rf prefix
n=$((n + 1))
if cmake --install "$build" --prefix "$PWD/prefix" > install.log 2>&1; then
	for f in man1/bisectctl.1 man5/bisectd.conf.5 man8/bisectd.8; do
		n=$((n + 1))
		cmp -s "prefix/share/man/$f" "$man/$(basename "$f")" ||
		    bad "cmake --install did not install $f"
	done
	n=$((n + 1))
	MANPATH=$PWD/prefix/share/man man -w bisectd.conf > /dev/null 2>&1 ||
	    bad "man does not find bisectd.conf(5) under the prefix"
else
	bad "cmake --install failed: $(cat install.log)"
fi

echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
