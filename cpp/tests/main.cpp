// cpp/tests/main.cpp — the doctest runner of the C++ unit tests (one executable, one CTest test per case).
// Contract: no tests here; run `ctest --output-on-failure` in a build configured with -DVPOC_BUILD_TESTS=ON.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
