# The libFuzzer target over scenario reading and parsing (tests/fuzz/). libFuzzer comes
# with clang only, so the target exists when the compiler is clang and HCSIM_FUZZ is on;
# scripts/fuzz.sh (long runs) and scripts/sanitize.sh (the short CI run) configure such a
# build directory of their own. The ctest test `fuzz_parse_scenario` runs it for
# HCSIM_FUZZ_SECONDS from the seed corpus (every shipped scenario and the bad-scenario
# catalogue).
option(HCSIM_FUZZ "Build the libFuzzer target over scenario parsing (needs clang)" OFF)
set(HCSIM_FUZZ_SECONDS 60 CACHE STRING "Length in seconds of the fuzz run registered with ctest")
if(NOT HCSIM_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(WARNING "HCSIM_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++ "
                  "or run scripts/fuzz.sh. The fuzz target is not built.")
  return()
endif()

# Coverage instrumentation (and the sanitizers) on everything the parser reaches, so that
# libFuzzer can steer by it and memory errors become findings.
foreach(lib hcsim_core hcsim_models hcsim_topologies hcsim_workloads hcsim_scenarios)
  get_target_property(kind ${lib} TYPE)
  if(kind STREQUAL "STATIC_LIBRARY")
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  endif()
endforeach()

add_executable(hcsim_fuzz_parse_scenario ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/parse_scenario_fuzz.cpp)
target_link_libraries(hcsim_fuzz_parse_scenario PRIVATE hcsim_scenarios)
target_compile_options(hcsim_fuzz_parse_scenario PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
target_link_options(hcsim_fuzz_parse_scenario PRIVATE -fsanitize=fuzzer,address,undefined)
set_target_properties(hcsim_fuzz_parse_scenario PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

add_test(NAME fuzz_parse_scenario
         COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh ${HCSIM_FUZZ_SECONDS} --build-dir ${CMAKE_BINARY_DIR}
                 --run-only)
math(EXPR hcsim_fuzz_timeout "${HCSIM_FUZZ_SECONDS} + 300")
set_tests_properties(fuzz_parse_scenario PROPERTIES LABELS fuzz TIMEOUT ${hcsim_fuzz_timeout})
