# Kiln: the two entry points are `make demo` and `make test`.
# `make test SANITIZE=address,undefined` (or thread) builds and tests in its
# own folder, build-address-undefined (docs/reliability.md).
SANITIZE ?=
comma := ,
BUILD_DIR ?= build$(if $(SANITIZE),-$(subst $(comma),-,$(SANITIZE)))
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

PREFIX ?= /usr/local

# Sanitized builds: LLVM's headers poison its bump allocator's slabs in the
# sanitized template instances, which the prebuilt LLVM/MLIR libraries then
# use unpoisoned; ASan would report use-after-poison inside MLIR itself
# (docs/reliability.md). The build runs kiln too (its test fixtures).
# (Your own ASAN_OPTIONS come after it, so they win where they overlap.)
export ASAN_OPTIONS := allow_user_poisoning=0$(if $(ASAN_OPTIONS),:$(ASAN_OPTIONS))

.PHONY: all deps test-deps configure build demo test install deb aarch64 fuzz clean format

all: build

deps:
	@./scripts/install-deps.sh

# Python packages for the tests' model exports and references only.
test-deps:
	@./scripts/install-test-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DKILN_SANITIZE=$(SANITIZE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./examples/run-demo.sh $(BUILD_DIR)

test: build test-deps
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# kiln, kiln-run, the runtime (shared and static), its headers, the CMake
# package KilnRuntime and the pkg-config module kiln-runtime under PREFIX.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The same as a Debian package, kiln_<version>_<arch>.deb in $(BUILD_DIR)
# (cmake/KilnPackaging.cmake).
deb: build
	cd $(BUILD_DIR) && cpack -G DEB

# The runtime and kiln-run cross-built for aarch64 (artifacts come from
# `kiln compile --target=aarch64-linux-gnu`; run them with qemu-aarch64).
aarch64: deps
	cmake -S . -B $(BUILD_DIR)-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DKILN_RUNTIME_ONLY=ON \
	  -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/aarch64-linux-gnu.toolchain.cmake
	cmake --build $(BUILD_DIR)-aarch64 -j $(JOBS)

# The fuzz targets (test/fuzz) as libFuzzer binaries, everything built with
# clang and ASan/UBSan in $(BUILD_DIR)-fuzz; run one with
# scripts/fuzz.sh NAME SECONDS (docs/reliability.md).
FUZZERS = npy onnx_tensor elf_header logs onnx_import onnx_pipeline pt2_import
fuzz: deps
	CC=clang-22 CXX=clang++-22 cmake -S . -B $(BUILD_DIR)-fuzz -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON \
	  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" \
	  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined"
	cmake --build $(BUILD_DIR)-fuzz -j $(JOBS) \
	  $(addprefix --target kiln-fuzz-,$(FUZZERS))

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
