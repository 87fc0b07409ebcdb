# libFuzzer targets (tests/fuzz/): a separate CMake project built with clang-22 and
# -fsanitize=fuzzer,address,undefined against this build's libraries, then each
# target runs in ctest for a bounded number of executions on its committed seed
# corpus. Needs clang-22 and libclang-rt-22-dev (deploy/install-deps.sh).
option(MTUNE_BUILD_FUZZERS "Build and run the libFuzzer targets (clang-22, libclang-rt-22-dev)" ON)
if(NOT MTUNE_BUILD_FUZZERS)
  return()
endif()

find_program(MTUNE_FUZZ_CXX clang++-22 REQUIRED)
find_program(MTUNE_FUZZ_CC clang-22 REQUIRED)
execute_process(COMMAND ${MTUNE_FUZZ_CXX} -print-runtime-dir
  OUTPUT_VARIABLE fuzz_runtime_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT EXISTS "${fuzz_runtime_dir}/libclang_rt.fuzzer-x86_64.a"
   OR NOT EXISTS "${fuzz_runtime_dir}/libclang_rt.asan-x86_64.a")
  message(FATAL_ERROR "libFuzzer/ASan runtimes of ${MTUNE_FUZZ_CXX} not found in "
    "'${fuzz_runtime_dir}': install libclang-rt-22-dev (deploy/install-deps.sh), or "
    "configure with -DMTUNE_BUILD_FUZZERS=OFF to build without the fuzz tests")
endif()

# The sub-build compiles these sources itself, instrumented, and takes the rest of
# their libraries from this build's archives object by object: in a unity build each
# must stay an object of its own, or its batch would define its functions a second
# time. The same list as tests/fuzz/CMakeLists.txt's.
set(fuzz_instrumented_sources
  strategies/problem.cc strategies/families.cc strategies/knob_space.cc strategies/knob_rules.cc
  strategies/option_forms.cc strategies/candidate.cc server/coordinator.cc
  server/coordinator_leases.cc server/coordinator_planning.cc server/coordinator_results.cc
  server/services.cc server/candidate_space.cc)
foreach(source ${fuzz_instrumented_sources})
  get_filename_component(source_dir ${CMAKE_SOURCE_DIR}/${source} DIRECTORY)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/${source} DIRECTORY ${source_dir}
    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endforeach()
# The knob-space fuzzer takes mtune_proto's message classes without gRPC, which a
# batch of them with transport_security.cc would pull in (generated sources gain
# little from batching anyway: 35 -> 30 s).
set_target_properties(mtune_proto PROPERTIES UNITY_BUILD OFF)

set(MTUNE_FUZZ_BUILD_JOBS 2 CACHE STRING "parallel compile jobs of the fuzz sub-build")
include(ExternalProject)
set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
ExternalProject_Add(mtune_fuzzers
  SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz
  BINARY_DIR ${fuzz_bin}
  CMAKE_ARGS
    -DCMAKE_CXX_COMPILER=${MTUNE_FUZZ_CXX}
    -DCMAKE_C_COMPILER=${MTUNE_FUZZ_CC}
    -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
    -DCMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER}
    -DMTUNE_SOURCE_DIR=${CMAKE_SOURCE_DIR}
    -DMTUNE_MAIN_BINARY_DIR=${CMAKE_BINARY_DIR}
    -DMTUNE_LIB_PROTO=$<TARGET_FILE:mtune_proto>
    -DMTUNE_LIB_PROBLEM=$<TARGET_FILE:mtune_problem>
    -DMTUNE_LIB_STRATEGIES=$<TARGET_FILE:mtune_strategies>
    -DMTUNE_LIB_SEARCH=$<TARGET_FILE:mtune_search>
    -DMTUNE_LIB_DB=$<TARGET_FILE:mtune_db>
    -DMTUNE_LIB_SERVER=$<TARGET_FILE:mtune_server>
  # Its own parallelism: the main build's -j does not reach a sub-build.
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --parallel ${MTUNE_FUZZ_BUILD_JOBS}
  INSTALL_COMMAND ""
  # The sub-build tracks its own sources; always ask it (a no-op when up to date).
  BUILD_ALWAYS ON
  DEPENDS mtune_proto mtune_problem mtune_strategies mtune_search mtune_db mtune_server)

# Executions per target: each finishes in seconds on 2 cores (-max_total_time is the
# backstop, not the plan). Longer runs: see tests/fuzz/README.md.
set(MTUNE_FUZZ_RUNS_problem_key 100000 CACHE STRING "libFuzzer -runs for problem_key_fuzzer in ctest")
set(MTUNE_FUZZ_RUNS_knob_space 20000 CACHE STRING "libFuzzer -runs for knob_space_fuzzer in ctest")
set(MTUNE_FUZZ_RUNS_rpc 500 CACHE STRING "libFuzzer -runs for rpc_fuzzer in ctest")
foreach(target problem_key knob_space rpc)
  add_test(NAME fuzz_${target}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzzer.sh ${fuzz_bin}/${target}_fuzzer
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${target} ${fuzz_bin}/run/${target}
      ${MTUNE_FUZZ_RUNS_${target}} 120)
  # COST: started early in a parallel ctest (see tests/CMakeLists.txt).
  set_tests_properties(fuzz_${target} PROPERTIES TIMEOUT 240 LABELS fuzz COST 50)
endforeach()
