#!/usr/bin/env bash
# Checks that kiln-fuse-attention fused (or did not fuse) attention in a
# model, from the decisions it logs under KILN_LOGS=fusion.
# usage: check_fusion.sh KILN MODEL.onnx fused|unfused WORK_DIR
set -eu
kiln=$1 model=$2 want=$3 work=$4
mkdir -p "$work"
log="$work/fusion.log"
KILN_LOGS=fusion "$kiln" compile "$model" -o "$work/fusion-check.so" 2>"$log" || {
  cat "$log"; echo "check_fusion: compile failed"; exit 1; }
cat "$log"
fused=$(grep -c "fused attention at" "$log" || true)
case "$want" in
  fused) [ "$fused" -ge 1 ] || { echo "check_fusion: expected a fused attention"; exit 1; } ;;
  unfused) [ "$fused" -eq 0 ] || { echo "check_fusion: expected no fused attention"; exit 1; } ;;
  *) echo "check_fusion: want 'fused' or 'unfused', got '$want'"; exit 2 ;;
esac
echo "check_fusion: $fused fused attention(s), as expected ($want)"
