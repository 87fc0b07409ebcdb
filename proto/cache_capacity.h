// The capacity of one cache level as a worker's calibration recorded it
// (Calibration.bandwidth, from sysfs or CPUID): what the kernel estimates size working
// sets against (strategies/kernel_estimate.h), read by the coordinator from its
// workers' calibrations and by the ground-truth tool from its own.
#pragma once

#include <cstdint>
#include <string_view>

#include "proto/mtune.pb.h"

namespace mtune::v1 {

// Capacity in bytes of `level` ("L2"), 0 when the calibration has no such level.
int64_t CacheCapacityBytes(const Calibration& calibration, std::string_view level);

}  // namespace mtune::v1
