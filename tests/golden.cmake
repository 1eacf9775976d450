# Golden reports (style principle 18; docs/testing.md): each shipped scenario's report, as
# `hcsim run` prints it (tests/golden/<name>.txt) and as `--format json` writes it
# (tests/golden/<name>.json), committed and compared byte for byte by the ctest test
# golden.<name>. <name> is the scenario's path below scenarios/ with "/" as "-". The wall
# time of the run and the hcsim version are replaced by fixed text (tests/golden/check.cmake
# says how). scripts/refresh-golden.sh rewrites them all from build/hcsim.
#
# Shipped scenarios: scenarios/*.json, network/, compression/ and validation/meg-*.json
# (not sweeps/ or bench/). Left out, the two slowest (4 and 9 s on an idle core, twice that
# beside a build; the whole suite runs on 2 cores). tests/validation runs both.
set(hcsim_golden_left_out
    validation/meg-t1-09.json   # 2,520 GPUs, 500k tasks
    validation/meg-t1-10.json)  # 3,072 GPUs, 1M tasks
# Sanitizer builds do not run them: the reports are the Release build's (scripts/test.sh),
# and the sanitizer suite has memory errors, not numbers, to find.
if(NOT TARGET hcsim OR HCSIM_SANITIZE)
  return()
endif()
file(GLOB hcsim_golden_scenarios CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/scenarios/*.json ${CMAKE_SOURCE_DIR}/scenarios/network/*.json
     ${CMAKE_SOURCE_DIR}/scenarios/compression/*.json ${CMAKE_SOURCE_DIR}/scenarios/validation/meg-*.json)
foreach(f ${hcsim_golden_scenarios})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/scenarios ${f})
  if(rel IN_LIST hcsim_golden_left_out)
    continue()
  endif()
  string(REGEX REPLACE "\\.json$" "" name ${rel})
  string(REPLACE "/" "-" name ${name})
  add_test(NAME golden.${name}
           COMMAND ${CMAKE_COMMAND} -DHCSIM=$<TARGET_FILE:hcsim> -DSCENARIO=${f}
                   -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/${name} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/golden/${name}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/check.cmake)
  set_tests_properties(golden.${name} PROPERTIES TIMEOUT 120 LABELS golden)
endforeach()
