#!/usr/bin/env bash
# real-engine.sh: bisectd on a real engine.  From a llama.cpp checkout,
# builds llama-bench twice (as the checkout builds it, and with its CPU
# SIMD kernels off), packs eight releases in llama.cpp's release-asset
# layout (llama-bNNNN-bin-ubuntu-x64.zip holding build/bin/llama-bench),
# four fast then four slow, writes a random-weights llama model with the
# checkout's gguf-py, and runs `bisectctl bisect --now` over the eight.
# Prints the first bad release, the kind, the releases and runs measured,
# the engine-seconds spent, and their ratio to a linear scan of all eight
# releases at the same accuracy.  A benchmark, not a test: run by hand.
#
#   bench/real-engine.sh LLAMA_CPP_SOURCE [BUILD_DIR]
#
# LLAMA_CPP_SOURCE is a llama.cpp source tree (CMakeLists.txt, gguf-py/);
# BUILD_DIR (default: build) holds bisectd's bisectctl.  Environment:
#   WORK=DIR      scratch folder (default: a new one under /var/tmp, removed
#                 after); a given one is kept, and llama-bench builds and the
#                 model already in it are reused
#   JOBS=N        compile jobs (default 2); compiles run under nice -n 19
#   PROMPTS=L     prompt lengths, all of them in the fit (default 128,512)
#   SAMPLES=N     llama-bench -r: samples per process (default 5)
#   THREADS=N     llama-bench -t (default 1: on a shared machine, OpenMP
#                 threads that spin at barriers turn load into noise)
#   THRESHOLD=P   the bisect's threshold (default 20%)
#   LINEAR=measure|estimate   how the linear scan's cost is found (default
#                 measure: every release's llama-bench is run as many times
#                 as the linear scan would, timed here)
#   MODEL="EMBD FF LAYERS HEADS VOCAB"   the model's shape (default
#                 "256 768 2 4 2048": 2.7 M parameters, 5.5 MB)
#   SLOW=scalar|avx2   the slow build (default scalar: every SIMD extension
#                 above SSE4.2 off, ten times slower or more; avx2: only
#                 AVX-512 and AMX off, tens of percent where the CPU has them)
#   PYTHON=P      a python3 with numpy (default: the first python3 that has it)
# Needs cmake, a C and C++ compiler, zip, sqlite3, python3 with numpy
# (Debian: python3-numpy) and what the checkout's gguf-py imports
# (python3-sentencepiece, python3-yaml).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/llama-lib.sh"
llama_args real-engine "$@"
prompts=${PROMPTS:-128,512}
samples=${SAMPLES:-5}
threads=${THREADS:-1}
threshold=${THRESHOLD:-20%}
linear=${LINEAR:-measure}
read -r n_embd n_ff n_layer n_head n_vocab <<< "${MODEL:-256 768 2 4 2048}"

case $linear in measure|estimate) ;; *) die "LINEAR is measure or estimate, not '$linear'" ;; esac
llama_setup

# ---- the two builds ----
llama_build llama-bench fast
llama_build llama-bench "$llama_slow_name" "${llama_slow[@]}"

# ---- the model ----
# A llama-architecture model with random F16 weights and no tokenizer
# (llama-bench feeds random token ids): small enough to run a few hundred
# times, large enough that the cost per prompt token dominates a run.
model=$work/random-llama.gguf
if [ ! -s "$model" ]; then
	echo "model: $n_layer layers, $n_embd wide, ffn $n_ff, $n_head heads, $n_vocab tokens"
	PYTHONPATH=$src/gguf-py "$py" "$here/random-llama.py" "$model" \
	    "$n_embd" "$n_ff" "$n_layer" "$n_head" "$n_vocab"
fi

# ---- the releases ----
llama_pack llama-bench

# ---- the bisect ----
llama_conf bench/real-engine.sh "$model" random-llama llama
cat >> "$conf" <<EOF
	command = {bin}/build/bin/llama-bench -m {weights} -p {prompt} -n {gen} -t {threads} -r $samples -o json
	parser = llama-bench
	prompts = $prompts
	fit = $prompts
	# Decode too: what else changed reads every cell of the matrix.
	gen = 16
	threads = $threads
	reps = 5
	warmup = 1
	timeout = 10m
	metric = per-token
	threshold = $threshold
EOF
"$ctl" -c "$conf" check-config > /dev/null

echo
echo "== bisectctl -c $conf bisect --now llama $good..$bad"
llama_bisect "" llama "$good..$bad"
status=$bisect_rc
db=$work/state/bisectd.db

# ---- the linear scan at the same accuracy ----
# A linear scan measures all eight releases, each with as many runs per
# fit length as the bisect gave the release it measured most (warm-ups
# included), and then confirms the boundary it finds as the bisect did.
# Its cost per run is the bisect's own per build (estimate) or measured
# here by running every release's llama-bench that many times (measure).
per_cell_runs=$(sqlite3 "$db" "SELECT max(n) FROM (SELECT count(*) AS n
    FROM run WHERE kind = 'pp' AND confirm = 0 GROUP BY release_id, prompt_tokens)")
