#!/usr/bin/env bash
# Installs the Python packages the test suite uses to build models and
# reference outputs (never the product: kiln and its runtime need no Python).
# Without them the model tests (torchvision, attention, BERT/GPT-2 exports)
# would be skipped; `make test` runs this so that they run everywhere.
# Idempotent: pip is not called when every package imports.
set -euo pipefail

packages=(numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0 torch==2.15.0
          torchvision==0.29.2 "tritonclient[http]==2.73.0")

if python3 -c "import numpy, onnx, onnxruntime, torch, torchvision, tritonclient.http" 2>/dev/null; then
  exit 0
fi
echo "install-test-deps: installing ${packages[*]}"
python3 -m pip install --quiet --disable-pip-version-check "${packages[@]}"
