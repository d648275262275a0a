#!/usr/bin/env python3
"""torch.export .pt2 archives through kiln (test/CMakeLists.txt, pt2.*).

  check_pt2.py make   KILN WORK            export the models (make_models.py)
  check_pt2.py model  KILN WORK NAME       compile NAME/model.pt2, run it on
                                           its input, compare with torch
                                           (KILN_COMPILE_FLAGS and KILN_RUN
                                           as in run_example.sh: other
                                           targets, qemu, the GPU emulator;
                                           KILN_CHECK_TOLERANCE replaces
                                           --rtol 1e-4 --atol 1e-5)
  check_pt2.py errors KILN WORK            refusals: one line naming what

Needs torch and torchvision (else exit 77).
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def kiln(*args):
    return subprocess.run([KILN, *args], capture_output=True, text=True)


def make():
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}")
        sys.exit(SKIP)
    shutil.rmtree(WORK, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_models.py"),
                    WORK], check=True)


def run_and_compare(so, d, names, name):
    """kiln run (or $KILN_RUN) on the inputs in `d`, each output against
    torch's."""
    args = []
    for input_name in names:
        args += ["--input",
                 f"{input_name}={os.path.join(d, input_name + '.npy')}"]
    outputs = sorted(n for n in os.listdir(d) if n.startswith("expected"))
    for expected in outputs:  # in output order
        args += ["--expect", os.path.join(d, expected)]
    runner = os.environ.get("KILN_RUN", "").split() or [KILN, "run"]
    # fp32: within 1e-4 relative of torch (1e-5 absolute for values near 0).
    tolerance = (os.environ.get("KILN_CHECK_TOLERANCE", "").split()
                 or ["--rtol", "1e-4", "--atol", "1e-5"])
    r = subprocess.run([*runner, so, *args, *tolerance],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr)
    if r.returncode != 0 or r.stdout.count(": PASS") != len(outputs):
        sys.exit(f"FAIL: {name} does not match torch")


def model(name):
    d = os.path.join(WORK, name)
    if not os.path.exists(os.path.join(d, "model.pt2")):
        print("skipped: the models were not made (needs torch)")
        sys.exit(SKIP)
    flags = os.environ.get("KILN_COMPILE_FLAGS", "").split()
    so = os.path.join(d, "model" + ("-" + "-".join(f.strip("-") for f in flags)
                                    if flags else "") + ".so")
    r = kiln("compile", os.path.join(d, "model.pt2"), "-o", so, *flags,
             "--report=-")
    if r.returncode != 0:
        sys.exit(f"FAIL: kiln compile {name}: {r.stderr}")
    # After run_decompositions() attention is torch's math form (3-D bmms,
    # a guarded softmax): it fuses all the same, one per layer; under a mask
    # from an input, rows it masks everywhere give the guard's 0.
    decomposed = {"block_core": 1, "block_causal_core": 1, "gpt_core": 2,
                  "vit_b_16_core": 12, "bert_core": 2,
                  "block_masked_core": 1}
    if name in decomposed and not flags:
        fused = json.loads(r.stdout).get("attention_fused", 0)
        if fused != decomposed[name]:
            sys.exit(f"FAIL: {name}: {fused} fused attentions, "
                     f"{decomposed[name]} expected")
    with open(os.path.join(d, "inputs.txt")) as f:
        names = f.read().split()
    run_and_compare(so, d, names, name)
    # A symbolic batch: the one artifact at every size torch was run at.
    runs = os.path.join(d, "runs")
    for batch in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
        print(f"batch {batch}:")
        run_and_compare(so, os.path.join(runs, batch), names, name)
    if flags:
        return
    # A symbolic batch and sequence: the artifact's output is labelled with
    # the input's symbols ([s77,s27,64]), not [?,?,64].
    if name.startswith("block_dyn"):
        out = kiln("inspect", so).stdout
        lines = out.split("outputs:")[-1].splitlines()[1:2]
        if not lines or not re.search(r"float32 \[s\d+,s\d+,64\]", lines[0]):
            sys.exit(f"FAIL: {name}'s output is not labelled with its "
                     f"symbols:\n{out}")
        # The archive's sizes by their symbols' names, not sympy's text.
        out = kiln("inspect", os.path.join(d, "model.pt2")).stdout
        if not re.search(r"\n  x +float32 \[s\d+, s\d+, 64\]\n", out):
            sys.exit(f"FAIL: kiln inspect {name}.pt2 does not show the input "
                     f"as [sN, sN, 64]:\n{out}")
    # kiln inspect: the program, its I/O and ops, and what -O2 does, with
    # kernels named by their FX nodes; SDPA as saved is one fused kernel.
    r = kiln("inspect", os.path.join(d, "model.pt2"))
    text = r.stdout
    for want in ("format:    torch.export .pt2", "inputs:", "nodes:",
                 "optimizations (-O2):", "kernels:"):
        if want not in text:
            sys.exit(f"FAIL: kiln inspect {name} lacks '{want}':\n{text}")
    layers = {"block": 1, "block_causal": 1, "gpt": 2, "bert": 2}.get(name)
    fused = re.findall(r"forall +scaled_dot_product_attention(?:_\d+)?\b", text,
                       re.M)
    if layers and len(fused) != layers:
        sys.exit(f"FAIL: {name}: {len(fused)} fused attention kernels, "
                 f"{layers} expected:\n{text}")


