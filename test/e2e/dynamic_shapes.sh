#!/usr/bin/env bash
# One artifact of ONNX's test_reshape_reordered_all_dims (Reshape whose shape
# is a graph input) run with shapes the test data does not have: each result
# against numpy's reshape, and bad shapes must fail the run with the exact
# message naming the node and the condition (exit 1, no crash). The same for
# test_squeeze (run-time axes). Then ops compiled for the result shape the
# model declares (test_tile, test_expand_dim_changed, test_slice, Resize's
# run-time scales, Pad's run-time pads): values that give that shape run,
# others fail the run naming the input and the declared shape.
#
# usage: dynamic_shapes.sh KILN TESTDATA_NODE_DIR WORK_DIR
set -eu
kiln=$1 node=$2 work=$3
dir=$node/test_reshape_reordered_all_dims
rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
data=$dir/test_data_set_0/input_0.pb

# The shape input has 3 elements. shape.pb for each case; expected.pb = numpy's reshape of the data.
python3 - "$data" "$work" <<'PY'
import sys, numpy as np
from onnx import TensorProto, numpy_helper
data = numpy_helper.to_array(TensorProto.FromString(open(sys.argv[1], "rb").read()))
work = sys.argv[2]
def write(name, tensor_name, array):
    t = numpy_helper.from_array(array, tensor_name)
    open(f"{work}/{name}.pb", "wb").write(t.SerializeToString())
for case, shape in {"flat": [24, 1, 1], "two_d": [6, -1, 1], "copy": [0, 0, -1],
                    "bad_count": [4, 2, 2], "two_infer": [-1, -1, 3],
                    "negative": [4, -2, 3]}.items():
    write(case, "shape", np.array(shape, dtype=np.int64))
    if not case.startswith(("bad", "two_infer", "negative")):
        target = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        write(case + "_expected", "reshaped", data.reshape(target))
PY

for case in flat two_d copy; do
  out=$("$kiln" run "$work/model.so" --input "$data" --input "$work/$case.pb" \
        --expect "$work/${case}_expected.pb")
  grep -q "^expect 'reshaped': PASS" <<<"$out" || { echo "$case: $out"; exit 1; }
done

check_error() {
  local case=$1 expected=$2 err status=0
  err=$("$kiln" run "$work/model.so" --input "$data" --input "$work/$case.pb" 2>&1 >/dev/null) || status=$?
  if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
    echo "$case: exit $status, stderr: $err"
    echo "expected: $expected"
    exit 1
  fi
}
prefix="error: the model's run failed: node 'Reshape_0': Reshape:"
check_error bad_count "$prefix the shape's element count differs from the input's"
check_error two_infer "$prefix the shape has more than one -1"
check_error negative "$prefix the shape has a negative dim other than -1"

# Squeeze with run-time axes (ONNX's test_squeeze: x [1,3,4,5], axes [1]):
# axis 0 against numpy, then a dim that is not 1 and an axis out of range.
dir=$node/test_squeeze
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
data=$dir/test_data_set_0/input_0.pb
python3 - "$data" "$work" <<'PY'
import sys, numpy as np
from onnx import TensorProto, numpy_helper
data = numpy_helper.to_array(TensorProto.FromString(open(sys.argv[1], "rb").read()))
work = sys.argv[2]
for case, axes in {"sq_neg": [-4], "sq_dim": [1], "sq_range": [4]}.items():
    t = numpy_helper.from_array(np.array(axes, dtype=np.int64), "axes")
    open(f"{work}/{case}.pb", "wb").write(t.SerializeToString())
t = numpy_helper.from_array(np.squeeze(data, axis=0), "y")
open(f"{work}/sq_neg_expected.pb", "wb").write(t.SerializeToString())
PY
out=$("$kiln" run "$work/model.so" --input "$data" --input "$work/sq_neg.pb" \
      --expect "$work/sq_neg_expected.pb")
grep -q "^expect 'y': PASS" <<<"$out" || { echo "sq_neg: $out"; exit 1; }
prefix="error: the model's run failed: node 'Squeeze_0': Squeeze:"
check_error sq_dim "$prefix a squeezed dim is not 1"
check_error sq_range "$prefix an axis is out of range for rank 4"

