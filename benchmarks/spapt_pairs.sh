#!/usr/bin/env bash
# GPR's default against the single GP (model_choice=fixed) on a SPAPT kernel, seed by seed,
# several runs at once on a many-core machine: each run pinned to its own pair of cores
# (taskset; OpenMP follows the mask), with its own journal and compile cache, so that runs
# share no files. The two arms of a seed run side by side, under the same load.
#
#   bash benchmarks/spapt_pairs.sh KERNELS FIRST_SEED LAST_SEED OUT [MINUTES]
#
# KERNELS: one kernel or several, comma-separated (bicg,dgemv3); the runs of all of them
# share the cores, the first kernel's runs start first (name the longest first).
# MINUTES (whole) bounds the command: runs still going then stop after their trial.
# The single GP's arm is the GP the issue started from: model_choice=fixed,
# derived_inputs=none; the default's arm takes every option at its default.
#
# Runs resume from their journals (results/spapt/pairs/), so the command can be repeated
# in time slices. Each run writes OUT/<kernel>-<arm>-<seed>/tuning_gpr_runs.csv (one row);
# benchmarks/spapt_pairs_table.py pairs them.
set -euo pipefail
kernels=$1 first=$2 last=$3 out=$4 minutes=${5:-1000}
end=$(($(date +%s) + ${minutes%.*} * 60))  # every run stops by then (resumed next time)
cores=$(nproc)
slots=$((cores / 2))
mkdir -p results/spapt/pairs "$out"
jobs=()
for kernel in ${kernels//,/ }; do
  for seed in $(seq "$first" "$last"); do
    for arm in default fixed; do jobs+=("$kernel $seed $arm"); done
  done
done
run() {
  local slot=$1 kernel=$2 seed=$3 arm=$4 option=() left=$((end - $(date +%s)))
  [ "$left" -lt 30 ] && return 0
  [ "$arm" = fixed ] && option=(--strategy-option model_choice=fixed
    --strategy-option derived_inputs=none)
  taskset -c "$((2 * slot)),$((2 * slot + 1))" "${PYTHON:-python3}" benchmarks/spapt_tuning.py \
    --strategy gpr --strategy-option n_init=26 "${option[@]}" --kernels "$kernel" \
    --budget 100 --runs 1 --seed "$seed" --max-minutes "$(awk "BEGIN {print $left / 60}")" \
    --journal "results/spapt/pairs/$kernel-$arm-$seed.db" \
    --cache-dir "results/spapt/pairs/cache-$kernel-$arm-$seed" --out "$out/$kernel-$arm-$seed" \
    >"$out/$kernel-$arm-$seed.log" 2>&1 || echo "$kernel $arm $seed stopped ($?)"
}
queue=$(mktemp -d)
echo 0 >"$queue/next"
take() {  # the index of the next job not yet taken (one counter, under a lock)
  flock "$queue/lock" bash -c 'n=$(cat "$1"); echo $((n + 1)) >"$1"; echo "$n"' _ "$queue/next"
}
worker() {  # slot w runs the next job in the list whenever it is free
  local w=$1 j
  while j=$(take) && [ "$j" -lt ${#jobs[@]} ]; do
    # shellcheck disable=SC2086
    run "$w" ${jobs[$j]}
  done
}
for ((w = 0; w < slots; w++)); do worker "$w" & done
wait
rm -rf "$queue"
