#!/usr/bin/env bash
# String tensors end to end beyond ONNX's node tests: ONNX's
# test_cast_STRING_to_FLOAT artifact run on strings its test data does not
# have (spaces, a '+' sign, NaN/INF spellings, an out-of-range value) against
# numpy's float32 parse, then a string that is not a number must fail the run
# naming the node and the element (exit 1, no crash). ONNX's
# test_strnorm_model_monday_casesensintive_upper, compiled for its declared
# output [3], must fail the run when a different number of strings is kept,
# and StringNormalizer with no declared output shape returns the run's count.
#
# usage: strings.sh KILN TESTDATA_DIR WORK_DIR
set -eu
kiln=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$data/node/test_cast_STRING_to_FLOAT/model.onnx" -o "$work/cast.so"

python3 - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
work = sys.argv[1]
def write(name, tensor_name, values, shape):
    t = helper.make_tensor(tensor_name, TensorProto.STRING, shape,
                           [v.encode() for v in values])
    open(f"{work}/{name}.pb", "wb").write(t.SerializeToString())
texts = [" 1.5", "+2", "-0", "NaN", "-INF", "inf", "1e-3 ", "3e40",
         "-7", "0.1", "65504", "1e-46"]
write("good", "input", texts, [3, 4])
with np.errstate(over="ignore"):  # 3e40 is inf in float32, as intended
    expected = np.array([float(t) for t in texts]).astype(np.float32)
open(f"{work}/good_expected.pb", "wb").write(
    numpy_helper.from_array(expected.reshape(3, 4), "output").SerializeToString())
write("bad", "input", texts[:5] + ["1.5x"] + texts[6:], [3, 4])
write("monday", "x", ["monday", "tuesday", "MONDAY", "friday"], [4])
write("two_kept", "x", ["monday", "tuesday", "monday", "friday"], [4])

# StringNormalizer without a declared output shape: its extent is the run's.
node = helper.make_node("StringNormalizer", ["x"], ["y"], name="norm",
                        case_change_action="LOWER", is_case_sensitive=0,
                        stopwords=["Monday"])
graph = helper.make_graph(
    [node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [4])],
    [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
onnx.save(model, f"{work}/undeclared.onnx")

# Data movement on strings (Transpose, Concat, Gather, Slice, Reshape)
# against numpy's object arrays.
words = np.array([["ab", "", "cé"], ["d", "ef", "g h"]], dtype=object)
nodes = [helper.make_node("Transpose", ["w"], ["t"], perm=[1, 0]),
         helper.make_node("Concat", ["t", "t"], ["c"], axis=0),
         helper.make_node("Gather", ["c", "idx"], ["g"], axis=0),
         helper.make_node("Slice", ["g", "starts", "ends", "axes", "steps"], ["s"]),
         helper.make_node("Reshape", ["s", "shape"], ["out"])]
inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in
         [("idx", [5, 0, 3]), ("starts", [1]), ("ends", [-3]), ("axes", [1]),
          ("steps", [-1]), ("shape", [-1])]]
graph = helper.make_graph(
    nodes, "moves", [helper.make_tensor_value_info("w", TensorProto.STRING, [2, 3])],
    [helper.make_tensor_value_info("out", TensorProto.STRING, [6])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          f"{work}/moves.onnx")
c = np.concatenate([words.T, words.T], axis=0)
expected = c[[5, 0, 3]][:, 1:-3:-1].reshape(-1)
write("moves_in", "w", list(words.reshape(-1)), [2, 3])
write("moves_expected", "out", list(expected), [6])
PY

out=$("$kiln" run "$work/cast.so" --input "$work/good.pb" --expect "$work/good_expected.pb")
grep -q "^expect 'output': PASS" <<<"$out" || { echo "good: $out"; exit 1; }

check_error() {
  local so=$1 input=$2 expected=$3 err status=0
  err=$("$kiln" run "$so" --input "$input" 2>&1 >/dev/null) || status=$?
  if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
    echo "$input: exit $status, stderr: $err"
    echo "expected: $expected"
    exit 1
  fi
}
check_error "$work/cast.so" "$work/bad.pb" \
  "error: the model's run failed: node 'Cast_0': Cast: element 5 \"1.5x\" is not a float32 number"

norm=$data/simple/test_strnorm_model_monday_casesensintive_upper
"$kiln" compile "$norm/model.onnx" -o "$work/norm.so"
out=$("$kiln" run "$work/norm.so" --input "$work/monday.pb")
grep -q "^output 'y': string \[3\] \[\"TUESDAY\", \"MONDAY\", \"FRIDAY\"\]" <<<"$out" ||
  { echo "monday: $out"; exit 1; }
check_error "$work/norm.so" "$work/two_kept.pb" \
  "error: the model's run failed: node 'StringNormalizer_0': StringNormalizer: the number of strings kept differs from the declared output extent 3"

"$kiln" compile "$work/undeclared.onnx" -o "$work/undeclared.so"
out=$("$kiln" run "$work/undeclared.so" --input "$work/monday.pb")
grep -q "^output 'y': string \[2\] \[\"tuesday\", \"friday\"\]" <<<"$out" ||
  { echo "undeclared: $out"; exit 1; }
"$kiln" compile "$work/moves.onnx" -o "$work/moves.so"
out=$("$kiln" run "$work/moves.so" --input "$work/moves_in.pb" --expect "$work/moves_expected.pb")
grep -q "^expect 'out': PASS (strings equal)" <<<"$out" || { echo "moves: $out"; exit 1; }
echo "strings: all cases passed"
