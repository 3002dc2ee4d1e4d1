// gpu/engine.cu — GPU backend: plan groups of whole sessions, stream them through the workspace,
// range -> lay out -> bin each group, then level every session. Device inputs are read in place.
// Contract: bounded scratch (memory_budget), one reusable workspace, results equal the CPU engine.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/fixed.hpp"
#include "core/messages.hpp"
#include "cpu/histogram.hpp"
#include "core/developing.hpp"
#include "core/window_reach.hpp"
#include "gpu/developing.hpp"
#include "gpu/histogram.hpp"
#include "gpu/levels.hpp"
#include "gpu/touch.hpp"
#include "gpu/prim.hpp"
#include "gpu/runtime.hpp"
#include "gpu/side.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/side.hpp"
#include "vpoc/trace.hpp"

namespace vpoc::gpu {
namespace {

// The side pointer of a sided call with no trades (never read).
const int8_t kNoSides = 0;

constexpr int kSlots = 2;  // double buffering: upload group g+1 while group g computes
// The group summary (kSummaryWords, gpu/histogram.hpp) is read back per group; the pinned staging
// of the group offsets starts after 8 words, so the summary must stay within them.
static_assert(kSummaryWords <= 8, "the summary overlaps the staged group offsets");
static_assert(2 * kSlots <= DeviceState::kSlotEvents, "one uploaded + one released event per slot");

size_t itemsize(DType t) { return t == DType::i8 ? 1 : (t == DType::f32 || t == DType::i32) ? 4 : 8; }

// The input arrays of a call, in a fixed order, with where they live.
struct Inputs {
  std::vector<const Array*> arrays;  // trades: price, volume; bars: high, low, close, volume[, open]
  bool on_device = false;
  bool pinned = false;  // host arrays already page-locked: copied straight from them
  int64_t n = 0;
  size_t row_bytes = 0;
};

Inputs classify(std::vector<const Array*> arrays, int device) {
  Inputs in;
  in.arrays = std::move(arrays);  // trades: price, volume[, side]
  in.n = in.arrays[0]->size;
  int n_device = 0, n_pinned = 0;
  for (const Array* a : in.arrays) {
    in.row_bytes += itemsize(a->dtype);
    if (a->device >= 0) {
      if (a->device != device)
        VPOC_THROW(ValueError, a->name, " is on cuda:", a->device, " but device=cuda:", device,
                   " was asked for; pass device='cuda:", a->device, "' or move the data");
      ++n_device;
    } else if (a->size > 0) {
      int d = -1;
      if (gpuPointerKind(a->data, &d) == 1) ++n_pinned;
    }
  }
  if (n_device != 0 && n_device != static_cast<int>(in.arrays.size()))
    VPOC_THROW(ValueError, "inputs must all be on the GPU or all in host memory, not mixed");
  in.on_device = n_device > 0;
  in.pinned = !in.on_device && n_pinned == static_cast<int>(in.arrays.size());
  return in;
}

// A group: sessions [s0, s1) over rows [r0, r1). `split`: one session larger than a slot, streamed
// in slot-sized pieces once per pass.
struct Group {
  int64_t s0, s1, r0, r1;
  bool split;
};

// Per-session scratch bytes of a group of n sessions (7 arrays of n + offsets n+1, 8 bytes each).
size_t group_bytes(int64_t n) { return align_up(static_cast<size_t>(n + 1) * 8) * 8 + 256; }

std::vector<Group> plan(const SessionSpan& s, int64_t slot_rows, int64_t max_sessions) {
  std::vector<Group> groups;
  int64_t i = 0;
  while (i < s.n_sessions) {
    const int64_t r0 = s.offsets[i];
    if (s.offsets[i + 1] - r0 > slot_rows) {  // a session larger than a slot: alone, split
      groups.push_back({i, i + 1, r0, s.offsets[i + 1], true});
      ++i;
      continue;
    }
    int64_t j = i + 1;
    while (j < s.n_sessions && j - i < max_sessions && s.offsets[j + 1] - r0 <= slot_rows) ++j;
    groups.push_back({i, j, r0, s.offsets[j], false});
    i = j;
  }
  return groups;
}

// Carves aligned pieces out of the workspace.
struct Carver {
  char* p;
  template <class T>
  T* take(size_t count) {
    T* out = reinterpret_cast<T*>(p);
    p += align_up(count * sizeof(T));
    return out;
  }
};

class Run {
 public:
  Run(const Inputs& in, InputView view, const SessionSpan& sessions, const Options& opt,
      const GpuOptions& gopt, bool splits, const BarsInput* bars, SideJob* side)
      : in_(in), view_(view), sessions_(sessions), opt_(opt), gopt_(gopt), st_(state(gopt.device)),
        splits_(splits), bars_(bars), side_(side) {
    stream_ = gopt.user_stream ? reinterpret_cast<gpuStream_t>(gopt.stream) : st_.stream();
    planes_ = side_ != nullptr ? 3 : 1;
  }

  DeviceProfiles run();

 private:
  uint64_t shape_key() const;
  LevelColumns level_columns(const long long* go) const;
  bool speculate(int64_t hint);
  ParamOffsets stage_offsets(const Group& g);
  void read_summary(const Group& g, int64_t widest);
  struct Wide {
    int64_t session, rows;  // a session (its position in the call) and its width
  };
  Wide first_too_wide(const Group& g);
  [[noreturn]] void too_wide(const Wide& w);
  void layout_workspace();
  void upload(int64_t a, int64_t b, int slot);
  InputView view_at(int slot) const;
  void process(const Group& g, int slot);
  void fail_at(int64_t row);
  void check_group_sums(const Group& g);
  void grow_volume(int64_t need, int64_t used);
  void allocate_sessions();
  void developing();
  void window_failure(const unsigned long long* word, const int64_t* fail_width, int64_t s0,
                      const window::Starts& starts);
  [[noreturn]] void window_too_wide(int64_t i, int64_t rows, const window::Starts& starts);
  uint8_t* touch();
  void finish();
  void describe();
  void hold_inputs();
  void check_totals();
  // sided trades (side_ set): the side columns, the first bad side code, the side epilogue
  void allocate_side_sessions();
  void allocate_side_flags(int64_t rows);
  [[noreturn]] void side_failure(int64_t row);
  void check_all_sides();
  void side_levels(const long long* go);
  void describe_side();
  void side_dev_delta();