# Tile's repeats and Expand's shape are graph inputs; the model declares the
# output shape, so the artifact is built for it and checks the values.
write_int64() { # FILE NAME VALUES...
  python3 - "$@" <<'PY'
import sys, numpy as np
from onnx import numpy_helper
t = numpy_helper.from_array(np.array([int(v) for v in sys.argv[3:]], dtype=np.int64), sys.argv[2])
open(sys.argv[1], "wb").write(t.SerializeToString())
PY
}
dir=$node/test_tile
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
data=$dir/test_data_set_0/input_0.pb
write_int64 "$work/tile_bad.pb" y 1 2 3 4
check_error tile_bad "error: the model's run failed: node 'Tile_0': Tile: input 1 'y' must be [7, 6, 4, 2], as the model declares 'z' as [14, 18, 16, 10]"

dir=$node/test_expand_dim_changed
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
data=$dir/test_data_set_0/input_0.pb
# [2, 3, 6] is not the test's [2, 1, 6] but expands data [3, 1] the same way.
write_int64 "$work/expand_other.pb" new_shape 2 3 6
out=$("$kiln" run "$work/model.so" --input "$data" --input "$work/expand_other.pb" \
      --expect "$dir/test_data_set_0/output_0.pb")
grep -q "^expect 'expanded': PASS" <<<"$out" || { echo "expand_other: $out"; exit 1; }
write_int64 "$work/expand_bad.pb" new_shape 1 1 6
check_error expand_bad "error: the model's run failed: node 'Expand_0': Expand: input 1 'new_shape' does not expand [3, 1] to [2, 3, 6], the shape the model declares for 'expanded'"

# Slice with run-time starts/ends/axes/steps (test_slice: x [20,10,5],
# declared y [3,10,5]): other bounds of the same extent gather the right
# rows (numpy's x[5:8]); bounds of another extent fail the run.
dir=$node/test_slice
set0=$dir/test_data_set_0
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
write_int64 "$work/slice_starts.pb" starts 5 0
write_int64 "$work/slice_ends.pb" ends 8 10
write_int64 "$work/slice_ends_bad.pb" ends 9 10
python3 - "$set0/input_0.pb" "$work/slice_expected.pb" <<'PY'
import sys
from onnx import TensorProto, numpy_helper
x = numpy_helper.to_array(TensorProto.FromString(open(sys.argv[1], "rb").read()))
open(sys.argv[2], "wb").write(numpy_helper.from_array(x[5:8], "y").SerializeToString())
PY
out=$("$kiln" run "$work/model.so" --input "$set0/input_0.pb" \
      --input "$work/slice_starts.pb" --input "$work/slice_ends.pb" \
      --input "$set0/input_3.pb" --input "$set0/input_4.pb" \
      --expect "$work/slice_expected.pb")
grep -q "^expect 'y': PASS" <<<"$out" || { echo "slice: $out"; exit 1; }
status=0
err=$("$kiln" run "$work/model.so" --input "$set0/input_0.pb" \
      --input "$work/slice_starts.pb" --input "$work/slice_ends_bad.pb" \
      --input "$set0/input_3.pb" --input "$set0/input_4.pb" 2>&1 >/dev/null) || status=$?
expected="error: the model's run failed: node 'Slice_0': Slice: the run-time starts/ends/axes/steps give a result of a shape other than [3, 10, 5], the one the model declares for 'y'"
if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
  echo "slice_bad: exit $status, stderr: $err"; exit 1
fi
# Resize with run-time scales (test_resize_upsample_scales_linear: X
# [1,1,2,2], declared Y [1,1,4,4]): scales 2.2 give the same extent but
# other coordinates (against ONNX's reference evaluator); scales 3 give
# another extent and fail the run.
dir=$node/test_resize_upsample_scales_linear
set0=$dir/test_data_set_0
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
python3 - "$dir/model.onnx" "$set0/input_0.pb" "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator
x = numpy_helper.to_array(TensorProto.FromString(open(sys.argv[2], "rb").read()))
work = sys.argv[3]
def write(name, tensor_name, array):
    open(f"{work}/{name}.pb", "wb").write(numpy_helper.from_array(array, tensor_name).SerializeToString())
other = np.array([1, 1, 2.2, 2.2], dtype=np.float32)
write("resize_scales", "scales", other)
write("resize_bad", "scales", np.array([1, 1, 3, 3], dtype=np.float32))
(y,) = ReferenceEvaluator(onnx.load(sys.argv[1])).run(None, {"X": x, "scales": other})
write("resize_expected", "Y", y)
PY
out=$("$kiln" run "$work/model.so" --input "$set0/input_0.pb"       --input "$work/resize_scales.pb" --expect "$work/resize_expected.pb")
grep -q "^expect 'Y': PASS" <<<"$out" || { echo "resize: $out"; exit 1; }
data=$set0/input_0.pb
check_error resize_bad "error: the model's run failed: node 'Resize_0': Resize: input 2 'scales' gives a result shape other than the declared [1, 1, 4, 4] of 'Y'"

