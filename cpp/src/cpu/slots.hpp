// cpu/slots.hpp — phase A of trade binning: a block of prices -> window slots (int32), vectorised.
// Contract: slot[j] = rint(p[j] * inv) - origin, clamped to +-2e9; false when a price is NaN/inf/huge.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cpu/isa.hpp"  // have_avx2, have_avx512: the level the CPU engine runs at

namespace vpoc::cpu {

// For j < n: slot[j] = round_half_even(p[j] * inv) - origin (invalid prices give slot 0), and the
// smallest / largest unclamped slot in mn / mx; whole: every p[j] * inv is a whole number (with a
// power-of-two tick, the proof that the block's prices are on the grid). Returns false when some
// |p[j] * inv| >= 2**52, NaN or inf. Picks the widest instruction set the CPU has (AVX2 where
// compiled in, else SSE2/scalar).
bool block_slots(const double* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                 bool& whole);
bool block_slots(const float* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                 bool& whole);

// Phase A for float32 prices when tick_size is a power of two <= 1 (p * inv is then exact in
// float32): eight at a time. Same slots as block_slots; returns false (slot contents unspecified)
// when the block must take block_slots instead: no AVX2, |p * inv| >= 2**23, NaN/inf, or an origin
// beyond +-2**30.
// With float32 volumes v (may be null), checks them in the same pass into *vc as volumes_ok does
// (vc->ok, vc->vmax, vc->whole); valid only when it returns true.
struct VolumeCheck {
  bool ok = false, whole = false;
  double vmax = 0.0;
};
bool block_slots_f32(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn,
                     double& mx, bool& whole, const float* v = nullptr, VolumeCheck* vc = nullptr);

// Phase A as records, for phase B's scatter (one load per trade instead of two, no conversion):
// rec[j] = uint32(slot[j] << shift) | uint64(w[j]) << 32 (shift: the caller's row size, so that the
// low word is a byte offset; it keeps slot << shift below 2**32 for the slots it uses), slot[j] as
// block_slots / block_slots_f32 give it and
// w[j] the volume's 32-bit word: v[j] itself when it is a whole number below 2**31 (any other
// volume gives some word: the caller uses the words only for a block that volumes_ok found whole
// and below 2**31). Same return, range and flags as block_slots_f32 / block_slots. False when the
// CPU lacks the instruction set (no AVX2; no AVX-512 for block_records_f32 with volumes other than
// float32): then the caller takes the slot variants. block_records with vc: the volumes' check
// (volumes_ok) in the same pass, as block_slots_f32 does it (valid only when it returns true).
bool block_records_f32(const float* p, const float* v, int n, float inv, int64_t origin, int shift, uint64_t* rec, double& mn,
                       double& mx, bool& whole, VolumeCheck& vc, int* count = nullptr);
// Float64 and integer volumes too (AVX-512 only; never merged: *count = -1).
bool block_records_f32(const float* p, const double* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count = nullptr);
bool block_records_f32(const float* p, const int32_t* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count = nullptr);
bool block_records_f32(const float* p, const int64_t* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count = nullptr);
// With count, block_records_f32 may merge runs of equal slots (AVX-512): *count = m records, record
// i < m holding the offset of a run's slot (runs in order, the block's last included) and the
// volume words' sum over the trades before the next run (mod 2**32); a run's volume is that minus
// the record before's (0 for the first). Exact for blocks whose volumes are whole with every run
// summing below 2**32 (volume max * n < 2**32 suffices). *count = -1: records as without count.
// Entries (AVX-512 CD; cpu/records_cd512.hpp): block_records_f32's ticks, range and flags, and per 16
// trades one entry per distinct row: off[i] the byte offset of a lane of that row in rows of kLanes
// int64 accumulators, sum[i] the row's volumes among those trades (m entries <= n; each array holds
// n). Only when every price is valid and every volume whole and below 2**28 (vc then says so);
// false otherwise, or without the instruction set: then the caller takes the records.
// pend (may be null): entries of the block before, added into the window in the same loop (all of
// them, whatever it returns; pend->m = -1 then); without the instruction set they are left to the caller.
struct PendingEntries {
  const uint32_t* off = nullptr;
  const uint32_t* sum = nullptr;
  char* base = nullptr;  // the window's lane 0 of its origin row, as when the entries were made
  int m = -1;            // -1: none
};
// Whether block_entries_f32 / _f64 can take a block (simd::have_cd512: AVX-512 CD and VPOPCNTDQ, level avx512cd).
bool have_entries();
bool block_entries_f32(const float* p, const float* v, int n, float inv, int64_t origin, uint32_t* off, uint32_t* sum,
                       int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc, PendingEntries* pend = nullptr);
// The same for float64 prices and float64 or int64 volumes: block_records' ticks, range and flags
// (origin and mn / mx as there), entries as above.
bool block_entries_f64(const double* p, const double* v, int n, double inv, double origin, uint32_t* off,
                       uint32_t* sum, int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc,
                       PendingEntries* pend = nullptr);
bool block_entries_f64(const double* p, const int64_t* v, int n, double inv, double origin, uint32_t* off,
                       uint32_t* sum, int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc,
                       PendingEntries* pend = nullptr);
bool block_records(const double* p, const double* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc = nullptr);
bool block_records(const double* p, const float* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc = nullptr);
bool block_records(const double* p, const int32_t* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc = nullptr);
bool block_records(const double* p, const int64_t* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc = nullptr);
// A volume's 32-bit record word as the vector variants give it where it matters (whole, < 2**31).
template <class V>
inline uint32_t volume_word(V x) {
  if constexpr (std::is_floating_point_v<V>)
    return x >= V(0) && x < V(2147483648.0) ? static_cast<uint32_t>(static_cast<int32_t>(x)) : 0u;
  else
    return static_cast<uint32_t>(x);
}

// True when every v[j], j < n, is finite, >= 0 and <= 2**53 (vectorised; AVX2 when the CPU has
// it); vmax: an upper bound of the largest (the maximum for floats, the bitwise OR for integers);
// whole: every v[j] is a whole number (true may be missed for odd doubles above 2**52, never given
// wrongly), found in the same pass.
bool volumes_ok(const float* v, int n, double& vmax, bool& whole);
bool volumes_ok(const double* v, int n, double& vmax, bool& whole);
bool volumes_ok(const int32_t* v, int n, double& vmax, bool& whole);
bool volumes_ok(const int64_t* v, int n, double& vmax, bool& whole);

namespace simd {
bool slots_f32_avx2(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn,
                    double& mx, bool& whole, const float* v, VolumeCheck* vc);
template <class V>
bool volumes_ok_avx2(const V* v, int n, double& vmax, bool& whole);
// The same, one per instruction set; every variant returns identical results.
template <class P>
bool slots_scalar(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                  bool& whole);
template <class P>
bool slots_avx2(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                bool& whole);
bool records_f32_avx2(const float* p, const float* v, int n, float inv, int64_t origin, int shift, uint64_t* rec, double& mn,
                      double& mx, bool& whole, VolumeCheck& vc);
// block_records for CPUs with AVX2 but not AVX-512 (cpu/records_avx2.cpp): records_512 four at a time.
template <class V>
bool records_avx2(const double* p, const V* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                  double& mx, bool& whole, VolumeCheck* vc);
// x86-64 with GCC or Clang: an AVX-512 (F + DQ) variant of slots_avx2, used when the CPU has it.
#if defined(VPOC_HAVE_AVX2) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VPOC_HAVE_AVX512_SLOTS 1
template <class P>
bool slots_avx512(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                  bool& whole);
bool slots_f32_avx512(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn, double& mx,
                      bool& whole, const float* v, VolumeCheck* vc);
bool records_f32_avx512(const float* p, const float* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                        double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count = nullptr);
template <class V>
bool records_f32_v_avx512(const float* p, const V* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                          double& mn, double& mx, bool& whole, VolumeCheck& vc);
template <class V>
bool records_avx512(const double* p, const V* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                    double& mx, bool& whole, VolumeCheck* vc);
bool entries_f32_cd512(const float* p, const float* v, int n, float inv, int64_t origin, uint32_t* off, uint32_t* sum,
                       int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc, PendingEntries* pend);
template <class V>
bool entries_f64_cd512(const double* p, const V* v, int n, double inv, double origin, uint32_t* off, uint32_t* sum,
                       int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc, PendingEntries* pend);
#endif
}  // namespace simd

}  // namespace vpoc::cpu
