#!/bin/bash
# SPDX-License-Identifier: MIT
# Session 7's tensor-parallel llm_tp runs on a lent multi-GPU machine (the
# plan: README.md, "Session 7 TP runs: plan"). One device command each:
#
#   bash experiments/results/session7_tp_runs.sh cmd1|...|cmd13   (cmd8-13: KIND=h200x2 ...)
#
# Writes everything under $OUT/s7/ and packs it into $OUT/s7-<cmd>.tar.gz
# (the device tool returns at most 8 files). The stall sentinel
# (experiments/common/stall_sentinel.py) runs beside every command.
set -u
cmd=$1
case $cmd in
cmd8 | cmd9 | cmd10 | cmd11 | cmd12 | cmd13) : "${KIND:?set KIND to the lent machine, e.g. h200x2}" ;;
esac
OUT=${OUT:?OUT must be set}
R=$OUT/s7
mkdir -p "$R/tl"
start=$(date +%s)
deadline=$((start + 575))
cd "$(dirname "$0")/../.." || exit 1

# Two halves of the physical cores (hyperthreads stay with their core), for
# two runs side by side: "A-list B-list".
read -r HALF_A HALF_B < <(python3 - <<'PY'
import sys
sys.path.insert(0, "experiments/llm_tp")
import cpu_pinning
c = cpu_pinning.physical_cores()
h = len(c) // 2
fmt = lambda cs: ",".join(str(x) for core in cs for x in core)
print(fmt(c[:h]), fmt(c[h:]))
PY
)
ALL=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')

{ date -u; nvidia-smi; nvidia-smi topo -m; lscpu; echo "half A: $HALF_A"; echo "half B: $HALF_B";
  python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__)'; } \
  > "$R/host-$cmd.txt" 2>&1

python3 experiments/common/stall_sentinel.py 590 "$R/sentinel-$cmd.json" "$R/stop-$cmd" &
sentinel=$!

# run NAME GPUS CPUS ARGS...: one llm_tp run, killed at the command's deadline
run() {
  local name=$1 gpus=$2 cpus=$3
  shift 3
  local left=$((deadline - $(date +%s)))
  echo "$(date -u +%T) start $name on GPUs $gpus (${left} s left)"
  CUDA_VISIBLE_DEVICES=$gpus PYTHONUNBUFFERED=1 timeout "$left" taskset -c "$cpus" \
    python3 experiments/llm_tp/llm_tp.py "$@" --warmup 5 --intra-op-threads 1 --pin-cores \
      --max-queue-delay 30 --out "$R/$name.json" --md "$R/$name.md" \
      --profile-dir "$R/tl/$name" --profile-all-ranks --quiet > "$R/$name.log" 2>&1
  local rc=$?  # before any $(...): a command substitution resets $?
  echo "$(date -u +%T) end $name: exit $rc"
}

DS=(--model deepseek --model-scale small)
DN=(--model dense --model-scale small)
PH=(--duration 120 --lp-alone-duration 30)
case $cmd in
cmd1)
  echo "$(date -u +%T) cuda_tp2 test"
  CUDA_VISIBLE_DEVICES=0,1 timeout 170 python3 experiments/llm_tp/tests/cuda_tp2.py \
    > "$R/cuda_tp2.log" 2>&1
  rc=$?
  echo "$(date -u +%T) cuda_tp2 exit $rc"
  run llm_tp-deepseek-tp2-h100x4-r3 0,1 "$HALF_A" "${DS[@]}" --tp 2 --rate 1 "${PH[@]}" &
  p1=$!
  run llm_tp-dense-tp2-rate05-h100x4-r1 2,3 "$HALF_B" "${DN[@]}" --tp 2 --rate 0.5 "${PH[@]}" &
  p2=$!
  wait $p1 $p2 ;;
cmd2)
  run llm_tp-deepseek-tp4-rate05-h100x4-r2 0,1,2,3 "$ALL" "${DS[@]}" --tp 4 --rate 0.5 "${PH[@]}" ;;
