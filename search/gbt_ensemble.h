// A small ensemble of gradient-boosted regression trees (xgboost C API) whose spread
// stands in for the model's uncertainty in expected-improvement scoring.
#ifndef MTUNE_SEARCH_GBT_ENSEMBLE_H_
#define MTUNE_SEARCH_GBT_ENSEMBLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mtune::search {

struct GbtParams {
  uint32_t models = 4;
  uint32_t trees = 40;
  uint32_t max_depth = 5;
  double learning_rate = 0.3;
  // Row and column subsampling per tree: what makes the members differ.
  double subsample = 0.8;
  // Each member also learns from its own bootstrap resample of the rows (as weights):
  // members then disagree where the data is thin, so the spread means something.
  bool bootstrap = false;
  // xgboost objective: "reg:squarederror" (predictions estimate the labels) or a
  // ranking objective ("rank:pairwise", "rank:ndcg"), which learns the order of the
  // rows only: predictions are then scores whose scale means nothing. All rows are
  // one query group.
  std::string objective = "reg:squarederror";
  uint64_t seed = 0;
};

struct Prediction {
  double mean = 0;
  double stddev = 0;
};

// Trained from scratch on each Fit; single-threaded, so a seed gives the same model.
class GbtEnsemble {
 public:
  explicit GbtEnsemble(GbtParams params) : params_(params) {}
  ~GbtEnsemble();
  GbtEnsemble(const GbtEnsemble&) = delete;
  GbtEnsemble& operator=(const GbtEnsemble&) = delete;

  // `rows` are feature vectors of equal length; Internal with xgboost's message on failure.
  absl::Status Fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& labels);
  // One prediction per row; FailedPrecondition before a successful Fit.
  absl::StatusOr<std::vector<Prediction>> Predict(const std::vector<std::vector<float>>& rows) const;

 private:
  void Free();

  GbtParams params_;
  uint64_t fits_ = 0;
  std::vector<void*> boosters_;
};

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_GBT_ENSEMBLE_H_
