#!/usr/bin/env python3
"""Load test: kiln-serve against onnxruntime behind an equal-protocol server.

Both servers speak KServe v2 with binary tensor data and are driven by the
same client: C client threads (tritonclient.http), each sending requests
back to back with a random input, until N requests in total are done.
Reports throughput and p50/p99 latency per server and their ratio, in one
run on this machine. The onnxruntime server is a minimal Python
ThreadingHTTPServer (the same endpoints kiln-serve answers) around one
InferenceSession; both get the same cores (kiln-serve: --sessions 2
--threads-per-session 1; onnxruntime: 1 intra-op thread, runs concurrent
across the HTTP threads; --sessions sets kiln-serve's).

    serve_load.py --kiln build/bin/kiln --kiln-serve build/bin/kiln-serve \
        [--clients 16] [--requests 1000] [--work /tmp/kiln-serve-load]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
import tritonclient.http as triton

sys.path.insert(0, os.path.dirname(__file__))


def export_models(work):
    """ResNet-18 (batch 1) and the 4-layer BERT-style encoder (1x128)."""
    import torch
    import torchvision
    from run import export_symbolic  # the encoder of benchmarks/run.py
    paths = {}
    resnet = os.path.join(work, "resnet18.onnx")
    if not os.path.exists(resnet):
        model = torchvision.models.resnet18(weights=None).eval()
        with torch.no_grad():
            torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), resnet,
                              opset_version=17, input_names=["input"],
                              output_names=["output"], dynamo=False)
    paths["resnet18"] = (resnet, [1, 3, 224, 224], [])
    bert = os.path.join(work, "bert4.onnx")
    if not os.path.exists(bert):
        export_symbolic("bert4", bert)
    paths["bert4"] = (bert, [1, 128, 768],
                      ["--input-shape", "input=1,128,768"])
    return paths


class OrtHandler(BaseHTTPRequestHandler):
    session = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        n = int(self.headers.get("Inference-Header-Content-Length", len(body)))
        request = json.loads(body[:n])
        feeds, offset = {}, n
        for inp in request["inputs"]:
            size = inp["parameters"]["binary_data_size"]
            feeds[inp["name"]] = np.frombuffer(
                body[offset:offset + size], np.float32).reshape(inp["shape"])
            offset += size
        outputs = self.session.run(None, feeds)
        names = [o.name for o in self.session.get_outputs()]
        header = json.dumps({"model_name": "m", "outputs": [
            {"name": name, "datatype": "FP32", "shape": list(out.shape),
             "parameters": {"binary_data_size": out.nbytes}}
            for name, out in zip(names, outputs)]}).encode()
        payload = header + b"".join(o.tobytes() for o in outputs)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Inference-Header-Content-Length", str(len(header)))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def drive(url, model, input_name, shape, clients, requests):
    """Latencies (s) of `requests` requests from `clients` threads, and the
    wall time."""
    latencies, lock = [], threading.Lock()
    remaining = [requests]

    def client():
        c = triton.InferenceServerClient(url)
        x = np.random.default_rng().standard_normal(shape).astype(np.float32)
        inp = triton.InferInput(input_name, shape, "FP32")
        inp.set_data_from_numpy(x, binary_data=True)
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
            start = time.perf_counter()
            c.infer(model, [inp])
            t = time.perf_counter() - start
            with lock:
                latencies.append(t)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - start


def summary(latencies, wall):
    ms = sorted(1e3 * t for t in latencies)
    return {"throughput": len(ms) / wall, "p50": statistics.median(ms),
            "p99": ms[int(0.99 * (len(ms) - 1))]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-serve", required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--work", default="/tmp/kiln-serve-load")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated models")
    ap.add_argument("--batching", action="store_true",
                    help="instead: kiln-serve on a symbolic-batch ResNet-18 "
                         "with and without --max-batch 8")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.batching:
        return batching(args)
    rows = []
    for name, (path, shape, flags) in export_models(args.work).items():
        if args.only and name not in args.only.split(","):
            continue
        so = os.path.join(args.work, name + ".so")
        subprocess.run([args.kiln, "compile", path, "-o", so, *flags],
                       check=True)
        server = subprocess.Popen(
            [args.kiln_serve, "--model", f"{name}={so}", "--port", "0",
             "--sessions", str(args.sessions), "--threads-per-session", "1",
             "--http-threads", str(args.clients)],
            stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        drive(f"127.0.0.1:{port}", name, "input", shape, 2, 20)  # warm up
        kiln = summary(*drive(f"127.0.0.1:{port}", name, "input", shape,
                              args.clients, args.requests))
        server.terminate()
        server.wait()

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        OrtHandler.session = ort.InferenceSession(
            path, options, providers=["CPUExecutionProvider"])
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), OrtHandler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"127.0.0.1:{httpd.server_address[1]}"
        drive(url, name, "input", shape, 2, 20)
        ortr = summary(*drive(url, name, "input", shape, args.clients,
                              args.requests))
        httpd.shutdown()
        row = {"model": name, "kiln": kiln, "ort": ortr,
               "throughput_ratio": kiln["throughput"] / ortr["throughput"]}
        print(json.dumps(row), flush=True)
        rows.append(row)
    print(f"\n| model | server | req/s | p50 ms | p99 ms |\n|---|---|---|---|---|")
    for r in rows:
        for server in ("kiln", "ort"):
            s = r[server]
            print(f"| {r['model']} | {'kiln-serve' if server == 'kiln' else 'onnxruntime + Python server'} "
                  f"| {s['throughput']:.1f} | {s['p50']:.2f} | {s['p99']:.2f} |")
    for r in rows:
        print(f"{r['model']}: kiln-serve throughput / onnxruntime = "
              f"{r['throughput_ratio']:.2f}x")


def batching(args):
    """Throughput of kiln-serve on ResNet-18 with a symbolic batch, one
    request = one image, without and with dynamic batching."""
    from run import export_symbolic
    path = os.path.join(args.work, "resnet18_symbolic.onnx")
    if not os.path.exists(path):
        export_symbolic("resnet18", path)
    so = os.path.join(args.work, "resnet18_symbolic.so")
    subprocess.run([args.kiln, "compile", path, "-o", so, "--dim",
                    "batch=1..64"], check=True)
    shape = [1, 3, 224, 224]
    results = {}
    for label, flags in [("no batching", []),
                         ("--max-batch 8 --batch-timeout-us 2000",
                          ["--max-batch", "8", "--batch-timeout-us", "2000"])]:
        server = subprocess.Popen(
            [args.kiln_serve, "--model", f"r={so}", "--port", "0",
             "--sessions", "1", "--threads-per-session", "2",
             "--http-threads", str(args.clients), *flags],
            stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        drive(f"127.0.0.1:{port}", "r", "input", shape, 2, 10)
        results[label] = summary(*drive(f"127.0.0.1:{port}", "r", "input",
                                         shape, args.clients, args.requests))
        server.terminate()
        server.wait()
        print(json.dumps({label: results[label]}), flush=True)
    print("\n| kiln-serve, ResNet-18 symbolic batch | req/s | p50 ms | p99 ms |"
          "\n|---|---|---|---|")
    for label, s in results.items():
        print(f"| {label} | {s['throughput']:.1f} | {s['p50']:.1f} | "
              f"{s['p99']:.1f} |")
    base, batched = results.values()
    print(f"batching gain: {batched['throughput'] / base['throughput']:.2f}x")


if __name__ == "__main__":
    main()
