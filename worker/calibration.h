// Calibration: the ceilings of the core the worker measures on (FMA peak, copy
// bandwidth per memory level), against which results are roofline-normalised.
#ifndef MTUNE_WORKER_CALIBRATION_H_
#define MTUNE_WORKER_CALIBRATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "proto/mtune.pb.h"

namespace mtune::worker {

// Knobs of one calibration run; the defaults took 5.2 s on the znver4 host (session
// 39, `mtune workers --json` duration_s, twice), each level timing four copies and two
// reads (kCopyVariants, kReadStreams; 2.95 s with two copies and a read), and 7.5 s on
// the Zen 5 VM (session 66, three times; 26.5 s before its loops shared TouchedMemory).
struct CalibrationOptions {
  // Wall time spent on the FMA peak, split into `fma_repetitions` runs; the best counts.
  double fma_time_s = 0.3;
  int fma_repetitions = 5;
  // Minimum timed copying, and reading, per memory level (at least `min_copy_passes`
  // passes each).
  double copy_time_s = 0.15;
  int min_copy_passes = 3;
  // Upper bound on any level's working set (source + destination), so a huge
  // reported L3 (480 MiB on some VMs) cannot make the DRAM pass allocate gigabytes.
  uint64_t max_working_set_bytes = uint64_t{1} << 30;
  // Where the cache hierarchy of the measuring core is described.
  std::string cache_sysfs_dir = "/sys/devices/system/cpu/cpu0/cache";
};

// One data (or unified) cache level of a core.
struct CacheLevel {
  int level = 0;
  uint64_t size_bytes = 0;
};

// Data/unified caches below `sysfs_dir` (index*/{level,type,size}), innermost first;
// falls back to sysconf when sysfs says nothing; empty when neither knows.
std::vector<CacheLevel> DetectDataCaches(const std::string& sysfs_dir);

// The instruction set the FMA peak is measured with: "avx512f", "avx2+fma" or "scalar".
std::string FmaIsa();

// Best-of-`repetitions` f32 FMA throughput of the calling thread, GFLOP/s.
double MeasurePeakFmaGflops(double total_time_s, int repetitions);

// Best-of-`repetitions` bf16 matrix-multiply throughput of the calling thread on AMX
// tiles (worker/amx.h AmxBf16Loop), GFLOP/s. Needs CpuHasAmxBf16() and
// RequestAmxState() granted.
double MeasurePeakAmxBf16Gflops(double total_time_s, int repetitions);

// Best-of-`repetitions` throughput of AVX512-BF16 dot products of the calling thread
// (worker/bf16_dot.h Bf16DotLoop), GFLOP/s. Needs CpuHasAvx512Bf16().
double MeasurePeakBf16DotGflops(double total_time_s, int repetitions);

// The FMA loop the peak is measured with, for callers that time it themselves. The
// benches time it in the same interleaved rounds, and reduce it to a median the same
// way, as the kernels they compare: a best-of-N peak taken once at start-up would set
// a fast moment of a VM whose clock wanders against medians taken later.
class FmaLoop {
 public:
  FmaLoop();
  ~FmaLoop();
  FmaLoop(const FmaLoop&) = delete;
  FmaLoop& operator=(const FmaLoop&) = delete;

  // Runs whole iterations of the loop, at least `flops` floating-point operations
  // (one FMA counts two); returns how many it ran.
  double Run(double flops);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// How a copy loop writes: ordinary stores (each line read for ownership, then kept in
// the caches) or streaming ones (whole lines written past the caches). Beyond the last
// cache streaming stores copy faster (at 64 MiB: 1.35x on the Zen 5 host, about 1.8x
// on the znver4 one); inside the caches, slower.
enum class CopyStores { kCached, kStreaming };

// How many equal parts of its buffer a copy or read loop walks side by side. Beyond
// the last cache one core moves data faster over several streams, its prefetchers then
// keeping more lines in flight: at 64 MiB on the znver4 host (session 39) reads ran at
// 22 against 17.5 GB/s with four streams, streaming-store copies at 42-49 against
// 31-33 with eight. Inside the caches one stream is as fast, or faster.
enum class Streams { k1 = 1, k4 = 4, k8 = 8 };

// One of the loops a ceiling is the fastest of.
struct CopyVariant {
  CopyStores stores;
  Streams streams;
};
// The copies a copy ceiling is the fastest of (MeasureCopyGbps), and the reads a read
// ceiling is (MeasureReadGbps). The benches time the same loops. No eight-stream copy
// with ordinary stores: inside the caches it ran at 43-51 against 86-114 GB/s over
// one stream (its parts share their low address bits), and beyond them the
// streaming-store copy is faster.
inline constexpr CopyVariant kCopyVariants[] = {{CopyStores::kCached, Streams::k1},
                                                {CopyStores::kCached, Streams::k4},
                                                {CopyStores::kStreaming, Streams::k1},
                                                {CopyStores::kStreaming, Streams::k8}};
inline constexpr Streams kReadStreams[] = {Streams::k1, Streams::k4};

// Memory the copy and read loops of one measurement borrow in turn, its pages faulted
// in once: on the Zen 5 VM of session 65 a first touch cost 2.6 s per GiB, and with
// every loop touching buffers of its own a calibration took 27-35 s (six loops over
// 254 MiB for a reported 508 MiB L3, and six over 1 GiB for DRAM).
class TouchedMemory {
 public:
  TouchedMemory();
  ~TouchedMemory();
  TouchedMemory(const TouchedMemory&) = delete;
  TouchedMemory& operator=(const TouchedMemory&) = delete;

