# llama-lib.sh: what bench/real-engine.sh and bench/real-serve.sh share,
# sourced by both (bash): checking the llama.cpp checkout and the tools,
# the scratch folder, the fast and slow builds of one llama.cpp target,
# and the eight releases packed from them in llama.cpp's release-asset
# layout (llama-bNNNN-bin-ubuntu-x64.zip holding build/bin/TARGET), four
# fast then four slow.  llama_args sets src, build and jobs from the
# command line; llama_setup sets ctl, py and work; llama_pack rel,
# first (the first release's number), good, bad and expect (the first
# slow one); llama_conf starts the configuration.

# The script's name for messages ($1), then its arguments:
# LLAMA_CPP_SOURCE [BUILD_DIR]; JOBS from the environment.
llama_args() {
	llama_name=$1
	shift
	[ $# -ge 1 ] || die "usage: bench/$llama_name.sh LLAMA_CPP_SOURCE [BUILD_DIR]"
	src=$(cd "$1" 2>/dev/null && pwd) || die "no folder '$1'"
	build=${2:-build}
	jobs=${JOBS:-2}
}

die() { echo "${llama_name:-llama}: $*" >&2; exit 1; }

# Check the checkout, bisectd's build and the tools; find a python3
# with numpy; make the scratch folder (WORK, or a new one removed at
# exit).
llama_setup() {
	if [ ! -f "$src/CMakeLists.txt" ] || [ ! -d "$src/gguf-py/gguf" ]; then
		die "'$src' is not a llama.cpp checkout (no CMakeLists.txt or gguf-py/)"
	fi
	ctl=$(cd "$build" 2>/dev/null && pwd)/bisectd/bisectctl
	[ -x "$ctl" ] || die "no $ctl: build bisectd first (cmake --build $build)"
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
}

# Release, CPU backend only, static (so that the archive needs nothing
# beside the binary), no curl; the server's sources configured, so that
# one build folder makes llama-bench and llama-server alike.  The slow
# build (SLOW=scalar, the default) is the portable one with every x86
# SIMD extension above SSE4.2 off: the same source, scalar and SSE
# kernels instead of AVX ones, a step of ten times or more.  SLOW=avx2
# keeps AVX, AVX2, FMA and F16C and turns AVX-512 and AMX off: on a
# machine with AVX-512 a step of tens of percent, near a threshold.
llama_common=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON
    -DLLAMA_BUILD_SERVER=ON -DGGML_CCACHE=OFF)
llama_off512=(-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF
    -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF
    -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
case ${SLOW:-scalar} in
scalar)
	llama_slow_name=slow
	llama_slow=(-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF
	    -DGGML_FMA=OFF -DGGML_F16C=OFF "${llama_off512[@]}") ;;
avx2)
	llama_slow_name=avx2
	llama_slow=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON
	    -DGGML_FMA=ON -DGGML_F16C=ON "${llama_off512[@]}") ;;
*)
	die "SLOW is scalar or avx2, not '$SLOW'" ;;
esac

# Build target $1 (llama-bench, llama-server) as $2 (fast or slow) in
# $work/llama-$2; the rest: extra cmake options.  A target already built
# there is reused, and the other target's objects with it.
llama_build() {
	local target=$1 name=$2 dir=$work/llama-$2
	shift 2
	if [ -x "$dir/bin/$target" ]; then
		echo "$target ($name): reusing $dir/bin/$target"
		return
	fi
	echo "$target ($name): building in $dir (log: $dir.log) ..."
	{ nice -n 19 cmake -S "$src" -B "$dir" "${llama_common[@]}" "$@" &&
	    nice -n 19 cmake --build "$dir" --target "$target" -j "$jobs"
	} > "$dir.log" 2>&1 || die "the $name build failed: see $dir.log"
	[ -x "$dir/bin/$target" ] || die "no $dir/bin/$target after the build"
}

# Pack $1 of both builds as releases b4801..b4804 (fast) and
# b4805..b4808 (the slow build) in $work/releases.  Each archive also names its
# release, so that no two have the same hash.
llama_pack() {
	local target=$1 i v kind
	first=4801
	rel=$work/releases
	rm -rf "$rel" "$work/pack"
	mkdir -p "$rel"
	for i in 0 1 2 3 4 5 6 7; do
		v=b$((first + i))
		kind=fast
		[ "$i" -ge 4 ] && kind=$llama_slow_name
		mkdir -p "$work/pack/$v/build/bin"
		cp "$work/llama-$kind/bin/$target" "$work/pack/$v/build/bin/"
		echo "$v ($kind build)" > "$work/pack/$v/build/bin/RELEASE"
		(cd "$work/pack/$v" && zip -qr "$rel/llama-$v-bin-ubuntu-x64.zip" build)
	done
	good=b$first
	bad=b$((first + 7))
	expect=b$((first + 4))
}

# Start $work/bisectd.conf (conf) for script $1 over the packed releases
# with weights $2 named $3, up to the engine section $4's source, asset
# and weights; the caller appends the engine's other keys.  The store
# starts empty.
llama_conf() {
	conf=$work/bisectd.conf
	rm -rf "$work/state"
	cat > "$conf" <<EOF
# written by $1
[bisectd]
	database = state/bisectd.db
	cache = state/cache
	# Every run is measured on the machine as it is; busy runs are flagged.
	max-busy = 100%
	max-wait = 1s

[weights "$3"]
	path = $2

[engine "$4"]
	source = dir:releases
	asset = llama-{version}-bin-ubuntu-x64.zip
	weights = $3
EOF
}

# `bisectctl bisect --now --format json` with the rest ([--metric M]
# ENGINE RANGE) into $work/verdict$1.json (its notes in bisect$1.log),
# then its text report into report$1.txt; sets bisect_rc (0, 3 or 4:
# no regression, regression, unknown) and bisect_ns, its wall time.
llama_bisect() {
	local sfx=$1 t0
	shift
	t0=$(date +%s%N)
	set +e
	"$ctl" -c "$conf" bisect --now --format json "$@" \
	    > "$work/verdict$sfx.json" 2> "$work/bisect$sfx.log"
	bisect_rc=$?
	set -e
	bisect_ns=$(( $(date +%s%N) - t0 ))
	case $bisect_rc in
	0|3|4) ;;
	*) tail -n 20 "$work/bisect$sfx.log" >&2
	   die "bisectctl exited $bisect_rc" ;;
	esac
	"$ctl" -c "$conf" report "$@" > "$work/report$sfx.txt" || true
}