  const Inputs& in_;
  InputView view_;
  const SessionSpan& sessions_;
  const Options& opt_;
  const GpuOptions& gopt_;
  DeviceState& st_;
  bool splits_;  // the distribution splits volumes into fractions (uniform, legacy)
  const BarsInput* bars_;
  SideJob* side_;  // sided trades: the codes are in_.arrays[2] / view_.side; the side columns go here
  int planes_ = 1;  // planes of the output rows: 1, or 3 sided (volume_mem_: plane p at p * volume_cap_ rows)
  BufferPtr side_sessions_mem_, side_flags_mem_;  // [5][S] delta, delta_poc, delta_poc_row, stacked x2; [2][R] flags
  int64_t side_flags_cap_ = 0;
  gpuStream_t stream_;
  std::vector<Group> groups_;
  int64_t slot_rows_ = 0, max_sessions_ = 0;
  // workspace pieces
  char* slot_mem_[kSlots] = {nullptr, nullptr};
  size_t slot_bytes_ = 0;
  char* pinned_[kSlots] = {nullptr, nullptr};
  GroupScratch scratch_;
  int64_t* g_offsets_ = nullptr;
  int64_t* g_out_off_ = nullptr;
  int64_t* g_low_ = nullptr;
  int64_t* g_width_ = nullptr;
  void* scan_temp_ = nullptr;
  size_t scan_bytes_ = 0;
  long long* summary_ = nullptr;      // device: [rows of the group, widest session, err, fractional,
                                      //          off-grid prices, first row holding one]
  int64_t off_grid_ = 0, first_off_grid_ = -1;  // over every group so far
  long long* host_small_ = nullptr;   // pinned: summary read back, then group offsets
  long long* mirror_ = nullptr;       // host_small_'s device address (the one-block layout writes it)
  gpuEvent_t uploaded_[kSlots] = {nullptr, nullptr}, released_[kSlots] = {nullptr, nullptr};
  // results
  DeviceProfiles out_;
  int64_t laid_out_ = 0;  // output rows of the groups done so far
  bool may_overflow_ = false;  // a volume so large that a session's sum may pass the float64 range
  size_t dev_bytes_ = 0;  // the developing series' share of the workspace
  BufferPtr volume_mem_;
  int64_t volume_cap_ = 0;
  uint64_t key_ = 0;  // shape_key() of a one-group device call
  bool fractional_ = false;  // a summary read back showed a fractional volume (kFractional)
};

// The shape of a call, as far as its output rows go: calls of one shape (a training loop's) get
// a histogram sized from the rows the earlier ones had, and bin without reading the layout back.
uint64_t Run::shape_key() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words that set the rows
  const auto mix = [&](uint64_t x) {
    for (int k = 0; k < 8; ++k) h = (h ^ ((x >> (8 * k)) & 0xff)) * 1099511628211ull;
  };
  uint64_t tick = 0;
  std::memcpy(&tick, &opt_.tick_size, 8);
  mix(static_cast<uint64_t>(in_.n));
  mix(static_cast<uint64_t>(sessions_.n_sessions));
  mix(tick);
  mix(static_cast<uint64_t>(opt_.ticks_per_row));
  mix(bars_ ? 1 + static_cast<uint64_t>(view_.distribute) : 0);
  mix(side_ != nullptr ? 1 : 0);  // sided calls: 3 planes a row, another histogram size
  for (const Array* a : in_.arrays) mix(static_cast<uint64_t>(a->dtype));
  return h;
}

// The group's session offsets to the device: a small group's in the first launch's parameters
// (returned, for launch_init_group), else a copy, through pinned memory when they fit. The
// staging is free: the previous group's (or call's) copy of it finished before its summary was read.
ParamOffsets Run::stage_offsets(const Group& g) {
  ParamOffsets given;
  const int64_t n = g.s1 - g.s0;
  const int64_t* off_src = sessions_.offsets + g.s0;
  if (n <= ParamOffsets::kMax) {
    given.n = n;
    std::memcpy(given.v, off_src, static_cast<size_t>(n + 1) * 8);
    return given;
  }
  const size_t off_bytes = static_cast<size_t>(n + 1) * 8;
  if (off_bytes + 64 <= DeviceState::kSmallPinned) {
    auto* staged = reinterpret_cast<int64_t*>(host_small_ + 8);
    std::memcpy(staged, off_src, off_bytes);
    off_src = staged;
  }
  VPOC_GPU_CHECK(gpuMemcpyAsync(g_offsets_, off_src, off_bytes, gpuMemcpyHostToDevice, stream_));
  return given;
}

// The group summary, copied back (host_small_): off-grid counts added up; a bad row throws (a bad
// side code first, whatever its row: the caller's side column is checked before the engine reads a price).
// A bad row of group g (widest: its widest session's rows) throws, unless a session wider than max_rows
// ends before it: then that session is named, as the CPU orders them (a session's own bad rows first, its
// width before any later session's bad row).
void Run::read_summary(const Group& g, int64_t widest) {
  if (side_ != nullptr && static_cast<unsigned long long>(host_small_[kErrSide]) != kEncNone)
    side_failure(host_small_[kErrSide]);
  off_grid_ += host_small_[4];
  fractional_ |= (static_cast<unsigned long long>(host_small_[3]) & kFractional) != 0;
  if (first_off_grid_ < 0 && static_cast<unsigned long long>(host_small_[5]) != kEncNone)
    first_off_grid_ = host_small_[5];  // groups run in row order: the first group's is the first
  if (static_cast<unsigned long long>(host_small_[2]) != kEncNone) {
    if (widest > opt_.max_rows) {
      const Wide w = first_too_wide(g);
      if (sessions_.offsets[w.session + 1] <= host_small_[2]) too_wide(w);
    }
    fail_at(host_small_[2]);
  }
}

// The first session of group g wider than max_rows and its width (the group's widths read back once; the
// caller saw one).
Run::Wide Run::first_too_wide(const Group& g) {
  const int64_t n = g.s1 - g.s0;
  std::vector<int64_t> w(static_cast<size_t>(n));
  VPOC_GPU_CHECK(gpuMemcpyAsync(w.data(), g_width_, static_cast<size_t>(n) * 8, gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  auto it = std::find_if(w.begin(), w.end(), [&](int64_t x) { return x > opt_.max_rows; });
  if (it == w.end()) it = std::max_element(w.begin(), w.end());  // (the caller saw one: never)
  return Wide{g.s0 + (it - w.begin()), *it};
}

// The first session wider than max_rows of a group (first_too_wide) named in the CPU's words (its first
// row is the earliest failure there; the row that takes it past max_rows is not known here).
void Run::too_wide(const Wide& w) {
  messages::raise(messages::session_too_wide(w.session, w.rows, opt_.max_rows), __FILE__, __LINE__);
}

// The session columns the levels kernel reads and writes; `go`: speculative calls' flag (or null).
LevelColumns Run::level_columns(const long long* go) const {
  return LevelColumns{static_cast<const int64_t*>(out_.offsets.data), static_cast<const int64_t*>(out_.n_rows.data),
                      static_cast<const int64_t*>(out_.low_row.data), static_cast<int64_t*>(out_.poc_row.data),
                      static_cast<int64_t*>(out_.vah_row.data), static_cast<int64_t*>(out_.val_row.data),
                      static_cast<double*>(out_.poc.data), static_cast<double*>(out_.vah.data),
                      static_cast<double*>(out_.val.data), static_cast<double*>(out_.total_volume.data),
                      static_cast<double*>(out_.va_volume.data), go};
}

// One group of device inputs, with no host round trip before the binning: the histogram gets
// `hint`-based rows; the layout tells the later passes on the device whether they fit (summary[kGo]),
// and the host reads the summary only once everything is queued (by then it is usually there).
// False when the rows did not fit: nothing was written, the caller runs the call again.
bool Run::speculate(int64_t hint) {
  const Group& g = groups_[0];
  const int64_t n = g.s1 - g.s0;
  // a quarter more than the most seen, in 4096-row steps (the pool then reuses one size)
  const int64_t cap = (hint + hint / 4 + 1024 + 4095) / 4096 * 4096;
  const ParamOffsets given = stage_offsets(g);
  trace::mark("spec.staged");
  scratch_.n = n;
  scratch_.go = nullptr;
  // Trades whose volumes were whole before (or are integers): the range pass reads prices only, the
  // bin pass checks the volumes and bins them as whole numbers, a one-thread launch publishes its
  // checks into the mirror, and the host waits for that (the levels pass runs on meanwhile). Anything
  // it finds (a bad row, a fraction, a stop of the layout) sends the call down the waiting path,
  // every check in today's order.
  // (sided trades too: their range pass reads prices and side codes, the bin pass checks the volumes)
  const bool vib = !view_.bars && mirror_ != nullptr && !st_.fractional_hint(key_);
  scratch_.volumes_in_bin = vib;
  scratch_.fixed_by_flag = !splits_ && !vib;  // whole volumes on one row each: integer rows unless the flag says
  const bool legacy = view_.bars && view_.distribute == Distribute::legacy;
  const RowSpan rows{g.r0, g.r1, 0};
  launch_init_group(scratch_, legacy, summary_, rows, given, stream_);
  trace::mark("spec.init_launched");
  if (legacy) launch_price_range(view_, rows, scratch_, opt_, stream_);
  launch_row_range(view_, rows, scratch_, opt_, stream_);
  trace::mark("spec.range_launched");
  // [cap] rows: integer plane (the float64 volumes in the end) and fraction plane, from the pool
  // (sided: planes_ of each, plane p at p * cap)
  volume_mem_ = st_.output(static_cast<size_t>(cap * planes_) * 8, stream_);
  volume_cap_ = cap;
  const BufferPtr lo_mem = vib ? BufferPtr() : st_.output(static_cast<size_t>(cap * planes_) * 8, stream_);
  void* out = volume_mem_->data;
  void* lo = vib ? nullptr : lo_mem->data;
  scratch_.planes = planes_;
  scratch_.hi_stride = scratch_.lo_stride = cap;
  if (side_ != nullptr) allocate_side_flags(cap);
  trace::mark("spec.outputs");
  // bars the levels kernel bins itself, session by session (launch_bin_levels): no zeroing, no bin pass
  // (a block a session: not for sessions of more bars than bin_levels_takes allows, which the tiles of
  // the bin pass spread over the whole device)
  const auto most_bars = [&] {  // read only where the rules let the levels kernel bin (not for trades)
    int64_t most = 0;
    for (int64_t s = g.s0; s < g.s1; ++s) most = std::max(most, sessions_.offsets[s + 1] - sessions_.offsets[s]);
    return most;
  };
  const bool bin_in_levels = side_ == nullptr && !legacy && lo != nullptr && bin_levels_takes(view_, opt_, 0) &&
                             bin_levels_takes(view_, opt_, most_bars());
  const bool zero_in_layout = !bin_in_levels && cap <= kLayoutZeroRows && planes_ == 1;  // else a launch of its own
  if (!launch_layout(scratch_, g_width_, g_low_, g_out_off_, scan_temp_, scan_bytes_,
                     LayoutColumns{static_cast<int64_t*>(out_.n_rows.data), static_cast<int64_t*>(out_.low_row.data),
                                   static_cast<int64_t*>(out_.offsets.data)},
                     0, summary_, cap, opt_.max_rows, stream_, zero_in_layout ? out : nullptr,
                     zero_in_layout ? lo : nullptr, mirror_))
    VPOC_GPU_CHECK(gpuMemcpyAsync(host_small_, summary_, kSummaryWords * sizeof(long long), gpuMemcpyDeviceToHost,
                                  stream_));
  if (!vib) VPOC_GPU_CHECK(gpuEventRecord(st_.summary_event(), stream_));
  trace::mark("spec.layout_launched");
  scratch_.go = summary_ + kGo;
  if (!zero_in_layout && !bin_in_levels)
    launch_zero_rows(scratch_, out, lo, cap, summary_, stream_, planes_);  // every plane, one launch
  if (!bin_in_levels) launch_bin(view_, rows, scratch_, opt_, out, lo, stream_);
  if (vib) {
    launch_publish_checks(scratch_, mirror_, stream_);
    VPOC_GPU_CHECK(gpuEventRecord(st_.summary_event(), stream_));
  }
  // the finish pass and the levels in one launch (greedy and touched rows never speculate)
  FinishRows rows_in;
  rows_in.hi = static_cast<unsigned long long*>(out);
  rows_in.lo = static_cast<const unsigned long long*>(lo);
  rows_in.fractional = scratch_.fixed_by_flag ? scratch_.fractional : nullptr;
  rows_in.fraction_bit = kFractional;
  rows_in.scan = uniform_diff(view_, opt_);
  if (side_ != nullptr) {  // the finish over the three planes, then the levels and the side epilogue
    launch_side_finish(scratch_, out, lo, static_cast<double*>(out_.total_volume.data),
                       static_cast<double*>(side_->device.delta.data), static_cast<double*>(side_->device.buy_total.data),
                       static_cast<double*>(side_->device.sell_total.data), stream_);
    launch_levels(static_cast<const double*>(out), nullptr, level_columns(summary_ + kGo), sessions_.n_sessions, opt_,
                  stream_);
    side_levels(summary_ + kGo);
  } else if (bin_in_levels) {
    launch_bin_levels(view_, g_offsets_, rows_in, level_columns(summary_ + kGo), sessions_.n_sessions, opt_, stream_);
  } else {
    launch_finish_levels(rows_in, level_columns(summary_ + kGo), sessions_.n_sessions, opt_, stream_);
  }
  trace::mark("spec.levels_launched");
  out_.ready = record_ready(stream_, gopt_.device);
  trace::mark("spec.ready_recorded");
  st_.last_call = out_.ready.event;  // the workspace's last user, whatever the host finds below
  st_.last_call_stream = out_.ready.stream;
  st_.count_speculative(false, bin_in_levels);
  scratch_.volumes_in_bin = false;  // the waiting path, if it runs, checks the volumes in its range pass
  VPOC_GPU_CHECK(gpuEventSynchronize(st_.summary_event()));
  trace::mark("spec.synced");
  if (vib) {
    const bool fraction = (static_cast<unsigned long long>(host_small_[3]) & kFractional) != 0;
    if (fraction) st_.note_fractional(key_);  // this shape's later calls check volumes first
    if (host_small_[kGo] == 0 || static_cast<unsigned long long>(host_small_[2]) != kEncNone || fraction) {
      // no note_rows here: the rows of a call that may yet be refused (a far price, a session over
      // max_rows) must not size the shape's later histograms; the rerun notes what it laid out
      return false;  // nothing kept: the waiting path finds and names whatever stopped this call
    }
  }
  const int64_t rows_out = host_small_[kRows], widest = host_small_[kWidest];
  read_summary(g, widest);
  // the waiting path's order of checks: a huge volume, then a too wide session
  if ((static_cast<unsigned long long>(host_small_[3]) & kHugeVolume) != 0) {
    may_overflow_ = true;
    check_group_sums(g);
  }
  if (widest > opt_.max_rows) too_wide(first_too_wide(g));
  if (rows_out > cap) {
    st_.note_rows(key_, rows_out);
    return false;
  }
  st_.note_fit(key_, rows_out);
  laid_out_ = rows_out;
  trace::mark("spec.checked");
  return true;
}

void Run::layout_workspace() {
  auto budget = static_cast<size_t>(gopt_.memory_budget);
  // Sessions per group: bounded so that the per-session scratch takes at most 1/8 of the budget.
  max_sessions_ = std::max<int64_t>(1, static_cast<int64_t>(budget / 8 / 64));
  const auto n_max = std::min(max_sessions_, std::max<int64_t>(1, sessions_.n_sessions));
  scan_bytes_ = layout_temp_bytes(n_max);
  // Everything but the slots (which also hold the tile tables within their per-row slack).
  size_t fixed = group_bytes(n_max) + align_up(scan_bytes_) + 512;
  if (opt_.developing) fixed += align_up(static_cast<size_t>(n_max) * 8) + 256;
  if (opt_.developing && opt_.window_across) fixed += 3 * align_up(static_cast<size_t>(n_max) * 8) + 256;  // origin..
  if (budget <= fixed)
    VPOC_THROW(ValueError, "memory_budget=", budget, " bytes is too small: at least ", fixed + 1,
               " bytes are needed for ", n_max, " sessions");
  // The developing series' scratch takes what the slots leave (device inputs), or half.
  const size_t dev_min = static_cast<size_t>(developing::scratch_rows(1) + 1) * kDevelopingRowBytes + 512;
  if (opt_.developing && budget <= fixed + 2 * dev_min)
    VPOC_THROW(ValueError, "memory_budget=", budget, " bytes is too small for developing=True");
  if (in_.on_device) {
    slot_rows_ = std::max<int64_t>(in_.n, 1);  // read in place: a group may hold every row
    if (opt_.developing) dev_bytes_ = (budget - fixed) & ~size_t(255);
  } else {
    if (opt_.developing) {  // the slots get half of what is left; the series' scratch the rest
      dev_bytes_ = ((budget - fixed) / 2) & ~size_t(255);
      budget -= dev_bytes_;
    }
    if (budget <= fixed + 2 * 4096)
      VPOC_THROW(ValueError, "memory_budget=", budget, " bytes is too small: at least ",
                 fixed + 2 * 4096 + 1, " bytes are needed");
    const size_t per_slot = (budget - fixed) / kSlots;
    slot_rows_ = static_cast<int64_t>(per_slot / (in_.row_bytes + 8 * in_.arrays.size()));
    slot_rows_ = std::min<int64_t>(slot_rows_, std::max<int64_t>(in_.n, 1));
    slot_bytes_ = 0;
    for (const Array* a : in_.arrays) slot_bytes_ += align_up(static_cast<size_t>(slot_rows_) * itemsize(a->dtype));
  }
  groups_ = plan(sessions_, slot_rows_, max_sessions_);
  const size_t ws_bytes = fixed + kSlots * slot_bytes_ + align_up(static_cast<size_t>(2 * max_tiles(slot_rows_)) * 8);
  Carver c{static_cast<char*>(st_.workspace(ws_bytes))};
  for (int k = 0; k < kSlots && slot_bytes_ > 0; ++k) slot_mem_[k] = c.take<char>(slot_bytes_);
  const auto n = static_cast<size_t>(std::min(max_sessions_, std::max<int64_t>(1, sessions_.n_sessions)));
  g_offsets_ = c.take<int64_t>(n + 1);
  scratch_.lo = c.take<unsigned long long>(n);
  scratch_.hi = c.take<unsigned long long>(n);
  scratch_.plo = c.take<unsigned long long>(n);
  scratch_.phi = c.take<unsigned long long>(n);
  g_out_off_ = c.take<int64_t>(n);
  g_low_ = c.take<int64_t>(n);
  g_width_ = c.take<int64_t>(n);
  scan_temp_ = c.take<char>(scan_bytes_);
  scratch_.tiles = c.take<int64_t>(static_cast<size_t>(2 * max_tiles(slot_rows_)));
  // [rows of the group, widest session, first bad row, fractional flag]: read back in one copy
  summary_ = c.take<long long>(kSummaryWords);
  scratch_.err = reinterpret_cast<unsigned long long*>(summary_ + 2);
  scratch_.fractional = reinterpret_cast<unsigned long long*>(summary_ + 3);
  scratch_.off_grid = reinterpret_cast<unsigned long long*>(summary_ + 4);
  scratch_.first_off_grid = reinterpret_cast<unsigned long long*>(summary_ + 5);
  scratch_.err_side = side_ != nullptr ? reinterpret_cast<unsigned long long*>(summary_ + kErrSide) : nullptr;
  scratch_.planes = planes_;
  host_small_ = static_cast<long long*>(st_.small_pinned());
  mirror_ = static_cast<long long*>(st_.small_pinned_device());
  scratch_.offsets = g_offsets_;
  // No session of the call sums past 2**53 unless one of its volumes exceeds 2**53 / rows.
  scratch_.huge_volume = fixed::kMaxTotal / static_cast<double>(std::max<int64_t>(in_.n, 1));
  scratch_.out_off = g_out_off_;
  scratch_.low_row = g_low_;
  scratch_.width = g_width_;
  if (!in_.on_device && !in_.pinned) {  // pageable host input: stage through pinned buffers
    char* p = static_cast<char*>(st_.pinned(kSlots * slot_bytes_));
    for (int k = 0; k < kSlots; ++k) pinned_[k] = p + k * slot_bytes_;
  }
}

InputView Run::view_at(int slot) const {
  InputView v = view_;
  if (in_.on_device) return v;  // original device pointers, base 0
  char* p = slot_mem_[slot];
  const void** fields[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
  if (v.bars) {
    fields[0] = &v.high;
    fields[1] = &v.low;
    fields[2] = &v.close;
    fields[3] = &v.volume;
    fields[4] = &v.open;
  } else {
    fields[0] = &v.price;
    fields[1] = &v.volume;
    fields[2] = &v.side;  // sided trades: the codes (in_.arrays[2])
  }
  for (size_t k = 0; k < in_.arrays.size(); ++k) {
    *fields[k] = p;
    p += align_up(static_cast<size_t>(slot_rows_) * itemsize(in_.arrays[k]->dtype));
  }
  return v;
}

// Rows [a, b) of every input into `slot` (element 0 = row a), on the copy stream.
void Run::upload(int64_t a, int64_t b, int slot) {
  const gpuStream_t cs = st_.copy_stream();
  VPOC_GPU_CHECK(gpuStreamWaitEvent(cs, released_[slot]));
  if (pinned_[slot] != nullptr) VPOC_GPU_CHECK(gpuEventSynchronize(uploaded_[slot]));  // staging reuse
  char* dst = slot_mem_[slot];
  char* stage = pinned_[slot];
  for (const Array* arr : in_.arrays) {
    const size_t sz = itemsize(arr->dtype);
    const char* src = static_cast<const char*>(arr->data) + static_cast<size_t>(a) * sz;
    const size_t bytes = static_cast<size_t>(b - a) * sz;
    if (stage != nullptr) {
      std::memcpy(stage, src, bytes);
      src = stage;
      stage += align_up(static_cast<size_t>(slot_rows_) * sz);
    }
    VPOC_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, cs));
    dst += align_up(static_cast<size_t>(slot_rows_) * sz);
  }
  VPOC_GPU_CHECK(gpuEventRecord(uploaded_[slot], cs));
}

// Reads row `row` of every input back and throws the CPU engine's message for it.
void Run::fail_at(int64_t row) {
  double vals[5] = {0, 0, 0, 0, 0};
  const size_t vk = bars_ ? 3 : 1;  // the volume's position in in_.arrays
  int64_t ivol = 0;                 // an integer volume, exactly (judged before any rounding)
  for (size_t k = 0; k < in_.arrays.size(); ++k) {
    const Array* a = in_.arrays[k];
    const size_t sz = itemsize(a->dtype);
    unsigned char raw[8] = {0};
    const char* src = static_cast<const char*>(a->data) + static_cast<size_t>(row) * sz;
    if (in_.on_device) {
      VPOC_GPU_CHECK(gpuMemcpyAsync(raw, src, sz, gpuMemcpyDeviceToHost, stream_));
      VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
    } else {
      std::memcpy(raw, src, sz);
    }
    switch (a->dtype) {
      case DType::f32: { float x; std::memcpy(&x, raw, 4); vals[k] = x; break; }
      case DType::f64: { double x; std::memcpy(&x, raw, 8); vals[k] = x; break; }
      case DType::i32: { int32_t x; std::memcpy(&x, raw, 4); vals[k] = static_cast<double>(x); break; }
      case DType::i64: { int64_t x; std::memcpy(&x, raw, 8); vals[k] = static_cast<double>(x); break; }
      case DType::i8: { int8_t x; std::memcpy(&x, raw, 1); vals[k] = static_cast<double>(x); break; }
    }
    if (k == vk && a->dtype == DType::i32) { int32_t x; std::memcpy(&x, raw, 4); ivol = x; }
    if (k == vk && a->dtype == DType::i64) std::memcpy(&ivol, raw, 8);
  }
  const auto problem = [&](auto v) {
    return bars_ ? messages::bar_problem(row, *bars_, vals[0], vals[1], vals[2], vals[4], v, opt_.tick_size,
                                         opt_.ticks_per_row)
                 : messages::trade_problem(row, *in_.arrays[0], vals[0], *in_.arrays[1], v, opt_.tick_size,
                                           opt_.ticks_per_row);
  };
  const DType vt = in_.arrays[vk]->dtype;
  messages::Problem m = vt == DType::i32 || vt == DType::i64 ? problem(ivol) : problem(vals[vk]);
  if (m.empty()) m = messages::general(detail::concat("row ", row, " of the input is invalid"));
  messages::raise(m, __FILE__, __LINE__);
}

// A volume above huge_volume was seen in group g (rare): its sessions' volumes are summed again on
// the host in float64, and one at 2**62 or more (far past 2**53, and a sum the fixed-point rows
// could wrap at 2**64) is reported before binning; the rest are judged exactly by their totals.
void Run::check_group_sums(const Group& g) {
  const Array* v = bars_ ? &bars_->volume : in_.arrays[1];
  const size_t sz = itemsize(v->dtype);
  const int64_t n = g.r1 - g.r0;
  std::vector<unsigned char> raw(static_cast<size_t>(n) * sz);
  const char* src = static_cast<const char*>(v->data) + static_cast<size_t>(g.r0) * sz;
  if (in_.on_device) {
    VPOC_GPU_CHECK(gpuMemcpyAsync(raw.data(), src, raw.size(), gpuMemcpyDeviceToHost, stream_));
    VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  } else {
    std::memcpy(raw.data(), src, raw.size());
  }
  Array host = *v;
  host.data = raw.data();
  host.device = -1;
  for (int64_t s = g.s0; s < g.s1; ++s)
    if (cpu::sum_volumes(host, sessions_.offsets[s] - g.r0, sessions_.offsets[s + 1] - g.r0) >= 0x1p62)
      messages::raise(messages::session_volume_overflow(v->name, s), __FILE__, __LINE__);
}

// Makes the output volume hold `need` rows, keeping the first `used` (a rare regrow: new + copy);
// sided: each of the planes_ planes.
void Run::grow_volume(int64_t need, int64_t used) {
  if (volume_mem_ && need <= volume_cap_) return;
  const int64_t cap = std::max<int64_t>({need, 2 * volume_cap_, 1024});
  BufferPtr next = st_.output(static_cast<size_t>(cap * planes_) * 8, stream_);
  if (volume_mem_ && used > 0)
    for (int p = 0; p < planes_; ++p)
      VPOC_GPU_CHECK(gpuMemcpyAsync(static_cast<char*>(next->data) + p * cap * 8,
                                    static_cast<const char*>(volume_mem_->data) + p * volume_cap_ * 8,
                                    static_cast<size_t>(used) * 8, gpuMemcpyDeviceToDevice, stream_));
  volume_mem_ = std::move(next);  // the old buffer goes once the copy above is queued (freeing syncs)
  volume_cap_ = cap;
}

void Run::process(const Group& g, int slot) {
  const int64_t n = g.s1 - g.s0;
  if (!in_.on_device && !g.split) VPOC_GPU_CHECK(gpuStreamWaitEvent(stream_, uploaded_[slot]));
  // Group session offsets and fresh scratch.
  const ParamOffsets given = stage_offsets(g);
  scratch_.n = n;
  scratch_.go = nullptr;
  scratch_.fixed_by_flag = false;
  const bool legacy = view_.bars && view_.distribute == Distribute::legacy;
  // the tile table of the first pass comes with the reset (a split group's pieces build their own)
  launch_init_group(scratch_, legacy, summary_, g.split ? RowSpan{0, 0, 0} : RowSpan{g.r0, g.r1, 0}, given,
                    stream_);

  // A pass over the group's rows: in place, from the slot already uploaded, or piece by piece.
  const auto pass = [&](auto&& launch) {
    if (in_.on_device) return launch(view_at(0), RowSpan{g.r0, g.r1, 0});
    if (!g.split) return launch(view_at(slot), RowSpan{g.r0, g.r1, g.r0});
    for (int64_t a = g.r0; a < g.r1; a += slot_rows_) {
      const int64_t b = std::min(g.r1, a + slot_rows_);
      upload(a, b, 0);
      VPOC_GPU_CHECK(gpuStreamWaitEvent(stream_, uploaded_[0]));
      launch(view_at(0), RowSpan{a, b, a});
      VPOC_GPU_CHECK(gpuEventRecord(released_[0], stream_));
    }
  };
  if (legacy) pass([&](const InputView& v, RowSpan r) { launch_price_range(v, r, scratch_, opt_, stream_); });
  pass([&](const InputView& v, RowSpan r) { launch_row_range(v, r, scratch_, opt_, stream_); });

  // Layout on the device; the host reads back only the group's size, widest session and error.
  auto* n_rows_col = static_cast<int64_t*>(out_.n_rows.data) + g.s0;
  auto* low_col = static_cast<int64_t*>(out_.low_row.data) + g.s0;
  auto* off_col = static_cast<int64_t*>(out_.offsets.data) + g.s0;
  if (!launch_layout(scratch_, g_width_, g_low_, g_out_off_, scan_temp_, scan_bytes_,
                     LayoutColumns{n_rows_col, low_col, off_col}, laid_out_, summary_, INT64_MAX, opt_.max_rows,
                     stream_, nullptr, nullptr, mirror_))
    VPOC_GPU_CHECK(gpuMemcpyAsync(host_small_, summary_, kSummaryWords * sizeof(long long), gpuMemcpyDeviceToHost,
                                  stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  const int64_t rows = host_small_[kRows], widest = host_small_[kWidest];
  read_summary(g, widest);
  // Whole-number volumes landing whole on one row sum exactly (and fast) in 64-bit integers.
  const auto flags = static_cast<unsigned long long>(host_small_[3]);
  const bool integer_acc = !splits_ && (flags & kFractional) == 0;
  if ((flags & kHugeVolume) != 0) {
    may_overflow_ = true;
    check_group_sums(g);
  }
  if (widest > opt_.max_rows) too_wide(first_too_wide(g));
  if (g.s0 == 0 && groups_.size() > 1) {  // first group: estimate the whole output from it
    const double per_session = static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(n, 1));
    grow_volume(static_cast<int64_t>(per_session * static_cast<double>(sessions_.n_sessions) * 1.25) + 1024, 0);
  }
  grow_volume(laid_out_ + rows, laid_out_);
  if (rows > 0)
    for (int p = 0; p < planes_; ++p)
      VPOC_GPU_CHECK(gpuMemsetAsync(static_cast<char*>(volume_mem_->data) + (p * volume_cap_ + laid_out_) * 8, 0,
                                    static_cast<size_t>(rows) * 8, stream_));
  void* out = static_cast<char*>(volume_mem_->data) + laid_out_ * 8;
  // Fixed point: the fraction plane beside the volume (the integer plane), from the result pool
  // (sided: planes_ of them, plane p at p * rows).
  BufferPtr lo_mem;
  if (!integer_acc && rows > 0) {
    lo_mem = st_.output(static_cast<size_t>(rows * planes_) * 8, stream_);
    VPOC_GPU_CHECK(gpuMemsetAsync(lo_mem->data, 0, static_cast<size_t>(rows * planes_) * 8, stream_));
  }
  void* lo = lo_mem ? lo_mem->data : nullptr;
  scratch_.planes = planes_;
  scratch_.hi_stride = volume_cap_;
  scratch_.lo_stride = rows;
  pass([&](const InputView& v, RowSpan r) { launch_bin(v, r, scratch_, opt_, out, lo, stream_); });
  VPOC_GPU_CHECK(gpuEventRecord(released_[slot], stream_));
  auto* total = static_cast<double*>(out_.total_volume.data) + g.s0;
  if (side_ != nullptr)
    launch_side_finish(scratch_, out, lo, total, static_cast<double*>(side_->device.delta.data) + g.s0,
                       static_cast<double*>(side_->device.buy_total.data) + g.s0,
                       static_cast<double*>(side_->device.sell_total.data) + g.s0, stream_);
  else
    launch_finish_rows(view_, opt_, scratch_, out, lo, total, stream_);
  laid_out_ += rows;
}

// Session columns: one allocation, 11 aligned pieces, filled by the layout and levels kernels.
void Run::allocate_sessions() {
  const int64_t S = sessions_.n_sessions;
  allocate_session_columns(st_, out_, S, stream_);
  // offsets[0]: written by the first group's layout, or here when there is no session
  if (S == 0) VPOC_GPU_CHECK(gpuMemsetAsync(out_.offsets.data, 0, 8, stream_));
  if (side_ != nullptr) allocate_side_sessions();
}

// Sided trades: [S] delta, delta_poc, delta_poc_row, stacked counts, buy / sell totals, one allocation beside the sessions'.
void Run::allocate_side_sessions() {
  const int64_t S = sessions_.n_sessions;
  const size_t col = align_up(static_cast<size_t>(S + 1) * 8);
  side_sessions_mem_ = st_.output(col * 7, stream_);
  char* base = static_cast<char*>(side_sessions_mem_->data);
  const auto column = [&](int k, DType dt) { return Column{side_sessions_mem_, base + k * col, S, dt}; };
  SideDeviceColumns& d = side_->device;
  d.delta = column(0, DType::f64);
  d.delta_poc = column(1, DType::f64);
  d.delta_poc_row = column(2, DType::i64);
  d.stacked_buy = column(3, DType::i64);
  d.stacked_sell = column(4, DType::i64);
  d.buy_total = column(5, DType::f64);
  d.sell_total = column(6, DType::f64);
}

// Sided trades: [2][rows] imbalance flags (int8), written by the side epilogue.
void Run::allocate_side_flags(int64_t rows) {
  side_flags_cap_ = std::max<int64_t>(rows, 1);
  side_flags_mem_ = st_.output(2 * align_up(static_cast<size_t>(side_flags_cap_)), stream_);
}

// The side epilogue of every session (flags allocated for laid_out_ rows at least); go: speculative calls' flag.
void Run::side_levels(const long long* go) {
  const auto* rows = static_cast<const double*>(volume_mem_->data);
  auto* flags = static_cast<int8_t*>(side_flags_mem_->data);
  SideDeviceColumns& d = side_->device;
  SideLevelColumns c{static_cast<const int64_t*>(out_.offsets.data), static_cast<const int64_t*>(out_.n_rows.data),
                     static_cast<const int64_t*>(out_.low_row.data), rows + volume_cap_, rows + 2 * volume_cap_,
                     flags, flags + align_up(static_cast<size_t>(side_flags_cap_)),
                     static_cast<double*>(d.delta_poc.data), static_cast<int64_t*>(d.delta_poc_row.data),
                     static_cast<int64_t*>(d.stacked_buy.data), static_cast<int64_t*>(d.stacked_sell.data), go};
  launch_side_levels(c, sessions_.n_sessions, opt_, side_->rules, stream_);
}

// Sided trades: the row columns (planes 1 and 2 of volume_mem_, the flags) into side_->device.
void Run::describe_side() {
  const int64_t R = laid_out_;
  char* rows = static_cast<char*>(volume_mem_->data);
  char* flags = static_cast<char*>(side_flags_mem_->data);
  SideDeviceColumns& d = side_->device;
  d.buy = Column{volume_mem_, rows + volume_cap_ * 8, R, DType::f64};
  d.sell = Column{volume_mem_, rows + 2 * volume_cap_ * 8, R, DType::f64};
  d.imbalance_buy = Column{side_flags_mem_, flags, R, DType::i8};
  d.imbalance_sell = Column{side_flags_mem_, flags + align_up(static_cast<size_t>(side_flags_cap_)), R, DType::i8};
  side_->device_done = true;
}

// Sided device inputs, developing, every volume whole below 2**31 (no kFractional seen): dev_delta [N] by
// the exact segmented scan (gpu/side.hpp); otherwise the caller's host fallback makes it (none here).
void Run::side_dev_delta() {
  const int64_t S = sessions_.n_sessions, N = in_.n;
  if (!in_.on_device || fractional_ || N == 0) return;
  Carver c{static_cast<char*>(st_.workspace(align_up(static_cast<size_t>(S + 1) * 8) + 256))};
  auto* offsets = c.take<int64_t>(static_cast<size_t>(S + 1));
  VPOC_GPU_CHECK(gpuMemcpyAsync(offsets, sessions_.offsets, static_cast<size_t>(S + 1) * 8, gpuMemcpyHostToDevice,
                                stream_));
  BufferPtr mem = st_.output(static_cast<size_t>(N) * 8, stream_);
  launch_side_dev_delta(view_.volume, view_.volume_dtype, static_cast<const int8_t*>(view_.side), offsets, S,
                        static_cast<double*>(mem->data), stream_);
  side_->device.dev_delta = Column{mem, mem->data, N, DType::f64};
  side_->device.has_dev_delta = true;
  // the offsets' copy reads pageable host memory the caller owns: done before the call returns
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
}

// The first bad side code of the call (device inputs in several groups: a group's bad price must not be
// reported before a later group's bad side); throws it.
void Run::check_all_sides() {
  auto* word = reinterpret_cast<unsigned long long*>(summary_ + kErrSide);
  launch_first_bad_side(static_cast<const int8_t*>(view_.side), in_.n, word, stream_);
  VPOC_GPU_CHECK(gpuMemcpyAsync(host_small_ + kErrSide, word, 8, gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  if (static_cast<unsigned long long>(host_small_[kErrSide]) != kEncNone) side_failure(host_small_[kErrSide]);
}

// The CPU's error for side code `row` (ValueError naming side[row]; vpoc._side_profiles words it as vpoc._side does).
void Run::side_failure(int64_t row) {
  const Array* a = in_.arrays[2];
  int8_t code = 0;
  const char* src = static_cast<const char*>(a->data) + row;
  if (in_.on_device) {
    VPOC_GPU_CHECK(gpuMemcpyAsync(&code, src, 1, gpuMemcpyDeviceToHost, stream_));
    VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  } else {
    std::memcpy(&code, src, 1);
  }
  ValueError e(detail::concat("side[", row, "] = ", static_cast<int>(code),
                              " is not an aggressor side: +1 (buy), -1 (sell) or 0 (unknown)"),
               __FILE__, __LINE__);
  e.set_input("side", row, std::string());
  throw e;
}

// The developing series, after the profiles: batches of whole sessions whose scratch fits in
// dev_bytes_ (and, for host inputs, whose rows fit in a slot), one thread per session.
// [S] n_rows read back once; [N] dev_poc / dev_vah / dev_val written in place.
void Run::developing() {
  const int64_t S = sessions_.n_sessions, N = in_.n;
  allocate_developing_columns(st_, out_, N, stream_);
  if (S == 0 || N == 0) return;
  std::vector<int64_t> n_rows(static_cast<size_t>(S));
  VPOC_GPU_CHECK(gpuMemcpyAsync(n_rows.data(), out_.n_rows.data, static_cast<size_t>(S) * 8, gpuMemcpyDeviceToHost,
                                stream_));
  // windows across sessions: each session's first window row and the rows its windows reach (the
  // sessions' low rows read back with n_rows), as on the CPU (core/window_reach.hpp)
  const bool across = opt_.window_across;
  std::vector<int64_t> low_row(across ? static_cast<size_t>(S) : 0), first(low_row.size()), origin(low_row.size()),
      width(low_row.size());
  if (across)
    VPOC_GPU_CHECK(gpuMemcpyAsync(low_row.data(), out_.low_row.data, static_cast<size_t>(S) * 8,
                                  gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  const window::Starts host_starts = sessions_.window_start ? window::Starts::given(sessions_.window_start, 0)
                                                            : window::Starts::rows(window::length(opt_));
  if (across)
    window::reach(sessions_.offsets, S, low_row.data(), n_rows.data(), host_starts, first.data(), origin.data(),
                  width.data());
  // scratch rows of session s (+1: the batch's rows are packed with one spare each)
  // (a session whose first window is too wide to lay out, window::beyond_reach: none, it raises)
  const auto beyond = [&](int64_t s) {
    return across && window::beyond_reach(width[static_cast<size_t>(s)], opt_.max_rows);
  };
  const auto rows_of = [&](int64_t s) -> int64_t {
    const auto k = static_cast<size_t>(s);
    return n_rows[k] == 0 || beyond(s) ? 0 : across ? width[k] + 1 : developing::scratch_rows(n_rows[k]) + 1;
  };
  // The workspace is carved afresh: the greedy sort may have grown (moved) it.
  const int64_t n_max = std::min(max_sessions_, S);
  const size_t slot = in_.on_device ? 0 : slot_bytes_;
  // Scratch: what every session needs, at most dev_bytes_ (7 aligned arrays).
  int64_t all_rows = 0;
  for (int64_t s = 0; s < S; ++s) all_rows += rows_of(s);
  const size_t slack = 7 * 256;
  // time windows (host inputs only, validate_window_start): each batch's row starts, uploaded beside
  // its rows (a batch holds at most slot_rows_ input rows), out of the series' share of the budget
  const int64_t ws_rows = sessions_.window_start ? std::min(slot_rows_, N) : 0;
  const size_t ws_bytes = ws_rows > 0 ? align_up(static_cast<size_t>(ws_rows) * 8) + 256 : 0;
  if (ws_bytes > 0 && dev_bytes_ < ws_bytes + slack + 2 * kDevelopingRowBytes)
    VPOC_THROW(ValueError, "memory_budget=", gopt_.memory_budget, " is too small for a time window; raise memory_budget");
  const size_t scratch_bytes =
      std::min(dev_bytes_ - ws_bytes, static_cast<size_t>(all_rows) * kDevelopingRowBytes + slack);
  const size_t across_bytes = across ? 3 * align_up(static_cast<size_t>(n_max) * 8) + 256 : 0;
  Carver c{static_cast<char*>(st_.workspace(slot + 2 * align_up(static_cast<size_t>(n_max + 1) * 8) + 256 +
                                            scratch_bytes + ws_bytes + across_bytes))};
  if (!in_.on_device) slot_mem_[0] = c.take<char>(slot);
  int64_t* wstart = ws_rows > 0 ? c.take<int64_t>(static_cast<size_t>(ws_rows)) : nullptr;
  auto* offsets = c.take<int64_t>(static_cast<size_t>(n_max + 1));
  auto* start = c.take<int64_t>(static_cast<size_t>(n_max));
  auto* failed = c.take<unsigned>(1);
  int64_t* d_origin = across ? c.take<int64_t>(static_cast<size_t>(n_max)) : nullptr;
  int64_t* d_width = across ? c.take<int64_t>(static_cast<size_t>(n_max)) : nullptr;
  int64_t* d_fail_width = across ? c.take<int64_t>(static_cast<size_t>(n_max)) : nullptr;
  auto* window_failed = across ? c.take<unsigned long long>(1) : nullptr;
  if (across) VPOC_GPU_CHECK(gpuMemsetAsync(window_failed, 0xff, sizeof(unsigned long long), stream_));
  char* scratch = c.take<char>(scratch_bytes);
  const int64_t cap_rows = static_cast<int64_t>((scratch_bytes - slack) / kDevelopingRowBytes);
  VPOC_GPU_CHECK(gpuMemsetAsync(failed, 0, sizeof(unsigned), stream_));
  std::vector<int64_t> starts;
  int64_t s0 = 0;
  while (s0 < S) {
    // [s0, s1): as many sessions as the scratch (and a slot) holds; across sessions the slot holds
    // the input rows from the first row any of their windows reaches (base_row)
    int64_t s1 = s0, rows = 0, widest = 0, base_row = sessions_.offsets[s0];
    if (beyond(s0)) {  // the batches before it raised their failures (smaller rows): measured on the host
      const int64_t i = sessions_.offsets[s0];
      const int64_t w = window_rows(view_, in_.on_device, opt_, first[static_cast<size_t>(s0)], i, stream_);
      if (w > opt_.max_rows) window_too_wide(i, w, host_starts);
      VPOC_THROW(Error, "developing series: a row fell outside its session's final row range");
    }
    starts.clear();
    while (s1 < S && s1 - s0 < n_max && !beyond(s1)) {
      const int64_t w = rows_of(s1);
      const int64_t from = across ? std::min(base_row, first[static_cast<size_t>(s1)]) : base_row;
      const int64_t in_rows = sessions_.offsets[s1 + 1] - from;
      if (rows + w > cap_rows || (!in_.on_device && in_rows > slot_rows_)) break;
      starts.push_back(rows);
      rows += w;
      widest = std::max(widest, w);
      base_row = from;
      ++s1;
    }
    if (s1 == s0 && across) {
      const auto k = static_cast<size_t>(s0);
      VPOC_THROW_ARG(ValueError, "memory_budget", "memory_budget=", gopt_.memory_budget,
                     " is too small for window_across_sessions on session ", s0, " (its windows reach ", width[k],
                     " rows over sessions ", window::session_of(sessions_.offsets, S, first[k]), "..", s0, " and ",
                     sessions_.offsets[s0 + 1] - first[k], " input rows); raise memory_budget, shorten window",
                     in_.on_device ? "" : " or pass the inputs as GPU arrays");
    }
    if (s1 == s0)
      VPOC_THROW(ValueError, "memory_budget=", gopt_.memory_budget, " is too small for developing=True on session ", s0,
                 " (", n_rows[static_cast<size_t>(s0)], " rows, ", sessions_.offsets[s0 + 1] - sessions_.offsets[s0],
                 " input rows); raise memory_budget", in_.on_device ? "" : " or pass the inputs as GPU arrays");
    const int64_t n = s1 - s0;
    VPOC_GPU_CHECK(gpuMemcpyAsync(offsets, sessions_.offsets + s0, static_cast<size_t>(n + 1) * 8, gpuMemcpyHostToDevice, stream_));
    VPOC_GPU_CHECK(gpuMemcpyAsync(start, starts.data(), static_cast<size_t>(n) * 8, gpuMemcpyHostToDevice, stream_));
    DevelopingBatch b;
    b.n = n;
    b.offsets = offsets;
    b.n_rows = static_cast<const int64_t*>(out_.n_rows.data) + s0;
    b.low_row = static_cast<const int64_t*>(out_.low_row.data) + s0;
    b.start = start;
    b.scratch_rows = rows;
    b.widest = widest;
    Carver sc{scratch};
    b.vf = sc.take<Fixed>(static_cast<size_t>(rows));
    b.v = sc.take<double>(static_cast<size_t>(rows));
    b.run = sc.take<double>(static_cast<size_t>(rows));
    b.lo = sc.take<int32_t>(static_cast<size_t>(rows));
    b.hi = sc.take<int32_t>(static_cast<size_t>(rows));
    b.order = sc.take<int32_t>(static_cast<size_t>(rows));
    b.pos = sc.take<int32_t>(static_cast<size_t>(rows));
    b.dev_poc = static_cast<double*>(out_.dev_poc.data);
    b.dev_vah = static_cast<double*>(out_.dev_vah.data);
    b.dev_val = static_cast<double*>(out_.dev_val.data);
    if (across) {
      VPOC_GPU_CHECK(gpuMemcpyAsync(d_origin, origin.data() + s0, static_cast<size_t>(n) * 8, gpuMemcpyHostToDevice,
                                    stream_));
      VPOC_GPU_CHECK(gpuMemcpyAsync(d_width, width.data() + s0, static_cast<size_t>(n) * 8, gpuMemcpyHostToDevice,
                                    stream_));
      b.origin = d_origin;
      b.width = d_width;
      b.fail_width = d_fail_width;
      b.window_failed = window_failed;
    }
    int64_t first_row = 0;
    if (!in_.on_device) {
      first_row = base_row;
      upload(first_row, sessions_.offsets[s1], 0);
      VPOC_GPU_CHECK(gpuStreamWaitEvent(stream_, uploaded_[0]));
    }
    if (wstart != nullptr) {  // rows [first_row, offsets[s1]) of the starts (element 0 = first_row)
      VPOC_GPU_CHECK(gpuMemcpyAsync(wstart, sessions_.window_start + first_row,
                                    static_cast<size_t>(sessions_.offsets[s1] - first_row) * 8, gpuMemcpyHostToDevice,
                                    stream_));
      b.window_start = wstart;
    }
    launch_developing(view_at(0), first_row, b, opt_, failed, stream_);
    if (!in_.on_device) VPOC_GPU_CHECK(gpuEventRecord(released_[0], stream_));
    // the next batch rewrites offsets / start: let this one's kernel read them first
    if (s1 < S || across) VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
    if (across) window_failure(window_failed, d_fail_width, s0, host_starts);  // this batch's first failing row
    s0 = s1;
  }
  unsigned lost = 0;
  VPOC_GPU_CHECK(gpuMemcpyAsync(&lost, failed, sizeof(unsigned), gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  if (lost) VPOC_THROW(Error, "developing series: a row fell outside its session's final row range");
}

// Windows across sessions: raises the CPU's error for the batch's first failing row (a window too
// wide or too heavy; *word ~0: none), s0 the batch's first session (fail_width is indexed from it).
void Run::window_failure(const unsigned long long* word, const int64_t* fail_width, int64_t s0,
                         const window::Starts& starts) {
  unsigned long long w = ~0ull;
  VPOC_GPU_CHECK(gpuMemcpyAsync(&w, word, sizeof(w), gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  if (w == ~0ull) return;
  const int64_t S = sessions_.n_sessions, i = static_cast<int64_t>(w >> 2);
  const int64_t s = window::session_of(sessions_.offsets, S, i);
  if (static_cast<window::Why>(w & 3) == window::Why::overflow)
    messages::raise(messages::window_volume_overflow("volume", view_.bars ? "bar" : "row", i, s), __FILE__, __LINE__);
  int64_t rows = 0;
  VPOC_GPU_CHECK(gpuMemcpyAsync(&rows, fail_width + (s - s0), sizeof(rows), gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  window_too_wide(i, rows, starts);
}

// The CPU's error for row i's window spanning `rows` rows.
void Run::window_too_wide(int64_t i, int64_t rows, const window::Starts& starts) {
  const int64_t S = sessions_.n_sessions, j = starts(0, i);
  messages::raise(messages::window_too_wide(view_.bars ? "bar" : "row", i, j, window::session_of(sessions_.offsets, S, j),
                                            window::session_of(sessions_.offsets, S, i), rows, opt_.max_rows),
                  __FILE__, __LINE__);
}

DeviceProfiles Run::run() {
  // First the waits: the slot events below, which the uploads on the copy stream wait for, are
  // recorded on this stream after them, so no upload rewrites the workspace while the last call
  // (perhaps on another stream) still reads it; inputs still being written on their producers'
  // streams are waited for too (inputs made on this call's own stream are in order already).
  wait_before_call(st_, stream_, gopt_.wait_streams);
  trace::mark("run.waits_queued");
  // The state's events (calls on a device are serialized): no event is created per call.
  for (int k = 0; k < kSlots; ++k) {
    uploaded_[k] = st_.slot_event(k);
    released_[k] = st_.slot_event(kSlots + k);
    if (in_.on_device) continue;  // device inputs are read in place: no uploads to order
    VPOC_GPU_CHECK(gpuEventRecord(uploaded_[k], st_.copy_stream()));
    VPOC_GPU_CHECK(gpuEventRecord(released_[k], stream_));
  }
  layout_workspace();
  trace::mark("run.workspace");
  allocate_sessions();
  trace::mark("run.session_columns");
  // Device inputs in one group, a shape seen before: bin before reading anything back.
  const bool one_group = in_.on_device && groups_.size() == 1;
  if (one_group) key_ = shape_key();  // hashed once: read by the hint and noted after the call
  const int64_t hint = one_group && !opt_.developing && opt_.va_method != VaMethod::greedy &&
                               opt_.va_rows == VaRows::all && sessions_.n_sessions <= kOneBlockLayout &&
                               speculation()
                           ? st_.rows_hint(key_)
                           : 0;
  if (hint > 0) {
    const bool fits = speculate(hint);
    if (!fits) st_.count_speculative(true);
    if (fits) {
      if (may_overflow_) check_totals();
      describe();
      hold_inputs();
      trace::mark("run.done");
      return std::move(out_);
    }
    // the rows outgrew the hint: nothing was written; the call again, reading the layout back
    volume_mem_.reset();
    volume_cap_ = 0;
    side_flags_mem_.reset();
    off_grid_ = 0;
    first_off_grid_ = -1;
  }
  // sided device inputs in several groups: every side code first (a later group's bad side wins)
  if (side_ != nullptr && in_.on_device && groups_.size() > 1) check_all_sides();
  // Upload the first group, then overlap: upload group k+1 while group k computes.
  const auto resident = [&](size_t k) { return !in_.on_device && !groups_[k].split; };
  if (!groups_.empty() && resident(0)) upload(groups_[0].r0, groups_[0].r1, 0);
  for (size_t k = 0; k < groups_.size(); ++k) {
    const int slot = static_cast<int>(k % kSlots);
    if (k + 1 < groups_.size() && resident(k + 1) && resident(k))
      upload(groups_[k + 1].r0, groups_[k + 1].r1, (slot + 1) % kSlots);
    process(groups_[k], groups_[k].split ? 0 : slot);
    if (k + 1 < groups_.size() && resident(k + 1) && !resident(k))
      upload(groups_[k + 1].r0, groups_[k + 1].r1, (slot + 1) % kSlots);
  }
  if (in_.on_device && groups_.size() == 1) {
    st_.note_rows(key_, laid_out_);
    if (fractional_) st_.note_fractional(key_);  // the shape's speculative calls then check volumes first
  }
  finish();
  hold_inputs();
  return std::move(out_);
}

// Only when a volume was huge (rare): the first session whose total overflowed is a ValueError.
void Run::check_totals() {
  const int64_t S = sessions_.n_sessions;
  std::vector<double> totals(static_cast<size_t>(S));
  VPOC_GPU_CHECK(gpuMemcpyAsync(totals.data(), out_.total_volume.data, static_cast<size_t>(S) * 8,
                                gpuMemcpyDeviceToHost, stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  for (int64_t s = 0; s < S; ++s)
    if (!std::isfinite(totals[static_cast<size_t>(s)])) {
      const char* name = bars_ ? bars_->volume.name : in_.arrays[1]->name;
      messages::raise(messages::session_volume_overflow(name, s), __FILE__, __LINE__);
    }
}

// va_rows='touched': [R] flags (in the workspace, read by the levels kernel) of the rows an input
// row touched (gpu/touch.cu), the sessions' input rows in pieces that fit a slot (host inputs).
uint8_t* Run::touch() {
  const int64_t S = sessions_.n_sessions, R = laid_out_;
  if (S == 0 || R == 0) return nullptr;
  const int64_t n_max = std::min(max_sessions_, S);
  const size_t slot = in_.on_device ? 0 : slot_bytes_;
  // one flag byte per output row of the call, in the workspace: within memory_budget like the rest
  const size_t need = slot + 3 * align_up(static_cast<size_t>(n_max + 1) * 8) + align_up(static_cast<size_t>(R)) + 256;
  if (need > static_cast<size_t>(gopt_.memory_budget))
    VPOC_THROW(ValueError, "memory_budget=", gopt_.memory_budget, " is too small for va_rows='touched' over ", R,
               " rows (needs ", need, " bytes)");
  Carver c{static_cast<char*>(st_.workspace(need))};
  if (!in_.on_device) slot_mem_[0] = c.take<char>(slot);
  auto* offsets = c.take<int64_t>(static_cast<size_t>(n_max + 1));
  auto* touched = c.take<uint8_t>(static_cast<size_t>(R));
  VPOC_GPU_CHECK(gpuMemsetAsync(touched, 0, static_cast<size_t>(R), stream_));
  const int64_t* off = sessions_.offsets;
  // input rows [r0, r1) of sessions [s0, s1)
  const auto piece = [&](int64_t s0, int64_t s1, int64_t r0, int64_t r1) {
    TouchBatch b;
    b.n = s1 - s0;
    b.r0 = r0;
    b.r1 = r1;
    b.offsets = offsets;
    b.out_offsets = static_cast<const int64_t*>(out_.offsets.data) + s0;
    b.low_row = static_cast<const int64_t*>(out_.low_row.data) + s0;
    b.n_rows = static_cast<const int64_t*>(out_.n_rows.data) + s0;
    b.touched = touched;
    VPOC_GPU_CHECK(gpuMemcpyAsync(offsets, off + s0, static_cast<size_t>(b.n + 1) * 8, gpuMemcpyHostToDevice, stream_));
    int64_t base = 0;
    if (!in_.on_device) {
      base = r0;
      upload(r0, r1, 0);
      VPOC_GPU_CHECK(gpuStreamWaitEvent(stream_, uploaded_[0]));
    }
    launch_touch(view_at(0), base, b, opt_, stream_);
    if (!in_.on_device) VPOC_GPU_CHECK(gpuEventRecord(released_[0], stream_));
    // the next piece rewrites offsets (and the slot): let this one's kernel read them first
    if (r1 < off[S]) VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  };
  int64_t s0 = 0;
  while (s0 < S) {
    int64_t s1 = s0 + 1;
    if (!in_.on_device && off[s0 + 1] - off[s0] > slot_rows_) {  // a session wider than a slot: in pieces
      for (int64_t r0 = off[s0]; r0 < off[s0 + 1]; r0 += slot_rows_)
        piece(s0, s1, r0, std::min(r0 + slot_rows_, off[s0 + 1]));
    } else {
      while (s1 < S && s1 - s0 < n_max && (in_.on_device || off[s1 + 1] - off[s0] <= slot_rows_)) ++s1;
      piece(s0, s1, off[s0], off[s1]);
    }
    s0 = s1;
  }
  return touched;
}

void Run::finish() {
  const int64_t S = sessions_.n_sessions;
  const int64_t R = laid_out_;
  grow_volume(std::max<int64_t>(R, 1), R);
  const auto* volume = static_cast<const double*>(volume_mem_->data);
  const int32_t* order = nullptr;
  const auto* offsets = static_cast<const int64_t*>(out_.offsets.data);
  if (opt_.va_method == VaMethod::greedy && R > 0) {
    if (R > (int64_t(1) << 31) - 1) VPOC_THROW(ValueError, "va_method='greedy' on the GPU supports up to 2**31 rows");
    size_t temp = 0;
    VPOC_GPU_CHECK(prim::segmented_sort_desc(nullptr, temp, volume, nullptr, nullptr, nullptr, static_cast<int>(R),
                                             static_cast<int>(S), offsets, offsets + 1, stream_));
    const size_t need = align_up(static_cast<size_t>(R) * 8) + 2 * align_up(static_cast<size_t>(R) * 4) + align_up(temp);
    if (need > static_cast<size_t>(gopt_.memory_budget))
      VPOC_THROW(ValueError, "memory_budget=", gopt_.memory_budget, " is too small for va_method='greedy' over ", R,
                 " rows (needs ", need, " bytes)");
    Carver c{static_cast<char*>(st_.workspace(need))};  // grows only if needed (syncs first)
    auto* keys_out = c.take<double>(static_cast<size_t>(R));
    auto* vals_in = c.take<int32_t>(static_cast<size_t>(R));
    auto* vals_out = c.take<int32_t>(static_cast<size_t>(R));
    void* tmp = c.take<char>(temp);
    launch_iota(vals_in, R, stream_);
    VPOC_GPU_CHECK(prim::segmented_sort_desc(tmp, temp, volume, keys_out, vals_in, vals_out, static_cast<int>(R),
                                             static_cast<int>(S), offsets, offsets + 1, stream_));
    order = vals_out;
  }
  LevelColumns cols = level_columns(nullptr);
  if (opt_.va_rows == VaRows::touched) cols.touched = touch();
  launch_levels(volume, order, cols, S, opt_, stream_);
  if (side_ != nullptr) {
    allocate_side_flags(R);
    side_levels(nullptr);
  }
  if (may_overflow_) check_totals();
  if (opt_.developing) developing();
  if (opt_.developing && side_ != nullptr) side_dev_delta();
  out_.ready = record_ready(stream_, gopt_.device);
  st_.last_call = out_.ready.event;
  st_.last_call_stream = out_.ready.stream;
  describe();
}

// Device inputs are read until the result is ready: the producers' streams wait for it, so that
// memory their owner frees meanwhile (a torch tensor dropped after the call) is not written again
// by work on those streams (the caching allocator's stream order) while vpoc still reads it.
void Run::hold_inputs() {
  if (!in_.on_device || !out_.ready.event) return;
  const auto ready = static_cast<gpuEvent_t>(out_.ready.event.get());
  for (const std::uintptr_t producer : gopt_.wait_streams) {
    const auto p = reinterpret_cast<gpuStream_t>(producer);
    if (p != stream_) VPOC_GPU_CHECK(gpuStreamWaitEvent(p, ready));
  }
}

// The result's scalars and the histogram's extent (the columns are in place).
void Run::describe() {
  const int64_t S = sessions_.n_sessions;
  const int64_t R = laid_out_;
  out_.device = gopt_.device;
  out_.n_sessions = S;
  out_.tick_size = opt_.tick_size;
  out_.ticks_per_row = opt_.ticks_per_row;
  out_.volume_mem = volume_mem_;
  out_.volume = DeviceColumn{volume_mem_->data, R, DType::f64};
  out_.off_grid = off_grid_;
  out_.first_off_grid = first_off_grid_;
  if (side_ != nullptr) describe_side();
}

DeviceProfiles dispatch(const Inputs& in, const InputView& view, const SessionSpan& sessions,
                        const Options& opt, const GpuOptions& gopt, bool splits, const BarsInput* bars,
                        SideJob* side = nullptr) {
  require_device(gopt.device);
  DeviceGuard guard(gopt.device);
  DeviceState& st = state(gopt.device);
  std::lock_guard<std::mutex> lock(st.mutex());
  trace::mark("gpu.locked");
  Run run(in, view, sessions, opt, gopt, splits, bars, side);
  try {
    return run.run();
  } catch (...) {
    // A call that fails may leave kernels queued (the greedy checks in finish(), an allocation in
    // speculate()) that read the inputs and the shared workspace: they finish before the next call,
    // which may run on another stream, and before the caller frees the inputs.
    (void)gpuStreamSynchronize(gopt.user_stream ? reinterpret_cast<gpuStream_t>(gopt.stream) : st.stream());
    (void)gpuGetLastError();
    throw;
  }
}

}  // namespace

DeviceProfiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                              const Options& opt, const GpuOptions& gopt, SideJob* side) {
  if (side == nullptr) return dispatch(classify({&price, &volume}, gopt.device), view_of(price, volume), sessions, opt,
                                       gopt, false, nullptr);
  if (side->side.dtype != DType::i8 || side->side.size != price.size)
    VPOC_THROW(Error, "gpu::profile_trades: the side codes are int8, one per trade");
  const Inputs in = classify({&price, &volume, &side->side}, gopt.device);
  InputView view = view_of(price, volume);
  view.side = side->side.data;
  if (view.side == nullptr) view.side = &kNoSides;  // no trades: a non-null pointer keeps the call sided
  return dispatch(in, view, sessions, opt, gopt, false, nullptr, side);
}

DeviceProfiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                            const Options& opt, const GpuOptions& gopt) {
  std::vector<const Array*> arrays{&bars.high, &bars.low, &bars.close, &bars.volume};
  if (bars.has_open) arrays.push_back(&bars.open);
  const Inputs in = classify(arrays, gopt.device);
  const bool splits = distribute == Distribute::uniform || distribute == Distribute::legacy;
  return dispatch(in, view_of(bars, distribute), sessions, opt, gopt, splits, &bars);
}

}  // namespace vpoc::gpu
