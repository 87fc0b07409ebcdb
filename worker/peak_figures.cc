#include "worker/peak_figures.h"

#include <limits>

#include "worker/calibration.h"

namespace mtune::worker {

PeaksRetiming PeaksDueForRetiming(const mtune::v1::Calibration& held, double achieved_gflops,
                                  double peak_gflops, double max_age_s, double now_unix_s) {
  if (!(max_age_s > 0)) return PeaksRetiming::kNone;
  const double age_s = held.peaks_measured_unix_s() > 0 ? now_unix_s - held.peaks_measured_unix_s()
                                                        : std::numeric_limits<double>::infinity();
  if (age_s > max_age_s) return PeaksRetiming::kStale;
  if (achieved_gflops > peak_gflops && (!held.peaks_timed_for_faster_kernel() || age_s > kBeatenPeaksMinAgeS))
    return PeaksRetiming::kBeaten;
  return PeaksRetiming::kNone;
}

mtune::v1::ComputePeaks TimePeaksAgain(const mtune::v1::Calibration& held) {
  return MeasurePeaks(CalibrationOptions(), held.peak_gflops_amx_bf16() > 0, held.peak_gflops_bf16_dot() > 0);
}

}  // namespace mtune::worker
