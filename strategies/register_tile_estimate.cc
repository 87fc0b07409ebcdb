#include "strategies/register_tile_estimate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "strategies/features.h"

namespace mtune::strategies {
namespace {

// How a tile's accumulators are fed in one reduction step.
enum class TileFeed {
  // A broadcast of each of `rows` operands times `cols` elements of a vector operand:
  // rows + cols / lanes loads (conv, matmul).
  kBroadcast,
  // Elementwise, a row of `rows` output positions by `cols` channels, one filter tap
  // per step: the taps of one filter row share a sliding input row, so a filter row
  // of kw taps loads ((rows - 1) x sw + (kw - 1) x dw + 1) input vectors and kw
  // filter vectors per channel vector (depthwise convolutions).
  kSlidingWindow,
};

// The accumulators a template's register constraint allows (its mtune.rule): the
// estimate rates a tile beyond it as spilling, which ground-truth tables measured
// on an earlier version of a template still hold.
enum class RegisterBudget {
  // (rows + 1) x vectors fit all registers but one (matmuls, conv_1d_tiled).
  // matmul_2level states no such constraint and gets matmul_packed's: its 16 x 2
  // zmm tiles (32 accumulators, 3 beyond it: a step of 32 FMAs takes 41 slots, 0.78)
  // measured at most 0.78 of the best on bench/data/matmul_256x256x256_f32.csv,
  // where 8 x 2 zmm tiles hold the best.
  kAllButOneLessAVectorRow,
  // (rows + 1) x vectors and the broadcast operand's registers fit all registers
  // (conv_2d_decomposed).
  kAllLessAVectorRowAndTheBroadcast,
  // rows x vectors take at most half the registers; the rest hold filter taps and
  // inputs (depthwise convolutions).
  kHalf,
};

// How a step's bounds (its FMAs, its loads, the FMAs in flight that hide the FMA
// latency) combine into its issue slots.
enum class StepBound {
  // The largest: a step reaches whichever bound it meets first.
  kLargest,
  // A smooth maximum, (f^4 + l^4 + 8^4)^(1/4): where bounds lie near each other none
  // is reached. Read off bench/data/matmul_256x384x512_f32.csv (Intel), whose
  // estimate's top set then held tiles of every shape: the medians there of m2 x n2 =
  // 4 x 2, 6 x 2, 8 x 2 and 6 x 4 zmm tiles measure 0.82, 0.90, 0.94 and 0.97 of the
  // best, this says 0.81, 0.92, 0.95 and 0.99, the largest 1.0 for all four. The
  // matmul templates only: on the conv tables of AVX2 hosts and the depthwise ones
  // of the Intel host it rated their measured best out of the top set.
  kSmooth,
};

// A matmul template's knob whose options "yes" and "only" copy A into register-tile
// layout once per cache tile of n (`n_tile`), in rows of the reduction's register
// step (`k_step`) elements; `k_tile` is the cache tile of k.
struct APackingKnobs {
  std::string_view knob = "", n_tile = "", k_tile = "", k_step = "";
};

// The knobs of a template's register tile: `rows` x `cols` accumulators, `cols` in
// vector lanes; the cache tile of the reduction (`reduction_tile` of the problem
// dimension `reduction`) outside the register tile's loops, at the end of which the
// accumulators go through memory ("": the template has none, or not outside them in
// every loop order); and the packing of A, if the template has one.
struct RegisterTileKnobs {
  std::string_view template_name, rows, cols;
  TileFeed feed;
  RegisterBudget budget;
  std::string_view reduction_tile = "", reduction = "";
  APackingKnobs a_packing = {};
  StepBound step_bound = StepBound::kLargest;
};
constexpr RegisterTileKnobs kRegisterTiles[] = {
    {"conv_2d_decomposed", "tile_ow", "tile_f", TileFeed::kBroadcast,
     RegisterBudget::kAllLessAVectorRowAndTheBroadcast},
    {"conv_1d_tiled", "tile_ow", "tile_f", TileFeed::kBroadcast, RegisterBudget::kAllButOneLessAVectorRow},
    {"matmul_packed", "tile_m2", "tile_n2", TileFeed::kBroadcast, RegisterBudget::kAllButOneLessAVectorRow, "tile_k1",
     "k", {"pack_a", "tile_n1", "tile_k1", "tile_k2"}, StepBound::kSmooth},
    {"matmul_2level", "tile_m2", "tile_n2", TileFeed::kBroadcast, RegisterBudget::kAllButOneLessAVectorRow, "tile_k1",
     "k", {}, StepBound::kSmooth},
    {"matmul_bf16_vnni", "tile_m2", "tile_n2", TileFeed::kBroadcast, RegisterBudget::kAllButOneLessAVectorRow,
     "tile_k1", "k", {}, StepBound::kSmooth},
    {"depthwise_2d_decomposed", "tile_ow", "tile_c", TileFeed::kSlidingWindow, RegisterBudget::kHalf},
    {"depthwise_1d_tiled", "tile_ow", "tile_c", TileFeed::kSlidingWindow, RegisterBudget::kHalf},
};

// FMAs one step needs in flight to hide the FMA latency: 4 cycles x 2 FMA ports.
constexpr double kFmasInFlight = 8;
constexpr double kFmaPorts = 2;
// The accumulators' trip through memory at the end of a reduction tile: a load (2 a
// cycle) and a store (1 a cycle) of each.
constexpr double kRoundTripCyclesPerAccumulator = 1.0 / 2 + 1.0 / 1;
// Stores a cycle (of up to a vector each): what bounds a copy from cache.
constexpr double kStorePorts = 2;

// Issue slots of a step of `fmas` FMAs and `loads` loads (see StepBound).
double StepSlots(StepBound bound, double fmas, double loads) {
  if (bound == StepBound::kLargest) return std::max({fmas, loads, kFmasInFlight});
  constexpr double kPower = 4;
  return std::pow(std::pow(fmas, kPower) + std::pow(loads, kPower) + std::pow(kFmasInFlight, kPower), 1 / kPower);
}

const RegisterTileKnobs* FindRegisterTile(std::string_view template_name) {
  const auto* tile = std::find_if(std::begin(kRegisterTiles), std::end(kRegisterTiles),
                                  [&](const RegisterTileKnobs& t) { return t.template_name == template_name; });
  return tile == std::end(kRegisterTiles) ? nullptr : tile;
}

// Loads per reduction step of a rows x `vectors` tile.
double LoadsPerStep(const RegisterTileKnobs& tile, const Problem& problem, double rows, double vectors) {
  if (tile.feed == TileFeed::kBroadcast) return rows + vectors;
  // A window dimension the key leaves out is 1 (no stride, no dilation; kw = 1 is a
  // pointwise filter).
  auto at_least_one = [&](const char* dim) { return std::max<double>(1, problem.Dim(dim)); };
  const double kw = at_least_one("kw"), sw = at_least_one("sw"), dw = at_least_one("dw");
  const double inputs = (rows - 1) * sw + (kw - 1) * dw + 1;
  return (inputs + kw) * vectors / kw;
}

// Accumulators of a tile `vectors` wide that its template keeps in registers.
double AccumulatorBudget(const RegisterTileKnobs& tile, const VectorRegisters& registers, double vectors) {
  const double count = static_cast<double>(registers.count);
  switch (tile.budget) {
    case RegisterBudget::kAllButOneLessAVectorRow:
      return count - 1 - vectors;
    case RegisterBudget::kAllLessAVectorRowAndTheBroadcast:
      return count - vectors - static_cast<double>(registers.BroadcastRegisters());
    case RegisterBudget::kHalf:
      return count / 2;
  }
  return count;
}

// Cycles the packing copies of A take per cycle of the register tiles' FMA steps (0
// where the template has no such copy or the candidate does not make it). A's m x k
// elements are copied once per cache tile of n, each row of k_step elements as one
// store (k_step = 1: one store per element), at kStorePorts stores a cycle; the
// (m / rows) x (n / cols) register tiles take k steps of `step_cycles` each.
// Where k is padded to a multiple of its cache tile, the level-1 pad copies A's slice
// for every pack_a option: on both 127x255x513 tables pack_a = yes measured 1.0-1.3x
// pack_a = no there (tile_k1 = 128, 520) and 0.89-0.95x where k was whole (tile_k1 =
// 513), so the estimate charges nothing for it there. On the 512^3 and 256x384x512
// tables the k_step = 1 copies cost what this says (0.5 cycles an element, pack_a =
// yes against no, paired medians by tile_n1), the k_step = 8 ones 2-4x more: the
// copy's reads, not its stores, bound those, which this leaves out.
double APackingShare(const APackingKnobs& packing, const Problem& problem, const KnobValues& values, double rows,
                     double cols, double step_cycles, double lanes) {
  if (packing.knob.empty()) return 0;
  const auto option = values.find(std::string(packing.knob));
  if (option == values.end() || (option->second != "yes" && option->second != "only")) return 0;
  const std::optional<double> n1 = PositiveKnob(values, packing.n_tile), k1 = PositiveKnob(values, packing.k_tile);
  const double n = static_cast<double>(problem.Dim("n")), k = static_cast<double>(problem.Dim("k"));
  if (!n1 || !k1 || n <= 0 || k <= 0 || std::fmod(k, *k1) != 0) return 0;
  const double elements_per_store = std::min(PositiveKnob(values, packing.k_step).value_or(1), lanes);
  const double cycles_per_element = 1 / (kStorePorts * elements_per_store);
  return cycles_per_element * std::ceil(n / *n1) * rows * cols / (n * step_cycles);
}

}  // namespace

bool HasRegisterTileEstimate(std::string_view template_name) { return FindRegisterTile(template_name) != nullptr; }

std::optional<double> RegisterTileEstimate(std::string_view template_name, const Problem& problem,
                                           const KnobValues& values, const VectorRegisters& registers) {
  const RegisterTileKnobs* tile = FindRegisterTile(template_name);
  if (tile == nullptr) return std::nullopt;
  const std::optional<double> rows = PositiveKnob(values, tile->rows), cols = PositiveKnob(values, tile->cols);
  if (!rows || !cols || registers.bytes <= 0) return std::nullopt;
  // Accumulators are of the arithmetic type (f32 for bf16 inputs).
  const double lanes = static_cast<double>(registers.bytes) / (problem.AccumulatorType() == "f64" ? 8 : 4);
  const double vectors = std::ceil(*cols / lanes);
  const double fmas = *rows * vectors, loads = LoadsPerStep(*tile, problem, *rows, vectors);
  // Accumulators beyond the budget spill: each goes through memory every step.
  const double spilled = std::max(0.0, fmas - AccumulatorBudget(*tile, registers, vectors));
  const double step_slots =
      StepSlots(tile->step_bound, fmas, loads) + spilled * kRoundTripCyclesPerAccumulator * kFmaPorts;
  double estimate = fmas / step_slots;
  // The reduction's steps, cut into tiles of k1, take the accumulators through memory
  // once per tile.
  const double steps = static_cast<double>(tile->reduction.empty() ? 0 : problem.Dim(std::string(tile->reduction)));
  if (const std::optional<double> k1 = PositiveKnob(values, tile->reduction_tile); steps > 0 && k1) {
    const double step_cycles = step_slots / kFmaPorts;
    const double trip_cycles = std::ceil(steps / *k1) * fmas * kRoundTripCyclesPerAccumulator;
    estimate *= steps * step_cycles / (steps * step_cycles + trip_cycles);
  }
  estimate /= 1 + APackingShare(tile->a_packing, problem, values, *rows, *cols, step_slots / kFmaPorts, lanes);
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
