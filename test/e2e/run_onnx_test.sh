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
# replaces `kiln run`.
set -u
kiln=$1 dir=$2 work=$3 xfail_file=$4 id=$5
rtol=${6:-1e-3} atol=${7:-1e-7}

reason=$(awk -v id="$id" '$1 == id { $1 = ""; sub(/^ +/, ""); print; exit }' "$xfail_file")

run() {
  rm -rf "$work" && mkdir -p "$work" || return 1
  "$kiln" compile "$dir/model.onnx" -o "$work/model.so" ${KILN_COMPILE_FLAGS:-} || return 1
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
