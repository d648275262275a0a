#!/usr/bin/env bash
# Compiles an example model and checks it against onnxruntime's reference
# output (relative tolerance 1e-4).
# usage: run_example.sh KILN EXAMPLE_DIR WORK_DIR
# KILN_COMPILE_FLAGS and KILN_RUN as in run_onnx_test.sh (cross testing);
# KILN_REL_L2 compares by relative L2 error instead (tensor-core precisions).
set -eu
kiln=$1 dir=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$dir/model.onnx" -o "$work/model.so" ${KILN_COMPILE_FLAGS:-}
args=()
for f in "$dir"/*.npy; do
  case "$(basename "$f")" in
    expected_*) n=$(basename "$f" .npy); args+=(--expect "${n#expected_}=$f") ;;
    *) args+=(--input "$(basename "$f" .npy)=$f") ;;
  esac
done
tolerance=(--rtol 1e-4 --atol 1e-5)
[ -n "${KILN_REL_L2:-}" ] && tolerance=(--rel-l2 "$KILN_REL_L2")
${KILN_RUN:-"$kiln" run} "$work/model.so" "${args[@]}" "${tolerance[@]}"
