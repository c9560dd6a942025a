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
#   PYTHON=P      a python3 with numpy (default: the first python3 that has it)
# Needs cmake, a C and C++ compiler, zip, sqlite3, python3 with numpy
# (Debian: python3-numpy) and what the checkout's gguf-py imports
# (python3-sentencepiece, python3-yaml).
set -euo pipefail

die() { echo "real-engine: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: bench/real-engine.sh LLAMA_CPP_SOURCE [BUILD_DIR]"
src=$(cd "$1" && pwd) || die "no folder '$1'"
build=${2:-build}
ctl=$(cd "$build" 2>/dev/null && pwd)/bisectd/bisectctl
jobs=${JOBS:-2}
prompts=${PROMPTS:-128,512}
samples=${SAMPLES:-5}
threads=${THREADS:-1}
threshold=${THRESHOLD:-20%}
linear=${LINEAR:-measure}
read -r n_embd n_ff n_layer n_head n_vocab <<< "${MODEL:-256 768 2 4 2048}"

if [ ! -f "$src/CMakeLists.txt" ] || [ ! -d "$src/gguf-py/gguf" ]; then
	die "'$src' is not a llama.cpp checkout (no CMakeLists.txt or gguf-py/)"
fi
[ -x "$ctl" ] || die "no $ctl: build bisectd first (cmake --build $build)"
case $linear in measure|estimate) ;; *) die "LINEAR is measure or estimate, not '$linear'" ;; esac
for tool in cmake c++ zip sqlite3; do
	command -v "$tool" >/dev/null || die "$tool is needed"
done
# The first python3 with numpy: a virtualenv's or pyenv's may lack it.
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || die "no python3 with numpy (Debian: apt-get install python3-numpy)"
PYTHONPATH=$src/gguf-py "$py" -c 'import gguf' 2>/dev/null ||
    die "the checkout's gguf-py does not import: $(PYTHONPATH=$src/gguf-py \
"$py" -c 'import gguf' 2>&1 | tail -n 1) (Debian: python3-sentencepiece, python3-yaml)"

if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d /var/tmp/real-engine.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)

# ---- the two builds ----
# Release, CPU backend only, static (so that the archive needs nothing
# beside the binary), no curl, only the llama-bench target.  The slow
# build is the portable one with every x86 SIMD extension above SSE4.2
# off: the same source, scalar and SSE kernels instead of AVX ones.
common=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_SERVER=OFF
    -DGGML_CCACHE=OFF)
slow_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF
    -DGGML_F16C=OFF -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF
    -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
    -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)

build_llama() {	# $1: fast or slow; the rest: extra cmake options
	local name=$1 dir=$work/llama-$1
	shift
	if [ -x "$dir/bin/llama-bench" ]; then
		echo "llama-bench ($name): reusing $dir/bin/llama-bench"
		return
	fi
	echo "llama-bench ($name): building in $dir (log: $dir.log) ..."
	{ nice -n 19 cmake -S "$src" -B "$dir" "${common[@]}" "$@" &&
	    nice -n 19 cmake --build "$dir" --target llama-bench -j "$jobs"
	} > "$dir.log" 2>&1 || die "the $name build failed: see $dir.log"
	[ -x "$dir/bin/llama-bench" ] || die "no $dir/bin/llama-bench after the build"
}
build_llama fast
build_llama slow "${slow_flags[@]}"

# ---- the model ----
# A llama-architecture model with random F16 weights and no tokenizer
# (llama-bench feeds random token ids): small enough to run a few hundred
# times, large enough that the cost per prompt token dominates a run.
model=$work/random-llama.gguf
if [ ! -s "$model" ]; then
	echo "model: $n_layer layers, $n_embd wide, ffn $n_ff, $n_head heads, $n_vocab tokens"
	PYTHONPATH=$src/gguf-py "$py" - "$model" "$n_embd" "$n_ff" "$n_layer" \
	    "$n_head" "$n_vocab" <<'EOF'