# Pad with run-time pads (x [1,3,4,5]): other pads of the same totals,
# negative ones (crops) included, against onnxruntime; pads
# of other totals fail the run.
for pad in constant reflect; do
  dir=$node/test_${pad}_pad
  set0=$dir/test_data_set_0
  "$kiln" compile "$dir/model.onnx" -o "$work/model.so"
  python3 - "$dir/model.onnx" "$set0" "$work" "$pad" <<'PY'
import sys, numpy as np, onnx, onnxruntime
from onnx import TensorProto, numpy_helper
model, set0, work, pad = sys.argv[1:]
m = onnx.load(model)
inputs = {i.name: numpy_helper.to_array(TensorProto.FromString(open(f"{set0}/input_{n}.pb", "rb").read()))
          for n, i in enumerate(m.graph.input)}
def write(name, tensor_name, array):
    open(f"{work}/{name}.pb", "wb").write(numpy_helper.from_array(array, tensor_name).SerializeToString())
# The test's pads give [1,3,7,12] (constant) and [1,3,6,7] (reflect).
other = [0, 0, -1, 9, 0, 0, 4, -2] if pad == "constant" else [0, 0, 2, 0, 0, 0, 0, 2]
inputs["pads"] = np.array(other, dtype=np.int64)
write(pad + "_pads", "pads", inputs["pads"])
write(pad + "_bad", "pads", np.array([0, 0, 1, 1, 0, 0, 1, 2], dtype=np.int64))
(y,) = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, inputs)
write(pad + "_expected", "y", y)
PY
  extra=()
  [ "$pad" = constant ] && extra=(--input "$set0/input_2.pb")
  out=$("$kiln" run "$work/model.so" --input "$set0/input_0.pb" \
        --input "$work/${pad}_pads.pb" "${extra[@]}" --expect "$work/${pad}_expected.pb")
  grep -q "^expect 'y': PASS" <<<"$out" || { echo "$pad pad: $out"; exit 1; }
done
status=0
err=$("$kiln" run "$work/model.so" --input "$set0/input_0.pb" --input "$work/reflect_bad.pb" 2>&1 >/dev/null) || status=$?
expected="error: the model's run failed: node 'Pad_0': Pad: input 1 'pads' gives a result shape other than the declared [1, 3, 6, 7] of 'y'"
if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
  echo "pad_bad: exit $status, stderr: $err"; exit 1
fi

# ReduceSum with run-time axes, no keepdims (data [3,2,2], declared [3,2]):
# axes [2] and [-1] reduce the other candidate dim (against numpy); axes [0]
# give another shape and [5] is out of range: both fail the run.
dir=$node/test_reduce_sum_do_not_keepdims_random
data=$dir/test_data_set_0/input_0.pb
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
python3 - "$data" "$work" <<'PY'
import sys, numpy as np
from onnx import TensorProto, numpy_helper
x = numpy_helper.to_array(TensorProto.FromString(open(sys.argv[1], "rb").read()))
work = sys.argv[2]
def write(name, tensor_name, array):
    open(f"{work}/{name}.pb", "wb").write(numpy_helper.from_array(array, tensor_name).SerializeToString())
for case, axes in {"sum_last": [2], "sum_neg": [-1], "sum_bad": [0], "sum_range": [5]}.items():
    write(case, "axes", np.array(axes, dtype=np.int64))
write("sum_expected", "reduced", x.sum(axis=2))
PY
for case in sum_last sum_neg; do
  out=$("$kiln" run "$work/model.so" --input "$data" --input "$work/$case.pb" \
        --expect "$work/sum_expected.pb")
  grep -q "^expect 'reduced': PASS" <<<"$out" || { echo "$case: $out"; exit 1; }
done
prefix="error: the model's run failed: node 'ReduceSum_0': ReduceSum: input 1 'axes'"
check_error sum_bad "$prefix reduces dims that do not give the declared [3, 2] of 'reduced'"
check_error sum_range "$prefix has an axis out of range for rank 3"

# NonMaxSuppression on 2 batches x 3 classes x 60 random boxes (corners in
# any order, many overlaps, tied scores) with run-time max/IoU/score inputs,
# against onnxruntime at several settings: the row count differs per run.
python3 - "$work" <<'PY'
import sys, numpy as np, onnx, onnxruntime
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
inputs = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [2, 60, 4]),
          helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, 60]),
          helper.make_tensor_value_info("max", TensorProto.INT64, [1]),
          helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
          helper.make_tensor_value_info("thr", TensorProto.FLOAT, [1])]
