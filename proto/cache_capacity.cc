#include "proto/cache_capacity.h"

namespace mtune::v1 {

int64_t CacheCapacityBytes(const Calibration& calibration, std::string_view level) {
  for (const BandwidthLevel& measured : calibration.bandwidth())
    if (measured.level() == level) return static_cast<int64_t>(measured.capacity_bytes());
  return 0;
}

}  // namespace mtune::v1
