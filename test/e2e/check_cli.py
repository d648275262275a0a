#!/usr/bin/env python3
"""Checks of the `kiln` command line (test/e2e/CMakeLists.txt, cli.*).

    check_cli.py CHECK KILN README WORK_DIR

help:      `kiln --help` lists the commands; `kiln <command> --help` lists
           exactly the options that command takes, in its groups.
errors:    a misspelt flag suggests the nearest one; an unknown command, a
           bad -O, a file that is neither ONNX nor kiln IR: one clear line,
           exit 2 (usage) or 1; --version names Kiln and LLVM.
memory:    --max-memory: weights that do not fit are refused before the
           pipelines, running out under the limit is one error line and
           exit 1 with no temporary files left (needs numpy and onnx).
response:  @file response files give the same artifact as the flags.
mlir:      kiln import -> kiln IR -> kiln compile/run/inspect round-trips,
           and an edit of the IR (kiln.add -> kiln.mul) changes the result
           as numpy says (needs numpy and onnx, else exit 77).
graph:     `kiln inspect --graph` draws the example models: as many kernel
           boxes in the SVG as --report lists kernels, fused attention,
           merged contractions, a concatenation in place and the edges'
           shapes named; a .dot file; refusals (artifact, unknown format).
progress:  on a terminal (util-linux `script` gives one) kiln compile shows
           its stages and the kernel count of code generation on one line
           it erases at the end; with stderr not a terminal, nothing.
readme:    README's "Using it" section and the real --help agree: every
           option of every command appears in it, and every flag it shows
           for a command exists in that command's --help.
"""
import os
import re
import shutil
import subprocess
import sys

EXPECTED = {
    "compile": {
        "Input options": {"--input-shape", "--dim", "-o"},
        "Target options": {"--cpu", "--gpu-arch", "--gpu-emulate",
                           "--gpu-precision", "--precision", "--target"},
        "Optimization options": {"-O", "--autotune", "--autotune-cache",
                                 "--autotune-threads", "--conv-layout",
                                 "--max-memory", "--winograd",
                                 "--no-winograd"},
        "Debugging options": {"--dump-dir", "--dump-ir-after", "--emit-mlir",
                              "--logs", "--report", "--time-passes", "-v"},
    },
    "import": {
        "Input options": {"--input-shape", "--dim", "-o"},
        "Debugging options": {"--logs"},
    },
    "inspect": {
        "Debugging options": {"--graph"},
    },
    "run": {
        "Inputs": {"--input", "--random-inputs", "--seed", "--dim"},
        "Outputs": {"--output-dir", "--expect", "--rtol", "--atol",
                    "--rel-l2"},
        "Execution": {"--threads"},
        "General": {"--help"},
    },
    "bench": {
        "Inputs": {"--input", "--random-inputs", "--seed", "--dim"},
        "Execution": {"--threads", "--repeat", "--warmup"},
        "General": {"--help"},
    },
}
GENERIC = {"--help", "--help-list", "--version"}