confirm_ns=$(sqlite3 "$db" "SELECT coalesce(sum(wall_ns), 0) FROM run WHERE confirm = 1")
if [ "$linear" = measure ]; then
	echo "== linear scan: 8 releases x $per_cell_runs runs x ($prompts), timed here"
	linear_ns=0
	for i in 0 1 2 3 4 5 6 7; do
		v=b$((first + i))
		lb=$work/pack/$v/build/bin/llama-bench
		for p in ${prompts//,/ }; do
			for _ in $(seq "$per_cell_runs"); do
				s=$(date +%s%N)
				"$lb" -m "$model" -p "$p" -n 0 -t "$threads" \
				    -r "$samples" -o json > /dev/null 2>&1 ||
				    die "$v: llama-bench -p $p failed"
				linear_ns=$((linear_ns + $(date +%s%N) - s))
			done
		done
	done
	linear_ns=$((linear_ns + confirm_ns))
	linear_how="measured: 8 x $per_cell_runs runs per length, run here, plus the bisect's confirmation"
else
	# The mean run of each build and length, from the bisect's runs.
	linear_ns=$(sqlite3 "$db" "
	    WITH cost AS (
	      SELECT CAST(substr(r.version, 2) AS INTEGER) >= $((first + 4)) AS slow,
	             u.prompt_tokens AS p, avg(u.wall_ns) AS ns
	      FROM run u JOIN release r ON r.id = u.release_id
	      WHERE u.kind = 'pp' AND u.wall_ns IS NOT NULL
	      GROUP BY slow, p)
	    SELECT CAST(sum(ns) * 4 * $per_cell_runs AS INTEGER) FROM cost")
	[ -n "$linear_ns" ] ||
	    die "the bisect measured no release of one of the builds: cannot estimate"
	linear_ns=$((linear_ns + confirm_ns))
	linear_how="estimated: 8 x $per_cell_runs runs per length at the bisect's mean run time per build, plus its confirmation"
fi

# ---- the figures ----
"$py" - "$work/verdict.json" "$db" "$status" "$expect" "$linear_ns" \
    "$linear_how" "$bisect_ns" "$prompts" <<'EOF'
import json, sqlite3, sys

vpath, db, status, expect, linear_ns, linear_how, wall_ns, prompts = sys.argv[1:9]
doc = json.load(open(vpath))
v = doc.get("verdict", {})
con = sqlite3.connect(db)
runs, warm, conf, fails, eng_ns = con.execute(
    "SELECT count(*), sum(warmup), sum(confirm), sum(failure IS NOT NULL), "
    "coalesce(sum(wall_ns), 0) FROM run").fetchone()
measured = [r["version"] for r in doc.get("releases", [])
            if r.get("status") == "measured"]
linear_ns = int(linear_ns)

print()
print("verdict        %s (exit %s)" % (v.get("status"), status))
print("first bad      %s (expected %s)%s" % (v.get("first_bad"), expect,
      "" if v.get("first_bad") == expect else "  WRONG"))
print("kind           %s" % v.get("kind"))
if v.get("fixed_not_estimable"):
    print("               fixed part not estimable: %s" % v["fixed_not_estimable"])
print("measured       %d of 8 releases: %s" % (len(measured), " ".join(measured)))
print("runs           %d (%d warm-up, %d confirmation, %d failed)" %
      (runs, warm or 0, conf or 0, fails or 0))
print("engine-seconds %.1f s (llama-bench processes, the runner's clock)" %
      (eng_ns / 1e9))
print("bisectctl      %.1f s wall" % (int(wall_ns) / 1e9))
print("linear scan    %.1f s (%s)" % (linear_ns / 1e9, linear_how))
print("ratio          %.2f (bisect / linear scan)" % (eng_ns / linear_ns))
print()
print("fit per build, engine-reported samples (prompts %s):" % prompts)
def interval(x, ci, fmt):
    ci = ci or [None, None]
    if x is None:
        return "-"
    if ci[0] is None or ci[1] is None:
        return fmt % x
    return (fmt + " [" + fmt + ", " + fmt + "]") % (x, ci[0], ci[1])

for r in doc.get("releases", []):
    if r.get("status") != "measured":
        continue
    cells = " ".join("pp%s %.1f ms (n %s)" % (k, c.get("ms", 0), c.get("n"))
                     for k, c in sorted((r.get("pp") or {}).items(),
                                        key=lambda kv: int(kv[0])))
    fixed = interval(r.get("fixed_ms"), r.get("fixed_ms_ci"), "%+.2f") + " ms"
    if r.get("fixed_not_estimable"):
        fixed = "not estimable"
    print("  %-6s per-token %s ms  fixed %s  %s" % (r["version"],
          interval(r.get("per_token_ms"), r.get("per_token_ms_ci"), "%.4f"),
          fixed, cells))
    if r.get("fixed_not_estimable"):
        print("         (%s)" % r["fixed_not_estimable"])
EOF
echo
echo "verdict: $work/verdict.json; report: $work/report.txt; store: $db"