node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"], ["sel"])
out = helper.make_tensor_value_info("sel", TensorProto.INT64, None)
model = helper.make_model(helper.make_graph([node], "nms", inputs, [out]),
                          opset_imports=[helper.make_opsetid("", 11)])
onnx.save(model, f"{work}/nms.onnx")
rng = np.random.default_rng(7)
boxes = rng.uniform(0, 10, (2, 60, 4)).astype(np.float32)
scores = np.round(rng.uniform(0, 1, (2, 3, 60)), 1).astype(np.float32)  # ties
ort = onnxruntime.InferenceSession(f"{work}/nms.onnx", providers=["CPUExecutionProvider"])
for case, (m, iou, thr) in enumerate([(10, 0.5, 0.3), (100, 0.2, 0.0), (3, 0.7, 0.9), (0, 0.5, 0.0)]):
    feeds = {"boxes": boxes, "scores": scores, "max": np.array([m], np.int64),
             "iou": np.array([iou], np.float32), "thr": np.array([thr], np.float32)}
    (sel,) = ort.run(None, feeds)
    for name, value in feeds.items():
        open(f"{work}/nms{case}_{name}.pb", "wb").write(numpy_helper.from_array(value, name).SerializeToString())
    open(f"{work}/nms{case}_expected.pb", "wb").write(numpy_helper.from_array(sel, "sel").SerializeToString())
PY
"$kiln" compile "$work/nms.onnx" -o "$work/nms.so"
for case in 0 1 2 3; do
  args=()
  for name in boxes scores max iou thr; do args+=(--input "$work/nms${case}_$name.pb"); done
  out=$("$kiln" run "$work/nms.so" "${args[@]}" --expect "$work/nms${case}_expected.pb")
  grep -q "^expect 'sel': PASS" <<<"$out" || { echo "nms $case: $out"; exit 1; }
done

# Unique of 200 small integers (sorted and in first-occurrence order) and of
# the rows of a [60, 3] float matrix with repeats, all four outputs against
# onnxruntime.
python3 - "$work" <<'PY'
import sys, numpy as np, onnx, onnxruntime
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(3)
cases = {"u_ints": (rng.integers(-15, 15, (200,)).astype(np.int64), {"sorted": 1}),
         "u_first": (rng.integers(0, 40, (10, 20)).astype(np.int64), {"sorted": 0}),
         "u_rows": (rng.integers(0, 3, (60, 3)).astype(np.float32) * 0.5, {"axis": 0})}
for name, (x, attrs) in cases.items():
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    outs = ["Y", "indices", "inverse_indices", "counts"]
    node = helper.make_node("Unique", ["X"], outs, **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", elem, list(x.shape))],
                              [helper.make_tensor_value_info(o, elem if o == "Y" else TensorProto.INT64, None) for o in outs])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), f"{work}/{name}.onnx")
    results = onnxruntime.InferenceSession(f"{work}/{name}.onnx", providers=["CPUExecutionProvider"]).run(None, {"X": x})
    open(f"{work}/{name}_X.pb", "wb").write(numpy_helper.from_array(x, "X").SerializeToString())
    for o, r in zip(outs, results):
        open(f"{work}/{name}_{o}.pb", "wb").write(numpy_helper.from_array(r, o).SerializeToString())
PY
for name in u_ints u_first u_rows; do
  "$kiln" compile "$work/$name.onnx" -o "$work/$name.so"
  args=()
  for o in Y indices inverse_indices counts; do args+=(--expect "$work/${name}_$o.pb"); done
  out=$("$kiln" run "$work/$name.so" --input "$work/${name}_X.pb" "${args[@]}")
  [ "$(grep -c ": PASS" <<<"$out")" = 4 ] || { echo "$name: $out"; exit 1; }
done

# STFT with a run-time frame_step (test_stft: 128 samples, declared 15
# frames of 16): a step giving 13 frames, and a zero step, fail the run.
dir=$node/test_stft
"$kiln" compile "$dir/model.onnx" -o "$work/model.so"
data=$dir/test_data_set_0/input_0.pb
python3 - "$work" <<'PY'
import sys, numpy as np
from onnx import numpy_helper
for case, v in {"stft_step9": 9, "stft_step0": 0}.items():
    open(f"{sys.argv[1]}/{case}.pb", "wb").write(numpy_helper.from_array(np.array(v, np.int64), "frame_step").SerializeToString())
