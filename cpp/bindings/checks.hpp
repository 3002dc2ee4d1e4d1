// bindings/checks.hpp — Python scalar arguments -> C++ values, with the one wording of every type/range error.
// Contract: TypeError/ValueError naming the argument and what was expected; exposed to Python as vpoc._validate.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace vpoc_bind::checks {

namespace py = pybind11;

constexpr int64_t kInt64Max = INT64_MAX;

// float(x) for a real number (int, float, numpy scalars, numbers.Real; never bool).
double real(const py::handle& x, const char* name);
// int(x) in [lo, hi] for an integer (int, numpy integers, numbers.Integral; never bool).
int64_t integer(const py::handle& x, const char* name, int64_t lo, int64_t hi = kInt64Max);
// threads=: None -> 0 (all cores), else an integer in [1, 1024].
int threads(const py::handle& x);
// True/False (numpy bools too).
bool boolean(const py::handle& x, const char* name);
// A str.
std::string string(const py::handle& x, const char* name);

}  // namespace vpoc_bind::checks