  // At least `bytes`, 64-byte aligned, pages faulted in (ones where first touched). A
  // larger request than any before allocates and touches a new block; a loop holding
  // the old one keeps it alive. Null when the allocation fails.
  std::shared_ptr<float[]> Get(uint64_t bytes);
  // Bytes of the block Get hands out now without allocating.
  uint64_t bytes() const;

 private:
  std::shared_ptr<float[]> block_;
  uint64_t bytes_ = 0;
};

// The copy loops copy bandwidth is measured with, for callers that time them
// themselves (the benches time each of kCopyVariants in the same rounds as a
// bandwidth-bound kernel of the same footprint, and hold it against the fastest).
class CopyLoop {
 public:
  // Copies half of `working_set_bytes` into the other half (at least one block per
  // stream), each half split into `streams` equal parts copied side by side. Both halves
  // come from `memory` where given (their contents then unspecified), else from buffers
  // of its own: the source ones, the destination zeros.
  explicit CopyLoop(uint64_t working_set_bytes, CopyStores stores = CopyStores::kCached,
                    Streams streams = Streams::k1, TouchedMemory* memory = nullptr);
  ~CopyLoop();
  CopyLoop(const CopyLoop&) = delete;
  CopyLoop& operator=(const CopyLoop&) = delete;

  // One copy; returns bytes().
  double Run();
  // Whether the destination holds what the source does (after a Run(); for tests).
  bool DestinationMatchesSource() const;
  // The bytes one copy reads plus the bytes it writes; 0 when the buffers could not
  // be allocated (Run then does nothing).
  double bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A loop that only reads `working_set_bytes` (summing it into vector accumulators,
// with explicit vector loads as generated kernels do): the yardstick of the reading
// part of a bandwidth-bound kernel. Inside the caches a core reads faster than it
// copies (measured on this project's Intel host: 185 against 103 GB/s at 256 KiB, in
// the L2; alike beyond the L2), so a reduction held against the copy bandwidth alone
// came out at 1.86 of its roofline.
class ReadLoop {
 public:
  // Reads `working_set_bytes` (at least one block per stream) split into `streams`
  // equal parts read side by side: from `memory` where given, else from a buffer of
  // its own holding ones.
  explicit ReadLoop(uint64_t working_set_bytes, Streams streams = Streams::k1,
                    TouchedMemory* memory = nullptr);
  ~ReadLoop();
  ReadLoop(const ReadLoop&) = delete;
  ReadLoop& operator=(const ReadLoop&) = delete;

  // One pass over the buffer; returns bytes().
  double Run();
  // What the last pass summed (for tests: the buffer holds ones).
  float SumOfLastPass() const;
  // The bytes one pass reads; 0 when the buffer could not be allocated.
  double bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The copy ceiling at a working set: the fastest of kCopyVariants (ordinary or
// streaming stores, one stream or several), since a kernel may copy in any of them.
struct CopyGbps {
  double gbps = 0;  // bytes read + written per second / 1e9
  bool streaming_stores = false;  // the fastest copy was one with streaming stores
  int streams = 1;                // over how many streams the fastest copy ran
};

// Copy bandwidth of the calling thread at `working_set_bytes` (source + destination):
// each of kCopyVariants timed over passes lasting at least `min_time_s` (and at least
// `min_passes` of them), the median pass of each, the fastest. The variants share
// `memory` where given, else memory of this call's own.
CopyGbps MeasureCopyGbps(uint64_t working_set_bytes, double min_time_s, int min_passes,
                         TouchedMemory* memory = nullptr);

// The read ceiling at a working set: the faster of kReadStreams.
struct ReadGbps {
  double gbps = 0;  // bytes read per second / 1e9
  int streams = 1;  // over how many streams the faster read ran
};

// Read bandwidth of the calling thread over `working_set_bytes` (ReadLoop): each of
// kReadStreams timed as MeasureCopyGbps times copies, the faster.
ReadGbps MeasureReadGbps(uint64_t working_set_bytes, double min_time_s, int min_passes,
                         TouchedMemory* memory = nullptr);

// The compute peaks of the calling thread (pin it first), each best of
// `options.fma_repetitions` runs over `options.fma_time_s`: the f32 FMA peak, and
// where the CPU has them the AMX bf16 matrix peak (if Linux grants the AMX state) and
// the AVX512-BF16 dot-product peak; only those asked for by `amx` and `bf16_dot`.
// Stamped with UnixNowS(). `notes`, when given, receives what each was timed with.
mtune::v1::ComputePeaks MeasurePeaks(const CalibrationOptions& options, bool amx, bool bf16_dot,
                                     std::vector<std::string>* notes = nullptr);

// The clock figures are stamped with (Calibration.peaks_measured_unix_s,
// BandwidthLevel.measured_unix_s): Unix seconds, comparable across the worker and its
// sandbox processes.
double UnixNowS();

// Measures the calling thread's ceilings (pin it first). `notes`, when given, receives
// caveats a reader of the figures should know (ISA used, capped working sets).
mtune::v1::Calibration Calibrate(const CalibrationOptions& options,
                                 std::vector<std::string>* notes = nullptr);

}  // namespace mtune::worker

#endif  // MTUNE_WORKER_CALIBRATION_H_
