# `mpirun -np N hcsim sweep` must write the same bytes as a single-process run.
# cmake -DHCSIM=... -DMPIRUN=... -DSWEEP=... -DWORK=... -P mpi_sweep.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${HCSIM}" sweep "${SWEEP}" --out "${WORK}/single" -q RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "single-process sweep failed: ${rc}")
endif()
# -np 2: one worker rank; -np 3: two worker ranks finishing out of order.
foreach(np 2 3)
  execute_process(COMMAND "${MPIRUN}" --allow-run-as-root --oversubscribe -np ${np} "${HCSIM}" sweep "${SWEEP}"
                          --out "${WORK}/np${np}" -q
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun -np ${np} sweep failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "MPI worker ranks")
    message(FATAL_ERROR "the sweep did not run over MPI:\n${out}")
  endif()
  foreach(f results.jsonl results.csv)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/single/${f}" "${WORK}/np${np}/${f}"
                    RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "mpirun -np ${np}: ${f} differs from the single-process run")
    endif()
  endforeach()
  message(STATUS "mpirun -np ${np}: results.jsonl and results.csv equal the single-process run")
endforeach()