def kiln(*args, check=True):
    result = subprocess.run([KILN, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit(f"kiln {' '.join(args)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result


def option_groups(command):
    """{group: {flag, ...}} from `kiln COMMAND --help`."""
    text = kiln(command, "--help").stdout
    groups, group = {}, None
    for line in text.splitlines():
        header = re.match(r"^([A-Z][A-Za-z ]+):$", line)
        if header:
            group = header.group(1)
            groups.setdefault(group, set())
            continue
        flag = re.match(r"^  (--?[A-Za-z][\w-]*)", line)
        if flag and group:
            groups[group].add(flag.group(1))
    groups.pop("Generic Options", None)
    return groups


def check_help():
    top = kiln("--help").stdout
    for command in ("compile", "run", "bench", "inspect", "import", "ops"):
        assert re.search(rf"^  {command} +- ", top, re.M), top
    for command, expected in EXPECTED.items():
        got = option_groups(command)
        got = {g: flags for g, flags in got.items() if flags or g in expected}
        assert got == expected, f"kiln {command} --help: {got} != {expected}"
    usage = kiln("compile", "--help").stdout
    assert "USAGE: kiln compile [options] <model.onnx | model.pt2 | model.mlir>" in usage


def expect_error(args, code, pattern):
    result = kiln(*args, check=False)
    assert result.returncode == code, (args, result.returncode, result.stderr)
    assert re.search(pattern, result.stderr, re.M), (args, result.stderr)


def check_errors():
    model = os.path.join(ROOT, "examples", "cnn", "model.onnx")
    expect_error(["compile", model, "--targte=cuda"], 2,
                 r"Did you mean '--target=cuda'\?")
    expect_error(["frob"], 2, r"^error: unknown command 'frob'$")
    expect_error(["compile", model, "-O7"], 2,
                 r"^error: -O takes a level from 0 to 3 \(got -O7\)$")
    expect_error(["compile"], 2, r"^error: compile needs a model file$")
    expect_error(["compile", model, "--conv-layout=nhcw"], 2,
                 r"^error: --conv-layout takes auto, nchw or nhwc "
                 r"\(got 'nhcw'\)$")
    expect_error(["compile", model, "--winograd=3"], 2,
                 r"^error: --winograd takes auto, off, 2 or 4 \(got '3'\)$")
    expect_error(["compile", model, "--no-winograd", "--winograd=4"], 2,
                 r"^error: --no-winograd contradicts --winograd=4$")
    expect_error(["compile", model, "--precision=fp16"], 2,
                 r"^error: --precision takes fp32 or bf16 \(got 'fp16'\)$")
    expect_error(["compile", model, "--precision=bf16", "--target=cuda",
                  "-o", os.path.join(WORK, "x.so")], 1,
                 r"^error: --precision is for CPU targets; --target=cuda "
                 r"takes --gpu-precision$")
    expect_error(["compile", model, "--precision=bf16", "-O0",
                  "-o", os.path.join(WORK, "x.so")], 1,
                 r"^error: --precision=bf16 selects the tiled matmul kernels "
                 r"of -O1 and up; -O0 computes in fp32$")
    expect_error(["compile", README, "-o", os.path.join(WORK, "x.so")], 1,
                 r"^error: '.*README.md' is neither an ONNX model nor kiln "
                 r"IR \(MLIR text starts with 'module' or 'func.func', as "
                 r"kiln import prints it\)$")
    expect_error(["run", "x.so", "--expcet", "y.npy"], 2,
                 r"^error: unknown option '--expcet'; did you mean "
                 r"'--expect'\? \(see kiln run --help\)$")
    version = kiln("--version").stdout
    assert re.search(r"^kiln \d+\.\d+\.\d+$", version, re.M), version
    assert re.search(r"LLVM and MLIR 22\.", version), version


def check_memory():
    """--max-memory: a model whose weights do not fit is refused before the
    pipelines; a compile that runs out under the limit stops with one error
    line, exit 1 and no temporary files left beside the output."""
    try:
        sys.path.insert(0, os.path.join(ROOT, "test", "bigweights"))
        import make_model
    except ImportError:
        print("skipped: needs onnx and numpy")
        sys.exit(77)
    model = os.path.join(ROOT, "examples", "cnn", "model.onnx")
    out_dir = os.path.join(WORK, "out")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    expect_error(["compile", model, "--max-memory=lots"], 2,
                 r"^error: --max-memory takes a size such as 8G, 512M or "
                 r"300K, or none \(got 'lots'\)$")
    big = os.path.join(WORK, "big")
    make_model.make(big, 128, 1024)
    expect_error(["compile", os.path.join(big, "model.onnx"), "-o",
                  os.path.join(out_dir, "big.so"), "--max-memory=100M"], 1,
                 r"^error: the model has 134\.2 MB of weights; compiling it "
                 r"needs about 167\.8 MB, but the limit is 104\.9 MB "
                 r"\(--max-memory\)$")
    expect_error(["compile", model, "-o", os.path.join(out_dir, "cnn.so"),
                  "--max-memory=16M"], 1,
                 r"^error: kiln compile ran out of memory: its limit is "
                 r"16\.8 MB \(--max-memory\)$")
    assert os.listdir(out_dir) == [], os.listdir(out_dir)
    kiln("compile", model, "-o", os.path.join(out_dir, "cnn.so"),
         "--max-memory=none")
    kiln("compile", os.path.join(big, "model.onnx"), "-o",
         os.path.join(out_dir, "big.so"), "--max-memory=2G")


def check_response():
    model = os.path.join(ROOT, "examples", "cnn", "model.onnx")
    args = os.path.join(WORK, "args.txt")
    with open(args, "w") as f:
        f.write("-O1\n--conv-layout=nchw\n-o " + os.path.join(WORK, "r.so") +
                "\n")
    kiln("compile", model, "@" + args)
    kiln("compile", model, "-O1", "--conv-layout=nchw", "-o",
         os.path.join(WORK, "d.so"))
    out = [kiln("inspect", os.path.join(WORK, n)).stdout.split("\n", 1)[1]
           for n in ("r.so", "d.so")]
    assert out[0] == out[1], out


def check_mlir():
    try:
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper
        import onnx
    except ImportError as e:
        print(f"skipping: {e}")
        sys.exit(77)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="the_add")],
        "add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(w, "w")])
    onnx_path = os.path.join(WORK, "add.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), onnx_path)
    np.save(os.path.join(WORK, "x.npy"), x)
    np.save(os.path.join(WORK, "sum.npy"), x + w)
    np.save(os.path.join(WORK, "product.npy"), x * w)
    ir = os.path.join(WORK, "add.mlir")
    kiln("import", onnx_path, "-o", ir)
    text = open(ir).read()
    assert "kiln.add" in text and 'loc("the_add")' in text, text
    x_arg = "x=" + os.path.join(WORK, "x.npy")
    # The IR compiles (and runs straight from the file) like the model.
    kiln("compile", ir, "-o", os.path.join(WORK, "add.so"))
    kiln("run", os.path.join(WORK, "add.so"), "--input", x_arg, "--expect",
         os.path.join(WORK, "sum.npy"))
    kiln("run", ir, "--input", x_arg, "--expect",
         os.path.join(WORK, "sum.npy"))
    inspect = kiln("inspect", ir).stdout
    assert re.search(r"^format: +kiln IR$", inspect, re.M), inspect
    assert re.search(r"^  x +tensor<4x8xf32>$", inspect, re.M), inspect
    assert re.search(r"^  \d+:\w+ +the_add$", inspect, re.M), inspect
    # An edit: the sum becomes a product.
    edited = os.path.join(WORK, "mul.mlir")
    with open(edited, "w") as f:
        f.write(text.replace("kiln.add", "kiln.mul"))
    kiln("run", edited, "--input", x_arg, "--expect",
         os.path.join(WORK, "product.npy"))
    # Broken IR names the file and line; --input-shape is refused.
    with open(os.path.join(WORK, "bad.mlir"), "w") as f:
        f.write(text.replace("kiln.add", "kiln.nosuchop", 1))
    expect_error(["compile", os.path.join(WORK, "bad.mlir"), "-o",
                  os.path.join(WORK, "bad.so")], 1,
                 r"^error: custom op 'kiln.nosuchop' is unknown at "
                 r".*bad.mlir:\d+$")
    expect_error(["compile", ir, "--input-shape=x=4,8", "-o",
                  os.path.join(WORK, "s.so")], 1,
                 r"^error: --input-shape applies to ONNX models; the kiln "
                 r"IR in '.*add.mlir' carries its own shapes$")


def check_graph():
    import json
    for example, marks in (("cnn", ["merged contractions", "concat in place",
                                    "epilogue fused", "[1,16,32,32] f32"]),
                           ("transformer", ["fused attention",
                                            "merged contractions",
                                            "[1,4,16,16] f32"])):
        model = os.path.join(ROOT, "examples", example, "model.onnx")
        svg = os.path.join(WORK, example + ".svg")
        out = kiln("inspect", model, "--graph=" + svg).stdout
        report = os.path.join(WORK, example + ".json")
        kiln("compile", model, "-o", os.path.join(WORK, example + ".so"),
             "--report=" + report)
        kernels = json.load(open(report))["kernels"]
        text = open(svg).read()
        boxes = re.findall(r"<title>k\d+</title>", text)
        assert len(boxes) == len(kernels), (example, len(boxes), len(kernels))
        assert out == f"wrote {svg} ({len(kernels)} kernels)\n", out
        for mark in marks:
            assert mark in text, (example, mark)
        for kernel in kernels:
            assert kernel["kernel"] in text, (example, kernel["kernel"])
    dot = os.path.join(WORK, "cnn.dot")
    kiln("inspect", os.path.join(ROOT, "examples", "cnn", "model.onnx"),
         "--graph=" + dot)
    assert open(dot).read().startswith("digraph kiln {"), dot
    expect_error(["inspect", os.path.join(WORK, "cnn.so"), "--graph=x.svg"],
                 2, r"^error: --graph draws models \(ONNX or kiln IR\), not "
                    r"compiled artifacts$")
    expect_error(["inspect", os.path.join(ROOT, "examples", "cnn",
                                          "model.onnx"), "--graph=x.gif"], 2,
                 r"^error: --graph writes .dot, .svg, .png or .pdf files "
                 r"\(got 'x.gif'\)$")


def check_progress():
    import shutil
    model = os.path.join(ROOT, "examples", "transformer", "model.onnx")
    out = os.path.join(WORK, "p.so")
    quiet = kiln("compile", model, "-o", out)
    assert quiet.stderr == "" and quiet.stdout == "", quiet
    if not shutil.which("script"):
        print("skipping: no 'script' to run kiln on a terminal")
        sys.exit(77)
    command = f"'{KILN}' compile '{model}' -o '{out}'"
    tty = subprocess.run(["script", "-qec", command, "/dev/null"],
                         capture_output=True, text=True)
    assert tty.returncode == 0, tty
    text = tty.stdout
    for stage in ("kiln: importing ", "kiln: graph passes", "kiln: lowering",
                  "kiln: code generation, 19 kernels", "kiln: writing "):
        assert stage in text, (stage, text)
    assert text.rstrip("\r\n").endswith("\x1b[K"), repr(text[-40:])


def check_readme():
    text = open(README).read()
    section = text[text.index("## Using it"):text.index("## Layout")]
    for command in EXPECTED:
        flags = set().union(*option_groups(command).values()) - GENERIC
        for flag in flags:
            spelled = r"-O[0-3]" if flag == "-O" else re.escape(flag)
            assert re.search(rf"(?<![\w-]){spelled}(?![\w-])", section), \
                f"README's 'Using it' does not show kiln {command} {flag}"
        # Every flag README shows on a `kiln COMMAND` line (and its
        # indented continuation lines) exists.
        current = None
        for line in section.splitlines():
            m = re.match(rf"^(?:build/bin/)?(?:KILN_\w+=\S+ )*(?:build/bin/)?"
                         rf"kiln(?:-run)? {command}\b(.*)", line)
            if m:
                current, code = command, m.group(1)
            elif current and re.match(r"^ +\[", line):
                code = line
            else:
                current = None
                continue
            code = code.split("#")[0]
            for shown in re.findall(r"(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z])\b",
                                    code):
                known = flags | GENERIC | ({"-O"} if "-O" in flags else set())
                name = "-O" if re.fullmatch(r"-O", shown) else shown
                assert name in known, \
                    f"README shows kiln {command} {shown}, not in its --help"


def main():
    global KILN, README, WORK, ROOT
    check, KILN, README, WORK = sys.argv[1:5]
    ROOT = os.path.dirname(os.path.abspath(README))
    os.makedirs(WORK, exist_ok=True)
    {"help": check_help, "errors": check_errors, "memory": check_memory,
     "response": check_response,
     "mlir": check_mlir, "graph": check_graph, "progress": check_progress,
     "readme": check_readme}[check]()
    print(f"PASS: cli.{check}")


if __name__ == "__main__":
    main()
