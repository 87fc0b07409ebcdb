#include "proto/compute_peaks.h"

namespace mtune::v1 {

bool TakeNewerPeaks(const ComputePeaks& peaks, Calibration& calibration) {
  if (!(peaks.measured_unix_s() > calibration.peaks_measured_unix_s())) return false;
  if (peaks.peak_gflops_f32() > 0) calibration.set_peak_gflops_f32(peaks.peak_gflops_f32());
  if (peaks.peak_gflops_amx_bf16() > 0) calibration.set_peak_gflops_amx_bf16(peaks.peak_gflops_amx_bf16());
  if (peaks.peak_gflops_bf16_dot() > 0) calibration.set_peak_gflops_bf16_dot(peaks.peak_gflops_bf16_dot());
  calibration.set_peaks_measured_unix_s(peaks.measured_unix_s());
  calibration.set_peaks_timed_for_faster_kernel(peaks.beaten());
  return true;
}

}  // namespace mtune::v1
