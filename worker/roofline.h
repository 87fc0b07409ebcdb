// Roofline bound of a problem on a calibrated core, and how close a result gets to it.
#ifndef MTUNE_WORKER_ROOFLINE_H_
#define MTUNE_WORKER_ROOFLINE_H_

#include <cstdint>
#include <string>

#include "proto/mtune.pb.h"

namespace mtune::worker {

// The attainable GFLOP/s of one problem and the memory level that bounds it.
struct RooflinePoint {
  // min(peak, intensity * level bandwidth), GFLOP/s.
  double bound_gflops = 0.0;
  // Level the footprint fits ("L1".."DRAM"); empty if the calibration has no bandwidths.
  std::string level;
  // That level's copy bandwidth, GB/s.
  double level_gbps = 0.0;
};

// Bound for `flops` over `compulsory_bytes` of traffic whose data occupies
// `footprint_bytes`: the innermost level with capacity >= footprint supplies the
// bandwidth, DRAM (capacity 0) otherwise. No traffic (bytes <= 0) means compute-bound.
RooflinePoint ComputeRoofline(const mtune::v1::Calibration& calibration, double flops,
                              double compulsory_bytes, uint64_t footprint_bytes);

// achieved / bound, 0 when the bound is not positive.
double FractionOfRoofline(double achieved_gflops, const RooflinePoint& roofline);

}  // namespace mtune::worker

#endif  // MTUNE_WORKER_ROOFLINE_H_
