# Debian packages of what `cmake --install` installs, made by CPack
# (`cpack -G DEB` in the build folder, or `make deb`):
#   kiln          the compiler, kiln-run, kiln-serve, the runtime (shared and
#                 static), headers, CMake package and pkg-config module;
#   kiln-runtime  the same without the compiler, from a -DKILN_RUNTIME_ONLY=ON
#                 build (no LLVM), also cross-built for arm64.
# Library dependencies come from dpkg-shlibdeps; the compiler also runs
# ld.lld from lld-22.
if(KILN_RUNTIME_ONLY)
  set(CPACK_PACKAGE_NAME kiln-runtime)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "Kiln runtime: loads and runs Kiln artifacts (C API, kiln-run)")
else()
  set(CPACK_PACKAGE_NAME kiln)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "Kiln: an ahead-of-time deep-learning compiler and its runtime")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "lld-22")
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Kiln developers <kiln@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
include(CPack)
