# `cpack -G DEB` in a build folder: a Debian package of what `cmake --install` installs (docs/
# library.md, "A deployment library"). A deployment build (TUNEDREDUCE_KERNELS) packs the library,
# its headers, CMake package, pkg-config file and kernel list as `libtunedreduce`; the full build
# also the CLI and tune.toml, as `tunedreduce`. The CUDA runtime is linked in statically, so the
# package depends on SQLite and the C/C++ runtimes only.
if(TUNEDREDUCE_KERNELS)
  set(CPACK_PACKAGE_NAME libtunedreduce)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "Auto-tuned GPU reductions: the library for the GPUs of a fleet's tuning databases")
else()
  set(CPACK_PACKAGE_NAME tunedreduce)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "Auto-tuned GPU reductions: the tuner, its CLI and the library with every kernel")
endif()
set(CPACK_PACKAGE_VENDOR "tunedreduce")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tunedreduce maintainers <maintainers@tunedreduce.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# Symbols stripped, as Debian ships libraries (the exported API stays in the dynamic table).
set(CPACK_STRIP_FILES TRUE)
# The shared objects' own needs (libsqlite3, libstdc++, libc), found by dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "tunedreduce runs the fastest measured reduction kernel (sum, min, max, argmin, argmax,\n\
absmax, wide and exact sums of integers, floats and half types; of whole arrays, matrix rows\n\
and segments) for the GPU it runs on, from a tuning database, behind CUB's calling conventions.\n\
The NVIDIA driver is needed at run time; the CUDA runtime is linked in.")
include(CPack)
