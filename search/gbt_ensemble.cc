#include "search/gbt_ensemble.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "search/sampler.h"

namespace mtune::search {
namespace {

absl::Status Check(int rc, const char* what) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("xgboost ", what, ": ", XGBGetLastError()));
}

// Owns a DMatrix built from row-major floats.
class Matrix {
 public:
  absl::Status Build(const std::vector<std::vector<float>>& rows) {
    const size_t cols = rows.empty() ? 0 : rows[0].size();
    std::vector<float> flat;
    flat.reserve(rows.size() * cols);
    for (const auto& row : rows) {
      if (row.size() != cols) return absl::InvalidArgumentError("feature rows differ in length");
      flat.insert(flat.end(), row.begin(), row.end());
    }
    return Check(XGDMatrixCreateFromMat(flat.data(), rows.size(), cols,
                                        std::numeric_limits<float>::quiet_NaN(), &handle_),
                 "DMatrix");
  }
  ~Matrix() {
    if (handle_) XGDMatrixFree(handle_);
  }
  DMatrixHandle handle() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

}  // namespace

GbtEnsemble::~GbtEnsemble() { Free(); }

void GbtEnsemble::Free() {
  for (void* b : boosters_) XGBoosterFree(b);
  boosters_.clear();
}

absl::Status GbtEnsemble::Fit(const std::vector<std::vector<float>>& rows,
                              const std::vector<float>& labels) {
  Free();
  if (rows.empty() || rows.size() != labels.size())
    return absl::InvalidArgumentError("Fit needs one label per row and at least one row");
  Matrix train;
  if (absl::Status s = train.Build(rows); !s.ok()) return s;
  if (absl::Status s = Check(XGDMatrixSetFloatInfo(train.handle(), "label", labels.data(), labels.size()),
                             "labels");
      !s.ok())
    return s;
  if (params_.objective.rfind("rank:", 0) == 0) {
    const unsigned group = static_cast<unsigned>(rows.size());
    if (absl::Status s = Check(XGDMatrixSetUIntInfo(train.handle(), "group", &group, 1), "group"); !s.ok())
      return s;
  }
  ++fits_;
  std::mt19937_64 rng(params_.seed * 7919 + fits_);
  for (uint32_t m = 0; m < params_.models; ++m) {
    if (params_.bootstrap && params_.models > 1) {
      std::vector<float> weights(rows.size(), 0.0f);
      for (size_t i = 0; i < rows.size(); ++i) weights[UniformBelow(rng, rows.size())] += 1.0f;
      if (absl::Status s = Check(XGDMatrixSetFloatInfo(train.handle(), "weight", weights.data(), weights.size()),
                                 "weights");
          !s.ok())
        return s;
    }
    BoosterHandle booster = nullptr;
    DMatrixHandle dmats[] = {train.handle()};
    if (absl::Status s = Check(XGBoosterCreate(dmats, 1, &booster), "booster"); !s.ok()) return s;
    boosters_.push_back(booster);
    // One thread: the tuner shares the machine with pinned measurements, and a
    // single-threaded build is reproducible for a seed.
    const std::string seed = std::to_string((params_.seed * 1000003 + fits_ * 131 + m) % 2147483647);
    const std::pair<const char*, std::string> settings[] = {
        {"objective", params_.objective},
        {"nthread", "1"},
        {"verbosity", "0"},
        {"tree_method", "exact"},
        {"max_depth", std::to_string(params_.max_depth)},
        {"eta", std::to_string(params_.learning_rate)},
        {"subsample", std::to_string(params_.models > 1 ? params_.subsample : 1.0)},
        {"colsample_bytree", std::to_string(params_.models > 1 ? params_.subsample : 1.0)},
        {"min_child_weight", "1"},
        {"seed", seed},
    };
    for (const auto& [name, value] : settings)
      if (absl::Status s = Check(XGBoosterSetParam(booster, name, value.c_str()), name); !s.ok())
        return s;
    for (uint32_t t = 0; t < params_.trees; ++t)
      if (absl::Status s = Check(XGBoosterUpdateOneIter(booster, static_cast<int>(t), train.handle()),
                                 "training");
          !s.ok())
        return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Prediction>> GbtEnsemble::Predict(
    const std::vector<std::vector<float>>& rows) const {
  if (boosters_.empty()) return absl::FailedPreconditionError("the model is not trained");
  std::vector<Prediction> out(rows.size());
  if (rows.empty()) return out;
  Matrix data;
  if (absl::Status s = data.Build(rows); !s.ok()) return s;
  std::vector<double> sum(rows.size()), sum_sq(rows.size());
  for (void* booster : boosters_) {
    bst_ulong len = 0;
    const float* result = nullptr;
    if (absl::Status s = Check(XGBoosterPredict(booster, data.handle(), 0, 0, 0, &len, &result), "predict");
        !s.ok())
      return s;
    if (len != rows.size()) return absl::InternalError("xgboost returned the wrong number of predictions");
    for (size_t i = 0; i < len; ++i) {
      sum[i] += result[i];
      sum_sq[i] += double(result[i]) * result[i];
    }
  }
  const double n = static_cast<double>(boosters_.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    out[i].mean = sum[i] / n;
    out[i].stddev = std::sqrt(std::max(0.0, sum_sq[i] / n - out[i].mean * out[i].mean));
  }
  return out;
}

}  // namespace mtune::search
