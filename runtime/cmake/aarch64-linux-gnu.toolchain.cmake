# Cross-compiles the runtime and kiln-run for aarch64 Linux with Debian's
# g++-aarch64-linux-gnu (run the result with qemu-aarch64 -L
# /usr/aarch64-linux-gnu). Only the runtime builds this way:
#   cmake -S . -B build-arm -G Ninja -DKILN_RUNTIME_ONLY=ON \
#     -DCMAKE_TOOLCHAIN_FILE=runtime/cmake/aarch64-linux-gnu.toolchain.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
