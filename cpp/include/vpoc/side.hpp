// vpoc/side.hpp — aggressor-side fields (buy / sell rows, delta, delta POC, imbalances, stacked runs, dev_delta) on the CPU.
// Contract: docs/design/side-single-pass.md §1: the bits of the masked engine passes, from the engine's one binning pass.
#pragma once

#include <cstdint>
#include <vector>

#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

// The imbalance parameters of one call (vpoc._side_profiles.side_rules checked them).
struct SideRules {
  double imbalance_ratio = 3.0;
  int64_t stacked_min = 3;
};

// The rows of a finished profile: session s holds rows row_off[s] .. row_off[s + 1] - 1 of every row
// column, ladder rows low_row[s] + j (low_row unread for sessions without rows); row_size = tick *
// ticks_per_row, the price of a row is row * row_size.
struct RowLayout {
  const int64_t* row_off = nullptr;  // [S + 1]
  const int64_t* low_row = nullptr;  // [S]
  int64_t n_sessions = 0;
  double row_size = 1.0;
};

// Every side field; row columns aligned with the profile's volume.
struct SideColumns {
  std::vector<double> buy, sell;                    // [R]
  std::vector<uint8_t> imbalance_buy, imbalance_sell;  // [R] 0 / 1
  std::vector<double> delta, delta_poc;             // [S]
  std::vector<double> buy_total, sell_total;        // [S] each session's exact buy / sell total, rounded once
  std::vector<int64_t> delta_poc_row, stacked_buy, stacked_sell;  // [S]
  std::vector<double> dev_delta;                    // [N] with opt.developing, else empty
};

// A GPU call's side columns, in device memory (complete after the result's ready event): rows [R]
// buy / sell (float64) and imbalance flags (int8 0 / 1); per session [S] delta, buy_total, sell_total, delta_poc (float64),
// delta_poc_row, stacked counts (int64); with opt.developing, device inputs and whole volumes below 2**31,
// dev_delta [N] (float64; has_dev_delta false otherwise: the caller's fallback makes it).
struct SideDeviceColumns {
  Column buy, sell, imbalance_buy, imbalance_sell, delta, delta_poc, delta_poc_row, stacked_buy, stacked_sell;
  Column buy_total, sell_total;
  Column dev_delta;
  bool has_dev_delta = false;
};

// What a sided call gives the engine (vpoc::profile_trades) and gets back: its side codes (int8 +1 / -1 / 0,
// one per trade), its rules; the engine bins each trade's volume into the unknown, buy or sell plane of its
// row in its one binning pass. CPU (`codes` in host memory, checked by the caller): RowWindow planes, `cols`
// filled. GPU (`side`: the codes as the call's third input, host or device memory, checked by the range pass:
// a bad code is a ValueError naming side[i], reported before any other bad row): `device` filled.
struct SideJob {
  const int8_t* codes = nullptr;
  Array side;  // GPU calls: dtype i8, name "side" (data null: a CPU call)
  SideRules rules;
  SideColumns cols;
  SideDeviceColumns device;
  bool done = false;         // the host columns `cols` were made (CPU calls)
  bool device_done = false;  // the device columns `device` were made (GPU calls)
};

// dev_delta of sided trades: per trade, its session's float64 sum in input order of v * (side == 1) - v * (side == -1).
void side_dev_delta(const Array& volume, const int8_t* side, const SessionSpan& sessions, const Options& opt,
                    std::vector<double>& out);

// The per-session fields of finished buy / sell rows (c.buy, c.sell [R] and c.delta [S] set): imbalances,
// stacked-imbalance counts, the delta POC (the engine's POC rule of `opt` on |buy - sell| per row; rows
// closer to zero than 2**-32 count 0), parallel over sessions on opt.threads.
void side_levels(SideColumns& c, const RowLayout& rows, const Options& opt, const SideRules& rules);

// from_bars' side fields on the CPU (design side-single-pass.md §6; bars.volume unread): the bars' buy / sell
// columns (host, buy.name / sell.name unread) each put on the ladder by the engine's own bar binning in one call,
// parallel over sessions, the rows of profile_bars with that column as the volume (the masked passes of before,
// bit for bit), then side_levels. row_off [S + 1] / low_row [S] receive the rows' layout (that of the call's
// profile). ValueError naming buy_volume[i] / sell_volume[i] (every buy one first) in the engine's words for
// volume[i] (range, a session's sum past 2**53). dev_delta empty (the caller's: input order).
SideColumns bar_side_fields(const BarsInput& bars, const Array& buy, const Array& sell, const SessionSpan& sessions,
                            const Options& opt, const SideRules& rules, std::vector<int64_t>& row_off,
                            std::vector<int64_t>& low_row);

// bar_features' developing delta POC (design side-single-pass.md §8: a sided live session's code after each
// append): out[i] = the delta POC (row price) of the bars <= i of bar i's session; sessions: CSR offsets [S + 1]
// over float64 bars (high, low, close, open when has_open, volume; buy / sell their side volumes). ValueError
// naming the first bad bar or side volume (vpoc._side_profiles' rules) or a session wider than opt.max_rows;
// sessions in parallel on opt.threads.
void developing_delta_poc(const BarsInput& bars, const double* buy, const double* sell, const int64_t* offsets,
                          int64_t n_sessions, const Options& opt, double* out);

// The rules of the delta POC: the engine on one trade per row at tick row_size (the masked passes' rows
// pass: the call's poc_tie, every other rule at its default). CPU and GPU epilogues read them.
Options delta_poc_options(const Options& opt, double row_size);

// delta[k] = buy_total[k] - sell_total[k] for k < n (core/side.hpp delta): the sessions' deltas of finished
// rows whose exact totals, each rounded once, are known (side_levels' callers: Live, bar_features, the masked
// passes of vpoc._side_profiles).
void side_deltas(const double* buy_total, const double* sell_total, int64_t n, double* delta);

// The index of the first int8 side in s[0, n) that is not -1, 0 or +1, or -1 (core/side.hpp).
int64_t first_bad_side(const int8_t* s, int64_t n);
// 'S1' letters ('B' +1, 'A' -1, 'N' 0) as int8 codes into out; the index of the first other byte, or -1.
int64_t side_letters(const uint8_t* in, int8_t* out, int64_t n);

}  // namespace vpoc
