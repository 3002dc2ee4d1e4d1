// dispatch.cpp — the one entry per operation: validate once, run cpu:: or gpu::, report the engine's off-grid count.
// Contract: both backends' results leave here as one vpoc::Result whose columns follow VPOC_RESULT_COLUMNS.
#include <memory>
#include <utility>

#include "core/grid.hpp"
#include "cpu/bins.hpp"
#include "cpu/engine.hpp"
#include "cpu/grid.hpp"
#include "cpu/isa.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/side.hpp"
#include "vpoc/trace.hpp"

namespace vpoc {
namespace {

bool refuses(const GridCheck& g, const Options& opt) {
  return g.off > 0 && !opt.snap && static_cast<double>(g.off) > grid::kGridMaxShare * static_cast<double>(g.prices);
}

// The engine's count of off-grid prices among `prices` price inputs. The CPU counts them session
// by session as it bins and names the input; the GPU in its range pass, naming the row only.
GridCheck grid_of(int64_t off, int first_input, int64_t first_index, int64_t prices, const Options& opt) {
  GridCheck g;
  g.counted = true;
  g.off = off;
  g.prices = prices;
  g.first_input = first_input;
  g.first_index = first_index;
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

// bins=N: the CPU or the GPU runs core/bins.hpp; no tick grid is read (prices are binned as given).
template <class Cpu, class Gpu>
Result bins_result(const Options& opt, const Placement& place, Cpu&& cpu, Gpu&& gpu) {
  std::vector<double> bin_low, bin_width;
  Result r;
  if (place.device >= 0) {
    r = from_device(gpu(bin_low, bin_width), opt);
  } else {
    r = from_host(cpu(bin_low, bin_width), opt);
  }
  r.bins = true;
  r.bin_low = std::move(bin_low);
  r.bin_width = std::move(bin_width);
  return r;
}

}  // namespace

Result profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                      const Options& opt, const Placement& place, SideJob* side) {
  cpu::simd::isa();  // a refused VPOC_CPU_ISA fails every call, whatever its inputs
  validate_trades(price, volume, sessions, opt, place);
  if (opt.bins > 0)
    return bins_result(
        opt, place,
        [&](std::vector<double>& lo, std::vector<double>& w) {
          return cpu::profile_bins_trades(price, volume, sessions, opt, lo, w);
        },
        [&](std::vector<double>& lo, std::vector<double>& w) {
          return gpu::profile_bins(&price, volume, nullptr, sessions, opt, place, lo, w);
        });
  if (place.device >= 0) {
    // sided: the codes as the GPU engine's third input (vpoc/side.hpp SideJob::side), else unsided
    SideJob* gpu_side = side != nullptr && side->side.dtype == DType::i8 ? side : nullptr;
    auto p = gpu::profile_trades(price, volume, sessions, opt, place, gpu_side);
    const GridCheck g = grid_of(p.off_grid, -1, p.first_off_grid, price.size, opt);
    Result r = from_device(std::move(p), opt);
    r.grid = g;
    return r;
  }
  if (side != nullptr && side->codes == nullptr) side = nullptr;
  auto p = cpu::profile_trades(price, volume, sessions, opt, side);
  const GridCheck g = grid_of(p.off_grid, p.first_off_grid_input, p.first_off_grid, price.size, opt);
  Result r = from_host(std::move(p), opt);
  r.grid = g;
  return r;
}

Result profile_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                    const Placement& place) {
  cpu::simd::isa();
  validate_bars(bars, sessions, opt, place);
  trace::mark("dispatch.validated");
  if (opt.bins > 0)
    return bins_result(
        opt, place,
        [&](std::vector<double>& lo, std::vector<double>& w) {
          return cpu::profile_bins_bars(bars, sessions, opt, lo, w);
        },
        [&](std::vector<double>& lo, std::vector<double>& w) {
          return gpu::profile_bins(nullptr, bars.volume, &bars, sessions, opt, place, lo, w);
        });
  // open is read only by distribute='legacy' (which weights prices where they lie)
  const int64_t prices = bars.high.size * (bars.has_open && opt.distribute == Distribute::legacy ? 4 : 3);
  if (place.device >= 0) {
    auto p = gpu::profile_bars(bars, sessions, opt.distribute, opt, place);
    const GridCheck g = grid_of(p.off_grid, -1, p.first_off_grid, prices, opt);
    Result r = from_device(std::move(p), opt);
    r.grid = g;
    trace::mark("dispatch.result");
    return r;
  }
  auto p = cpu::profile_bars(bars, sessions, opt.distribute, opt);
  const GridCheck g = grid_of(p.off_grid, p.first_off_grid_input, p.first_off_grid, prices, opt);
  Result r = from_host(std::move(p), opt);
  r.grid = g;
  return r;
}

std::pair<int64_t, int64_t> count_off_grid(const Array& prices, double tick_size, int threads) {
  cpu::simd::isa();
  const auto c = cpu::count_off_grid(prices, tick_size, threads, Interrupt{});
  return {c.off, c.first};
}

bool price_off_grid(double price, double tick_size) { return grid::off_grid(price, tick_size, grid::kEpsF64); }

CpuIsaInfo cpu_isa_info() {
  const cpu::simd::IsaState& s = cpu::simd::isa_state();
  CpuIsaInfo i;
  i.cpu = cpu::simd::isa_name(s.cpu);
  i.active = cpu::simd::isa_name(s.active);
  i.value = s.value;
  i.error = s.error;
  i.set = s.set;
  i.capped = s.active < s.cpu;
  return i;
}

}  // namespace vpoc
