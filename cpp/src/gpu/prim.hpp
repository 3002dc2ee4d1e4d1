// gpu/prim.hpp — the only file that knows CUB from rocPRIM: the device-wide primitives vpoc uses.
// Contract: each call takes (temp, temp_bytes) like both libraries; temp == nullptr asks for the size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/vendor.hpp"

#if defined(VPOC_BACKEND_HIP)
#include <rocprim/rocprim.hpp>
#else
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#endif

namespace vpoc::gpu::prim {

// Sorts each segment [begin[s], end[s]) of keys (descending) with their values, stably: equal keys
// keep their input order. [n] keys/values in and out, [S] segment bounds.
inline gpuError_t segmented_sort_desc(void* temp, size_t& temp_bytes, const double* keys_in,
                                      double* keys_out, const int32_t* vals_in, int32_t* vals_out,
                                      int n, int n_segments, const int64_t* begin, const int64_t* end,
                                      gpuStream_t stream) {
#if defined(VPOC_BACKEND_HIP)
  return rocprim::segmented_radix_sort_pairs_desc(temp, temp_bytes, keys_in, keys_out, vals_in,
                                                  vals_out, static_cast<unsigned>(n),
                                                  static_cast<unsigned>(n_segments), begin, end, 0,
                                                  64, stream);
#else
  return cub::DeviceSegmentedRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out,
                                                            vals_in, vals_out, n, n_segments, begin,
                                                            end, 0, 64, stream);
#endif
}

// out[i] = in[0] + ... + in[i-1] (out[0] = 0) for i < n.
inline gpuError_t exclusive_sum(void* temp, size_t& temp_bytes, const int64_t* in, int64_t* out, int n,
                                gpuStream_t stream) {
#if defined(VPOC_BACKEND_HIP)
  return rocprim::exclusive_scan(temp, temp_bytes, in, out, int64_t(0), static_cast<size_t>(n),
                                 rocprim::plus<int64_t>(), stream);
#else
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream);
#endif
}

}  // namespace vpoc::gpu::prim
