// cpu/isa.cpp — the CPU's instruction-set level (cpuid through the compiler's builtins) and the VPOC_CPU_ISA cap.
// Contract: cpu/isa.hpp; read once per process, a bad value refused (never ignored), no arithmetic here.
#include "cpu/isa.hpp"

#include <cctype>
#include <cstdlib>

#include "cpu/slots.hpp"  // VPOC_HAVE_AVX512_SLOTS
#include "vpoc/errors.hpp"

namespace vpoc::cpu::simd {
namespace {

constexpr const char* kNames[] = {"scalar", "sse2", "avx2", "avx512", "avx512cd"};
constexpr const char* kAccepted = "scalar, sse2, avx2, avx512, avx512cd";

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VPOC_ISA_CPUID 1
#endif

Isa cpu_level() {
#if defined(VPOC_ISA_CPUID)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    if (__builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vpopcntdq")) return Isa::avx512cd;
    return Isa::avx512;
  }
  if (__builtin_cpu_supports("avx2")) return Isa::avx2;
  return Isa::sse2;
#elif defined(__SSE2__)
  return Isa::sse2;
#else
  return Isa::scalar;
#endif
}

bool cpu_v4() {
#if defined(VPOC_ISA_CPUID) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  return __builtin_cpu_supports("x86-64-v4");  // GCC 12: the first that knows the levels (GCC PR101696)
#elif defined(VPOC_ISA_CPUID)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

IsaState read_state() {
  IsaState s;
  s.cpu = s.active = cpu_level();
  const char* env = std::getenv("VPOC_CPU_ISA");
  if (env == nullptr || *env == '\0') return s;
  s.set = true;
  s.value = env;
  std::string low;
  for (const char* c = env; *c != '\0'; ++c) low += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  for (int k = 0; k <= static_cast<int>(Isa::avx512cd); ++k) {
    if (low == kNames[k]) {
      s.active = static_cast<Isa>(k) < s.cpu ? static_cast<Isa>(k) : s.cpu;
      return s;
    }
  }
  s.error = detail::concat("VPOC_CPU_ISA='", s.value, "' is not an instruction-set level: set it to one of ", kAccepted,
                           " (a cap on the CPU engine's kernels), or unset it for the CPU's best");
  return s;
}

}  // namespace

const IsaState& isa_state() {
  static const IsaState s = read_state();
  return s;
}

Isa isa() {
  const IsaState& s = isa_state();
  if (!s.error.empty()) VPOC_THROW_ARG(ValueError, "VPOC_CPU_ISA", s.error);
  return s.active;
}

const char* isa_name(Isa level) { return kNames[static_cast<int>(level)]; }

bool have_avx2() {
#if defined(VPOC_HAVE_AVX2) && defined(VPOC_ISA_CPUID)
  return isa() >= Isa::avx2;
#else
  return false;
#endif
}

bool have_avx512() {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  return isa() >= Isa::avx512;
#else
  return false;
#endif
}

bool have_cd512() {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  return isa() >= Isa::avx512cd;
#else
  return false;
#endif
}

bool have_v4() {
  static const bool v4 = cpu_v4();
  return isa() >= Isa::avx512 && v4;
}

}  // namespace vpoc::cpu::simd
