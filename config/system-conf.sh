#!/bin/sh
# system-conf.sh IN OUT: the system's bisectd.conf from the example: its
# [bisectd] section stays live but for http and public-url, which would
# open a port nobody asked for; every other section is commented out
# line by line, so that uncommenting one is how a machine starts.
set -eu
awk '
/^\[/ { live = ($0 ~ /^\[bisectd\]/) }
/^[ \t]*(#|$)/ { print; next }
live && !/^[ \t]*(http|public-url)[ \t]*=/ { print; next }
{ print "#" $0 }
' "$1" > "$2.tmp"
mv "$2.tmp" "$2"
