#include "strategies/features.h"

#include <cmath>
#include <functional>

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

std::vector<double> CandidateFeatures(const Problem& problem, const KnobValues& values) {
  std::vector<double> f;
  for (const auto& [name, value] : values) {
    double v = 0;
    // Words (alternatives' labels) become a stable small integer: trees only need
    // to tell them apart. "none" (no split, no tiling) is a factor of 1, so it sits
    // next to the smallest numeric options rather than at an arbitrary code.
    f.push_back(absl::SimpleAtod(value, &v) ? Log2(v)
                : value == "none"           ? 0.0
                                            : static_cast<double>(std::hash<std::string>{}(value) % 1024));
  }
  for (const auto& [name, dim] : problem.dims) f.push_back(Log2(static_cast<double>(dim)));
  // Any tile_<dim>[level] knob against its problem dimension (conv's tile_ow against
  // the output width, reduce's tile_n against n): the trip count, and the work done on
  // the padding of a partial last tile (1 when the tile divides the dimension).
  for (const auto& [name, value] : values) {
    if (name.rfind("tile_", 0) != 0) continue;
    std::string dim = name.substr(5);
    while (!dim.empty() && dim.back() >= '0' && dim.back() <= '9') dim.pop_back();
    const double extent = static_cast<double>(problem.Dim(dim));
    if (extent <= 0) continue;
    // Every candidate must give a row of the same length: a word ("none") is the whole extent.
    double t = 0;
    if (!absl::SimpleAtod(value, &t) || t <= 0) t = extent;
    const double trips = std::ceil(extent / t);
    f.push_back(Log2(trips));
    f.push_back(trips * t / extent);
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
    f.push_back(Log2((m1 * k1 + k1 * n1 + m1 * n1) * eb));
    // Packed B block, reused across the m loop.
    f.push_back(Log2(k1 * n1 * eb));
    // Register tile: operands and accumulator.
    f.push_back(Log2((m2 * k2 + k2 * n2 + m2 * n2) * eb));
    // Arithmetic intensity of the register tile (FLOP per operand byte loaded, the
    // accumulator staying in registers).
    f.push_back(2 * m2 * n2 * k2 / ((m2 * k2 + k2 * n2) * eb));
    // Accumulator vector registers (64-byte vectors).
    f.push_back(m2 * n2 * eb / 64);
    // Cache-tile arithmetic intensity.
    f.push_back(2 * m1 * n1 * k1 / ((m1 * k1 + k1 * n1 + m1 * n1) * eb));
    // Trip counts of the cache-tile loops and of the register-tile loops.
    const double tm = std::ceil(m / m1), tn = std::ceil(n / n1), tk = std::ceil(k / k1);
    f.push_back(Log2(tm * tn * tk));
    f.push_back(Log2(std::min(m1, m) / m2 * std::min(n1, n) / n2 * std::min(k1, k) / k2));
    // Register tiles per cache tile along each dimension (1: the cache tile is one
    // register tile wide, so packed data is consumed in a single sweep).
    f.push_back(Log2(std::min(m1, m) / m2));
    f.push_back(Log2(std::min(n1, n) / n2));
    f.push_back(Log2(std::min(k1, k) / k2));
    // Work done on padding: computed volume over useful volume.
    f.push_back(tm * m1 * tn * n1 * tk * k1 / (m * n * k));
  }
  return f;
}

}  // namespace mtune::strategies
