// Taking in compute peaks timed again (ComputePeaks, Result.retimed_peaks), shared by
// the worker, which holds its next results against them, and the coordinator, which
// shows them (`mtune workers`, the dashboard's roofline) and stores them with the
// worker's target.
#pragma once

#include "proto/mtune.pb.h"

namespace mtune::v1 {

// Puts `peaks` (those > 0), their time and why they were timed into `calibration`
// when they were timed later than the peaks it holds
// (Calibration.peaks_measured_unix_s); returns whether it did. A result that waited for the measuring core, or for its report, may bring
// back peaks older than another's.
bool TakeNewerPeaks(const ComputePeaks& peaks, Calibration& calibration);

}  // namespace mtune::v1
