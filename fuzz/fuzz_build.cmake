# Included by the top-level CMakeLists.txt when JETSWEEP_FUZZ=ON (bench/fuzz configures it; docs/FUZZING.md):
# common/, net/ (TLS), the analysis library (the controller's adaptive planner links it; no LibTorch plugin), the
# controller library and fuzz/ (which compiles the CSV reader's sources itself), every object
# instrumented for libFuzzer, AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer. No LibTorch,
# no agent, CLI, benchmarks or tests.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "jetsweep: JETSWEEP_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}; configure with "
    "-DCMAKE_CXX_COMPILER=clang++-14 (Debian: clang-14 libclang-rt-14-dev), as bench/fuzz does")
endif()
# Every object: coverage for libFuzzer, ASan, UBSan (any UB aborts, so the fuzzer reports it as a crash).
set(JETSWEEP_SANITIZE address,undefined)
add_compile_options(-fsanitize=fuzzer-no-link,${JETSWEEP_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer
                    -gline-tables-only)
add_link_options(-fsanitize=${JETSWEEP_SANITIZE})
# Beast 1.81 declares ssl_stream's buffered async_handshake with the completion signature void(error_code) while
# it calls the handler with (error_code, size_t); clang checks Asio's completion-token concept and refuses
# controller/server.cpp's handler, GCC 12 does not. Without the concept checks both compile the same code.
add_compile_definitions(BOOST_ASIO_DISABLE_CONCEPTS)
# The controller library links libpqxx (PgStore); the fuzzers never open a database.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx)
find_package(OpenSSL REQUIRED)   # net/: the controller's TLS (never used by the fuzzers)
add_subdirectory(common)
add_subdirectory(net)
add_subdirectory(analysis)
add_subdirectory(controller)
add_subdirectory(fuzz)
message(STATUS "jetsweep: fuzz profile (${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}, -fsanitize=fuzzer,"
  "${JETSWEEP_SANITIZE}): targets ${JETSWEEP_FUZZ_TARGETS}")
