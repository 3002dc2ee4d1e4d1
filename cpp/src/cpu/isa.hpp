// cpu/isa.hpp — the CPU engine's instruction-set level: the CPU's own, capped by VPOC_CPU_ISA.
// Contract: the one home of every run-time kernel choice; no dispatch point reads cpuid or the environment itself.
#pragma once

#include <string>

namespace vpoc::cpu::simd {

// The levels, lowest first. avx512: AVX-512 F + DQ kernels; avx512cd: also the AVX-512 CD +
// VPOPCNTDQ entry kernels (cpu/records_cd512.hpp). scalar differs from sse2 in one dispatch point
// only (block_slots' fallback: one price at a time instead of SSE2's two): x86-64 code is compiled
// for SSE2 as its baseline, so every other loop runs the same at both.
enum class Isa : int { scalar = 0, sse2 = 1, avx2 = 2, avx512 = 3, avx512cd = 4 };

// The level the engine uses: min(VPOC_CPU_ISA, the CPU's own level), VPOC_CPU_ISA unset or empty
// meaning no cap. The variable is read once, at the first call (of this or isa_state); a value that
// is not a level's name (any case) is refused at every call: vpoc::ValueError naming VPOC_CPU_ISA
// and the accepted values.
Isa isa();

// What isa() rests on, for reports (never throws): the CPU's level, the active one (the CPU's when
// the cap is refused), the variable as set, and the refusal's message (empty: accepted or unset).
struct IsaState {
  Isa cpu = Isa::scalar;
  Isa active = Isa::scalar;
  bool set = false;  // VPOC_CPU_ISA set and not empty
  std::string value;
  std::string error;
};
const IsaState& isa_state();
const char* isa_name(Isa level);

// The dispatch points' questions, each isa() against what the kernel needs (and what was compiled in).
bool have_avx2();    // AVX2 kernels (slots_avx2.cpp / records_avx2.cpp compiled in, level >= avx2)
bool have_avx512();  // AVX-512 F + DQ kernels (level >= avx512 where compiled in)
bool have_cd512();   // AVX-512 CD + VPOPCNTDQ entry kernels (level avx512cd where compiled in)
// Compiler-built x86-64-v4 variants (AVX-512 F, BW, CD, DQ, VL): level >= avx512 and the CPU has v4.
bool have_v4();

}  // namespace vpoc::cpu::simd
