// Host cost of issuing a small call's four kernels: direct launches against a CUDA graph replayed with
// its kernel nodes' parameters set per call (issue 26 item 1: "repeated calls of one shape as a graph").
// Contract: standalone (nvcc -O2 -o /tmp/launch_cost benchmarks/launch_cost.cu); prints JSON lines of
// microseconds per call (median of rounds); kernels do almost nothing, so the host's issue cost is measured.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

// A parameter block the size of the engine's bigger launches (levels_kernel's ~400 bytes of
// structs by value: columns, options, the bars' source).
struct Params {
  float* out;
  const float* in;
  long long pad[48];
};

__global__ void k_small(float* out, const float* in, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && n > 0) out[0] = in[0] + 1.0f;
}
__global__ void k_big(Params p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p.out[1] = p.in[1] + static_cast<float>(p.pad[3]);
}

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t0, int calls) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
}

int main() {
  const int kCalls = 2000, kRounds = 7;
  float *a, *b;
  CK(cudaMalloc(&a, 1 << 20));
  CK(cudaMalloc(&b, 1 << 20));
  CK(cudaMemset(a, 0, 1 << 20));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  Params P{};
  P.out = b;
  P.in = a;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // (a) four direct launches (2 small, 2 with the big parameter block), an event, a host wait
  auto direct = [&](int calls, bool wait) -> int {
    for (int i = 0; i < calls; ++i) {
      k_small<<<1, 128, 0, s>>>(b, a, i);
      k_big<<<32, 128, 0, s>>>(P);
      k_small<<<1, 1024, 0, s>>>(b, a, i);
      k_big<<<32, 128, 0, s>>>(P);
      CK(cudaEventRecord(ev, s));
      if (wait) CK(cudaEventSynchronize(ev));
    }
    return 0;
  };
  // (b) the same four kernels captured once as a graph; per call each node's parameters set again
  // (the engine's input and output pointers change per call), one launch, an event, a host wait
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  k_small<<<1, 128, 0, s>>>(b, a, 0);
  k_big<<<32, 128, 0, s>>>(P);
  k_small<<<1, 1024, 0, s>>>(b, a, 0);
  k_big<<<32, 128, 0, s>>>(P);
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  size_t nn = 0;
  CK(cudaGraphGetNodes(g, nullptr, &nn));
  std::vector<cudaGraphNode_t> nodes(nn);
  CK(cudaGraphGetNodes(g, nodes.data(), &nn));
  std::vector<cudaKernelNodeParams> kp(nn);
  for (size_t j = 0; j < nn; ++j) CK(cudaGraphKernelNodeGetParams(nodes[j], &kp[j]));
  auto graph = [&](int calls, bool set, bool wait) -> int {
    for (int i = 0; i < calls; ++i) {
      if (set) {
        for (size_t j = 0; j < nn; ++j) {
          int n = i;
          float* out = b;
          const float* in = a;
          void* small_args[] = {&out, &in, &n};
          void* big_args[] = {&P};
          cudaKernelNodeParams p = kp[j];
          p.kernelParams = (p.func == reinterpret_cast<void*>(k_small)) ? small_args : big_args;
          CK(cudaGraphExecKernelNodeSetParams(ge, nodes[j], &p));
        }
      }
      CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(ev, s));
      if (wait) CK(cudaEventSynchronize(ev));
    }
    return 0;
  };
  // (c) capture the four launches again each call and update the instantiated graph (cudaGraphExecUpdate)
  auto recapture = [&](int calls) -> int {
    for (int i = 0; i < calls; ++i) {
      cudaGraph_t g2;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      k_small<<<1, 128, 0, s>>>(b, a, i);
      k_big<<<32, 128, 0, s>>>(P);
      k_small<<<1, 1024, 0, s>>>(b, a, i);
      k_big<<<32, 128, 0, s>>>(P);
      CK(cudaStreamEndCapture(s, &g2));
      cudaGraphExecUpdateResultInfo info;
      CK(cudaGraphExecUpdate(ge, g2, &info));
      CK(cudaGraphDestroy(g2));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(ev, s));
      CK(cudaEventSynchronize(ev));
    }
    return 0;
  };
  // single API calls
  auto one_launch = [&](int calls) -> int {
    for (int i = 0; i < calls; ++i) k_big<<<32, 128, 0, s>>>(P);
    return 0;
  };
  auto one_small = [&](int calls) -> int {
    for (int i = 0; i < calls; ++i) k_small<<<1, 128, 0, s>>>(b, a, i);
    return 0;
  };
  auto record = [&](int calls) -> int {
    for (int i = 0; i < calls; ++i) CK(cudaEventRecord(ev, s));
    return 0;
  };
  // (std::function: one indirect call a batch of calls, not a call)
  std::vector<std::pair<const char*, std::function<int(int)>>> cases = {
      {"direct 4 launches + event + wait", [&](int c) { return direct(c, true); }},
      {"direct 4 launches + event (no wait)", [&](int c) { return direct(c, false); }},
      {"graph launch + event + wait (params unchanged)", [&](int c) { return graph(c, false, true); }},
      {"graph 4 SetParams + launch + event + wait", [&](int c) { return graph(c, true, true); }},
      {"graph 4 SetParams + launch + event (no wait)", [&](int c) { return graph(c, true, false); }},
      {"recapture + ExecUpdate + launch + event + wait", recapture},
      {"one launch, 400-byte parameters", one_launch},
      {"one launch, 20-byte parameters", one_small},
      {"cudaEventRecord", record},
  };
  for (auto& [name, fn] : cases) {
    if (fn(200)) return 1;  // warm-up
    CK(cudaStreamSynchronize(s));
    std::vector<double> r;
    for (int k = 0; k < kRounds; ++k) {
      const auto t0 = Clock::now();
      if (fn(kCalls)) return 1;
      r.push_back(us_since(t0, kCalls));
      CK(cudaStreamSynchronize(s));
    }
    std::printf("{\"case\": \"%s\", \"us_per_call\": %.3f}\n", name, median(r));
  }
  return 0;
}
