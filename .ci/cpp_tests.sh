#!/usr/bin/env bash
# .ci/cpp_tests.sh — builds the C++ unit tests of the rule headers (cpp/tests, doctest) and runs them with CTest.
# Contract: `bash .ci/cpp_tests.sh` from anywhere, in .ci/run's venv or not; installs what it lacks; non-zero on failure.
#
# Build dir build/ci-cpptests, configured with -DVPOC_BUILD_TESTS=ON -DVPOC_GPU_BACKEND=none and built
# with AddressSanitizer + UndefinedBehaviorSanitizer (VPOC_SANITIZE; set VPOC_CPPTESTS_SANITIZE= to
# build without). Only the test executable is built (the rule headers plus cpu/levels.cpp), not the
# Python module; CMake's configure still looks for Python and pybind11 (the top-level CMakeLists
# needs them unconditionally), so pybind11 is taken from `python -m pybind11 --cmakedir`, installed
# from PyPI when missing. doctest comes from Debian (doctest-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
build=build/ci-cpptests
sanitize=${VPOC_CPPTESTS_SANITIZE-address,undefined}
PY=$(command -v python || command -v python3)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

apt_missing=()
[ -f /usr/lib/cmake/doctest/doctestConfig.cmake ] || apt_missing+=(doctest-dev)
command -v g++ >/dev/null 2>&1 || apt_missing+=(g++)
command -v make >/dev/null 2>&1 || apt_missing+=(make)
"$PY" -c "import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
  || apt_missing+=(python3-dev)
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "installing with apt: ${apt_missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
fi
# CMake >= 3.24 (the top-level cmake_minimum_required) and pybind11's CMake files, from PyPI if missing.
if ! command -v cmake >/dev/null 2>&1 || ! cmake -P /dev/stdin <<<'if(CMAKE_VERSION VERSION_LESS 3.24)
message(FATAL_ERROR old)
endif()' >/dev/null 2>&1; then
  "$PY" -m pip install --quiet "cmake>=3.24"
  hash -r
fi
"$PY" -m pybind11 --cmakedir >/dev/null 2>&1 || "$PY" -m pip install --quiet "pybind11>=2.12"

cmake -S . -B "$build" -DVPOC_BUILD_TESTS=ON -DVPOC_GPU_BACKEND=none -DCMAKE_BUILD_TYPE=Release \
  "-DVPOC_SANITIZE=$sanitize" "-DPython_EXECUTABLE=$PY" "-Dpybind11_DIR=$("$PY" -m pybind11 --cmakedir)" >/dev/null
cmake --build "$build" --target vpoc_cpp_tests -j "$(nproc)"
echo "built in $(( $(date +%s) - start )) s"
# ASan's leak check stays on (a plain executable, unlike the Python module); any finding fails the test.
ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
echo "C++ unit tests: $(( $(date +%s) - start )) s in all"
