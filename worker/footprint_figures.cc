#include "worker/footprint_figures.h"

namespace mtune::worker {

void FootprintFigures::Learn(const mtune::v1::BandwidthLevel& figures) {
  if (!(figures.gbps() > 0)) return;
  auto [it, inserted] = by_footprint_.try_emplace(figures.working_set_bytes(), figures);
  // A task that waited for the measuring core may bring back figures older than those
  // another task has measured since: they do not replace them.
  if (!inserted && figures.measured_unix_s() > it->second.measured_unix_s()) it->second = figures;
}

void FootprintFigures::AddFreshTo(mtune::v1::Calibration& calibration, double now_unix_s) const {
  for (const auto& [footprint, figures] : by_footprint_)
    if (max_age_s_ <= 0 || now_unix_s - figures.measured_unix_s() <= max_age_s_)
      *calibration.add_at_footprint() = figures;
}

}  // namespace mtune::worker
