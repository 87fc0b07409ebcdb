#include "worker/calibration.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "worker/amx.h"
#include "worker/bf16_dot.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Written after every kernel so the compiler must compute the accumulators.
volatile float g_sink = 0.0f;

// ---------------------------------------------------------------------------
// FMA peak. Each kernel keeps enough independent accumulator chains in registers to
// cover FMA latency times the number of FMA ports (4-5 cycles x 2 ports on current
// x86 cores); fewer chains would measure latency, not throughput. `state` holds the
// accumulators between calls (64-byte aligned) and x, y in its last two vectors.
// ---------------------------------------------------------------------------

constexpr int kFmaStateFloats = 18 * 16;

#if defined(__x86_64__)
constexpr int kAvx512Chains = 16;  // of 32 zmm registers, leaving room for x and y.
constexpr double kAvx512FlopsPerIter = kAvx512Chains * 16 * 2;

__attribute__((target("avx512f,fma"), noinline)) void FmaAvx512(uint64_t iters,
                                                                  float* state) {
  __m512 acc[kAvx512Chains];
#pragma GCC unroll 16
  for (int j = 0; j < kAvx512Chains; ++j) acc[j] = _mm512_load_ps(state + 16 * j);
  const __m512 x = _mm512_load_ps(state + 16 * kAvx512Chains);
  const __m512 y = _mm512_load_ps(state + 16 * (kAvx512Chains + 1));
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAvx512Chains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
#pragma GCC unroll 16
  for (int j = 0; j < kAvx512Chains; ++j) _mm512_store_ps(state + 16 * j, acc[j]);
}

constexpr int kAvx2Chains = 12;  // of 16 ymm registers, leaving room for x and y.
constexpr double kAvx2FlopsPerIter = kAvx2Chains * 8 * 2;

__attribute__((target("avx2,fma"), noinline)) void FmaAvx2(uint64_t iters, float* state) {
  __m256 acc[kAvx2Chains];
#pragma GCC unroll 12
  for (int j = 0; j < kAvx2Chains; ++j) acc[j] = _mm256_load_ps(state + 8 * j);
  const __m256 x = _mm256_load_ps(state + 16 * kAvx512Chains);
  const __m256 y = _mm256_load_ps(state + 16 * (kAvx512Chains + 1));
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAvx2Chains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  }
#pragma GCC unroll 12
  for (int j = 0; j < kAvx2Chains; ++j) _mm256_store_ps(state + 8 * j, acc[j]);
}
#endif

constexpr int kScalarChains = 8;
constexpr double kScalarFlopsPerIter = kScalarChains * 2;

__attribute__((noinline)) void FmaScalar(uint64_t iters, float* state) {
  float acc[kScalarChains];
  for (int j = 0; j < kScalarChains; ++j) acc[j] = state[j];
  const float x = state[16 * 16];
  const float y = state[16 * 17];
  for (uint64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kScalarChains; ++j) acc[j] = acc[j] * x + y;
  }
  for (int j = 0; j < kScalarChains; ++j) state[j] = acc[j];
}

struct FmaKernel {
  void (*run)(uint64_t, float*);
  double flops_per_iter;
  const char* isa;
};

FmaKernel PickFmaKernel() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) {
    return {&FmaAvx512, kAvx512FlopsPerIter, "avx512f"};
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {&FmaAvx2, kAvx2FlopsPerIter, "avx2+fma"};
  }
#endif
  return {&FmaScalar, kScalarFlopsPerIter, "scalar"};
}

// ---------------------------------------------------------------------------
// Copy and read bandwidth. Explicit vector loads, and ordinary or streaming
// (non-temporal) stores, each timed on its own: memcpy is avoided because glibc picks
// between them by size. Generated kernels may use either store (copy_tiled's
// nt_stores) and may walk several rows at once, so a ceiling is the fastest of a few
// loops (kCopyVariants, kReadStreams). A loop over S streams splits its buffer into S
// equal parts (`part_bytes` each) and takes one block of each in turn.
// ---------------------------------------------------------------------------

