# mtune_calibration: MLIR-free measurement helpers of the worker (CPU pinning, machine
# calibration, roofline; the roofline reads problems, mtune_problem, also MLIR-free).
# Included from worker/CMakeLists.txt.
add_library(mtune_calibration STATIC
  ${CMAKE_CURRENT_LIST_DIR}/affinity.cc
  ${CMAKE_CURRENT_LIST_DIR}/amx.cc
  ${CMAKE_CURRENT_LIST_DIR}/bf16_dot.cc
  ${CMAKE_CURRENT_LIST_DIR}/calibration.cc
  ${CMAKE_CURRENT_LIST_DIR}/roofline.cc)
target_link_libraries(mtune_calibration PUBLIC
  mtune_proto mtune_problem absl::status absl::statusor absl::strings absl::str_format Threads::Threads)
# The read loops' _mm512_reduce_add_ps: GCC 12 reports a false "uninitialized"
# inside its own intrinsics header once inlined at -O2 (calibration.cc only).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/calibration.cc PROPERTIES
  COMPILE_OPTIONS "-Wno-maybe-uninitialized;-Wno-uninitialized")

if(MTUNE_BUILD_TESTS)
  add_executable(calibration_test ${CMAKE_CURRENT_LIST_DIR}/calibration_test.cc)
  target_link_libraries(calibration_test PRIVATE mtune_calibration GTest::gtest_main GTest::gmock)
  gtest_discover_tests(calibration_test)
endif()
