#!/usr/bin/env python3
"""kiln-serve end to end with NVIDIA's tritonclient and raw HTTP requests.

Serves the bundled CNN and a model with a symbolic batch on a free
loopback port, then: health, readiness and metadata (-1 for the symbolic
dim) through tritonclient; inference with JSON and with binary tensor data
against the examples' reference output and onnxruntime; 8 client threads x
25 requests; malformed requests (bad JSON, unknown model, input, datatype,
wrong shape, data counts and binary sizes that disagree, a huge declared
shape), each answered 400/404 with a JSON error naming the field;
/metrics; and SIGTERM ending the server with exit code 0. With SLOW_SO (the
runtime tests' add_one_slow fixture, 300 ms a run), a full queue: one
session and --queue 0, three requests at once: one runs, two get 503 with
Retry-After and a JSON error, counted in kiln_requests_rejected_total.

    check_serve.py KILN KILN_SERVE SOURCE_DIR WORK_DIR [SLOW_SO]
"""
import concurrent.futures
import http.client
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from sanitizers import sanitized  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    import tritonclient.http as triton
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, serve, src, work = sys.argv[1:5]
slow = sys.argv[5] if len(sys.argv) > 5 else None
os.makedirs(work, exist_ok=True)
failures = []


def check(what, ok, detail=""):
    print(f"{what}: {'PASS' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{what}: {detail}")


cnn = os.path.join(work, "cnn.so")
subprocess.run([kiln, "compile", os.path.join(src, "examples/cnn/model.onnx"),
                "-o", cnn], check=True)
graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"])], "relu",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
relu_onnx = os.path.join(work, "relu.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          relu_onnx)
relu = os.path.join(work, "relu.so")
subprocess.run([kiln, "compile", relu_onnx, "-o", relu, "--dim",
                "batch=1..64"], check=True)

server = subprocess.Popen([serve, "--model", f"cnn={cnn}", "--model",
                           f"relu={relu}", "--port", "0", "--sessions", "2"],
                          stdout=subprocess.PIPE, text=True)
line = server.stdout.readline()
port = int(line.rsplit(":", 1)[1])
url = f"127.0.0.1:{port}"
try:
    client = triton.InferenceServerClient(url)
    check("live and ready", client.is_server_live() and client.is_server_ready()
          and client.is_model_ready("cnn") and not client.is_model_ready("nope"))
    md = client.get_model_metadata("cnn")
    check("metadata", md["inputs"] == [{"name": "image", "datatype": "FP32",
                                        "shape": [1, 3, 32, 32]}]
          and md["outputs"][0]["name"] == "logits", md)
    rmd = client.get_model_metadata("relu")
    check("symbolic dim as -1", rmd["inputs"][0]["shape"] == [-1, 4], rmd)

    image = np.load(os.path.join(src, "examples/cnn/image.npy")).astype(np.float32)
    expected = np.load(os.path.join(src, "examples/cnn/expected_logits.npy"))

    def infer_cnn(binary):
        inp = triton.InferInput("image", list(image.shape), "FP32")
        inp.set_data_from_numpy(image, binary_data=binary)
        out = triton.InferRequestedOutput("logits", binary_data=binary)
        return client.infer("cnn", [inp], outputs=[out],
                            request_id="r1").as_numpy("logits")

    for binary in (True, False):
        y = infer_cnn(binary)
        check(f"infer cnn ({'binary' if binary else 'JSON'})",
              y.shape == (1, 10) and np.abs(y - expected).max() < 1e-4,
              f"{y} vs {expected}")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    inp = triton.InferInput("x", [3, 4], "FP32")
    inp.set_data_from_numpy(x)
    y = client.infer("relu", [inp]).as_numpy("y")
    check("infer symbolic batch 3", np.array_equal(y, np.maximum(x, 0)), y)

    def worker(_):
        c = triton.InferenceServerClient(url)
        inp = triton.InferInput("image", list(image.shape), "FP32")
        inp.set_data_from_numpy(image)
        return max(float(np.abs(c.infer("cnn", [inp]).as_numpy("logits")
                                - expected).max()) for _ in range(25))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        worst = max(pool.map(worker, range(8)))
    check("8 threads x 25 requests", worst < 1e-4, worst)

    def post(path, body, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", path, body, headers or {})
        r = conn.getresponse()
        text = r.read().decode(errors="replace")
        conn.close()
        return r.status, text

    def bad(what, path, body, status, message, headers=None):
        code, text = post(path, body, headers)
        try:
            error = json.loads(text).get("error", "")
        except ValueError:
            error = ""
        check(what, code == status and message in error,
              f"got {code} {text!r}, expected {status} with '{message}'")

    infer = "/v2/models/cnn/infer"
    good = {"name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
            "data": image.ravel().tolist()}
    bad("bad JSON", infer, "{bad", 400, "not a JSON object")
    bad("unknown model", "/v2/models/nope/infer", "{}", 404,
        "unknown model 'nope'")
    bad("no inputs", infer, "{}", 400, "needs an 'inputs' array")
    bad("unknown input", infer,
        json.dumps({"inputs": [dict(good, name="img")]}), 400,
        "input 'img' is not an input of model 'cnn'")
    bad("wrong datatype", infer,
        json.dumps({"inputs": [dict(good, datatype="FP64")]}), 400,
        "input 'image': datatype FP64, the model takes FP32")
    bad("wrong shape", infer,
        json.dumps({"inputs": [dict(good, shape=[1, 3, 32, 16],
                                    data=good["data"][:1536])]}), 400,
        "image")
    bad("data count", infer,
        json.dumps({"inputs": [dict(good, data=[1.0, 2.0])]}), 400,
        "input 'image': 2 values in 'data' for a shape of 3072 elements")
    bad("huge shape", infer,
        json.dumps({"inputs": [dict(good, shape=[1 << 40, 1 << 40],
                                    data=[])]}), 400,
        "input 'image': the shape is too large")
    header = json.dumps({"inputs": [{"name": "image", "datatype": "FP32",
                                     "shape": [1, 3, 32, 32],
                                     "parameters": {"binary_data_size": 12288}}]})
    bad("binary size", infer, header.encode() + b"\0" * 100, 400,
        "'binary_data_size' 12288 is more than the request's remaining 100 "
        "bytes", {"Inference-Header-Content-Length": str(len(header))})
    bad("header length", infer, header, 400,
        "Inference-Header-Content-Length 999999 is more than the body's",
        {"Inference-Header-Content-Length": "999999"})
    bad("unknown output", infer,
        json.dumps({"inputs": [good], "outputs": [{"name": "probs"}]}), 400,
        "output 'probs' is not an output of model 'cnn'")

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    metrics = conn.getresponse().read().decode()
    conn.close()
    check("metrics", 'kiln_requests_total{model="cnn"}' in metrics
          and 'kiln_request_duration_seconds_bucket{model="cnn",le="+Inf"}'
          in metrics and 'kiln_queue_depth{model="relu"} 0' in metrics,
          metrics)
    check("server alive after bad requests", client.is_server_live())

    # Everything is freed per request: after a warm-up, 2 threads x 1500
    # more requests (good ones, JSON and binary, and malformed ones) leave
    # the server's resident memory where it was (a leak of 1 KB a request
    # would add 3 MB).
    def rss():
        with open(f"/proc/{server.pid}/status") as f:
            return next(int(line.split()[1]) for line in f
                        if line.startswith("VmRSS:"))
    body = json.dumps({"inputs": [good]})
    binary_header = json.dumps({"inputs": [{
        "name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
        "parameters": {"binary_data_size": image.nbytes}}]})
    binary = binary_header.encode() + image.tobytes()
    requests = [(body, {}), ("{bad", {}),
                (binary, {"Inference-Header-Content-Length":
                          str(len(binary_header))}),
                (json.dumps({"inputs": [dict(good, data=[1.0])]}), {})]

    def churn(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for i in range(n):
            payload, headers = requests[i % len(requests)]
            conn.request("POST", infer, payload, headers)
            conn.getresponse().read()
        conn.close()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(churn, [300, 300]))
    before = rss()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(churn, [1500, 1500]))
    grown = rss() - before
    if sanitized(serve):
        # ASan keeps freed memory in quarantine (256 MB): resident memory
        # grows by design, and LSan checks the leaks at exit instead.
        print("3000 requests leave resident memory flat: skipped under a "
              "sanitizer (its leak check runs at exit)")
    else:
        check("3000 requests leave resident memory flat", grown < 2048,
              f"grew {grown} KB")
    print(f"3000 requests: resident memory {before} KB, grew {grown} KB")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        code = "hung"
check("SIGTERM stops the server", code == 0, f"exit {code}")

# Dynamic batching: a static model is refused; requests of 1 to 3 rows from
# 8 threads to the symbolic-batch model, stacked and split back, each gets
# its own rows.
refused = subprocess.run([serve, "--model", f"cnn={cnn}", "--max-batch", "8"],
                         capture_output=True, text=True)
check("--max-batch refuses a static model", refused.returncode == 2
      and "model 'cnn' cannot be batched" in refused.stderr, refused.stderr)
server = subprocess.Popen([serve, "--model", f"relu={relu}", "--port", "0",
                           "--max-batch", "8", "--batch-timeout-us", "2000",
                           "--sessions", "1"], stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().rsplit(":", 1)[1])
try:
    def batched(seed):
        c = triton.InferenceServerClient(f"127.0.0.1:{port}")
        rng = np.random.default_rng(seed)
        worst = 0.0
        for _ in range(20):
            x = rng.standard_normal((int(rng.integers(1, 4)), 4)).astype(np.float32)
            inp = triton.InferInput("x", list(x.shape), "FP32")
            inp.set_data_from_numpy(x)
            y = c.infer("relu", [inp]).as_numpy("y")
            worst = max(worst, float(np.abs(y - np.maximum(x, 0)).max())
                        if y.shape == x.shape else float("inf"))
        return worst
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        worst = max(pool.map(batched, range(8)))
    check("batched requests split back", worst == 0.0, worst)
finally:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=10)

if slow:
    server = subprocess.Popen([serve, "--model", f"slow={slow}", "--port", "0",
                               "--sessions", "1", "--queue", "0"],
                              stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline().rsplit(":", 1)[1])
    try:
        body = json.dumps({"inputs": [{"name": "x", "datatype": "FP32",
                                       "shape": [2, 3],
                                       "data": [0, 1, 2, 3, 4, 5]}]})

        def post_slow(delay):
            # The first request holds the only session for 300 ms; the
            # others arrive meanwhile and find no room to wait.
            time.sleep(delay)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", "/v2/models/slow/infer", body,
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            return r.status, r.getheader("Retry-After"), r.read()

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            results = list(pool.map(post_slow, [0, 0.05, 0.05]))
        check("a full queue answers 503, the running request 200",
              sorted(r[0] for r in results) == [200, 503, 503], results)
        rejected = [r for r in results if r[0] == 503]
        check("503 asks to retry", all(
            r[1] == "1" and json.loads(r[2]) == {
                "error": "model 'slow' has too many requests waiting; "
                         "retry later"} for r in rejected), rejected)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        metrics = conn.getresponse().read().decode()
        check("rejections counted",
              'kiln_requests_rejected_total{model="slow"} 2' in metrics,
              metrics)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("PASS")