// Every copy length is a multiple of this per stream (4 zmm registers).
constexpr uint64_t kCopyBlock = 256;
// Every read length is a multiple of this per stream (8 zmm registers).
constexpr uint64_t kReadBlock = 512;

using CopyFn = void (*)(const float* src, float* dst, uint64_t part_bytes);
using ReadFn = float (*)(const float* src, uint64_t part_bytes);

#if defined(__x86_64__)
// Streaming stores write whole lines without reading them for ownership first, and
// past the caches; the fence orders them before whatever follows the copy.
template <CopyStores kStores, int kStreams>
__attribute__((target("avx512f"), noinline)) void CopyAvx512(const float* src, float* dst,
                                                             uint64_t part_bytes) {
  auto store = [](float* to, __m512 v) __attribute__((target("avx512f"))) {
    if constexpr (kStores == CopyStores::kStreaming)
      _mm512_stream_ps(to, v);
    else
      _mm512_store_ps(to, v);
  };
  const uint64_t part = part_bytes / sizeof(float);
  for (uint64_t i = 0; i < part; i += 64) {
    for (int k = 0; k < kStreams; ++k) {
      const float* from = src + k * part + i;
      float* to = dst + k * part + i;
      const __m512 a = _mm512_load_ps(from);
      const __m512 b = _mm512_load_ps(from + 16);
      const __m512 c = _mm512_load_ps(from + 32);
      const __m512 d = _mm512_load_ps(from + 48);
      store(to, a);
      store(to + 16, b);
      store(to + 32, c);
      store(to + 48, d);
    }
  }
  if constexpr (kStores == CopyStores::kStreaming) _mm_sfence();
}

template <CopyStores kStores, int kStreams>
__attribute__((target("avx2"), noinline)) void CopyAvx2(const float* src, float* dst,
                                                        uint64_t part_bytes) {
  auto store = [](float* to, __m256 v) __attribute__((target("avx2"))) {
    if constexpr (kStores == CopyStores::kStreaming)
      _mm256_stream_ps(to, v);
    else
      _mm256_store_ps(to, v);
  };
  const uint64_t part = part_bytes / sizeof(float);
  for (uint64_t i = 0; i < part; i += 32) {
    for (int k = 0; k < kStreams; ++k) {
      const float* from = src + k * part + i;
      float* to = dst + k * part + i;
      const __m256 a = _mm256_load_ps(from);
      const __m256 b = _mm256_load_ps(from + 8);
      const __m256 c = _mm256_load_ps(from + 16);
      const __m256 d = _mm256_load_ps(from + 24);
      store(to, a);
      store(to + 8, b);
      store(to + 16, c);
      store(to + 24, d);
    }
  }
  if constexpr (kStores == CopyStores::kStreaming) _mm_sfence();
}
#endif

template <int kStreams>
__attribute__((noinline)) void CopyScalar(const float* src, float* dst, uint64_t part_bytes) {
  const uint64_t part = part_bytes / sizeof(float);
  for (uint64_t i = 0; i < part; ++i)
    for (int k = 0; k < kStreams; ++k) dst[k * part + i] = src[k * part + i];
}

// Reading: eight independent accumulators, enough to keep two loads a cycle going
// past the adds' latency, so the loop is bounded by the loads; with S streams each
// step reads 8 / S registers of each part. Named one by one: an array of them stayed
// in memory (GCC -O2 did not unroll the loop over it).
#if defined(__x86_64__)
template <int kStreams>
__attribute__((target("avx512f"), noinline)) float ReadAvx512(const float* src, uint64_t part_bytes) {
  static_assert(8 % kStreams == 0);
  constexpr int kPerStream = 8 / kStreams;
  const uint64_t part = part_bytes / sizeof(float);
  // Where accumulator j loads from at step i: its stream's part, its register in it.
  auto at = [src, part](int j, uint64_t i) { return src + (j / kPerStream) * part + i + (j % kPerStream) * 16; };
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (uint64_t i = 0; i < part; i += 16 * kPerStream) {
    a0 = _mm512_add_ps(a0, _mm512_load_ps(at(0, i)));
    a1 = _mm512_add_ps(a1, _mm512_load_ps(at(1, i)));
    a2 = _mm512_add_ps(a2, _mm512_load_ps(at(2, i)));
    a3 = _mm512_add_ps(a3, _mm512_load_ps(at(3, i)));
    a4 = _mm512_add_ps(a4, _mm512_load_ps(at(4, i)));
    a5 = _mm512_add_ps(a5, _mm512_load_ps(at(5, i)));
    a6 = _mm512_add_ps(a6, _mm512_load_ps(at(6, i)));
    a7 = _mm512_add_ps(a7, _mm512_load_ps(at(7, i)));
  }
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                   _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  return _mm512_reduce_add_ps(sum);
}