cmd3)
  run llm_tp-dense-tp4-rate05-h100x4-r2 0,1,2,3 "$ALL" "${DN[@]}" --tp 4 --rate 0.5 "${PH[@]}" ;;
cmd4)
  run llm_tp-deepseek-tp2-rate05-h100x4-r4 0,1 "$HALF_A" "${DS[@]}" --tp 2 --rate 0.5 "${PH[@]}" &
  p1=$!
  run llm_tp-dense-tp2-h100x4-r2 2,3 "$HALF_B" "${DN[@]}" --tp 2 --rate 1 "${PH[@]}" &
  p2=$!
  wait $p1 $p2 ;;
# Session 10 (README.md, "Session 10 TP runs: plan"): a 2-GPU host, one
# TP-2 run a command on both GPUs and every core.
cmd5)
  echo "$(date -u +%T) cuda_tp2 test"
  CUDA_VISIBLE_DEVICES=0,1 timeout 170 python3 experiments/llm_tp/tests/cuda_tp2.py \
    > "$R/cuda_tp2.log" 2>&1
  echo "$(date -u +%T) cuda_tp2 exit $?"
  run llm_tp-deepseek-tp2-rate05-h200x2-r1 0,1 "$ALL" "${DS[@]}" --tp 2 --rate 0.5 "${PH[@]}" ;;
cmd6)
  run llm_tp-dense-tp2-h200x2-r1 0,1 "$ALL" "${DN[@]}" --tp 2 --rate 1 "${PH[@]}" ;;
cmd7)
  run llm_tp-deepseek-tp2-h200x2-r1 0,1 "$ALL" "${DS[@]}" --tp 2 --rate 1 "${PH[@]}" ;;
# After session 11 (README.md, "TP runs after the ring model: plan"): the
# ring model's first unseen runs. KIND names the lent machine in the run
# names (h200x2, h100x4, ...).
cmd8)
  echo "$(date -u +%T) cuda_tp2 test"
  CUDA_VISIBLE_DEVICES=0,1 timeout 170 python3 experiments/llm_tp/tests/cuda_tp2.py \
    > "$R/cuda_tp2.log" 2>&1
  echo "$(date -u +%T) cuda_tp2 exit $?"
  run "llm_tp-deepseek-tp2-rate05-${KIND:?}-r2" 0,1 "$ALL" "${DS[@]}" --tp 2 --rate 0.5 "${PH[@]}" ;;
cmd9)
  run "llm_tp-deepseek-tp2-${KIND:?}-r2" 0,1 "$ALL" "${DS[@]}" --tp 2 --rate 1 "${PH[@]}" ;;
cmd10)
  run "llm_tp-dense-tp2-rate05-${KIND:?}-r2" 0,1 "$ALL" "${DN[@]}" --tp 2 --rate 0.5 "${PH[@]}" ;;
cmd11)
  run "llm_tp-deepseek-tp4-rate05-${KIND:?}-r3" 0,1,2,3 "$ALL" "${DS[@]}" --tp 4 --rate 0.5 "${PH[@]}" ;;
cmd12)
  run "llm_tp-deepseek-tp4-${KIND:?}-r2" 0,1,2,3 "$ALL" "${DS[@]}" --tp 4 --rate 1 "${PH[@]}" ;;
# Session 12 (README.md, "TP runs after the ring model: command 6"): the
# dense model at TP 4, planned before it ran.
cmd13)
  run "llm_tp-dense-tp4-rate05-${KIND:?}-r3" 0,1,2,3 "$ALL" "${DN[@]}" --tp 4 --rate 0.5 "${PH[@]}" ;;
*) echo "unknown command $cmd"; exit 2 ;;
esac
touch "$R/stop-$cmd"
wait "$sentinel"
tar czf "$OUT/s7-$cmd.tar.gz" -C "$OUT" s7
ls -la "$R" "$R"/tl/*
for f in "$R"/*.md; do cat "$f"; done
tail -3 "$R/cuda_tp2.log" 2>/dev/null
