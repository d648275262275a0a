#!/usr/bin/env bash
# Compiles one ONNX backend-test directory with kiln, runs every
# test_data_set_* through the artifact and compares with its outputs using
# the ONNX runner's tolerance. Honors the expected-failure list: a listed test
# that fails passes here (and prints the reason); a listed test that passes
# fails here, so the line gets removed.
#
# usage: run_onnx_test.sh KILN TEST_DIR WORK_DIR XFAIL_FILE ID [RTOL ATOL]
# Cross testing: KILN_COMPILE_FLAGS (e.g. --target=aarch64-linux-gnu) is added
# to `kiln compile`, and KILN_RUN (e.g. "qemu-aarch64 -L ... kiln-run")
# replaces `kiln run`. KILN_ASSEMBLE_FLAGS (e.g. --target=cuda) compiles the
# model once more with those flags, for code that cannot run here but must
# build (CUDA kernels through ptxas, HIP code objects); that artifact is not
# run. Several flag sets are separated by '|'.
set -u
kiln=$1 dir=$2 work=$3 xfail_file=$4 id=$5
rtol=${6:-1e-3} atol=${7:-1e-7}

reason=$(awk -v id="$id" '$1 == id { $1 = ""; sub(/^ +/, ""); print; exit }' "$xfail_file")

# --input-shape flags for the graph inputs of test_data_set_0 (a model with
# symbolic dims is compiled for the shapes of its test data).
data_shapes() {
  python3 - "$dir/model.onnx" "$dir/test_data_set_0" <<'PY'
import glob, sys, onnx
model = onnx.load(sys.argv[1], load_external_data=False)
inits = {t.name for t in model.graph.initializer}
names = [i.name for i in model.graph.input if i.name not in inits]
files = sorted(glob.glob(sys.argv[2] + "/input_*.pb"), key=lambda f: int(f.rsplit("_", 1)[1][:-3]))
for name, f in zip(names, files):
    t = onnx.load_tensor(f)
    print(f"--input-shape={name}=" + ",".join(str(d) for d in t.dims))
PY
}

run() {
  rm -rf "$work" && mkdir -p "$work" || return 1
  local err shapes=""
  if ! err=$("$kiln" compile "$dir/model.onnx" -o "$work/model.so" ${KILN_COMPILE_FLAGS:-} 2>&1); then
    echo "$err"
    grep -qE "has a symbolic dim|not supported on GPU targets yet" <<<"$err" || return 1
    shapes=$(data_shapes) || return 1
    echo "compiling for the test data's shapes: $shapes"
    "$kiln" compile "$dir/model.onnx" -o "$work/model.so" ${KILN_COMPILE_FLAGS:-} $shapes || return 1
  fi
  if [ -n "${KILN_ASSEMBLE_FLAGS:-}" ]; then
    local flags i=0
    IFS='|' read -ra flags <<<"$KILN_ASSEMBLE_FLAGS"
    for set_flags in "${flags[@]}"; do
      i=$((i + 1))
      "$kiln" compile "$dir/model.onnx" -o "$work/model-device$i.so" $set_flags ${shapes:-} || return 1
    done
  fi
  local found=0
  for set in "$dir"/test_data_set_*; do
    [ -d "$set" ] || continue
    found=1
    local args=()
    for f in $(ls "$set"/input_*.pb 2>/dev/null | sort -V); do args+=(--input "$f"); done
    for f in $(ls "$set"/output_*.pb 2>/dev/null | sort -V); do args+=(--expect "$f"); done
    echo "--- $(basename "$set")"
    ${KILN_RUN:-"$kiln" run} "$work/model.so" "${args[@]}" --rtol "$rtol" --atol "$atol" || return 1
  done
  [ "$found" = 1 ] || { echo "no test_data_set_* in $dir"; return 1; }
}

if run; then
  if [ -n "$reason" ]; then
    echo "UNEXPECTED PASS: $id is listed in $(basename "$xfail_file") ($reason); remove that line"
    exit 1
  fi
  echo "PASS: $id"
  exit 0
fi
if [ -n "$reason" ]; then
  echo "XFAIL: $id ($reason)"
  exit 0
fi
echo "FAIL: $id"
exit 1
