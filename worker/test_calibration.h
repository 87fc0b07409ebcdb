// For worker tests: a calibration that every roofline can be computed from (a 100
// GFLOP/s FMA peak, 10 GB/s of DRAM bandwidth for every footprint), so a measured
// result is complete without calibrating the machine.
#pragma once

#include "proto/mtune.pb.h"

namespace mtune::worker {

inline mtune::v1::Calibration FlatTestCalibration() {
  mtune::v1::Calibration c;
  c.set_peak_gflops_f32(100);
  auto* dram = c.add_bandwidth();
  dram->set_level("DRAM");
  dram->set_gbps(10);
  return c;
}

}  // namespace mtune::worker
