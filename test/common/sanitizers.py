"""Whether a binary of the build under test carries a sanitizer's runtime:
gcc links it as a shared library, clang links it in. Tests skip what a
sanitizer changes by design (ASan's address space and its quarantine of
freed memory) rather than fail on it."""
import subprocess


def sanitized(binary):
    try:
        libs = subprocess.run(["ldd", binary], capture_output=True,
                              text=True).stdout
    except OSError:
        return False
    if "libasan" in libs or "libtsan" in libs:
        return True
    with open(binary, "rb") as f:
        tail = b""
        while chunk := f.read(1 << 24):
            if b"__asan_init" in tail + chunk or b"__tsan_init" in tail + chunk:
                return True
            tail = chunk[-16:]
    return False
