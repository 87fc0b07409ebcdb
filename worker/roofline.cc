#include "worker/roofline.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace mtune::worker {

RooflinePoint ComputeRoofline(const mtune::v1::Calibration& calibration, double flops,
                              double compulsory_bytes, uint64_t footprint_bytes) {
  RooflinePoint point;
  point.bound_gflops = calibration.peak_gflops_f32();
  const mtune::v1::BandwidthLevel* chosen = nullptr;
  // Levels are innermost first, but pick the smallest fitting capacity explicitly so
  // an out-of-order calibration still selects the right level.
  for (const mtune::v1::BandwidthLevel& level : calibration.bandwidth()) {
    if (level.capacity_bytes() == 0 || level.capacity_bytes() < footprint_bytes) continue;
    if (chosen == nullptr || level.capacity_bytes() < chosen->capacity_bytes()) chosen = &level;
  }
  if (chosen == nullptr) {
    for (const mtune::v1::BandwidthLevel& level : calibration.bandwidth()) {
      if (level.capacity_bytes() == 0) chosen = &level;
    }
  }
  if (chosen == nullptr && calibration.bandwidth_size() > 0) {
    // No DRAM entry and nothing large enough: the outermost measured level is the best
    // estimate left.
    chosen = &*std::max_element(calibration.bandwidth().begin(), calibration.bandwidth().end(),
                                [](const auto& a, const auto& b) {
                                  return a.capacity_bytes() < b.capacity_bytes();
                                });
  }
  if (chosen == nullptr) return point;
  point.level = chosen->level();
  point.level_gbps = chosen->gbps();
  point.level_read_gbps = chosen->read_gbps();
  if (compulsory_bytes > 0) {
    point.bound_gflops =
        std::min(point.bound_gflops, flops / compulsory_bytes * chosen->gbps());
  }
  return point;
}

double FractionOfRoofline(double achieved_gflops, const RooflinePoint& roofline) {
  return roofline.bound_gflops > 0 ? achieved_gflops / roofline.bound_gflops : 0.0;
}

double PeakGflopsFor(const mtune::v1::Calibration& calibration, const strategies::Problem& problem) {
  // bf16: the fastest bf16 multiply the CPU has (AMX tiles, AVX512-BF16 dot
  // products), else the f32 FMA it is widened to.
  if (problem.element_type == "bf16")
    return std::max({calibration.peak_gflops_amx_bf16(), calibration.peak_gflops_bf16_dot(),
                     calibration.peak_gflops_f32()});
  return problem.AccumulatorType() == "f64" ? calibration.peak_gflops_f32() / 2
                                            : calibration.peak_gflops_f32();
}

std::string Bf16PeakText(const mtune::v1::Calibration& calibration) {
  if (calibration.peak_gflops_amx_bf16() > 0)
    return absl::StrFormat("AMX bf16 peak %.1f GFLOP/s", calibration.peak_gflops_amx_bf16());
  if (calibration.peak_gflops_bf16_dot() > 0)
    return absl::StrFormat("AVX512-BF16 dot-product peak %.1f GFLOP/s", calibration.peak_gflops_bf16_dot());
  return "";
}

bool BandwidthBound(const RooflinePoint& roofline, double flops, double peak_gflops) {
  return roofline.level_gbps > 0 && (!(flops > 0) || roofline.bound_gflops < peak_gflops);
}

bool HeldAgainstLevelFigures(const mtune::v1::Calibration& calibration, const std::string& level,
                             uint64_t footprint_bytes) {
  if (level != "DRAM") return false;
  for (const mtune::v1::BandwidthLevel& b : calibration.bandwidth())
    if (b.level() == "DRAM") return footprint_bytes >= b.working_set_bytes();
  return true;
}

const mtune::v1::BandwidthLevel* FiguresAtFootprint(const mtune::v1::Calibration& calibration,
                                                    uint64_t footprint_bytes) {
  for (const mtune::v1::BandwidthLevel& at : calibration.at_footprint())
    if (at.working_set_bytes() == footprint_bytes) return &at;
  return nullptr;
}

double StreamGbps(double copy_gbps, double read_gbps, double read_bytes, double fresh_written_bytes,
                  double updated_bytes) {
  if (!(read_gbps > 0) || !(copy_gbps > 0)) return copy_gbps;
  const double read_s = 1.0 / read_gbps;
  const double fresh_s = std::max(0.0, 2.0 / copy_gbps - read_s);
  const double update_s = std::max(0.0, 2.0 / copy_gbps - 2.0 * read_s);
  const double seconds = read_bytes * read_s + fresh_written_bytes * fresh_s + updated_bytes * update_s;
  const double bytes = read_bytes + fresh_written_bytes + updated_bytes;
  return seconds > 0 ? bytes / seconds : copy_gbps;
}

double StreamGbps(double copy_gbps, double read_gbps, const strategies::Problem& problem) {
  const double written = problem.CompulsoryWrittenBytes();
  const bool updated = problem.Accumulates();
  return StreamGbps(copy_gbps, read_gbps, problem.CompulsoryBytes() - written, updated ? 0 : written,
                    updated ? written : 0);
}

RooflinePoint WithBandwidth(const RooflinePoint& level_point, double gbps, double peak_gflops,
                            double flops, double compulsory_bytes) {
  RooflinePoint point = level_point;
  point.level_gbps = gbps;
  point.bound_gflops = peak_gflops;
  if (compulsory_bytes > 0) point.bound_gflops = std::min(peak_gflops, flops / compulsory_bytes * gbps);
  return point;
}

}  // namespace mtune::worker
