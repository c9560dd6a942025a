#!/usr/bin/env bash
# real-serve.sh: serve mode on a real engine.  From a llama.cpp checkout,
# builds llama-server twice (as the checkout builds it, and with its CPU
# SIMD kernels off), packs eight releases in llama.cpp's release-asset
# layout, four fast then four slow, writes a random-weights llama model
# with the checkout's SPM vocabulary (models/ggml-vocab-llama-spm.gguf,
# so that the server tokenizes text), and bisects the eight under load,
# once on ttft-p90 and once on tpot-p50, with `bisectctl bisect --now`.
# Prints each verdict, the releases and runs measured, the engine-seconds
# spent, and per release measured the latency percentiles with their
# intervals and the client's lag.  A benchmark, not a test: run by hand.
#
#   bench/real-serve.sh LLAMA_CPP_SOURCE [BUILD_DIR]
#
# LLAMA_CPP_SOURCE is a llama.cpp source tree (CMakeLists.txt, gguf-py/,
# models/ggml-vocab-llama-spm.gguf); BUILD_DIR (default: build) holds
# bisectd's bisectctl.  Environment:
#   WORK=DIR      scratch folder (default: a new one under /var/tmp, removed
#                 after); a given one is kept, and the builds and the model
#                 already in it are reused
#   JOBS=N        compile jobs (default 2); compiles run under nice -n 19
#   RATE=R        requests a second, Poisson arrivals (default 4)
#   REQUESTS=N    measured requests a run (default 24), after 2 warm-up
#   PROMPT=W      prompt words a request (default 48)
#   OUTPUT=T      output tokens a request (default 32)
#   PARALLEL=N    llama-server's slots, -np (default 2)
#   THREADS=N     llama-server -t (default 1)
#   REPS=N        runs (server starts) a release at first (default 3)
#   THRESHOLD=P   the bisects' threshold (default 20%)
#   MODEL="EMBD FF LAYERS HEADS"   the model's shape (default "256 768 2 4")
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
llama_args real-serve "$@"
rate=${RATE:-4}
requests=${REQUESTS:-24}
prompt=${PROMPT:-48}
output=${OUTPUT:-32}
parallel=${PARALLEL:-2}
threads=${THREADS:-1}
reps=${REPS:-3}
threshold=${THRESHOLD:-20%}
read -r n_embd n_ff n_layer n_head <<< "${MODEL:-256 768 2 4}"
vocab=$src/models/ggml-vocab-llama-spm.gguf

llama_setup
[ -s "$vocab" ] || die "no $vocab in the checkout"

# ---- the two builds ----
llama_build llama-server fast
llama_build llama-server "$llama_slow_name" "${llama_slow[@]}"

# ---- the model ----
# Random F16 weights with a real tokenizer (32,000 tokens): the output
# layer is most of a decoded token's cost.
model=$work/random-llama-spm.gguf
if [ ! -s "$model" ]; then
	echo "model: $n_layer layers, $n_embd wide, ffn $n_ff, $n_head heads, vocabulary of $vocab"
	PYTHONPATH=$src/gguf-py "$py" "$here/random-llama.py" "$model" \
	    "$n_embd" "$n_ff" "$n_layer" "$n_head" 0 "$vocab"
fi

# ---- the releases ----
llama_pack llama-server

# ---- the bisects ----
port=$(( 30000 + $$ % 20000 ))
llama_conf bench/real-serve.sh "$model" random-llama-spm llama-server
cat >> "$conf" <<EOF
	mode = serve
	command = {bin}/build/bin/llama-server -m {weights} --host 127.0.0.1 --port $port -t $threads -np $parallel -c $((parallel * 1024))
	url = http://127.0.0.1:$port/v1/completions
	load-rate = $rate
	load-arrival = poisson
	load-requests = $requests
	load-warmup = 2
	load-prompt = $prompt
	load-output = $output
	reps = $reps
	warmup = 0
	timeout = 10m
	metric = ttft-p90
	threshold = $threshold
EOF
"$ctl" -c "$conf" check-config > /dev/null

status=()
for metric in ttft-p90 tpot-p50; do
	echo
	echo "== bisectctl -c $conf bisect --now --metric $metric llama-server $good..$bad"
	llama_bisect "-$metric" --metric "$metric" llama-server "$good..$bad"
	status+=("$metric $bisect_rc $bisect_ns")
done
db=$work/state/bisectd.db

# ---- the figures ----
"$py" - "$work" "$db" "$expect" "${status[@]}" <<'EOF'
import json, sqlite3, sys

work, db, expect = sys.argv[1:4]
con = sqlite3.connect(db)
runs, conf, fails, eng_ns = con.execute(
    "SELECT count(*), sum(confirm), sum(failure IS NOT NULL), "
    "coalesce(sum(wall_ns), 0) FROM run").fetchone()
print()
for st in sys.argv[4:]:
    metric, code, wall = st.split()
    doc = json.load(open("%s/verdict-%s.json" % (work, metric)))
    v = doc.get("verdict", {})
    cps = v.get("change_points") or []
    fb = cps[0].get("first_bad") if cps else v.get("first_bad")
    print("%-9s verdict %s (exit %s), first bad %s (expected %s)%s, "
          "%.0f s wall" % (metric, v.get("status"), code, fb, expect,
          "" if fb == expect else "  WRONG", int(wall) / 1e9))
print("runs      %d server starts (%d confirmation, %d failed), "
      "%.0f engine-seconds" % (runs, conf or 0, fails or 0, eng_ns / 1e9))
print()

def iv(f):
    if not f or f.get("value") is None:
        return "-"
    ci = f.get("ci") or [None, None]
    if ci[0] is None:
        return "%.3g" % f["value"]
    return "%.3g [%.3g, %.3g]" % (f["value"], ci[0], ci[1])

doc = json.load(open("%s/verdict-ttft-p90.json" % work))
print("per release (mean over runs, 95% interval; ms):")
for r in doc.get("releases", []):
    s = r.get("serve") or {}
    if not s.get("runs"):
        continue
    f = s.get("figures_ms", {})
    print("  %-6s n %-2s ttft p50 %s p90 %s | tpot p50 %s | e2e p90 %s | "
          "lag p99 %s" % (r["version"], s.get("runs"), iv(f.get("ttft-p50")),
          iv(f.get("ttft-p90")), iv(f.get("tpot-p50")), iv(f.get("e2e-p90")),
          iv(s.get("lag_p99_ms"))))
EOF
echo
echo "verdicts: $work/verdict-*.json; reports: $work/report-*.txt; store: $db"
