// Shared fixtures for db/ tests: scratch directories and well-formed trials.
#ifndef MTUNE_DB_TEST_UTIL_H_
#define MTUNE_DB_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/mtune.pb.h"

namespace mtune::db::testing {

// A fresh directory, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // Path of `name` inside the directory.
  std::string Path(std::string_view name) const;
  // The directory itself.
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// Problem keys and target ids used across tests.
inline constexpr char kMatmul512[] = "matmul:m=512,n=512,k=512:f32";
inline constexpr char kMatmul256[] = "matmul:m=256,n=256,k=256:f32";
inline constexpr char kConv[] = "conv2d_nhwc_hwcf:n=1,h=56,w=56,c=64,f=64,kh=3,kw=3:f32";
inline constexpr char kSapphireRapids[] = "cpu:x86_64-unknown-linux-gnu:sapphirerapids";
inline constexpr char kZen4[] = "cpu:x86_64-unknown-linux-gnu:znver4";

// A CPU target with id `id` and cpu name taken from the id's last field.
mtune::v1::Target MakeTarget(const std::string& id);

// A calibration whose peak is `peak_gflops`, with one DRAM bandwidth level.
mtune::v1::Calibration MakeCalibration(double peak_gflops);

// A candidate of template "matmul_pad_hoist" whose knob tile_m is `tile_m`;
// distinct tile_m values give distinct hashes (the hash is tile_m in hex).
mtune::v1::Candidate MakeCandidate(int tile_m);

// A trial of MakeCandidate(tile_m) with the given outcome. Failed trials still
// carry `gflops`, so tests can check that failures never count as best.
mtune::v1::TrialResult MakeTrial(int64_t job_id, const std::string& problem,
                                 const std::string& target_id, int tile_m,
                                 mtune::v1::ResultStatus status, double gflops);

// The script stored with MakeCandidate(tile_m).
std::string ScriptFor(int tile_m);

// The whole contents of the file at `path` (empty when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace mtune::db::testing

#endif  // MTUNE_DB_TEST_UTIL_H_
