// vpoc/types.hpp — inputs and options shared by every backend (no pybind, no vendor headers).
// Contract: docs/contract.md; enums parse from the exact strings of the Python API.
#pragma once

#include <cstdint>
#include <string>

namespace vpoc {

// Element types the engines read without a copy; everything else is converted by the caller.
// i8: aggressor-side codes (+1 / -1 / 0, core/side.hpp) and 0 / 1 flag columns; never a price or a volume.
enum class DType : int { f32 = 0, f64 = 1, i32 = 2, i64 = 3, i8 = 4 };

// A borrowed, contiguous 1-D array. `name` is the argument name used in error messages.
struct Array {
  const void* data = nullptr;
  int64_t size = 0;
  DType dtype = DType::f64;
  const char* name = "";
  int device = -1;  // -1: host memory; >= 0: memory of that GPU (read in place by the GPU backend)
};

enum class Distribute : int { close = 0, hlc3 = 1, uniform = 2, legacy = 3 };
enum class VaMethod : int { cbot = 0, single = 1, greedy = 2 };
enum class PocTie : int { center = 0, low = 1, high = 2, mid_n2 = 3, mid_floor = 4 };
// Peer rules (docs/presets.md): which rows the POC / value area see, how a step compares the two
// sides, when the expansion stops, how a row is labelled.
enum class VaRows : int { all = 0, touched = 1 };
enum class VaCompare : int { tie_up = 0, zero_absent = 1 };
enum class VaStop : int { reaches = 0, exceeds = 1 };
enum class RowLabel : int { low = 0, top = 1 };
// How a row's price is computed ('decimal': the correctly rounded decimal row * tick * ticks_per_row)
// and how the value-area target is compared ('decimal': value_area read as a decimal fraction P/Q,
// running * Q against P * total exactly; LEAN's C# decimal).
enum class PriceLabel : int { product = 0, decimal = 1 };
enum class VaTarget : int { float64 = 0, decimal = 1 };

// bins=N (docs/presets.md): how the bins' volumes are summed ('exact': 64.64 fixed point, any
// order; 'sequential': float64 in input order, wickra's) and where the levels are reported
// ('center_edges': POC at its bin's centre, VAH / VAL at the value area's outer edges, wickra's
// ValueArea; 'centers': all three at bin centres, wickra's CompositeProfile).
enum class Accumulate : int { exact = 0, sequential = 1 };
enum class BinReport : int { center_edges = 0, centers = 1 };

// The Python spellings of every enum, in enum order: what parse_* accept and the bindings print.
template <class E>
struct EnumNames;
#define VPOC_ENUM_NAMES(E, KEYWORD, ...)                         \
  template <>                                                   \
  struct EnumNames<E> {                                         \
    static constexpr const char* keyword = KEYWORD;             \
    static constexpr const char* names[] = {__VA_ARGS__};       \
    static constexpr int count = sizeof(names) / sizeof(*names); \
  };
VPOC_ENUM_NAMES(Distribute, "distribute", "close", "hlc3", "uniform", "legacy")
VPOC_ENUM_NAMES(VaMethod, "va_method", "cbot", "single", "greedy")
VPOC_ENUM_NAMES(PocTie, "poc_tie", "center", "low", "high", "mid_n2", "mid_floor")
VPOC_ENUM_NAMES(VaRows, "va_rows", "all", "touched")
VPOC_ENUM_NAMES(VaCompare, "va_compare", "tie_up", "zero_absent")
VPOC_ENUM_NAMES(VaStop, "va_stop", "reaches", "exceeds")
VPOC_ENUM_NAMES(RowLabel, "row_label", "low", "top")
VPOC_ENUM_NAMES(PriceLabel, "price_label", "product", "decimal")
VPOC_ENUM_NAMES(VaTarget, "va_target", "float", "decimal")
VPOC_ENUM_NAMES(Accumulate, "accumulate", "exact", "sequential")
VPOC_ENUM_NAMES(BinReport, "bin_report", "center_edges", "centers")
#undef VPOC_ENUM_NAMES

// The enum value spelled s; a ValueError naming the keyword and listing the accepted spellings
// otherwise (one parser for every enum; core/options.cpp).
template <class E>
E parse_enum(const std::string& s);
template <class E>
const char* name_of(E e) {
  return EnumNames<E>::names[static_cast<int>(e)];
}

inline Distribute parse_distribute(const std::string& s) { return parse_enum<Distribute>(s); }
inline VaMethod parse_va_method(const std::string& s) { return parse_enum<VaMethod>(s); }
inline PocTie parse_poc_tie(const std::string& s) { return parse_enum<PocTie>(s); }
inline VaRows parse_va_rows(const std::string& s) { return parse_enum<VaRows>(s); }
inline VaCompare parse_va_compare(const std::string& s) { return parse_enum<VaCompare>(s); }
inline VaStop parse_va_stop(const std::string& s) { return parse_enum<VaStop>(s); }
inline RowLabel parse_row_label(const std::string& s) { return parse_enum<RowLabel>(s); }
inline PriceLabel parse_price_label(const std::string& s) { return parse_enum<PriceLabel>(s); }
inline VaTarget parse_va_target(const std::string& s) { return parse_enum<VaTarget>(s); }
inline Accumulate parse_accumulate(const std::string& s) { return parse_enum<Accumulate>(s); }
inline BinReport parse_bin_report(const std::string& s) { return parse_enum<BinReport>(s); }

// A caller's way to stop a running CPU call (Ctrl-C): the calling thread calls check(ctx) between
// sessions, about every kInterruptPollMs; true stops the call, which then throws Cancelled. Plain
// C (no Python here): the bindings supply a check that asks Python for pending signals. Not used
// by the GPU backend.
struct Interrupt {
  bool (*check)(void* ctx) = nullptr;  // null: the call always runs to its end
  void* ctx = nullptr;
};
// Ctrl-C should act within about a second; a check costs a few microseconds (the GIL round trip).
constexpr int kInterruptPollMs = 50;

// Everything but the data: the price ladder and the POC/value-area rules.
struct Options {
  double tick_size = 0.25;
  int64_t ticks_per_row = 1;
  double value_area = 0.70;
  VaMethod va_method = VaMethod::cbot;
  PocTie poc_tie = PocTie::center;
  int64_t max_rows = 1000000;  // a session wider than this is almost surely a wrong tick_size
  int threads = 0;             // 0: all cores; at most kMaxThreads
  bool developing = false;     // also the developing (prefix) POC / VAH / VAL of every input row
  Distribute distribute = Distribute::uniform;  // how a bar's volume goes on the ladder (bars only)
  bool snap = false;           // prices off the tick grid are rounded without refusing the call
  int64_t window = 0;          // developing: levels of each row's last `window` input rows of its session (0: all)
  bool window_across = false;  // rolling windows reach into earlier sessions of the call (window_across_sessions)
  VaRows va_rows = VaRows::all;             // 'touched': POC / value area over rows an input row touched only
  VaCompare va_compare = VaCompare::tie_up;  // 'zero_absent': an empty (0) side above counts as absent
  VaStop va_stop = VaStop::reaches;          // 'exceeds': stop only when the running volume passes the target
  double tie_tol = 1e-9;                     // relative band of equal volumes (POC ties, steps, the stop); 0: exact
  RowLabel row_label = RowLabel::low;        // 'top': rows ceil(t / ticks_per_row), labelled by their top tick
  PriceLabel price_label = PriceLabel::product;  // 'decimal': row prices as correctly rounded decimals
  VaTarget va_target = VaTarget::float64;        // 'decimal': exact decimal value_area * total (whole volumes)
  int64_t bins = 0;  // N >= 1: wickra's N equal-width bins per session (window) instead of the tick ladder (core/bins.hpp)
  Accumulate accumulate = Accumulate::exact;          // bins: 'sequential' float64 sums in input order (wickra)
  BinReport bin_report = BinReport::center_edges;     // bins: where POC / VAH / VAL are reported
  Interrupt interrupt;          // how the caller stops a long CPU call (Ctrl-C); none by default
};

// Upper bound of Options::threads: far above any core count, low enough that a typo (threads=10**6)
// is an error rather than a million thread starts.
constexpr int kMaxThreads = 1024;

// Throws ValueError naming the first option that is out of range.
void validate(const Options& opt);

}  // namespace vpoc
