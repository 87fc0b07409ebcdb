// The copy and read figures a worker measured at the footprints of the bandwidth-bound
// problems it met (Calibration.at_footprint), and how long it trusts them.
//
// A bandwidth-bound kernel's roofline comes from a copy and a read stream timed at its
// footprint on the measuring core. Timed once for the worker's life, a figure taken
// while the host was busy held every later result of that footprint against it: on a
// shared machine stored fractions of roofline came out above 1 for hours. Figures
// older than the maximum age are left out of the calibration sent with each task, so
// the next task of that footprint times the streams again.
#pragma once

#include <cstdint>
#include <map>

#include "proto/mtune.pb.h"
#include "worker/calibration.h"  // UnixNowS

namespace mtune::worker {

// How long a worker trusts figures at a footprint by default, seconds: timing them
// again (four copies and two reads of at least 0.1 s each, worker/calibration.h)
// costs about 0.6 s of the measuring core, so once a minute is about 1% of it.
inline constexpr double kDefaultFootprintFiguresMaxAgeS = 60;

class FootprintFigures {
 public:
  // `max_age_s` <= 0: figures never grow stale (timed once per footprint).
  explicit FootprintFigures(double max_age_s) : max_age_s_(max_age_s) {}

  // Keeps `figures` (Result.footprint_bandwidth) unless it holds figures for the same
  // footprint measured no earlier; figures without a copy bandwidth are ignored.
  void Learn(const mtune::v1::BandwidthLevel& figures);

  // Appends to `calibration`'s at_footprint the figures measured within the maximum
  // age of `now_unix_s`.
  void AddFreshTo(mtune::v1::Calibration& calibration, double now_unix_s) const;

 private:
  double max_age_s_;
  std::map<uint64_t, mtune::v1::BandwidthLevel> by_footprint_;
};

}  // namespace mtune::worker
