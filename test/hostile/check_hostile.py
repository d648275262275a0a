#!/usr/bin/env python3
"""Hostile and malformed ONNX models and torch.export archives, made here
and fed to `kiln compile`.

    check_hostile.py KILN WORK_DIR

Each case is written to WORK_DIR/NAME.onnx or NAME.pt2 (with its external
data, where it has some) and must be refused: exit code 1, one line on
stderr that starts with "error: " and matches the case's pattern, in at
most 10 s (30 s under a sanitizer) and 1 GB of memory (RLIMIT_AS on the
compiler), never a crash or a hang. Needs numpy and onnx (exit 77 without
them).
"""
import os
import re
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from sanitizers import sanitized  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(77)

LIMIT_BYTES = 1 << 30
LIMIT_SECONDS = 10


def tensor(name, shape=(2, 3)):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets)


def relu(opset=17, **kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="r", **kw)],
                 [tensor("x")], [tensor("y")], opset=opset)


def external(location, length=None):
    t = TensorProto()
    t.name, t.data_type = "w", TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    if length is not None:
        entry = t.external_data.add()
        entry.key, entry.value = "length", str(length)
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [tensor("x")], [tensor("y")], [t])


def raw(nbytes):
    t = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    t.raw_data = (t.raw_data * 2)[:nbytes]
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [tensor("x")], [tensor("y")], [t])


