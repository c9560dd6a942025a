#!/bin/sh
# gpu-check.sh: bisectd's GPU readout beside nvidia-smi's, on a machine
# with a real NVIDIA GPU.  It benches one release of the demo's engine
# (which works on the CPU; the GPU is read while it runs) with the real
# libnvidia-ml.so.1, then prints what bisectd recorded (the machine's
# GPU fields and each run's figures, `bisectctl runs`) beside
# `nvidia-smi -q` and nvidia-smi's own readings, taken every 100 ms
# while each run went on, for comparison by eye.
#
# It needs only a folder packed from a build, not the build tree, nor the
# libraries bisectctl links (the GPU machine may not have them):
#
#   sh bench/gpu-check.sh --pack build gpu-check   # here, after a build
#   # carry the folder gpu-check (a few MiB) to the GPU machine, then:
#   sh gpu-check/gpu-check.sh                      # there
#
# --pack copies bisectctl, the shared libraries ldd says it and the fake
# engine load (all but the C library's own, and never libnvidia-ml, which
# must be the machine's), the demo's weights and one release, and this
# script.  Set BISECTD_NVML_LIBRARY to try another NVML file,
# CUDA_VISIBLE_DEVICES to pick the GPUs, and GPU_LOAD to a command that
# works the GPU (the demo's engine does not), run beside each run and
# killed at its end, so that clocks, power and memory move; e.g.
#   GPU_LOAD="python3 -c 'import torch; a = torch.rand(8192, 8192,
#     device=\"cuda\"); [a @ a for _ in range(10**6)]'"
set -eu

if [ "${1:-}" = "--pack" ]; then
	build=$(cd "${2:-build}" && pwd)
	out=${3:-gpu-check}
	mkdir -p "$out/lib" "$out/releases"
	cp "$build/bisectd/bisectctl" "$0" "$out/"
	cp "$build/demo/weights.bin" "$out/"
	cp "$build/tests/demo-cpu/basert-0.2.3.tar.gz" "$out/releases/"
	tmp=$(mktemp -d)
	tar xzf "$out/releases/basert-0.2.3.tar.gz" -C "$tmp"
	for bin in "$build/bisectd/bisectctl" $(find "$tmp" -type f -perm -u+x)
	do
		ldd "$bin" | awk '/=> \// { print $3 }'
	done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
	    grep -v libnvidia-ml | while read -r lib; do
		cp -L "$lib" "$out/lib/"
	done
	rm -rf "$tmp"
	du -sh "$out"
	exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ctl=$here/bisectctl
command -v nvidia-smi >/dev/null || { echo "no nvidia-smi here" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

# Each run: nvidia-smi's readings at 10 Hz beside the engine, and a
# second of it so that there are readings to compare.
cat > wrap.sh <<'WRAP'
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu,memory.used,clocks_event_reasons.active --format=csv,noheader -lms 100 > smi-run$n.csv 2>&1 &
smi=$!
load=
if [ -s load.sh ]; then
	sh load.sh >/dev/null 2>&1 &
	load=$!
fi
sleep 1; "$@"; rc=$?
if [ -n "$load" ]; then
	pkill -P $load 2>/dev/null; kill $load 2>/dev/null; wait $load 2>/dev/null
fi
kill $smi 2>/dev/null; wait $smi 2>/dev/null
exit $rc
WRAP
# The engine sees none of our environment but PATH, HOME and LANG.
[ -z "${GPU_LOAD:-}" ] || printf '%s\n' "$GPU_LOAD" > load.sh
cat > t.conf <<CONF
[bisectd]
	database = t.db
	cache = cache
	max-busy = 100%
[weights "demo"]
	path = $here/weights.bin
[engine "basert"]
	source = dir:$here/releases
	asset = basert-{version}.tar.gz
	command = /bin/sh $tmp/wrap.sh {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -t 1 -r 1 -o json
	env = LD_LIBRARY_PATH=$here/lib
	parser = llama-bench
	prompts = 128,512
	gen = 16
	reps = 2
	warmup = 0
	timeout = 1m
CONF

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
echo "== bisectctl bench (its hygiene lines first)"
"$ctl" -c t.conf bench basert 0.2.3 || echo "bench exited $?"
echo
echo "== bisectctl runs: each run's GPU figures, the machine's GPU fields"
"$ctl" -c t.conf runs basert 0.2.3 | grep -E '^ +[0-9]+  |gpu:|^machine '
echo
for f in smi-run*.csv; do
	[ -e "$f" ] || continue
	echo "== nvidia-smi during ${f#smi-}: index, sm, mem, temp, power, util, memory used, reasons"
	cat "$f"
done
echo
echo "== nvidia-smi -q (identity, clocks, power)"
nvidia-smi -q | grep -E 'Product Name|GPU UUID|Driver Version|CUDA Version|VBIOS|Persistence Mode|MIG Mode|Current +:|Current ECC|Power Limit|Applications Clocks|Default Applications|Locked|SM +:|Memory +:|Graphics +:|GPU Current Temp|Power Draw|Event Reasons|Active|Idle|Slowdown|Power Cap|Energy' | head -120
