#include "worker/footprint_figures.h"

#include "gtest/gtest.h"
#include "worker/roofline.h"

namespace mtune::worker {
namespace {

mtune::v1::BandwidthLevel Figures(uint64_t footprint, double gbps, double measured_unix_s) {
  mtune::v1::BandwidthLevel figures;
  figures.set_level("L3");
  figures.set_working_set_bytes(footprint);
  figures.set_capacity_bytes(footprint);
  figures.set_gbps(gbps);
  figures.set_read_gbps(2 * gbps);
  figures.set_measured_unix_s(measured_unix_s);
  return figures;
}

double CopyGbpsAt(const mtune::v1::Calibration& calibration, uint64_t footprint) {
  const mtune::v1::BandwidthLevel* figures = FiguresAtFootprint(calibration, footprint);
  return figures ? figures->gbps() : 0;
}

TEST(FootprintFigures, FiguresOlderThanTheMaximumAgeAreLeftOut) {
  FootprintFigures held(60);
  held.Learn(Figures(1 << 20, 30, 1000));
  held.Learn(Figures(2 << 20, 20, 1050));
  mtune::v1::Calibration at_1055;
  held.AddFreshTo(at_1055, 1055);
  EXPECT_EQ(CopyGbpsAt(at_1055, 1 << 20), 30);
  EXPECT_EQ(CopyGbpsAt(at_1055, 2 << 20), 20);
  mtune::v1::Calibration at_1061;
  held.AddFreshTo(at_1061, 1061);
  EXPECT_EQ(FiguresAtFootprint(at_1061, 1 << 20), nullptr) << "61 s old: to be timed again";
  EXPECT_EQ(CopyGbpsAt(at_1061, 2 << 20), 20);
}

TEST(FootprintFigures, NewerFiguresReplaceOlderOnesNeverTheReverse) {
  FootprintFigures held(60);
  held.Learn(Figures(1 << 20, 30, 1000));
  held.Learn(Figures(1 << 20, 40, 1070));  // timed again once stale
  held.Learn(Figures(1 << 20, 30, 1000));  // a task that waited brings back the old ones
  mtune::v1::Calibration calibration;
  held.AddFreshTo(calibration, 1075);
  ASSERT_EQ(calibration.at_footprint_size(), 1);
  EXPECT_EQ(calibration.at_footprint(0).gbps(), 40);
  EXPECT_EQ(calibration.at_footprint(0).measured_unix_s(), 1070);
}

TEST(FootprintFigures, WithoutAMaximumAgeFiguresNeverGrowStale) {
  FootprintFigures held(0);
  held.Learn(Figures(1 << 20, 30, 1000));
  held.Learn(Figures(4 << 20, 0, 1000));  // no copy figure: nothing to hold
  mtune::v1::Calibration calibration;
  held.AddFreshTo(calibration, 1e9);
  EXPECT_EQ(CopyGbpsAt(calibration, 1 << 20), 30);
  EXPECT_EQ(FiguresAtFootprint(calibration, 4 << 20), nullptr);
}

}  // namespace
}  // namespace mtune::worker