import sys
import numpy as np
import gguf

path = sys.argv[1]
embd, ff, layers, heads, vocab = (int(a) for a in sys.argv[2:7])
rng = np.random.default_rng(20250220)

def weight(*shape):
    # numpy's row-major shape is ggml's ne reversed: (rows, columns)
    scale = 1.0 / np.sqrt(shape[-1])
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16)

def norm():
    return np.ones(embd, dtype=np.float32)

w = gguf.GGUFWriter(path, "llama")
w.add_name("random llama for bisectd")
w.add_context_length(4096)
w.add_embedding_length(embd)
w.add_feed_forward_length(ff)
w.add_block_count(layers)
w.add_head_count(heads)
w.add_head_count_kv(heads)
w.add_rope_dimension_count(embd // heads)
w.add_layer_norm_rms_eps(1e-5)
w.add_vocab_size(vocab)
w.add_tokenizer_model("none")
w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
w.add_tensor("token_embd.weight", weight(vocab, embd))
for i in range(layers):
    b = f"blk.{i}."
    w.add_tensor(b + "attn_norm.weight", norm())
    for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(b + t + ".weight", weight(embd, embd))
    w.add_tensor(b + "ffn_norm.weight", norm())
    w.add_tensor(b + "ffn_gate.weight", weight(ff, embd))
    w.add_tensor(b + "ffn_up.weight", weight(ff, embd))
    w.add_tensor(b + "ffn_down.weight", weight(embd, ff))
w.add_tensor("output_norm.weight", norm())
w.add_tensor("output.weight", weight(vocab, embd))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
EOF
fi

# ---- the releases ----
# b4801..b4804 are the fast build, b4805..b4808 the slow one.  Each
# archive also names its release, so that no two have the same hash.
first=4801
rel=$work/releases
rm -rf "$rel" "$work/pack"
mkdir -p "$rel"
for i in 0 1 2 3 4 5 6 7; do
	v=b$((first + i))
	kind=fast
	[ "$i" -ge 4 ] && kind=slow
	mkdir -p "$work/pack/$v/build/bin"
	cp "$work/llama-$kind/bin/llama-bench" "$work/pack/$v/build/bin/"
	echo "$v ($kind build)" > "$work/pack/$v/build/bin/RELEASE"
	(cd "$work/pack/$v" && zip -qr "$rel/llama-$v-bin-ubuntu-x64.zip" build)
done
good=b$first
bad=b$((first + 7))
expect=b$((first + 4))

# ---- the bisect ----
conf=$work/bisectd.conf
rm -rf "$work/state"
cat > "$conf" <<EOF
# written by bench/real-engine.sh
[bisectd]
	database = state/bisectd.db
	cache = state/cache
	# Every run is measured on the machine as it is; busy runs are flagged.
	max-busy = 100%
	max-wait = 1s

[weights "random-llama"]
	path = $model

[engine "llama"]
	source = dir:releases
	asset = llama-{version}-bin-ubuntu-x64.zip
	command = {bin}/build/bin/llama-bench -m {weights} -p {prompt} -n 0 -t {threads} -r $samples -o json
	parser = llama-bench
	weights = random-llama
	prompts = $prompts
	fit = $prompts
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
t0=$(date +%s%N)
set +e
"$ctl" -c "$conf" bisect --now --format json llama "$good..$bad" \
    > "$work/verdict.json" 2> "$work/bisect.log"
status=$?
set -e
t1=$(date +%s%N)
case $status in
0|3|4) ;;	# no regression, regression, unknown
*) tail -n 20 "$work/bisect.log" >&2; die "bisectctl exited $status" ;;
esac
"$ctl" -c "$conf" report llama "$good..$bad" > "$work/report.txt" || true
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
    "$linear_how" "$((t1 - t0))" "$prompts" <<'EOF'
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