template <int kStreams>
__attribute__((target("avx2"), noinline)) float ReadAvx2(const float* src, uint64_t part_bytes) {
  static_assert(8 % kStreams == 0);
  constexpr int kPerStream = 8 / kStreams;
  const uint64_t part = part_bytes / sizeof(float);
  auto at = [src, part](int j, uint64_t i) { return src + (j / kPerStream) * part + i + (j % kPerStream) * 8; };
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (uint64_t i = 0; i < part; i += 8 * kPerStream) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(at(0, i)));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(at(1, i)));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(at(2, i)));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(at(3, i)));
    a4 = _mm256_add_ps(a4, _mm256_load_ps(at(4, i)));
    a5 = _mm256_add_ps(a5, _mm256_load_ps(at(5, i)));
    a6 = _mm256_add_ps(a6, _mm256_load_ps(at(6, i)));
    a7 = _mm256_add_ps(a7, _mm256_load_ps(at(7, i)));
  }
  const __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                   _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}
#endif

template <int kStreams>
__attribute__((noinline)) float ReadScalar(const float* src, uint64_t part_bytes) {
  const uint64_t part = part_bytes / sizeof(float);
  float sum = 0;
  for (uint64_t i = 0; i < part; ++i)
    for (int k = 0; k < kStreams; ++k) sum += src[k * part + i];
  return sum;
}

// make(std::integral_constant<int, S>) for the stream count S (the enum's only values).
template <typename Make>
auto ForStreams(Streams streams, Make make) {
  switch (streams) {
    case Streams::k4:
      return make(std::integral_constant<int, 4>{});
    case Streams::k8:
      return make(std::integral_constant<int, 8>{});
    case Streams::k1:
      break;
  }
  return make(std::integral_constant<int, 1>{});
}

CopyFn PickCopyKernel(CopyStores stores, Streams streams) {
  return ForStreams(streams, [stores](auto count) -> CopyFn {
    constexpr int n = decltype(count)::value;
    [[maybe_unused]] const bool streaming = stores == CopyStores::kStreaming;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f"))
      return streaming ? &CopyAvx512<CopyStores::kStreaming, n> : &CopyAvx512<CopyStores::kCached, n>;
    if (__builtin_cpu_supports("avx2"))
      return streaming ? &CopyAvx2<CopyStores::kStreaming, n> : &CopyAvx2<CopyStores::kCached, n>;
#endif
    return &CopyScalar<n>;  // no portable streaming store: both kinds are the ordinary copy
  });
}

ReadFn PickReadKernel(Streams streams) {
  return ForStreams(streams, [](auto count) -> ReadFn {
    constexpr int n = decltype(count)::value;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &ReadAvx512<n>;
    if (__builtin_cpu_supports("avx2")) return &ReadAvx2<n>;
#endif
    return &ReadScalar<n>;
  });
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned (a cache line, and what aligned vector loads need), contents set so
// its pages are faulted in before anything is timed.
AlignedFloats AllocateTouched(uint64_t bytes, float value) {
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  AlignedFloats buffer(static_cast<float*>(std::aligned_alloc(64, rounded)));
  if (buffer) std::fill_n(buffer.get(), rounded / sizeof(float), value);
  return buffer;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) {
    return absl::StrCat(bytes >> 30, " GiB");
  }
  if (bytes >= (uint64_t{1} << 20)) return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
  return absl::StrFormat("%.1f KiB", bytes / 1024.0);
}

