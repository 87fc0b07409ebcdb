// Roofline bound of a problem on a calibrated core, and how close a result gets to it.
#ifndef MTUNE_WORKER_ROOFLINE_H_
#define MTUNE_WORKER_ROOFLINE_H_

#include <cstdint>
#include <string>

#include "proto/mtune.pb.h"
#include "strategies/problem.h"

namespace mtune::worker {

// The attainable GFLOP/s of one problem and the memory level that bounds it.
struct RooflinePoint {
  // min(peak, intensity * level bandwidth), GFLOP/s.
  double bound_gflops = 0.0;
  // Level the footprint fits ("L1".."DRAM"); empty if the calibration has no bandwidths.
  std::string level;
  // That level's copy bandwidth, GB/s.
  double level_gbps = 0.0;
  // That level's read bandwidth, GB/s (0: not measured).
  double level_read_gbps = 0.0;
};

// Bound for `flops` over `compulsory_bytes` of traffic whose data occupies
// `footprint_bytes`: the innermost level with capacity >= footprint supplies the
// bandwidth, DRAM (capacity 0) otherwise. No traffic (bytes <= 0) means compute-bound.
RooflinePoint ComputeRoofline(const mtune::v1::Calibration& calibration, double flops,
                              double compulsory_bytes, uint64_t footprint_bytes);

// achieved / bound, 0 when the bound is not positive.
double FractionOfRoofline(double achieved_gflops, const RooflinePoint& roofline);

// The peak that bounds `problem`: the calibration's f32 FMA peak, halved for an f64
// accumulator (an f64 FMA does half the lanes at the same instruction throughput on
// every x86 vector unit). bf16 inputs: the fastest bf16 multiply the calibration
// measured, whatever a strategy uses: the AMX bf16 matrix peak (16 times the f32 peak
// on this project's Intel host), else the AVX512-BF16 dot-product peak (twice it),
// else the f32 peak (bf16 widened to f32).
double PeakGflopsFor(const mtune::v1::Calibration& calibration, const strategies::Problem& problem);

// The peak of bf16 problems where it is not the f32 FMA peak, for people: "AMX bf16
// peak 3800.0 GFLOP/s" or "AVX512-BF16 dot-product peak 234.0 GFLOP/s"; empty where
// bf16 is widened to f32.
std::string Bf16PeakText(const mtune::v1::Calibration& calibration);

// Whether `roofline` (of `flops` against `peak_gflops`) is bounded by bandwidth: a
// problem without arithmetic, or one whose level's bandwidth caps it below the peak.
bool BandwidthBound(const RooflinePoint& roofline, double flops, double peak_gflops);

// Whether a bandwidth-bound problem of `footprint_bytes` whose footprint fits `level`
// is held against that level's calibrated figures rather than a copy and a read
// measured at its own footprint: only beyond the caches (DRAM), and only when the
// footprint is at least the working set DRAM's figures were measured at. A smaller
// one beyond the last cache still finds part of itself there (on the znver4 host's
// 32 MiB L3 a loop reading 32 MiB ran at 44 GB/s, 64 MiB at 25, and DRAM's figure,
// measured over 256 MiB, was 17-25): a 32 MiB column sum read as up to 1.95 of a
// roofline from DRAM's figures.
bool HeldAgainstLevelFigures(const mtune::v1::Calibration& calibration, const std::string& level,
                             uint64_t footprint_bytes);

// The copy and read figures `calibration` holds for exactly `footprint_bytes`
// (Calibration.at_footprint), nullptr when it holds none.
const mtune::v1::BandwidthLevel* FiguresAtFootprint(const mtune::v1::Calibration& calibration,
                                                    uint64_t footprint_bytes);

// The bandwidth at which the fastest kernel could move `read_bytes` read,
// `fresh_written_bytes` written to lines it did not read and `updated_bytes` written
// back to lines it read first (an output it accumulates into), from a copy
// (`copy_gbps`, bytes read + written) and a read stream (`read_gbps`) of the same
// working set. Per byte: a read costs what it costs the read stream; a fresh write
// what the copy spends beyond its read (the line is fetched for ownership, then
// written back: 2 / copy - 1 / read); an update only the write-back (2 / copy -
// 2 / read), its line being there already. Never less than nothing. Exact at both
// measurements (a copy moves at copy_gbps, a pure read at read_gbps); on this
// project's Intel host it also matched, within 1 %, a tuned depthwise 1-D kernel that
// updates its output in the L2 (157 GB/s, against copy 105 and read 186). Without
// a read figure (0), the copy's.
double StreamGbps(double copy_gbps, double read_gbps, double read_bytes, double fresh_written_bytes,
                  double updated_bytes);

// StreamGbps of `problem`'s compulsory traffic: its inputs (and an output it
// accumulates into) read, its output written fresh or, when accumulated into, updated.
double StreamGbps(double copy_gbps, double read_gbps, const strategies::Problem& problem);

// `level_point` with its bandwidth replaced by `gbps` (the StreamGbps at the
// problem's own footprint), the bound recomputed against `peak_gflops`.
RooflinePoint WithBandwidth(const RooflinePoint& level_point, double gbps, double peak_gflops,
                            double flops, double compulsory_bytes);

}  // namespace mtune::worker

#endif  // MTUNE_WORKER_ROOFLINE_H_
