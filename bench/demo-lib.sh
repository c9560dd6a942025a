# demo-lib.sh: what the benchmarks on the demo's fake-engine releases
# share, sourced by bench/run-pace.sh and bench/slurm-bench.sh (sh).

# The lines of an engine section named $1 on the demo's releases in the
# folder $2 (BUILD/demo/releases, or BUILD/tests/demo-cpu timed by the
# CPU clock), from its source to its cells: the caller adds what its
# run wants (warm-ups, the timeout, a runner).
demo_engine() {
	cat <<CONF
[engine "$1"]
	source = dir:$2
	asset = basert-{version}.tar.gz
	command = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -t 1 -r 1 -o json
	parser = llama-bench
	prompts = 128,512
	gen = 16
CONF
}