def rewrite(src, dst, change):
    """Copies the archive at `src` to `dst`, letting `change(name, data)`
    return new bytes for an entry (or None to drop it)."""
    with zipfile.ZipFile(src) as zin, \
            zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)


def expect(args, pattern):
    r = kiln(*args)
    lines = r.stderr.strip().splitlines()
    ok = r.returncode == 1 and len(lines) == 1 and re.search(pattern, lines[0])
    if not ok:
        sys.exit(f"FAIL: kiln {' '.join(args)}: exit {r.returncode}, "
                 f"stderr {r.stderr!r}, expected /{pattern}/")
    print(f"ok: {lines[0]}")


def npy_ones(shape):
    """A float32 .npy of ones (numpy is not needed to write one)."""
    header = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }"
              % "".join(f"{d}, " for d in shape))
    header += " " * (63 - len(header) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    return (b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
            header.encode() + b"\x00\x00\x80\x3f" * count)


def errors():
    src = os.path.join(WORK, "mlp", "model.pt2")
    if not os.path.exists(src):
        print("skipped: the models were not made (needs torch)")
        sys.exit(SKIP)
    e = os.path.join(WORK, "errors")
    os.makedirs(e, exist_ok=True)
    out = os.path.join(e, "out.so")

    def program(edit):
        def change(name, data):
            if name.endswith("models/model.json"):
                j = json.loads(data)
                edit(j)
                return json.dumps(j).encode()
            return data
        return change

    def rename_relu(j):
        for n in j["graph_module"]["graph"]["nodes"]:
            if n["target"] == "torch.ops.aten.relu.default":
                n["target"] = "torch.ops.aten.frobnicate.default"
    p = os.path.join(e, "unsupported.pt2")
    rewrite(src, p, program(rename_relu))
    expect(["compile", p, "-o", out],
           r"unsupported ATen op 'aten\.frobnicate\.default' at node 'relu'")

    def schema9(j):
        j["schema_version"] = {"major": 9, "minor": 0}
    p = os.path.join(e, "schema9.pt2")
    rewrite(src, p, program(schema9))
    expect(["compile", p, "-o", out],
           r"schema version 9\.0; Kiln reads major version 8")

    p = os.path.join(e, "pickled.pt2")

    def pickled(name, data):
        if name.endswith("model_weights_config.json"):
            j = json.loads(data)
            j["config"]["fc1.weight"]["use_pickle"] = True
            return json.dumps(j).encode()
        return data
    rewrite(src, p, pickled)
    expect(["compile", p, "-o", out],
           r"tensor 'fc1\.weight' .* is pickled .* never unpickles")

    p = os.path.join(e, "aoti.pt2")
    rewrite(src, p, lambda name, data: None if "/models/" in name else data)
    with zipfile.ZipFile(p, "a") as z:
        z.writestr("model/data/aotinductor/model/model.so", b"\x7fELF")
    expect(["compile", p, "-o", out],
           r"AOTInductor package .* no exported program")

    p = os.path.join(e, "deflated.pt2")
    with zipfile.ZipFile(src) as zin, \
            zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    expect(["compile", p, "-o", out], r"is compressed \(method 8\)")

    p = os.path.join(e, "truncated.pt2")
    with open(src, "rb") as f:
        data = f.read()
    with open(p, "wb") as f:
        f.write(data[:len(data) // 2])
    expect(["compile", p, "-o", out], r"is not a valid \.pt2 archive")

    p = os.path.join(e, "short_weight.pt2")
    rewrite(src, p, lambda name, data: data[:100]
            if name.endswith("weights/weight_0") else data)
    expect(["compile", p, "-o", out],
           r"tensor 'p_fc1_weight' \(entry '.*weight_0', 100 bytes\) is "
           r"shorter than its view needs")
    # A zip64 archive (more than 65535 entries: zip64 end-of-directory
    # records; entries written with zip64 local headers) reads the same.
    p = os.path.join(e, "zip64.pt2")
    with zipfile.ZipFile(src) as zin, \
            zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            with zout.open(info.filename, "w", force_zip64=True) as f:
                f.write(zin.read(info.filename))
        for i in range(70000):
            zout.writestr(f"model/extra/{i}", b"")
    so64 = os.path.join(e, "zip64.so")
    r = kiln("compile", p, "-o", so64)
    if r.returncode != 0:
        sys.exit(f"FAIL: the zip64 archive: {r.stderr}")
    d = os.path.join(WORK, "mlp")
    r = kiln("run", so64, "--input", os.path.join(d, "x.npy"), "--expect",
             os.path.join(d, "expected0.npy"), "--rtol", "1e-4", "--atol",
             "1e-5")
    if "PASS" not in r.stdout:
        sys.exit(f"FAIL: the zip64 archive runs wrong: {r.stdout}{r.stderr}")
    print("ok: a zip64 archive (70,000 extra entries) compiles and matches")

    def exported(name, body):
        """An archive torch.export writes from the script `body` (which
        sets `ep`), made in a subprocess like the others."""
        path = os.path.join(e, name + ".pt2")
        with open(os.path.join(e, name + ".py"), "w") as f:
            f.write("import sys, torch\n" + body +
                    "torch.export.save(ep, sys.argv[1])\n")
        subprocess.run([sys.executable, os.path.join(e, name + ".py"), path],
                       check=True, capture_output=True)
        return path

    # A pooling window over a symbolic height and width: refused, naming
    # the node, the tensor and the way out.
    dyn = exported("pool_dyn",
                   "class M(torch.nn.Module):\n"
                   "    def forward(self, x):\n"
                   "        return torch.nn.functional.max_pool2d(x, 2)\n"
                   "h = torch.export.Dim('h', min=4, max=64)\n"
                   "w = torch.export.Dim('w', min=4, max=64)\n"
                   "ep = torch.export.export(M(), (torch.randn(1, 3, 16, 16),),"
                   " dynamic_shapes=({2: h, 3: w},))\n")
    expect(["compile", dyn, "-o", out],
           r"aten\.max_pool2d\.default at node 'max_pool2d' reads the "
           r"extents of 'x', which are symbolic; compile with --input-shape")

    # A run-time assertion torch.export keeps in the program
    # (aten._assert_scalar): a size that breaks it fails the run with the
    # exporter's message, one that keeps it runs.
    checked = exported("checked",
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        torch._check(x.shape[1] % 4 != 3)\n"
                       "        return x * 2\n"
                       "ep = torch.export.export(M(), (torch.randn(2, 8, 4),),"
                       " dynamic_shapes=({1: torch.export.Dim.DYNAMIC},),"
                       " prefer_deferred_runtime_asserts_over_guards=True)\n")
    so = os.path.join(e, "checked.so")
    if kiln("compile", checked, "-o", so).returncode != 0:
        sys.exit("FAIL: the program with a run-time assertion does not "
                 "compile")
    for seq in (8, 7):
        with open(os.path.join(e, f"x{seq}.npy"), "wb") as f:
            f.write(npy_ones((2, seq, 4)))
    r = kiln("run", so, "--input", os.path.join(e, "x8.npy"))
    if r.returncode != 0:
        sys.exit(f"FAIL: a size the assertion allows: {r.stderr}")
    expect(["run", so, "--input", os.path.join(e, "x7.npy")],
           r"node '_assert_scalar_default': Runtime assertion failed for "
           r"expression Ne\(Mod\(s\d+, 4\), 3\)")

    # Swin's raw export fills views in place: refused, naming the way out.
    swin = os.path.join(WORK, "swin_t", "model.pt2")
    with open(os.path.join(WORK, "swin_raw.py"), "w") as f:
        f.write("import sys, torch, torchvision\n"
                "m = torchvision.models.swin_t(weights=None).eval()\n"
                "ep = torch.export.export(m, (torch.randn(1, 3, 224, 224),))\n"
                "torch.export.save(ep, sys.argv[1])\n")
    os.makedirs(os.path.dirname(swin), exist_ok=True)
    subprocess.run([sys.executable, os.path.join(WORK, "swin_raw.py"), swin],
                   check=True, capture_output=True)
    expect(["compile", swin, "-o", out],
           r"unsupported ATen op 'aten\.fill_\.Scalar' at node 'fill_' \(an "
           r"in-place op; save the program after ep\.run_decompositions\(\)")
    assert not os.path.exists(out), "a refused compile left an artifact"
    print("PASS")


def main():
    global KILN, WORK
    what, KILN, WORK = sys.argv[1:4]
    if what == "make":
        make()
    elif what == "model":
        model(sys.argv[4])
    else:
        errors()


if __name__ == "__main__":
    main()
