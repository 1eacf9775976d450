# One golden-report test (registered by tests/golden.cmake):
#   cmake -DHCSIM=<hcsim> -DSCENARIO=<scenario.json> -DGOLDEN=<tests/golden/NAME>
#         -DWORK=<scratch dir> -P check.cmake
# Runs `hcsim run SCENARIO --out WORK` once: its stdout is the table, WORK/report.json the
# JSON report (the bytes `--format json` prints). Both are normalised, then compared byte
# for byte with GOLDEN.txt and GOLDEN.json; with HCSIM_REFRESH_GOLDEN=1 in the environment
# (scripts/refresh-golden.sh) they are written there instead.
#
# Normalised, the only fields that change from run to run or release to release:
#  - table: the last paragraph, "simulated in <wall time> s (... mode, ... tasks, ...)",
#    is joined onto one line (the wall time's width moves its line breaks) and the wall
#    time reads "<wall>";
#  - JSON: "hcsim_version" reads "<version>".
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${HCSIM} run ${SCENARIO} --out ${WORK}/out OUTPUT_VARIABLE table ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hcsim run ${SCENARIO} failed (exit ${rc}):\n${err}")
endif()
file(READ ${WORK}/out/report.json json)

string(FIND "${table}" "\nsimulated in " at REVERSE)
if(at LESS 0)
  message(FATAL_ERROR "the table has no \"simulated in\" line:\n${table}")
endif()
string(SUBSTRING "${table}" 0 ${at} head)
string(SUBSTRING "${table}" ${at} -1 tail)
string(REPLACE "\n  " " " tail "${tail}")
string(REGEX REPLACE "^\nsimulated in [^ ]+ s " "\nsimulated in <wall> s " tail "${tail}")
set(table "${head}${tail}")
string(REGEX REPLACE "\"hcsim_version\": \"[^\"]*\"" "\"hcsim_version\": \"<version>\"" json "${json}")

get_filename_component(name ${GOLDEN} NAME)
file(WRITE ${WORK}/${name}.txt "${table}")
file(WRITE ${WORK}/${name}.json "${json}")
if("$ENV{HCSIM_REFRESH_GOLDEN}" STREQUAL "1")
  file(COPY_FILE ${WORK}/${name}.txt ${GOLDEN}.txt)
  file(COPY_FILE ${WORK}/${name}.json ${GOLDEN}.json)
  message("golden: wrote ${GOLDEN}.txt and .json")
  return()
endif()

find_program(DIFF diff)
set(failed "")
foreach(ext txt json)
  if(NOT EXISTS ${GOLDEN}.${ext})
    list(APPEND failed "${GOLDEN}.${ext} is missing")
    continue()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${GOLDEN}.${ext} ${WORK}/${name}.${ext}
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    list(APPEND failed "${name}.${ext} differs from the golden")
    if(DIFF)
      execute_process(COMMAND ${DIFF} -u ${GOLDEN}.${ext} ${WORK}/${name}.${ext} OUTPUT_VARIABLE d)
      string(LENGTH "${d}" n)
      if(n GREATER 3000)
        string(SUBSTRING "${d}" 0 3000 d)
        string(APPEND d "\n[... cut; whole diff: diff -u ${GOLDEN}.${ext} ${WORK}/${name}.${ext}]\n")
      endif()
      message("first differences (golden ---, now +++):\n${d}")
    endif()
  endif()
endforeach()
if(failed)
  string(REPLACE ";" "\n  " failed "${failed}")
  message(FATAL_ERROR "golden report of ${SCENARIO}:\n  ${failed}\n"
                      "If the change is meant, refresh the goldens and read their diff in review:\n"
                      "  scripts/refresh-golden.sh && git diff tests/golden")
endif()