// Parses sysfs cache sizes such as "48K", "2048K", "1M".
bool ParseCacheSize(std::string text, uint64_t* bytes) {
  absl::string_view view = absl::StripAsciiWhitespace(text);
  uint64_t scale = 1;
  if (absl::ConsumeSuffix(&view, "K")) {
    scale = uint64_t{1} << 10;
  } else if (absl::ConsumeSuffix(&view, "M")) {
    scale = uint64_t{1} << 20;
  } else if (absl::ConsumeSuffix(&view, "G")) {
    scale = uint64_t{1} << 30;
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(view, &value) || value == 0) return false;
  *bytes = value * scale;
  return true;
}

std::string ReadFirstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::vector<CacheLevel> DetectDataCaches(const std::string& sysfs_dir) {
  std::map<int, uint64_t> by_level;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(sysfs_dir, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = ReadFirstLine(entry.path() / "type");
    if (type != "Data" && type != "Unified") continue;
    int level = 0;
    uint64_t size = 0;
    if (!absl::SimpleAtoi(ReadFirstLine(entry.path() / "level"), &level) ||
        !ParseCacheSize(ReadFirstLine(entry.path() / "size"), &size)) {
      continue;
    }
    by_level.emplace(level, size);
  }
  if (by_level.empty()) {
    // Containers sometimes hide sysfs; glibc's sysconf reads CPUID instead.
    const int names[] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < 3; ++i) {
      const long size = sysconf(names[i]);
      if (size > 0) by_level.emplace(i + 1, static_cast<uint64_t>(size));
    }
  }
  std::vector<CacheLevel> levels;
  for (const auto& [level, size] : by_level) levels.push_back({level, size});
  return levels;
}

std::string FmaIsa() { return PickFmaKernel().isa; }

struct FmaLoop::State {
  FmaKernel kernel = PickFmaKernel();
  AlignedFloats accumulators = AllocateTouched(kFmaStateFloats * sizeof(float), 1.0f);
};

FmaLoop::FmaLoop() : state_(std::make_unique<State>()) {
  // acc <- acc * x + y converges to y / (1 - x) = 1: no overflow, no denormals.
  std::fill_n(state_->accumulators.get() + 16 * 16, 16, 0.999f);
  std::fill_n(state_->accumulators.get() + 16 * 17, 16, 0.001f);
}

FmaLoop::~FmaLoop() = default;

double FmaLoop::Run(double flops) {
  const double per_iter = state_->kernel.flops_per_iter;
  const uint64_t iters = static_cast<uint64_t>(std::max(1.0, std::ceil(flops / per_iter)));
  state_->kernel.run(iters, state_->accumulators.get());
  g_sink = state_->accumulators[0];
  return iters * per_iter;
}

// Best-of-`repetitions` throughput of `loop` (FmaLoop, AmxBf16Loop), GFLOP/s.
// `chunk_flops` is a fraction of a millisecond of its work: chunks keep clock reads
// out of the timed work.
template <typename Loop>
double BestGflops(Loop& loop, double chunk_flops, double total_time_s, int repetitions) {
  repetitions = std::max(repetitions, 1);
  const double repetition_s = std::max(total_time_s, 1e-4) / repetitions;
  loop.Run(chunk_flops / 4);  // Warm-up: wake the units to full clock.
  double best = 0.0;
  for (int r = 0; r < repetitions; ++r) {
    double flops = 0;
    const Clock::time_point start = Clock::now();
    double elapsed = 0.0;
    do {
      flops += loop.Run(chunk_flops);
      elapsed = SecondsSince(start);
    } while (elapsed < repetition_s);
    best = std::max(best, flops / elapsed / 1e9);
  }
  return best;
}

double MeasurePeakFmaGflops(double total_time_s, int repetitions) {
  FmaLoop loop;
  return BestGflops(loop, (1 << 14) * PickFmaKernel().flops_per_iter, total_time_s, repetitions);
}

