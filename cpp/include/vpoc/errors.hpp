// vpoc/errors.hpp — the typed exceptions every vpoc layer throws, and the one macro that throws them.
// Contract: nothing in vpoc calls exit/abort; failures are vpoc::Error subclasses stamped with file:line.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace vpoc {

// Base of every vpoc failure. `where()` is the throwing source location ("file:line").
class Error : public std::runtime_error {
 public:
  Error(const std::string& msg, const char* file, int line)
      : std::runtime_error(msg), where_(std::string(file) + ":" + std::to_string(line)) {}
  const std::string& where() const noexcept { return where_; }

  // Which input it is about, when one (Python: vpoc.InputError's .argument, .index, .reason):
  // the argument's name, the row (-1: none), and the message without the "name[i]=value" lead.
  const std::string& argument() const noexcept { return argument_; }
  int64_t index() const noexcept { return index_; }
  std::string reason() const { return reason_.empty() ? std::string(what()) : reason_; }
  void set_input(std::string argument, int64_t index, std::string reason) {
    argument_ = std::move(argument);
    index_ = index;
    reason_ = std::move(reason);
  }
  // The session (its position in the call, -1: none) it is about (Python: vpoc.InputError's .session).
  int64_t session() const noexcept { return session_; }
  void set_session(int64_t session) { session_ = session; }

 private:
  std::string where_;
  std::string argument_;
  int64_t index_ = -1;
  std::string reason_;
  int64_t session_ = -1;
};

// Bad argument value (Python ValueError).
class ValueError : public Error {
  using Error::Error;
};
// Bad argument type or dtype (Python TypeError).
class TypeError : public Error {
  using Error::Error;
};
// A device or host allocation failed (Python vpoc.OutOfMemoryError, a MemoryError).
class OutOfMemoryError : public Error {
  using Error::Error;
};
// The caller cancelled a running call (Ctrl-C: the bindings raise KeyboardInterrupt).
class Cancelled : public Error {
  using Error::Error;
};
// A GPU runtime call failed; the message carries the runtime's error name (Python RuntimeError).
class DeviceError : public Error {
  using Error::Error;
};

namespace detail {
// Message building without iostreams: no locale machinery, which some toolchains (a statically
// linked libstdc++ in a CUDA build, seen) leave uninitialised inside a Python extension.
inline void append(std::string& s, const std::string& x) { s += x; }
inline void append(std::string& s, const char* x) { s += x; }
inline void append(std::string& s, char x) { s += x; }
inline void append(std::string& s, double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  s += buf;
}
inline void append(std::string& s, float x) { append(s, static_cast<double>(x)); }
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
void append(std::string& s, T x) {
  s += std::to_string(x);
}

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}
}  // namespace detail

}  // namespace vpoc

// VPOC_THROW(ValueError, "tick_size must be > 0, got ", x): builds the message from its parts
// and stamps the throwing file:line.
#define VPOC_THROW(kind, ...) \
  throw ::vpoc::kind(::vpoc::detail::concat(__VA_ARGS__), __FILE__, __LINE__)

// VPOC_THROW_ARG(ValueError, "tick_size", "tick_size must be > 0, got ", x): the same, naming the
// argument it is about (index -1, reason: the message).
#define VPOC_THROW_ARG(kind, argument, ...)                                              \
  do {                                                                                   \
    ::vpoc::kind vpoc_error_(::vpoc::detail::concat(__VA_ARGS__), __FILE__, __LINE__); \
    vpoc_error_.set_input(argument, -1, std::string());                                  \
    throw vpoc_error_;                                                                   \
  } while (0)
