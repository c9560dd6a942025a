#!/bin/sh
# drill-bench.sh: what a commit bisect costs in builds.  For each range
# size n it makes a git repository of a small C engine with n commits
# after a good tag (a per-token slowdown at a random commit, a commit that
# does not compile at another), runs `bisectctl bisect --now --commits`
# over it, and prints the builds it started beside the goal of
# ceil(log2 n) + 3, and the runs it measured (warm-ups and confirmations
# included), with whether it named the slow commit.
#
# Usage: bench/drill-bench.sh [BUILD_DIR]     (default: build)
#   SIZES="16 64 256"   range sizes (commits after the good tag)
#   TRIALS=3            bisects per size, each with its own positions
# Needs: the build's bisectd/bisectctl, git, cc and sqlite3.
set -eu

build=$(cd "${1:-build}" && pwd)
sizes=${SIZES:-16 64 256}
trials=${TRIALS:-3}
ctl=$build/bisectd/bisectctl

for tool in git cc sqlite3; do
	command -v $tool >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[ -x "$ctl" ] || { echo "no $ctl: build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

engine() {	# $1: microseconds of work per prompt token, $2: extra line
	cat <<EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define PER_TOKEN_US $1
static double cpu_ms(void) { struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char **argv) { int p = 0;
  for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], "-p"))
    p = atoi(argv[i + 1]);
  double t0 = cpu_ms(), want = 0.5 + p * PER_TOKEN_US / 1000.0;
  volatile double x = 0;
  while (cpu_ms() - t0 < want) x += 1;
  printf("prefill_ms=%.4f\n", cpu_ms() - t0);
  return 0; }
$2
EOF
}

log2ceil() {	# ceil(log2 $1)
	n=$1 k=0 p=1
	while [ $p -lt "$n" ]; do p=$((p * 2)); k=$((k + 1)); done
	echo $k
}

export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp"
printf '%6s %6s %8s %6s %6s %s\n' n trial builds goal runs named
sum_builds=0 sum_goal=0 count=0
for n in $sizes; do
	t=1
	while [ $t -le "$trials" ]; do
		dir=r$n-$t
		# slow at 2..n, broken just before it half the time
		slow=$(( $(od -An -N2 -tu2 /dev/urandom) % (n - 1) + 2 ))
		broken=0
		[ $(( $(od -An -N1 -tu1 /dev/urandom) % 2 )) -eq 1 ] &&
		    [ $slow -gt 2 ] && broken=$((slow - 1))
		git init -q $dir
		(
			cd $dir
			git config user.name bench
			git config user.email bench@example.org
			engine 8 "" > engine.c
			git add engine.c && git commit -q -m base && git tag good
			i=1
			while [ $i -le "$n" ]; do
				if [ $i -eq "$broken" ]; then
					engine 8 "int broken(void) {" > engine.c
				elif [ $i -ge "$slow" ]; then
					engine 24 "/* $i */" > engine.c
				else
					engine 8 "/* $i */" > engine.c
				fi
				git commit -q -am "commit $i"
				[ $i -eq "$slow" ] && git tag slow
				i=$((i + 1))
			done
			git tag bad
		)
		cat > $dir.conf <<CONF
[bisectd]
	database = $dir.db
	cache = $dir-cache
	max-busy = 100%
[weights "w"]
	path = w.bin
[engine "eng"]
	source = git:$dir
	command = {bin}/engine -p {prompt}
	parser = regex:prefill_ms=([0-9.]+)
	regex-unit = ms
	prompts = 128,512
	gen = 16
	build = cc -O0 -o {out}/engine {src}/engine.c
CONF
		echo w > w.bin
		"$ctl" -c $dir.conf bisect --now --commits eng good..bad \
		    --format json > $dir.json 2>/dev/null || true
		builds=$(sqlite3 $dir.db "SELECT sum(builds) FROM commit_build")
		runs=$(sqlite3 $dir.db "SELECT count(*) FROM run")
		want=$(git -C $dir rev-parse slow)
		named=no
		grep -q "\"first_bad\": \"$want\"" $dir.json && named=yes
		goal=$(( $(log2ceil $n) + 3 ))
		printf '%6d %6d %8d %6d %6d %s\n' $n $t $builds $goal $runs \
		    "$named$([ $broken -gt 0 ] && echo ' (broken before)')"
		sum_builds=$((sum_builds + builds))
		sum_goal=$((sum_goal + goal))
		count=$((count + 1))
		rm -rf $dir $dir-cache
		t=$((t + 1))
	done
done
echo "mean builds per bisect $(echo "scale=2; $sum_builds / $count" | bc 2>/dev/null || echo "$sum_builds/$count"), mean goal $(echo "scale=2; $sum_goal / $count" | bc 2>/dev/null || echo "$sum_goal/$count")"
