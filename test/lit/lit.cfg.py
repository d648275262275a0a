import os
import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test", "lit")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

# The CUDA toolkit's assembler, for the tests of the CUDA leaf.
import shutil
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")

# ROCm's device libraries in the build's toolkit folder, for the HIP leaf.
if os.path.exists(os.path.join(config.kiln_obj_root, "rocm-toolkit", "amdgcn",
                               "bitcode", "ocml.bc")):
    config.available_features.add("rocm")