PY
for case in stft_step9 stft_step0; do
  status=0
  err=$("$kiln" run "$work/model.so" --input "$data" --input "$work/$case.pb" \
        --input "$dir/test_data_set_0/input_2.pb" 2>&1 >/dev/null) || status=$?
  expected="error: the model's run failed: node 'STFT_0': STFT: input 1 'frame_step' must be positive and give 15 frames of 16 samples from 128, as the model declares 'output' as [1, 15, 9, 2]"
  if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
    echo "$case: exit $status, stderr: $err"; exit 1
  fi
done

# MelWeightMatrix with constant extents (40 mel bins, dft 512) and run-time
# sample rate and band edges, against ONNX's reference evaluator at two
# settings.
python3 - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
work = sys.argv[1]
consts = [helper.make_node("Constant", [], ["mels"], value=numpy_helper.from_array(np.array(40, np.int64))),
          helper.make_node("Constant", [], ["dft"], value=numpy_helper.from_array(np.array(512, np.int64)))]
node = helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["w"])
inputs = [helper.make_tensor_value_info("rate", TensorProto.INT64, []),
          helper.make_tensor_value_info("lo", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("hi", TensorProto.FLOAT, [])]
graph = helper.make_graph(consts + [node], "mel", inputs, [helper.make_tensor_value_info("w", TensorProto.FLOAT, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, f"{work}/mel.onnx")
for case, (rate, lo, hi) in enumerate([(16000, 20.0, 8000.0), (22050, 0.0, 11025.0)]):
    feeds = {"rate": np.array(rate, np.int64), "lo": np.array(lo, np.float32), "hi": np.array(hi, np.float32)}
    (w,) = ReferenceEvaluator(model).run(None, feeds)
    for name, value in feeds.items():
        open(f"{work}/mel{case}_{name}.pb", "wb").write(numpy_helper.from_array(value, name).SerializeToString())
    open(f"{work}/mel{case}_expected.pb", "wb").write(numpy_helper.from_array(w, "w").SerializeToString())
PY
"$kiln" compile "$work/mel.onnx" -o "$work/mel.so"
for case in 0 1; do
  out=$("$kiln" run "$work/mel.so" --input "$work/mel${case}_rate.pb" --input "$work/mel${case}_lo.pb" \
        --input "$work/mel${case}_hi.pb" --expect "$work/mel${case}_expected.pb")
  grep -q "^expect 'w': PASS" <<<"$out" || { echo "mel $case: $out"; exit 1; }
done

# TopK with k a graph input and no declared result shape: results of
# run-time extent, against onnxruntime at k = 3, 0 and 7 (the whole row);
# k = 9 > 7 fails the run.
python3 - "$work" <<'PY'
import sys, numpy as np, onnx, onnxruntime
from onnx import TensorProto as T, helper as h, numpy_helper
work = sys.argv[1]
g = h.make_graph([h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=1)], "tk",
                 [h.make_tensor_value_info("x", T.FLOAT, [3, 7]),
                  h.make_tensor_value_info("k", T.INT64, [1])],
                 [h.make_tensor_value_info("v", T.FLOAT, None),
                  h.make_tensor_value_info("i", T.INT64, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), f"{work}/topk.onnx")
x = np.round(np.random.default_rng(0).standard_normal((3, 7)), 1).astype(np.float32)  # ties
s = onnxruntime.InferenceSession(f"{work}/topk.onnx", providers=["CPUExecutionProvider"])
def write(name, tensor_name, array):
    open(f"{work}/{name}.pb", "wb").write(numpy_helper.from_array(array, tensor_name).SerializeToString())
write("topk_x", "x", x)
for k in (3, 0, 7, 9):
    write(f"topk_k{k}", "k", np.array([k], np.int64))
    if k <= 7:
        v, i = s.run(None, {"x": x, "k": np.array([k], np.int64)})
        write(f"topk_v{k}", "v", v)
        write(f"topk_i{k}", "i", i)
PY
"$kiln" compile "$work/topk.onnx" -o "$work/topk.so"
for k in 3 0 7; do
  out=$("$kiln" run "$work/topk.so" --input "$work/topk_x.pb" --input "$work/topk_k$k.pb" \
        --expect "$work/topk_v$k.pb" --expect "$work/topk_i$k.pb")
  [ "$(grep -c ": PASS" <<<"$out")" = 2 ] || { echo "topk $k: $out"; exit 1; }
done
status=0
err=$("$kiln" run "$work/topk.so" --input "$work/topk_x.pb" --input "$work/topk_k9.pb" 2>&1 >/dev/null) || status=$?
expected="error: the model's run failed: node 'topk': TopK: k is out of range for a dim of 7"
if [ "$status" != 1 ] || [ "$err" != "$expected" ]; then
  echo "topk_bad: exit $status, stderr: $err"; exit 1
fi
echo "PASS"
