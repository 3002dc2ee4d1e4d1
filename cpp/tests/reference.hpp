// cpp/tests/reference.hpp — plain brute-force re-statements of docs/contract.md for the C++ unit tests.
// Contract: nothing here includes or calls the rule headers' functions; 128-bit integers, libm and loops only.
#pragma once

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace ref {

using u128 = unsigned __int128;

constexpr double kTie = 1e-9;  // docs/contract.md: the 1e-9 relative band of ties and of "reached"

// floor(a / b) for b >= 1 from C++'s truncating division.
inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

// rint(x), round half to even (libm in the default rounding mode).
inline double rint_even(double x) { return std::nearbyint(x); }

// t = rint(p / tick_size).
inline int64_t tick(double p, double tick_size) { return static_cast<int64_t>(rint_even(p / tick_size)); }

// floor(v * 2**64) exactly, from v's mantissa and exponent (0 <= v <= 2**53).
inline u128 units(double v) {
  if (v == 0.0) return 0;
  int e = 0;
  const double m = std::frexp(v, &e);                           // v = m * 2**e, 0.5 <= m < 1
  const auto mant = static_cast<uint64_t>(std::ldexp(m, 53));  // v = mant * 2**(e - 53), exact
  const int shift = e - 53 + 64;
  return shift >= 0 ? (u128(mant) << shift) : (shift <= -64 ? u128(0) : u128(mant >> -shift));
}

inline uint64_t hi64(u128 u) { return static_cast<uint64_t>(u >> 64); }
inline uint64_t lo64(u128 u) { return static_cast<uint64_t>(u); }

// A sum of units as float64: the whole part exactly plus the fraction rounded once (contract).
inline double to_double(u128 u) {
  return static_cast<double>(hi64(u)) + std::ldexp(static_cast<double>(lo64(u)), -64);
}

// --- putting one input row on the ladder -------------------------------------------------------

enum class Mode { trades, close, hlc3, uniform, legacy };

struct Row {
  double h = 0, l = 0, c = 0, o = 0, v = 0;  // trades: the price in c
};

// Units per absolute row; a row that receives a zero share is still present (it is touched).
using Profile = std::map<int64_t, u128>;

// The legacy level ladder of rows[0..n): levels k = 0..K at base * tick + k * tick.
struct Legacy {
  double base_price = 0;
  int64_t base = 0, K = -1;
  double tick = 1;
  double level(int64_t k) const { return base_price * tick + static_cast<double>(k) * tick; }
};

inline Legacy legacy_ladder(const std::vector<Row>& rows, size_t n, double tick_size) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min({lo, rows[i].o, rows[i].c, rows[i].l});
    hi = std::max({hi, rows[i].o, rows[i].c, rows[i].h});
  }
  Legacy L;
  L.tick = tick_size;
  L.base_price = std::floor(lo / tick_size);
  L.base = static_cast<int64_t>(L.base_price);
  L.K = static_cast<int64_t>(std::ceil(hi / tick_size)) - L.base;
  return L;
}

inline void put(Profile& p, int64_t tick_index, int64_t tpr, u128 u) { p[floor_div(tick_index, tpr)] += u; }

// Adds row r's shares to profile p (legacy: on ladder L).
inline void add_row(Profile& p, const Row& r, Mode mode, double tick_size, int64_t tpr, const Legacy& L) {
  const u128 V = units(r.v);
  switch (mode) {
    case Mode::trades:
    case Mode::close: put(p, tick(r.c, tick_size), tpr, V); return;
    case Mode::hlc3: put(p, tick((r.h + r.l + r.c) / 3.0, tick_size), tpr, V); return;
    case Mode::uniform: {
      const int64_t tl = tick(r.l, tick_size), th = tick(r.h, tick_size);
      const auto n = static_cast<u128>(th - tl + 1);
      for (int64_t t = tl; t <= th; ++t) put(p, t, tpr, V / n + (u128(t - tl) < V % n ? 1 : 0));
      return;
    }
    case Mode::legacy: {
      const double mn = std::min({r.o, r.c, r.l}), mx = std::max({r.o, r.c, r.h});
      std::vector<int64_t> ks;
      for (int64_t k = 0; k <= L.K; ++k)
        if (L.level(k) >= mn && L.level(k) <= mx) ks.push_back(k);
      if (ks.empty()) {
        put(p, tick(r.c, tick_size), tpr, V);
        return;
      }
      std::vector<double> w;
      double wsum = 0;
      for (int64_t k : ks) {
        w.push_back(1.0 + 1.0 / (1.0 + std::fabs(L.level(k) - r.c)));
        wsum += w.back();
      }
      size_t heavy = 0;  // the first of the largest weights
      for (size_t j = 1; j < w.size(); ++j)
        if (w[j] > w[heavy]) heavy = j;
      u128 rest = V;
      for (size_t j = 0; j < ks.size(); ++j) {
        if (j == heavy) continue;
        const u128 share = units(r.v * w[j] / wsum);
        rest -= share;
        put(p, L.base + ks[j], tpr, share);
      }
      put(p, L.base + ks[heavy], tpr, rest);
      return;
    }
  }
}

