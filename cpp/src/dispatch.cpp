// dispatch.cpp — the one entry per operation: validate once, count off-grid host prices, run cpu:: or gpu::.
// Contract: both backends' results leave here as one vpoc::Result whose columns follow VPOC_RESULT_COLUMNS.
#include <memory>
#include <utility>

#include "core/grid.hpp"
#include "cpu/engine.hpp"
#include "cpu/grid.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"

namespace vpoc {
namespace {

bool refuses(const GridCheck& g, const Options& opt) {
  return g.off > 0 && !opt.snap && static_cast<double>(g.off) > grid::kGridMaxShare * static_cast<double>(g.prices);
}

// The off-grid prices of a host call's price inputs (none counted when they are on a GPU: the
// GPU's range pass counts those); refused when too many and not opt.snap.
GridCheck check_grid(std::initializer_list<const Array*> prices, const Options& opt, const Placement& place) {
  GridCheck g;
  if (place.device >= 0) return g;  // the GPU's range pass counts them (grid_of)
  g.counted = true;
  int k = 0;
  for (const Array* a : prices) {
    const auto c = cpu::count_off_grid(*a, opt.tick_size, opt.threads, opt.interrupt);
    if (c.off && g.first_input < 0) {
      g.first_input = k;
      g.first_index = c.first;
    }
    g.off += c.off;
    g.prices += a->size;
    ++k;
  }
  g.refused = refuses(g, opt);
  return g;
}

// The GPU engine's count (made in its range pass): the row of the first, not which input.
GridCheck grid_of(const gpu::DeviceProfiles& p, int64_t prices, const Options& opt) {
  GridCheck g;
  g.counted = true;
  g.off = p.off_grid;
  g.prices = prices;
  g.first_index = p.first_off_grid;
  g.refused = refuses(g, opt);
  return g;
}

Result from_host(Profiles&& p, const Options& opt) {
  auto owner = std::make_shared<Profiles>(std::move(p));
  Result r;
  r.n_sessions = owner->n_sessions;
  r.tick_size = owner->tick_size;
  r.ticks_per_row = owner->ticks_per_row;
  r.developing = opt.developing;
#define VPOC_X(name, type, extent) \
  r.columns[static_cast<int>(Col::name)] = {owner, owner->name.data(), static_cast<int64_t>(owner->name.size()), dtype_of<type>()};
  VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X
  return r;
}

Result from_device(gpu::DeviceProfiles&& p, const Options& opt) {
  Result r;
  r.device = p.device;
  r.n_sessions = p.n_sessions;
  r.tick_size = p.tick_size;
  r.ticks_per_row = p.ticks_per_row;
  r.developing = opt.developing;
  r.ready = p.ready;
  const auto owner = [&](Extent e) -> std::shared_ptr<void> {
    return e == Extent::rows ? p.volume_mem : e == Extent::inputs ? p.developing_mem : p.sessions_mem;
  };
#define VPOC_X(name, type, extent) \
  r.columns[static_cast<int>(Col::name)] = {owner(Extent::extent), p.name.data, p.name.size, p.name.dtype};
  VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X
  return r;
}

Result refused(GridCheck g) {
  Result r;
  r.grid = g;
  return r;
}

}  // namespace

Result profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                      const Options& opt, const Placement& place) {
  validate_trades(price, volume, sessions, opt, place);
  if (place.device >= 0) {
    auto p = gpu::profile_trades(price, volume, sessions, opt, place);
    const GridCheck g = grid_of(p, price.size, opt);
    Result r = from_device(std::move(p), opt);
    r.grid = g;
    return r;
  }
  const GridCheck g = check_grid({&price}, opt, place);
  if (g.refused) return refused(g);
  Result r = from_host(cpu::profile_trades(price, volume, sessions, opt), opt);
  r.grid = g;
  return r;
}

Result profile_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                    const Placement& place) {
  validate_bars(bars, sessions, opt, place);
  // open is read only by distribute='legacy' (which weights prices where they lie)
  const bool with_open = bars.has_open && opt.distribute == Distribute::legacy;
  if (place.device >= 0) {
    auto p = gpu::profile_bars(bars, sessions, opt.distribute, opt, place);
    const GridCheck g = grid_of(p, bars.high.size * (with_open ? 4 : 3), opt);
    Result r = from_device(std::move(p), opt);
    r.grid = g;
    return r;
  }
  const GridCheck g = with_open ? check_grid({&bars.high, &bars.low, &bars.close, &bars.open}, opt, place)
                                : check_grid({&bars.high, &bars.low, &bars.close}, opt, place);
  if (g.refused) return refused(g);
  Result r = from_host(cpu::profile_bars(bars, sessions, opt.distribute, opt), opt);
  r.grid = g;
  return r;
}

std::pair<int64_t, int64_t> count_off_grid(const Array& prices, double tick_size, int threads) {
  const auto c = cpu::count_off_grid(prices, tick_size, threads, Interrupt{});
  return {c.off, c.first};
}

bool price_off_grid(double price, double tick_size) { return grid::off_grid(price, tick_size, grid::kEpsF64); }

}  // namespace vpoc
