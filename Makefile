# Kiln: the two entry points are `make demo` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps test-deps configure build demo test aarch64 clean format

all: build

deps:
	@./scripts/install-deps.sh

# Python packages for the tests' model exports and references only.
test-deps:
	@./scripts/install-test-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./examples/run-demo.sh $(BUILD_DIR)

test: build test-deps
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The runtime and kiln-run cross-built for aarch64 (artifacts come from
# `kiln compile --target=aarch64-linux-gnu`; run them with qemu-aarch64).
aarch64: deps
	cmake -S . -B $(BUILD_DIR)-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DKILN_RUNTIME_ONLY=ON \
	  -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/aarch64-linux-gnu.toolchain.cmake
	cmake --build $(BUILD_DIR)-aarch64 -j $(JOBS)

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
