#!/bin/sh
# mangen.sh: renders the manual pages from what the programs print and
# from the example configuration, so a page cannot drift from them:
#
#   mangen.sh help BINARY TEMPLATE OUT VERSION    bisectd(8), bisectctl(1)
#   mangen.sh conf EXAMPLE TEMPLATE OUT VERSION   bisectd.conf(5)
#
# The help text of BINARY -h (and, for each command it lists,
# BINARY COMMAND -h) or the example's sections, keys and comments
# become roff; TEMPLATE is the page with the hand-written prose, and a
# line @NAME@ in it stands for the generated part NAME (SYNOPSIS,
# DESCRIPTION, OPTIONS, COMMANDS, DECIDING, EXIT, KEYS).  Run by the
# build (docs/man/CMakeLists.txt).
set -eu

mode=$1 src=$2 template=$3 out=$4 version=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mangen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# roff-safe text on stdin: backslashes as \e, a line starting with a
# dot or a quote kept as text, ASCII hyphens in option names kept.
escape() {
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# An awk function: a line of text that roff would read as a request (a
# leading dot or quote, once indentation is gone) kept as text.
SAFE='function safe(s) { if (s ~ /^[.'"'"']/) s = "\\&" s; return s }'

help_parts() {
	"$src" -h > "$tmp/help"
	name=$(basename "$src")
	# One file per part; the help text's layout: the usage line, a
	# description, then "heading:" sections of two-space indented items
	# (an item starts at column 3, its continuation lines further in).
	escape < "$tmp/help" | awk -v dir="$tmp" -v name="$name" '
	'"$SAFE"'
	function item_flush() {
		if (item == "")
			return
		printf ".TP\n.B %s\n%s\n", head, body > (dir "/" part)
		item = ""
	}
	NR == 1 {
		sub(/^usage: [^ ]+ */, "")
		printf ".B %s\n%s\n", name, $0 > (dir "/SYNOPSIS")
		part = "DESCRIPTION"
		next
	}
	/^[a-z][a-z ]*:$/ {
		item_flush()
		part = toupper(substr($0, 1, length($0) - 1))
		sub(/ STATUS$/, "", part)
		printf "" > (dir "/" part)
		next
	}
	/^$/ { item_flush(); if (part == "DESCRIPTION") print ".PP" > (dir "/" part); next }
	part == "DECIDING" {
		sub(/^ +/, ""); print safe($0) > (dir "/" part); next
	}
	/^  [^ ]/ && (part == "OPTIONS" || part == "EXIT" || part == "COMMANDS" || \
	    (part == "DESCRIPTION" && $0 ~ /^  -/)) {
		if (part == "DESCRIPTION")
			part = "OPTIONS"
		item_flush()
		line = substr($0, 3)
		split_at = match(line, /  +/)
		if (split_at == 0) {
			head = line; body = ""
		} else {
			head = substr(line, 1, split_at - 1)
			body = safe(substr(line, split_at + RLENGTH))
		}
		gsub(/-/, "\\-", head)
		item = head
		next
	}
	/^  +/ && item != "" {
		sub(/^ +/, ""); body = body "\n" safe($0); next
	}
	{
		if (part == "OPTIONS" && item == "")
			part = "DESCRIPTION"
		sub(/^ +/, ""); print safe($0) > (dir "/" part)
	}
	END { item_flush() }
	'
	# Each command with its own usage line.
	if [ -f "$tmp/COMMANDS" ]; then
		sed -n 's/^\.B //p' "$tmp/COMMANDS" | sed 's/\\-/-/g' |
		while read -r cmd; do
			"$src" "$cmd" -h > "$tmp/cmd"
			usage=$(sed -n '1s/^usage: //p' "$tmp/cmd" | escape)
			summary=$(sed -n '3p' "$tmp/cmd" | escape)
			printf '.TP\n.B %s\n.EX\n%s\n.EE\n%s\n' "$cmd" \
			    "$usage" "$summary"
		done > "$tmp/COMMANDS.full"
		mv "$tmp/COMMANDS.full" "$tmp/COMMANDS"
	fi
}

conf_parts() {
	# Every section and key of the example in its order, each key with
	# the comment above it and the value the example gives.
	escape < "$src" | awk -v dir="$tmp" '
	'"$SAFE"'
	function said(   t) { t = text; text = ""; return t }
	/^# / || /^#$/ {
		sub(/^# ?/, "")
		text = text (text == "" ? "" : "\n") safe($0)
		next
	}
	/^\[/ {
		t = said()
		printf ".SS %s\n", $0 > (dir "/KEYS")
		if (t != "")
			printf "%s\n", t > (dir "/KEYS")
		next
	}
	/^[\t ]+#/ {
		sub(/^[\t ]+# ?/, "")
		text = text (text == "" ? "" : "\n") safe($0)
		next
	}
	/^[\t ]+[a-z0-9-]+ *=/ {
		line = $0
		sub(/^[\t ]+/, "", line)
		key = line; sub(/ *=.*/, "", key)
		value = line; sub(/^[^=]*= */, "", value)
		printf ".TP\n.B %s\nExample: %s\n", key, value > (dir "/KEYS")
		t = said()
		if (t != "")
			printf ".br\n%s\n", t > (dir "/KEYS")
		next
	}
	/^$/ {
		if (!seen && text != "")
			printf "%s\n", said() > (dir "/DESCRIPTION")
		seen = 1
		text = ""
	}
	'
}

case $mode in
help) help_parts ;;
conf) conf_parts ;;
*) echo "usage: mangen.sh help|conf SOURCE TEMPLATE OUT VERSION" >&2
	exit 2 ;;
esac

awk -v dir="$tmp" -v version="$version" '
{ gsub(/@VERSION@/, version) }
/^@[A-Z]+@$/ {
	f = dir "/" substr($0, 2, length($0) - 2)
	while ((getline line < f) > 0)
		print line
	close(f)
	next
}
{ print }
' "$template" > "$out.tmp"
mv "$out.tmp" "$out"
