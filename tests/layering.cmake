# Layering the build enforces (style principle 19; docs/architecture.md, "Layers"):
# the ctest test Layering.Includes fails when
#  - a SimGrid header (<simgrid/...>, <xbt/...>, <smpi/...>) is included outside sim/engine,
#    anywhere in the tree (libraries, tests, benchmarks, scripts): engine links SimGrid
#    PRIVATE, but its headers sit in a system include directory every target sees, so
#    the compiler alone would not catch one;
#  - a folder includes a header of a folder its target does not link (directly or through
#    PUBLIC links), i.e. a lower floor includes a higher one;
#  - a target links a target of a higher floor (the CMake graph and the floors disagree).
# The floors, lowest first, and the folder of each target:
set(hcsim_floors
    sim/core=hcsim_core
    models=hcsim_models
    topologies=hcsim_topologies
    sim/collectives=hcsim_collectives
    workloads=hcsim_workloads
    scenarios=hcsim_scenarios
    sim/engine=hcsim_engine
    sim/report=hcsim_report
    sim/driver=hcsim_driver
    sim/cluster=hcsim_cluster
    sim/sweep=hcsim_sweep
    sim/cli=hcsim_cli)
# Folders checked for SimGrid includes only (they are no floor).
set(hcsim_layering_other_dirs tests bench scripts)
# The Python module, beside the CLI on the top floor, where it is built (not in sanitizer
# builds, nor without python3-pybind11).
if(TARGET hcsim_python)
  list(APPEND hcsim_floors sim/python=hcsim_python)
else()
  list(APPEND hcsim_layering_other_dirs sim/python)
endif()

# What each target may include comes from the targets themselves (their link libraries as
# configured), written where the check script reads it.
set(config "set(HCSIM_SOURCE_DIR \"${CMAKE_SOURCE_DIR}\")\n")
string(APPEND config "set(HCSIM_FLOORS \"${hcsim_floors}\")\n")
string(APPEND config "set(HCSIM_OTHER_DIRS \"${hcsim_layering_other_dirs}\")\n")
foreach(floor ${hcsim_floors})
  string(REGEX REPLACE "^.*=" "" target ${floor})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tests/layering.cmake: floor ${floor} names no target")
  endif()
  get_target_property(kind ${target} TYPE)
  if(kind STREQUAL "INTERFACE_LIBRARY")
    get_target_property(direct ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(direct ${target} LINK_LIBRARIES)
  endif()
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  foreach(v direct iface)
    if(NOT ${v})
      set(${v} "")
    endif()
    list(FILTER ${v} INCLUDE REGEX "^hcsim_")  # drops $<LINK_ONLY:...> (PRIVATE, not transitive)
  endforeach()
  string(APPEND config "set(HCSIM_LINKS_${target} \"${direct}\")\nset(HCSIM_IFACE_${target} \"${iface}\")\n")
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layering_config.cmake "${config}")

add_test(NAME Layering.Includes
         COMMAND ${CMAKE_COMMAND} -DCONFIG=${CMAKE_CURRENT_BINARY_DIR}/layering_config.cmake
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_includes.cmake)
set_tests_properties(Layering.Includes PROPERTIES TIMEOUT 60)
