# The sweep area's command-level tests: they run the hcsim binary, so it is built first.
# - every expectations file under tests/expectations/ is a ctest of its own (`hcsim check`);
# - `mpirun -np N hcsim sweep` equals a single-process run, registered only where mpirun
#   exists and hcsim was built with MPI.
if(TARGET hcsim_test_sweep AND TARGET hcsim)
  add_dependencies(hcsim_test_sweep hcsim)
endif()
if(TARGET hcsim)
  file(GLOB hcsim_expectations CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/expectations/*.json)
  foreach(f ${hcsim_expectations})
    get_filename_component(stem ${f} NAME_WE)
    add_test(NAME expectations.${stem}
             COMMAND hcsim check ${f} -j 2 --junit ${CMAKE_CURRENT_BINARY_DIR}/expectations-${stem}.junit.xml)
    set_tests_properties(expectations.${stem} PROPERTIES TIMEOUT 120)
  endforeach()
  find_program(HCSIM_MPIRUN mpirun)
  get_property(hcsim_have_mpi GLOBAL PROPERTY HCSIM_HAVE_MPI)
  if(HCSIM_MPIRUN AND hcsim_have_mpi)
    add_test(NAME sweep.mpirun_equals_single_process
             COMMAND ${CMAKE_COMMAND} -DHCSIM=$<TARGET_FILE:hcsim> -DMPIRUN=${HCSIM_MPIRUN}
                     -DSWEEP=${CMAKE_SOURCE_DIR}/scenarios/sweeps/tiny-gpt-layouts.json
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/sweep-mpi -P ${CMAKE_CURRENT_SOURCE_DIR}/sweep/mpi_sweep.cmake)
    set_tests_properties(sweep.mpirun_equals_single_process PROPERTIES TIMEOUT 120)
    if(HCSIM_SANITIZE)
      # Open MPI's dlopen'ed components keep process-lifetime allocations that
      # LeakSanitizer reports from an unnamed module; hcsim's own sweep code is
      # leak-checked by the single-process sweep tests.
      set_tests_properties(sweep.mpirun_equals_single_process PROPERTIES
                           ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1")
    endif()
  endif()
endif()
