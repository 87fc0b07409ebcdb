# mtune_baselines: single-threaded sgemm of oneDNN, Eigen and OpenBLAS, and oneDNN / Eigen
# kernels of every family, the libraries mtune's kernels are compared with. Included from bench/CMakeLists.txt.
# Not find_package(dnnl): Debian's dnnl-config.cmake (oneDNN built with the OpenCL GPU
# runtime) requires OpenCL development files, which a CPU-only baseline never uses and
# which are not installed. The library and header are located directly instead.
find_path(MTUNE_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h REQUIRED)
find_library(MTUNE_DNNL_LIBRARY dnnl REQUIRED)
find_package(Eigen3 3.4 CONFIG REQUIRED)
find_package(OpenBLAS CONFIG REQUIRED)
find_package(OpenMP REQUIRED)

# family_baselines: oneDNN / Eigen implementations of every f32 kernel family;
# handwritten_kernels: AVX-512 yardsticks for the two convolution families.
add_library(mtune_baselines STATIC ${CMAKE_CURRENT_LIST_DIR}/baselines.cc
  ${CMAKE_CURRENT_LIST_DIR}/family_baselines.cc ${CMAKE_CURRENT_LIST_DIR}/handwritten_kernels.cc)
target_include_directories(mtune_baselines PRIVATE ${OpenBLAS_INCLUDE_DIRS} ${MTUNE_DNNL_INCLUDE_DIR})
# GCC 12 reports false "(maybe) uninitialized" warnings inside its own AVX-512
# intrinsics (_mm512_unpacklo_ps, _mm512_reduce_add_ps, ...) and Eigen's AVX-512
# packets once they are inlined here (250 of them at -O2, none in mtune's code).
target_compile_options(mtune_baselines PRIVATE -Wno-maybe-uninitialized -Wno-uninitialized)
target_link_libraries(mtune_baselines
  PUBLIC absl::status absl::statusor mtune_problem
  PRIVATE ${MTUNE_DNNL_LIBRARY} Eigen3::Eigen ${OpenBLAS_LIBRARIES} OpenMP::OpenMP_CXX absl::strings)
# Eigen picks its kernels at compile time: without the host's ISA it would run SSE2 and
# be an unfairly weak baseline. oneDNN and OpenBLAS dispatch at run time anyway.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-march=native MTUNE_HAVE_MARCH_NATIVE)
if(MTUNE_HAVE_MARCH_NATIVE)
  target_compile_options(mtune_baselines PRIVATE -march=native)
endif()

if(MTUNE_BUILD_TESTS)
  add_executable(baselines_test ${CMAKE_CURRENT_LIST_DIR}/baselines_test.cc)
  target_link_libraries(baselines_test PRIVATE mtune_baselines GTest::gtest_main GTest::gmock)
  gtest_discover_tests(baselines_test)
endif()