// The profile of rows[0..n) (legacy: on the ladder of those n rows).
inline Profile profile(const std::vector<Row>& rows, size_t n, Mode mode, double tick_size, int64_t tpr) {
  Profile p;
  const Legacy L = mode == Mode::legacy ? legacy_ladder(rows, n, tick_size) : Legacy{};
  for (size_t i = 0; i < n; ++i) add_row(p, rows[i], mode, tick_size, tpr, L);
  return p;
}

// A profile as dense float64 rows from its lowest to its highest touched row.
struct Dense {
  int64_t low_row = 0;
  std::vector<double> v;
  double total = 0;
};

inline Dense dense(const Profile& p) {
  Dense d;
  if (p.empty()) return d;
  d.low_row = p.begin()->first;
  d.v.assign(static_cast<size_t>(p.rbegin()->first - d.low_row + 1), 0.0);
  u128 total = 0;
  for (const auto& [r, u] : p) {
    d.v[static_cast<size_t>(r - d.low_row)] = to_double(u);
    total += u;
  }
  d.total = to_double(total);
  return d;
}

// --- POC and value area ---------------------------------------------------------------------------

enum class Tie { center, low, high };
enum class Va { cbot, single, greedy };

inline bool tied(double a, double b) { return std::fabs(a - b) <= kTie * std::max(a, b); }
inline bool reached(double running, double target) { return running >= target || target - running <= kTie * target; }

inline int64_t poc(const std::vector<double>& v, Tie tie) {
  const double mx = *std::max_element(v.begin(), v.end());
  const auto n = static_cast<int64_t>(v.size());
  std::vector<int64_t> cand;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(v[static_cast<size_t>(i)] - mx) <= kTie * mx) cand.push_back(i);
  if (tie == Tie::low) return cand.front();
  if (tie == Tie::high) return cand.back();
  // centre: the smallest |i - (n - 1) / 2|, the lower row on equal distance
  int64_t best = cand.front();
  for (int64_t i : cand)
    if (std::llabs(2 * i - (n - 1)) < std::llabs(2 * best - (n - 1))) best = i;
  return best;
}

struct Area {
  int64_t poc = 0, val = 0, vah = 0;
  double va_volume = 0;
};

inline Area value_area(const std::vector<double>& v, double total, double value_area, Va method, Tie tie) {
  Area a;
  const auto n = static_cast<int64_t>(v.size());
  a.poc = poc(v, tie);
  const double target = value_area * total;
  if (method == Va::greedy) {
    std::vector<std::pair<double, int64_t>> order;  // (-volume, row): ascending = more volume, then lower row
    for (int64_t i = 0; i < n; ++i) order.emplace_back(-v[static_cast<size_t>(i)], i);
    std::sort(order.begin(), order.end());
    double running = 0;
    a.val = n;
    a.vah = -1;
    for (const auto& [neg, i] : order) {
      running -= neg;
      a.val = std::min(a.val, i);
      a.vah = std::max(a.vah, i);
      if (reached(running, target)) break;
    }
    a.va_volume = running;
    return a;
  }
  const int64_t step = method == Va::cbot ? 2 : 1;
  int64_t lo = a.poc, hi = a.poc;
  double running = v[static_cast<size_t>(a.poc)];
  while (!reached(running, target)) {
    double up = 0, dn = 0;
    int64_t n_up = 0, n_dn = 0;
    for (int64_t r = hi + 1; r <= std::min(hi + step, n - 1); ++r, ++n_up) up += v[static_cast<size_t>(r)];
    for (int64_t r = lo - 1; r >= std::max(lo - step, int64_t(0)); --r, ++n_dn) dn += v[static_cast<size_t>(r)];
    if (n_up == 0 && n_dn == 0) break;
    if (n_up == 0 || (n_dn > 0 && dn > up && !tied(dn, up))) {
      running += dn;
      lo -= n_dn;
    } else {
      running += up;
      hi += n_up;
    }
  }
  a.val = lo;
  a.vah = hi;
  a.va_volume = running;
  return a;
}

}  // namespace ref
