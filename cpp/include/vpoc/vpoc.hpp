// vpoc/vpoc.hpp — umbrella header of the public C++ API.
// Contract: include this one file to use the engines; it pulls in no pybind and no GPU headers.
#pragma once

#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/live.hpp"
#include "vpoc/profiles.hpp"
#include "vpoc/types.hpp"