def cases(work):
    """name -> (ModelProto or bytes, pattern of the error line)."""
    good = relu().SerializeToString()
    flipped = bytearray(good)
    flipped[0] ^= 0xFF
    big = [1 << 40, 1 << 40]
    yield "truncated", good[:len(good) // 2], \
        r"is not a valid ONNX model \(protobuf parse failed"
    yield "bitflip_tag", bytes(flipped), r"is not a valid ONNX model"
    yield "empty", b"", r"is empty, not an ONNX model"
    yield "cycle", model(
        [helper.make_node("Relu", ["z"], ["y"], name="a"),
         helper.make_node("Neg", ["y"], ["z"], name="b")],
        [tensor("x")], [tensor("y")]), \
        r"tensor 'z' is used before it is defined .* at node 'a' \(Relu\)"
    yield "dangling_input", model(
        [helper.make_node("Add", ["x", "nothing"], ["y"], name="a")],
        [tensor("x")], [tensor("y")]), \
        r"tensor 'nothing' is used before it is defined"
    yield "duplicate_names", model(
        [helper.make_node("Relu", ["x"], ["y"], name="a"),
         helper.make_node("Neg", ["x"], ["y"], name="b")],
        [tensor("x")], [tensor("y")]), \
        r"tensor 'y' is written twice: by node 'a' \(Relu\) and by node 'b' " \
        r"\(Neg\)"
    yield "writes_graph_input", model(
        [helper.make_node("Neg", ["x"], ["x"], name="b")],
        [tensor("x")], [tensor("x")]), \
        r"tensor 'x' is written twice: by graph input 'x' and by node 'b'"
    yield "negative_dim", model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        [tensor("x", (2, -3))], [tensor("y", (2, 3))]), \
        r"input 'x' dim 1 is -3: dims cannot be negative"
    yield "overflowing_dims", model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        [tensor("x", big)], [tensor("y", big)]), \
        r"input 'x' is refused: its shape \[1099511627776, 1099511627776\] " \
        r"has more elements than 64 bits can count"
    yield "terabyte_input", model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        [tensor("x", (1 << 20, 1 << 20))], [tensor("y", (1 << 20, 1 << 20))]), \
        r"input 'x' is refused: its shape \[1048576, 1048576\] needs 4.4 TB"
    yield "constant_of_shape_terabytes", model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="cos")],
        [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([10**6, 10**6], np.int64),
                                 "shape")]), \
        r"output 'y' is refused: its shape \[1000000, 1000000\] needs 4.0 " \
        r"TB, over Kiln's limit of 1 TiB per tensor at node 'cos' " \
        r"\(ConstantOfShape\)"
    yield "raw_data_short", raw(10), \
        r"tensor 'w' holds 10 bytes, but its shape and type need 24"
    yield "raw_data_long", raw(40), \
        r"tensor 'w' holds 40 bytes, but its shape and type need 24"
    yield "wrong_dtype", model(
        [helper.make_node("MatMul", ["x", "x"], ["y"], name="mm")],
        [helper.make_tensor_value_info("x", TensorProto.BOOL, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 2])]), \
        r"MatMul takes float, double, float16, bfloat16, int32, int64, " \
        r"uint32 or uint64 tensors, not bool at node 'mm' \(MatMul\)"
    yield "missing_input", model(
        [helper.make_node("Clip", [], ["y"], name="c")],
        [tensor("x")], [tensor("y")]), \
        r"node 'c' \(Clip\) has 0 inputs; Clip \(opset 17\) takes 1 to 3"
    yield "empty_required_input", model(
        [helper.make_node("Gemm", ["x", "", "x"], ["y"], name="g")],
        [tensor("x", (3, 3))], [tensor("y", (3, 3))]), \
        r"node 'g' \(Gemm\) leaves input 1 empty, which Gemm requires"
    yield "unknown_domain", relu(domain="com.evil"), \
        r"unsupported ONNX op 'Relu' \(domain 'com.evil'\) at node 'r'"
    yield "opset_99", relu(opset=99), \
        r"the model imports opset 99 of the default ONNX domain; Kiln knows " \
        r"opsets up to 20"
    yield "external_escapes", external("../../etc/passwd"), \
        r"tensor 'w' has an invalid external data location '../../etc/passwd'"
    yield "external_absolute", external("/etc/passwd"), \
        r"tensor 'w' has an invalid external data location '/etc/passwd'"
    os.makedirs(os.path.join(work, "outside"), exist_ok=True)
    with open(os.path.join(work, "outside", "w.bin"), "wb") as f:
        f.write(np.ones(6, np.float32).tobytes())
    link = os.path.join(work, "models", "link.bin")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.lexists(link):
        os.symlink(os.path.join(work, "outside", "w.bin"), link)
    yield "external_symlink_out", external("link.bin"), \
        r"tensor 'w'.*external data.*'link.bin'"
    yield "external_missing", external("missing.bin"), \
        r"tensor 'w': cannot read external data '.*missing.bin': No such file"
    with open(os.path.join(work, "models", "short.bin"), "wb") as f:
        f.write(b"\0" * 8)
    yield "external_short", external("short.bin"), \
        r"tensor 'w' holds 8 bytes, but its shape and type need 24"
    yield "external_bad_offset", external("short.bin", length="lots"), \
        r"tensor 'w' has an invalid external data length 'lots'"
    yield "external_past_end", external("short.bin", length=1 << 62), \
        r"tensor 'w': external data 'short.bin' \(8 bytes\) is shorter " \
        r"than offset 0 \+ length 4611686018427387904"
    yield "control_char_name", model(
        [helper.make_node("Relu", ["x\x1b[2J"], ["y"], name="r")],
        [tensor("x\x1b[2J")], [tensor("y")]), \
        r"control character"
    long_name = "n" * (1 << 20)
    yield "megabyte_name", model(
        [helper.make_node("Relu", ["x"], ["y"], name=long_name)],
        [tensor("x")], [tensor("y")]), \
        r"name of \d+ bytes"
    # Control flow: Ifs nested 20 deep, and a Loop whose unrolling would
    # import millions of nodes (1000 iterations of 2000 Relus).
    def leaf(name):
        return helper.make_graph([helper.make_node("Relu", ["x"], [name])],
                                 name, [], [tensor(name)])
    inner = leaf("y0")
    for depth in range(1, 20):
        inner = helper.make_graph(
            [helper.make_node("If", ["c"], [f"y{depth}"], then_branch=inner,
                              else_branch=leaf(f"e{depth}"))],
            f"b{depth}", [], [tensor(f"y{depth}")])
    yield "if_nested_deep", model(
        [helper.make_node("If", ["c"], ["y"], then_branch=inner,
                          else_branch=leaf("e"))],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         tensor("x")], [tensor("y")]), \
        r"control flow is nested more than 16 deep"
    relus = [helper.make_node("Relu", [f"r{i}"], [f"r{i + 1}"])
             for i in range(2000)]
    # A Loop this size runs as a loop in the artifact (e2e.control_flow);
    # Scan-8 has no such form, so 1000 batches of it are refused before
    # any copy is made.
    body = helper.make_graph(
        [helper.make_node("Identity", ["v"], ["r0"])] + relus, "body",
        [tensor("v", (3,))], [tensor("r2000", (3,))])
    yield "scan8_unrolls_millions", model(
        [helper.make_node("Scan", ["", "x"], ["y"], body=body,
                          num_scan_inputs=1)],
        [tensor("x", (1000, 1, 3))], [tensor("y", (1000, 1, 3))], opset=8), \
        (r"control flow unrolls to more than 1000000 nodes \(Scan-8: 1000 "
         r"batches x 1 steps x 2001 body nodes\) at node 'Scan_0' \(Scan\)")


PT2_SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "fuzz", "corpus", "pt2_import", "mlp.pt2")


