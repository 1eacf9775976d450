# The Python module (sim/python/module.cpp) against the CLI: tests/python/module_test.py, run
# with Debian's /usr/bin/python3 (the interpreter python3-pybind11 belongs to). Only where the
# module is built (python3-pybind11 installed, not a sanitizer build).
if(NOT TARGET hcsim_python OR NOT TARGET hcsim)
  return()
endif()
add_test(NAME python.module COMMAND ${HCSIM_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/module_test.py)
set_tests_properties(python.module PROPERTIES TIMEOUT 120
  ENVIRONMENT "PYTHONPATH=${HCSIM_PYTHON_MODULE_DIR};HCSIM=$<TARGET_FILE:hcsim>;HCSIM_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
