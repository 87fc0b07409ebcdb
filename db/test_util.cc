#include "db/test_util.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace mtune::db::testing {

ScratchDir::ScratchDir() {
  std::string pattern = absl::StrCat(::testing::TempDir(), "/mtune_db_test.XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string ScratchDir::Path(std::string_view name) const {
  return dir_ + "/" + std::string(name);
}

mtune::v1::Target MakeTarget(const std::string& id) {
  mtune::v1::Target target;
  target.set_id(id);
  target.set_kind("cpu");
  target.set_triple("x86_64-unknown-linux-gnu");
  target.set_cpu(id.substr(id.rfind(':') + 1));
  target.set_features("+avx2,+fma");
  return target;
}

mtune::v1::Calibration MakeCalibration(double peak_gflops) {
  mtune::v1::Calibration calibration;
  calibration.set_peak_gflops_f32(peak_gflops);
  mtune::v1::BandwidthLevel* dram = calibration.add_bandwidth();
  dram->set_level("DRAM");
  dram->set_working_set_bytes(uint64_t{1} << 30);
  dram->set_gbps(20.5);
  calibration.set_duration_s(1.25);
  return calibration;
}

mtune::v1::Candidate MakeCandidate(int tile_m) {
  mtune::v1::Candidate candidate;
  candidate.set_template_name("matmul_pad_hoist");
  mtune::v1::KnobValue* lowering = candidate.add_knobs();
  lowering->set_name("lowering");
  lowering->set_value("outerproduct");
  mtune::v1::KnobValue* tile = candidate.add_knobs();
  tile->set_name("tile_m");
  tile->set_value(absl::StrCat(tile_m));
  candidate.set_canonical_json(
      absl::StrCat(R"({"lowering":"outerproduct","tile_m":)", tile_m, "}"));
  candidate.set_hash(absl::StrCat(absl::Hex(tile_m, absl::kZeroPad16)));
  return candidate;
}

mtune::v1::TrialResult MakeTrial(int64_t job_id, const std::string& problem,
                                 const std::string& target_id, int tile_m,
                                 mtune::v1::ResultStatus status, double gflops) {
  mtune::v1::TrialResult trial;
  trial.set_job_id(job_id);
  trial.set_problem(problem);
  trial.set_target_id(target_id);
  *trial.mutable_candidate() = MakeCandidate(tile_m);
  trial.set_worker_name("host/cpu3");
  mtune::v1::Result& result = *trial.mutable_result();
  result.set_status(status);
  if (status != mtune::v1::RESULT_STATUS_OK) result.set_error("boom");
  mtune::v1::Timing& timing = *result.mutable_timing();
  timing.set_median_s(1.0 / (gflops + 1.0));
  timing.set_p25_s(timing.median_s() * 0.9);
  timing.set_p75_s(timing.median_s() * 1.1);
  timing.set_min_s(timing.median_s() * 0.8);
  timing.set_cv(0.02);
  timing.set_repetitions(50);
  timing.set_warmup(3);
  timing.set_calls_per_sample(4);
  result.set_gflops(gflops);
  result.set_gbps(gflops / 4);
  result.set_roofline_gflops(200);
  result.set_roofline_level("L2");
  result.set_fraction_of_roofline(gflops / 200);
  result.set_compile_s(0.5);
  result.set_verify_s(0.05);
  result.set_max_rel_error(1e-6);
  result.set_total_s(1.5);
  return trial;
}

std::string ScriptFor(int tile_m) {
  return absl::StrCat("transform.named_sequence @__transform_main // tile_m = ", tile_m, "\n");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace mtune::db::testing
