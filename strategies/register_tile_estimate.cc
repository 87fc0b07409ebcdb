#include "strategies/register_tile_estimate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "strategies/features.h"

namespace mtune::strategies {
namespace {

// The knobs of a template's register tile: `rows` broadcast operands times `cols`
// elements of vector operand.
struct RegisterTileKnobs {
  std::string_view template_name, rows, cols;
};
constexpr RegisterTileKnobs kRegisterTiles[] = {
    {"conv_2d_decomposed", "tile_ow", "tile_f"}, {"conv_1d_tiled", "tile_ow", "tile_f"},
    {"matmul_packed", "tile_m2", "tile_n2"},     {"matmul_2level", "tile_m2", "tile_n2"},
    {"matmul_bf16_vnni", "tile_m2", "tile_n2"},
};

// FMAs one step needs in flight to hide the FMA latency: 4 cycles x 2 FMA ports.
constexpr double kFmasInFlight = 8;

std::optional<double> Positive(const KnobValues& values, std::string_view name) {
  auto it = values.find(std::string(name));
  double v = 0;
  if (it == values.end() || !absl::SimpleAtod(it->second, &v) || v <= 0) return std::nullopt;
  return v;
}

const RegisterTileKnobs* FindRegisterTile(std::string_view template_name) {
  const auto* tile = std::find_if(std::begin(kRegisterTiles), std::end(kRegisterTiles),
                                  [&](const RegisterTileKnobs& t) { return t.template_name == template_name; });
  return tile == std::end(kRegisterTiles) ? nullptr : tile;
}

}  // namespace

bool HasRegisterTileEstimate(std::string_view template_name) { return FindRegisterTile(template_name) != nullptr; }

std::optional<double> RegisterTileEstimate(std::string_view template_name, const Problem& problem,
                                           const KnobValues& values, const VectorRegisters& registers) {
  const RegisterTileKnobs* tile = FindRegisterTile(template_name);
  if (tile == nullptr) return std::nullopt;
  const std::optional<double> rows = Positive(values, tile->rows), cols = Positive(values, tile->cols);
  if (!rows || !cols || registers.bytes <= 0) return std::nullopt;
  // Accumulators are of the arithmetic type (f32 for bf16 inputs).
  const double lanes = static_cast<double>(registers.bytes) / (problem.AccumulatorType() == "f64" ? 8 : 4);
  const double vectors = std::ceil(*cols / lanes);
  const double fmas = *rows * vectors, loads = *rows + vectors;
  double estimate = fmas / std::max({fmas, loads, kFmasInFlight});
  estimate *= *cols / (vectors * lanes);
  for (const auto& [name, value] : values) {
    const std::string dim = TiledDimension(name);
    if (dim.empty()) continue;
    const double extent = static_cast<double>(problem.Dim(dim));
    double t = 0;
    if (extent <= 0 || !absl::SimpleAtod(value, &t) || t <= 0) continue;
    estimate *= extent / (std::ceil(extent / t) * t);
  }
  return estimate;
}

}  // namespace mtune::strategies
