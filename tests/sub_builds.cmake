# KREG_SANITIZER_SUITES: tests that each configure a build of their own below this build
# tree from a preset of CMakePresets.json, build only what they run, and run it: the CPU
# suites under the asan and tsan presets, and every fuzzer under the fuzz preset for
# KREG_FUZZ_SECONDS. Configure, build and run are separate tests chained by fixtures, so a
# failure names its step, and `ctest -R asan_cpu_suites` brings its setup steps along.
# Builds and suite runs use every core, so they run alone; the fuzzers take one core each.

cmake_host_system_information(RESULT kreg_cores QUERY NUMBER_OF_LOGICAL_CORES)
set(kreg_sub_builds ${CMAKE_CURRENT_BINARY_DIR}/sub_builds)
set(KREG_FUZZ_SECONDS 45 CACHE STRING "How long each fuzz_<target> test fuzzes, in seconds")
include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz/targets.cmake)

# Configures sub_builds/<preset> and builds the targets that follow; tests that use the
# build require the fixture <preset>_built. The sub-build must not add these tests again.
# Options after the targets' names, past the word OPTIONS, go to the sub-build's configure.
function(kreg_add_sub_build preset)
  cmake_parse_arguments(PARSE_ARGV 1 sub "" "" "OPTIONS")
  set(dir ${kreg_sub_builds}/${preset})
  add_test(NAME ${preset}_configure
           COMMAND ${CMAKE_COMMAND} --preset ${preset} -B ${dir} -DKREG_SANITIZER_SUITES=OFF
                   -DCUDAToolkit_ROOT=${CUDAToolkit_LIBRARY_ROOT} ${sub_OPTIONS}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME ${preset}_build COMMAND ${CMAKE_COMMAND} --build ${dir} -j ${kreg_cores}
                                        --target ${sub_UNPARSED_ARGUMENTS})
  set_tests_properties(${preset}_configure PROPERTIES
    FIXTURES_SETUP ${preset}_configured RUN_SERIAL ON TIMEOUT 600 LABELS sanitizer)
  set_tests_properties(${preset}_build PROPERTIES
    FIXTURES_REQUIRED ${preset}_configured FIXTURES_SETUP ${preset}_built
    RUN_SERIAL ON TIMEOUT 2400 LABELS sanitizer)
endfunction()

get_property(kreg_cpu_suites GLOBAL PROPERTY kreg_cpu_test_targets)
# The CPU suites test the precompiled set this build generated: the same kernels, NVRTC and
# options make the same binaries, so compiling them again under a sanitizer adds nothing.
foreach(preset asan tsan)
  kreg_add_sub_build(${preset} ${kreg_cpu_suites} OPTIONS
                     -DKREG_PRECOMPILED_SET=${PROJECT_BINARY_DIR}/src/precompiled_binaries.cpp)
  # --no-tests=error: a label that selects nothing must not pass as a clean run.
  add_test(NAME ${preset}_cpu_suites
           COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${kreg_sub_builds}/${preset} -L "^cpu$"
                   --no-tests=error --output-on-failure -j ${kreg_cores})
  set_tests_properties(${preset}_cpu_suites PROPERTIES
    FIXTURES_REQUIRED ${preset}_built RUN_SERIAL ON TIMEOUT 1800 LABELS sanitizer)
endforeach()
set_tests_properties(tsan_cpu_suites PROPERTIES
  ENVIRONMENT "TSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan_suppressions.txt")

set(kreg_fuzzers)
foreach(target ${KREG_FUZZ_TARGETS})
  list(APPEND kreg_fuzzers kreg_fuzz_${target})
endforeach()
kreg_add_sub_build(fuzz ${kreg_fuzzers})
foreach(target ${KREG_FUZZ_TARGETS})
  # New inputs go to a folder of the build tree (libFuzzer writes to the first corpus
  # folder); the seeds in the source tree are only read. A crashing input is saved in
  # artifacts/ and its path printed.
  set(found ${kreg_sub_builds}/fuzz/corpus/${target})
  set(artifacts ${kreg_sub_builds}/fuzz/artifacts)
  file(MAKE_DIRECTORY ${found} ${artifacts})
  # A target's dictionary (tests/fuzz/dict/<name>.dict), where it has one: words it splices in.
  set(dict ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/dict/${target}.dict)
  set(dict_option)
  if(EXISTS ${dict})
    set(dict_option -dict=${dict})
  endif()
  add_test(NAME fuzz_${target}
           COMMAND ${kreg_sub_builds}/fuzz/tests/fuzz/kreg_fuzz_${target}
                   -max_total_time=${KREG_FUZZ_SECONDS} -timeout=30 -rss_limit_mb=4096
                   -print_final_stats=1 -artifact_prefix=${artifacts}/${target}- ${dict_option}
                   ${found} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${target})
  math(EXPR limit "${KREG_FUZZ_SECONDS} + 300")
  set_tests_properties(fuzz_${target} PROPERTIES
    FIXTURES_REQUIRED fuzz_built TIMEOUT ${limit} LABELS "sanitizer;fuzz")
endforeach()
