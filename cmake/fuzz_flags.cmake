# KREG_FUZZ builds every target with libFuzzer's coverage feedback and with ASan and UBSan,
# so that a fuzzer is guided by the paths it takes inside kreg and stops at the first bad
# access, leak or undefined operation. Only the fuzz targets link libFuzzer's own main
# (tests/fuzz); the other executables get the sanitizer runtimes, which also stand in for
# the coverage callbacks.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "KREG_FUZZ needs clang and its libFuzzer runtime: configure with "
                      "-DCMAKE_CXX_COMPILER=clang++, or use the fuzz preset")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer)
# --as-needed, as in the sanitizer presets: without it the executables record a dependency
# on the driver stub, and the build-time precompiler could not start without a driver.
add_link_options(-fsanitize=address,undefined -Wl,--as-needed)