double MeasurePeakBf16DotGflops(double total_time_s, int repetitions) {
  Bf16DotLoop loop;
  // 2^14 iterations of 16 vdpbf16ps: about 0.07 ms at 250 GFLOP/s.
  return BestGflops(loop, (1 << 14) * 16 * 64.0, total_time_s, repetitions);
}

double MeasurePeakAmxBf16Gflops(double total_time_s, int repetitions) {
  AmxBf16Loop loop;
  // 2^11 iterations of four 16 x 16 x 32 tile multiplies: about 0.03 ms at 4 TFLOP/s.
  return BestGflops(loop, (1 << 11) * 4 * 16384.0, total_time_s, repetitions);
}

TouchedMemory::TouchedMemory() = default;
TouchedMemory::~TouchedMemory() = default;

std::shared_ptr<float[]> TouchedMemory::Get(uint64_t bytes) {
  if (bytes > bytes_ || !block_) {
    block_ = AllocateTouched(bytes, 1.0f);
    bytes_ = block_ ? (bytes + 63) / 64 * 64 : 0;
  }
  return block_;
}

uint64_t TouchedMemory::bytes() const { return bytes_; }

struct CopyLoop::State {
  CopyFn copy;
  uint64_t bytes_each = 0;  // per direction; `streams` parts of bytes_each / streams
  uint64_t streams = 1;
  // What src and dst point into: one block of a TouchedMemory, or two of their own.
  std::shared_ptr<float[]> src_block, dst_block;
  float* src = nullptr;
  float* dst = nullptr;
};

CopyLoop::CopyLoop(uint64_t working_set_bytes, CopyStores stores, Streams streams,
                   TouchedMemory* memory)
    : state_(std::make_unique<State>()) {
  state_->copy = PickCopyKernel(stores, streams);
  state_->streams = static_cast<uint64_t>(streams);
  const uint64_t step = kCopyBlock * state_->streams;
  state_->bytes_each = std::max(working_set_bytes / 2 / step, uint64_t{1}) * step;
  if (memory != nullptr) {
    state_->src_block = state_->dst_block = memory->Get(2 * state_->bytes_each);
  } else {
    state_->src_block = AllocateTouched(state_->bytes_each, 1.0f);
    state_->dst_block = AllocateTouched(state_->bytes_each, 0.0f);
  }
  if (state_->src_block && state_->dst_block) {
    state_->src = state_->src_block.get();
    // bytes_each is whole blocks, so the destination stays 64-byte aligned.
    state_->dst = memory != nullptr ? state_->src + state_->bytes_each / sizeof(float)
                                    : state_->dst_block.get();
  }
}

CopyLoop::~CopyLoop() = default;

double CopyLoop::bytes() const {
  return state_->src != nullptr && state_->dst != nullptr ? 2.0 * state_->bytes_each : 0.0;
}

double CopyLoop::Run() {
  if (bytes() == 0) return 0;
  state_->copy(state_->src, state_->dst, state_->bytes_each / state_->streams);
  g_sink = state_->dst[state_->bytes_each / sizeof(float) - 1];
  return bytes();
}

bool CopyLoop::DestinationMatchesSource() const {
  return bytes() > 0 && std::memcmp(state_->src, state_->dst, state_->bytes_each) == 0;
}

struct ReadLoop::State {
  ReadFn read;
  uint64_t bytes = 0;  // `streams` parts of bytes / streams
  uint64_t streams = 1;
  std::shared_ptr<float[]> src;
  float last_sum = 0;
};

ReadLoop::ReadLoop(uint64_t working_set_bytes, Streams streams, TouchedMemory* memory)
    : state_(std::make_unique<State>()) {
  state_->read = PickReadKernel(streams);
  state_->streams = static_cast<uint64_t>(streams);
  const uint64_t step = kReadBlock * state_->streams;
  state_->bytes = std::max(working_set_bytes / step, uint64_t{1}) * step;
  state_->src = memory != nullptr ? memory->Get(state_->bytes) : AllocateTouched(state_->bytes, 1.0f);
}

