#include "strategies/features.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string_view>

#include "absl/strings/numbers.h"

namespace mtune::strategies {
namespace {

double Log2(double x) { return x > 0 ? std::log2(x) : -1.0; }

// Value of a numeric knob, or 0 when absent or not a number.
double Number(const KnobValues& values, const char* name) {
  auto it = values.find(name);
  double v = 0;
  return it != values.end() && absl::SimpleAtod(it->second, &v) ? v : 0.0;
}

}  // namespace

std::string TiledDimension(const std::string& knob) {
  if (knob.rfind("tile_", 0) != 0) return "";
  std::string dim = knob.substr(5);
  while (!dim.empty() && dim.back() >= '0' && dim.back() <= '9') dim.pop_back();
  return dim;
}

std::vector<NamedFeature> NamedCandidateFeatures(const Problem& problem, const KnobValues& values) {
  std::vector<NamedFeature> f;
  auto add = [&f](std::string name, double value) { f.push_back({std::move(name), value}); };
  for (const auto& [name, value] : values) {
    double v = 0;
    // Words (alternatives' labels) become a stable small integer: trees only need
    // to tell them apart. "none" (no split, no tiling) is a factor of 1, so it sits
    // next to the smallest numeric options rather than at an arbitrary code.
    add("knob:" + name, absl::SimpleAtod(value, &v) ? Log2(v)
                        : value == "none"           ? 0.0
                                                    : static_cast<double>(std::hash<std::string>{}(value) % 1024));
  }
  for (const auto& [name, dim] : problem.dims) add("dim:" + name, Log2(static_cast<double>(dim)));
  // Any tile_<dim>[level] knob against its problem dimension (conv's tile_ow against
  // the output width, reduce's tile_n against n): the trip count, and the work done on
  // the padding of a partial last tile (1 when the tile divides the dimension).
  for (const auto& [name, value] : values) {
    const std::string dim = TiledDimension(name);
    if (dim.empty()) continue;
    const double extent = static_cast<double>(problem.Dim(dim));
    if (extent <= 0) continue;
    // Every candidate must give a row of the same length: a word ("none") is the whole extent.
    double t = 0;
    if (!absl::SimpleAtod(value, &t) || t <= 0) t = extent;
    const double trips = std::ceil(extent / t);
    add("trips:" + name, Log2(trips));
    add("padding:" + name, trips * t / extent);
  }

  const double m = problem.Dim("m"), n = problem.Dim("n"), k = problem.Dim("k");
  // A template without a cache tile along a dimension covers it whole.
  auto level1 = [&](const char* name, double whole) {
    const double v = Number(values, name);
    return v > 0 ? v : whole;
  };
  const double m1 = level1("tile_m1", m), n1 = level1("tile_n1", n), k1 = level1("tile_k1", k);
  const double m2 = Number(values, "tile_m2"), n2 = Number(values, "tile_n2"), k2 = Number(values, "tile_k2");
  const auto operands = problem.Operands();
  if (m > 0 && n > 0 && k > 0 && m2 > 0 && n2 > 0 && k2 > 0 && !operands.empty()) {
    // Input element bytes (bf16 inputs accumulate in f32, but the tiles move inputs).
    const double eb = operands.front().ElementBytes();
    // Cache tile: the A, B and C blocks one (m1, n1, k1) iteration touches.
    add("cache_tile_bytes", Log2((m1 * k1 + k1 * n1 + m1 * n1) * eb));
    // Packed B block, reused across the m loop.
    add("packed_b_bytes", Log2(k1 * n1 * eb));
    // Register tile: operands and accumulator.
    add("register_tile_bytes", Log2((m2 * k2 + k2 * n2 + m2 * n2) * eb));
    // Arithmetic intensity of the register tile (FLOP per operand byte loaded, the
    // accumulator staying in registers).
    add("register_tile_intensity", 2 * m2 * n2 * k2 / ((m2 * k2 + k2 * n2) * eb));
    // Accumulator vector registers (64-byte vectors).
    add("accumulator_registers", m2 * n2 * eb / 64);
    // Cache-tile arithmetic intensity.
    add("cache_tile_intensity", 2 * m1 * n1 * k1 / ((m1 * k1 + k1 * n1 + m1 * n1) * eb));
    // Trip counts of the cache-tile loops and of the register-tile loops.
    const double tm = std::ceil(m / m1), tn = std::ceil(n / n1), tk = std::ceil(k / k1);
    add("cache_tile_trips", Log2(tm * tn * tk));
    add("register_tiles_per_cache_tile", Log2(std::min(m1, m) / m2 * std::min(n1, n) / n2 * std::min(k1, k) / k2));
    // Register tiles per cache tile along each dimension (1: the cache tile is one
    // register tile wide, so packed data is consumed in a single sweep).
    add("register_tiles_m", Log2(std::min(m1, m) / m2));
    add("register_tiles_n", Log2(std::min(n1, n) / n2));
    add("register_tiles_k", Log2(std::min(k1, k) / k2));
    // Work done on padding: computed volume over useful volume.
    add("padded_work", tm * m1 * tn * n1 * tk * k1 / (m * n * k));
  }
  return f;
}

std::vector<double> CandidateFeatures(const Problem& problem, const KnobValues& values) {
  std::vector<double> row;
  for (const NamedFeature& feature : NamedCandidateFeatures(problem, values)) row.push_back(feature.value);
  return row;
}

std::vector<std::string> FeatureNames(const std::vector<NamedFeature>& features) {
  std::vector<std::string> names;
  names.reserve(features.size());
  for (const NamedFeature& feature : features) names.push_back(feature.name);
  return names;
}

std::vector<double> FeaturesAs(const std::vector<NamedFeature>& features, const std::vector<std::string>& names) {
  std::map<std::string_view, double> by_name;
  for (const NamedFeature& feature : features) by_name.emplace(feature.name, feature.value);
  std::vector<double> row;
  row.reserve(names.size());
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    row.push_back(it != by_name.end() ? it->second : std::numeric_limits<double>::quiet_NaN());
  }
  return row;
}

}  // namespace mtune::strategies