def pt2_cases():
    """torch.export archives broken in the ways a hostile or damaged file
    is: the fuzz corpus's MLP (stored zip, JSON program, raw weights) with
    one thing changed each."""
    import io
    import json
    import zipfile
    seed = open(PT2_SEED, "rb").read()

    def rewrite(change):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(seed)) as zin, \
                zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                zout.writestr(info.filename,
                              change(info.filename, zin.read(info.filename)))
        return out.getvalue()

    def edit(suffix, fn):
        def change(name, data):
            if not name.endswith(suffix):
                return data
            j = json.loads(data)
            fn(j)
            return json.dumps(j).encode()
        return rewrite(change)

    def weight(field, value):
        def fn(j):
            j["config"]["0.weight"]["tensor_meta"][field] = value
        return edit("model_weights_config.json", fn)

    def graph(fn):
        return edit("models/model.json",
                    lambda j: fn(j["graph_module"]["graph"]))

    def first_input(g, arg):
        g["nodes"][0]["inputs"][0]["arg"] = arg

    big = [{"as_int": 1 << 40}, {"as_int": 1 << 40}]
    yield "pt2_truncated.pt2", seed[:len(seed) // 2], \
        r"is not a valid \.pt2 archive \(no zip end-of-directory record\)"
    flipped = bytearray(seed)
    for i in range(len(flipped) - 200, len(flipped), 7):
        flipped[i] ^= 0x5A
    yield "pt2_bitflipped_directory.pt2", bytes(flipped), \
        r"is not a valid \.pt2 archive"
    yield "pt2_json_truncated.pt2", rewrite(
        lambda name, data: data[:len(data) // 2]
        if name.endswith("models/model.json") else data), \
        r"entry 'archive/models/model\.json' is not valid JSON"
    yield "pt2_weight_sizes_overflow.pt2", weight("sizes", big), \
        r"tensor 'p_0_weight' has sizes and strides whose extent overflows " \
        r"64 bits"
    yield "pt2_weight_size_negative.pt2", weight(
        "sizes", [{"as_int": -8}, {"as_int": 4}]), \
        r"tensor '0\.weight' of entry .* has a negative size \(-8\)"
    yield "pt2_weight_stride_negative.pt2", weight(
        "strides", [{"as_int": -4}, {"as_int": 1}]), \
        r"tensor 'p_0_weight' has a negative size or stride"
    yield "pt2_weight_offset_past_end.pt2", weight(
        "storage_offset", {"as_int": 1 << 60}), \
        r"tensor 'p_0_weight' \(entry '.*weight_0', 128 bytes\) is " \
        r"shorter than its view needs"
    yield "pt2_input_never_computed.pt2", graph(
        lambda g: first_input(g, {"as_tensor": {"name": "nobody"}})), \
        r"argument 'input' names 'nobody', which is not computed before " \
        r"this node at node 'linear'"
    yield "pt2_cycle.pt2", graph(lambda g: first_input(
        g, {"as_tensor": g["nodes"][-1]["outputs"][0]["as_tensor"]})), \
        r"names 'linear_1', which is not computed before this node at node " \
        r"'linear'"
    yield "pt2_unknown_union_tag.pt2", graph(
        lambda g: first_input(g, {"as_frobnicate": 3})), \
        r"argument 'input' is not a tensor at node 'linear'"
    yield "pt2_input_sizes_overflow.pt2", graph(
        lambda g: g["tensor_values"]["input"].update(sizes=big)), \
        r"input 'input' is refused: its shape \[1099511627776, " \
        r"1099511627776\] has more elements than 64 bits can count"
    yield "pt2_input_terabytes.pt2", graph(
        lambda g: g["tensor_values"]["input"].update(
            sizes=[{"as_int": 1 << 20}, {"as_int": 1 << 20}])), \
        r"input 'input' is refused: its shape \[1048576, 1048576\] needs " \
        r"4\.4 TB"
    yield "pt2_input_size_negative.pt2", graph(
        lambda g: g["tensor_values"]["input"]["sizes"].__setitem__(
            0, {"as_int": -3})), \
        r"input 'input' has a negative size \(-3\)"


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 * LIMIT_BYTES, 4 * LIMIT_BYTES))


def main():
    kiln, work = sys.argv[1], sys.argv[2]
    models = os.path.join(work, "models")
    os.makedirs(models, exist_ok=True)
    failures = []
    count = 0
    asan = sanitized(kiln)
    # A sanitizer slows the compiler 2-3x by design; the bound stays finite.
    seconds = LIMIT_SECONDS * (3 if asan else 1)
    for name, content, pattern in list(cases(work)) + list(pt2_cases()):
        count += 1
        path = os.path.join(models, name if name.endswith(".pt2")
                            else name + ".onnx")
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes)
                    else content.SerializeToString())
        try:
            result = subprocess.run(
                [kiln, "compile", path, "-o", os.path.join(work, "out.so")],
                capture_output=True, timeout=seconds,
                preexec_fn=None if asan else limit)
        except subprocess.TimeoutExpired:
            failures.append(f"{name}: still running after {seconds} s")
            continue
        err = result.stderr.decode(errors="replace")
        lines = err.splitlines()
        if result.returncode != 1:
            failures.append(f"{name}: exit code {result.returncode}: {err!r}")
        elif len(lines) != 1 or not lines[0].startswith("error: "):
            failures.append(f"{name}: not one error line: {err[:300]!r}")
        elif not re.search(pattern, lines[0]):
            failures.append(f"{name}: {lines[0][:300]!r} does not match "
                            f"{pattern!r}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if peak > LIMIT_BYTES:
        failures.append(f"peak RSS of the compiles {peak / 1e9:.2f} GB")
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        sys.exit(1)
    print(f"PASS: {count} hostile models refused, peak RSS "
          f"{peak / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