ReadLoop::~ReadLoop() = default;

double ReadLoop::bytes() const { return state_->src ? static_cast<double>(state_->bytes) : 0.0; }

double ReadLoop::Run() {
  if (bytes() == 0) return 0;
  state_->last_sum = state_->read(state_->src.get(), state_->bytes / state_->streams);
  g_sink = state_->last_sum;
  return bytes();
}

float ReadLoop::SumOfLastPass() const { return state_->last_sum; }

namespace {

// GB/s of `loop` (a CopyLoop or ReadLoop): the median of passes over at least
// `min_time_s` and `min_passes`.
template <typename Loop>
double MedianGbps(Loop& loop, double min_time_s, int min_passes) {
  if (loop.bytes() == 0) return 0.0;
  // Small sets repeat the loop inside one timed sample so a sample lasts well above
  // the clock's resolution (a 24 KiB L1 copy takes ~0.1 us).
  constexpr double kMinBytesPerSample = double{uint64_t{16} << 20};
  const uint64_t runs_per_sample =
      std::max<uint64_t>(1, static_cast<uint64_t>(kMinBytesPerSample / loop.bytes()));
  auto sample = [&] {
    const Clock::time_point start = Clock::now();
    for (uint64_t c = 0; c < runs_per_sample; ++c) loop.Run();
    return SecondsSince(start) / runs_per_sample;
  };
  sample();  // Warm-up: pulls the working set into the level being measured.
  std::vector<double> pass_s;
  const Clock::time_point start = Clock::now();
  while (pass_s.size() < static_cast<size_t>(std::max(min_passes, 1)) ||
         SecondsSince(start) < min_time_s) {
    pass_s.push_back(sample());
  }
  std::nth_element(pass_s.begin(), pass_s.begin() + pass_s.size() / 2, pass_s.end());
  const double median_s = pass_s[pass_s.size() / 2];
  return loop.bytes() / median_s / 1e9;
}

}  // namespace

CopyGbps MeasureCopyGbps(uint64_t working_set_bytes, double min_time_s, int min_passes,
                         TouchedMemory* memory) {
  TouchedMemory own;
  if (memory == nullptr) memory = &own;
  CopyGbps fastest;
  for (const CopyVariant& variant : kCopyVariants) {
    CopyLoop loop(working_set_bytes, variant.stores, variant.streams, memory);
    if (const double gbps = MedianGbps(loop, min_time_s, min_passes); gbps > fastest.gbps)
      fastest = {gbps, variant.stores == CopyStores::kStreaming, static_cast<int>(variant.streams)};
  }
  return fastest;
}

ReadGbps MeasureReadGbps(uint64_t working_set_bytes, double min_time_s, int min_passes,
                         TouchedMemory* memory) {
  TouchedMemory own;
  if (memory == nullptr) memory = &own;
  ReadGbps fastest;
  for (const Streams streams : kReadStreams) {
    ReadLoop loop(working_set_bytes, streams, memory);
    if (const double gbps = MedianGbps(loop, min_time_s, min_passes); gbps > fastest.gbps)
      fastest = {gbps, static_cast<int>(streams)};
  }
  return fastest;
}

mtune::v1::ComputePeaks MeasurePeaks(const CalibrationOptions& options, bool amx, bool bf16_dot,
                                     std::vector<std::string>* notes) {
  std::vector<std::string> local_notes;
  if (notes == nullptr) notes = &local_notes;
  mtune::v1::ComputePeaks peaks;
  peaks.set_peak_gflops_f32(MeasurePeakFmaGflops(options.fma_time_s, options.fma_repetitions));
  notes->push_back(absl::StrCat("FMA peak measured with ", FmaIsa()));
  if (amx && CpuHasAmxBf16()) {
    if (absl::Status granted = RequestAmxState(); granted.ok()) {
      peaks.set_peak_gflops_amx_bf16(MeasurePeakAmxBf16Gflops(options.fma_time_s, options.fma_repetitions));
      notes->push_back("bf16 matrix peak measured with AMX tdpbf16ps");
    } else {
      notes->push_back(absl::StrCat("the CPU has AMX, but no bf16 matrix peak: ", granted.message()));
    }
  }
  if (bf16_dot && CpuHasAvx512Bf16()) {
    peaks.set_peak_gflops_bf16_dot(MeasurePeakBf16DotGflops(options.fma_time_s, options.fma_repetitions));
    notes->push_back("bf16 dot-product peak measured with AVX512-BF16 vdpbf16ps");
  }
  peaks.set_measured_unix_s(UnixNowS());
  return peaks;
}

double UnixNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

mtune::v1::Calibration Calibrate(const CalibrationOptions& options,
                                 std::vector<std::string>* notes) {
  const Clock::time_point start = Clock::now();
  std::vector<std::string> local_notes;
  if (notes == nullptr) notes = &local_notes;
  mtune::v1::Calibration calibration;

  const mtune::v1::ComputePeaks peaks = MeasurePeaks(options, true, true, notes);
  calibration.set_peak_gflops_f32(peaks.peak_gflops_f32());
  calibration.set_peak_gflops_amx_bf16(peaks.peak_gflops_amx_bf16());
  calibration.set_peak_gflops_bf16_dot(peaks.peak_gflops_bf16_dot());
  calibration.set_peaks_measured_unix_s(peaks.measured_unix_s());

  const std::vector<CacheLevel> caches = DetectDataCaches(options.cache_sysfs_dir);
  if (caches.empty()) notes->push_back("no cache sizes found: only DRAM is measured");
  const uint64_t cap = std::max(options.max_working_set_bytes, 2 * kCopyBlock);
  auto capped = [&](uint64_t working_set) {
    working_set = std::min(working_set, cap);
    return std::max(working_set / (2 * kCopyBlock), uint64_t{1}) * 2 * kCopyBlock;
  };
  // Four times the last cache makes cache hits a small share of a DRAM pass.
  const uint64_t last_cache = caches.empty() ? 0 : caches.back().size_bytes;
  const uint64_t dram_working_set = std::max<uint64_t>(4 * last_cache, uint64_t{256} << 20);
  // Every level's loops borrow one block, touched once, at the largest (DRAM) size.
  TouchedMemory memory;
  memory.Get(capped(dram_working_set));
  auto measure = [&](std::string level, uint64_t working_set, uint64_t capacity) {
    if (working_set > cap) {
      notes->push_back(absl::StrCat(level, " working set capped at ", FormatBytes(cap),
                                    " (wanted ", FormatBytes(working_set), ")"));
    }
    working_set = capped(working_set);
    mtune::v1::BandwidthLevel* out = calibration.add_bandwidth();
    out->set_level(std::move(level));
    out->set_working_set_bytes(working_set);
    out->set_capacity_bytes(capacity);
    const CopyGbps copy =
        MeasureCopyGbps(working_set, options.copy_time_s, options.min_copy_passes, &memory);
    out->set_gbps(copy.gbps);
    out->set_streaming_stores(copy.streaming_stores);
    out->set_copy_streams(copy.streams);
    const ReadGbps read =
        MeasureReadGbps(working_set, options.copy_time_s, options.min_copy_passes, &memory);
    out->set_read_gbps(read.gbps);
    out->set_read_streams(read.streams);
  };
  // Half a level's capacity leaves room for the code, stack and the other levels'
  // lines without spilling into the next level.
  for (const CacheLevel& cache : caches) {
    measure(absl::StrCat("L", cache.level), cache.size_bytes / 2, cache.size_bytes);
  }
  measure("DRAM", dram_working_set, 0);
  if (dram_working_set > cap && cap <= 2 * last_cache) {
    notes->push_back(
        "DRAM figure may be partly cache-resident: its capped working set is not far "
        "above the last cache level's reported size");
  }
  calibration.set_duration_s(SecondsSince(start));
  return calibration;
}

}  // namespace mtune::worker
