// mtune-bench-families' figures, ratios (paired by round), printed table, goals
// and JSON, from the ProblemReports the driver filled (families_report.h).
#include "bench/families_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/family_suite.h"
#include "nlohmann/json.hpp"
#include "worker/calibration.h"

namespace mtune::bench::families {
namespace {

// What one call of a row does, in the row's unit: compulsory bytes (GB/s rows) or FLOPs.
double WorkPerCall(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) ? r.problem.CompulsoryBytes() : r.problem.Flops();
}

double Figure(const ProblemReport& r, const std::string& impl) {
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.median_s <= 0) return 0;
  return WorkPerCall(r) / it->second.median_s / 1e9;
}

// `impl`'s figure on each operand set: the median of the rounds that ran on it.
std::vector<double> FigureByOperandSet(const ProblemReport& r, const std::string& impl, int sets) {
  std::vector<double> figures;
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.median_s <= 0) return figures;
  const double work = WorkPerCall(r);
  for (int set = 0; set < sets; ++set) {
    std::vector<double> seconds;
    for (const auto& [round, s] : it->second.by_round_s)
      if (round % sets == set) seconds.push_back(s);
    figures.push_back(seconds.empty() ? 0 : work / Median(seconds) / 1e9);
  }
  return figures;
}

// A GB/s row's roofline from its median yardsticks: the stream at its footprint (or the
// level's calibrated bandwidth), under the FMA peak timed beside it where the family
// has a compute roof (family_suite.h RoofGbps).
double RoofGbps(const ProblemReport& r) {
  const double fma_seconds = r.peak_gflops > 0 ? r.problem.Flops() / r.peak_gflops / 1e9 : 0;
  return bench::RoofGbps(r.problem, r.roof.level_gbps, fma_seconds);
}

double FractionOfRoofline(const ProblemReport& r, double figure) {
  if (figure <= 0) return 0;
  if (BandwidthBound(r.problem.family)) {
    const double roof = RoofGbps(r);
    return roof > 0 ? figure / roof : 0;
  }
  return r.roof.bound_gflops > 0 ? figure / r.roof.bound_gflops : 0;
}

// Whether a GB/s row's median FMA loop bounds it before its bandwidth does.
bool ComputeBoundRow(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) && RoofGbps(r) < r.roof.level_gbps;
}

std::string Unit(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) ? "GB/s" : "GFLOP/s";
}

const std::map<int, double>& RoundsOf(const ProblemReport& r, const std::string& impl) {
  static const std::map<int, double> kNone;
  auto it = r.impls.find(impl);
  return it == r.impls.end() || it->second.median_s <= 0 ? kNone : it->second.by_round_s;
}

// mtune's speed over `impl`'s, paired by round.
double MtuneOver(const ProblemReport& r, const std::string& impl) {
  return PairedSpeedup(RoundsOf(r, "mtune"), RoundsOf(r, impl));
}

// `impl`'s GFLOP/s over the FMA loop's in the same rounds (compute-bound rows). The
// loop did the row's FLOPs (twice as many f32 ones for f64 rows), so the time ratio
// is the fraction.
double FractionOfPeak(const ProblemReport& r, const std::string& impl) {
  return PairedSpeedup(RoundsOf(r, impl), r.peak_by_round_s);
}

// mtune's GB/s of compulsory bytes over the fastest copy's GB/s at the row's
// footprint, paired by round.
double MtuneOverCopy(const ProblemReport& r) {
  std::vector<double> ratios;
  for (const auto& [round, mtune_s] : RoundsOf(r, "mtune")) {
    auto copy = r.copy_gbps_by_round.find(round);
    if (copy != r.copy_gbps_by_round.end() && mtune_s > 0)
      ratios.push_back(r.problem.CompulsoryBytes() / mtune_s / 1e9 / copy->second);
  }
  return ratios.empty() ? 0.0 : Median(ratios);
}

// mtune's GB/s over the stream bandwidth of the row's reads and writes at its
// footprint (worker/roofline.h StreamGbps) from the copy and read loops of the same
// round, paired by round, or over the bytes the FMA loop of that round allows where
// that is lower (depthwise: family_suite.h RoofGbps). The copy's alone where the read
// loop was not timed; equal to MtuneOverCopy for a row that reads what it writes
// (copy, transpose).
double MtuneOverStream(const ProblemReport& r) {
  if (r.read_gbps_by_round.empty()) return MtuneOverCopy(r);
  std::vector<double> ratios;
  for (const auto& [round, mtune_s] : RoundsOf(r, "mtune")) {
    auto copy = r.copy_gbps_by_round.find(round);
    auto reading = r.read_gbps_by_round.find(round);
    if (copy == r.copy_gbps_by_round.end() || reading == r.read_gbps_by_round.end() || !(mtune_s > 0))
      continue;
    const double stream_gbps = worker::StreamGbps(copy->second, reading->second, r.problem);
    auto fma = r.peak_by_round_s.find(round);
    const double roof_gbps =
        bench::RoofGbps(r.problem, stream_gbps, fma == r.peak_by_round_s.end() ? 0 : fma->second);
    ratios.push_back(r.problem.CompulsoryBytes() / mtune_s / 1e9 / roof_gbps);
  }
  return ratios.empty() ? 0.0 : Median(ratios);
}

// mtune's %roof: paired by round where the roof is a loop timed beside the row (the
// copy and read at a GB/s row's footprint; the FMA loop for a compute-bound GFLOP/s row), as
// the goals are; otherwise its figure over the roofline bound. Unpaired, a matmul 512^3
// row once showed 77% in this column while its goal line said 0.84.
double MtuneFractionOfRoofline(const ProblemReport& r) {
  if (BandwidthBound(r.problem.family)) {
    if (r.copy_gbps_at_footprint > 0) return MtuneOverStream(r);
  } else if (r.peak_gflops > 0 && r.roof.bound_gflops >= r.peak_gflops) {
    return FractionOfPeak(r, "mtune");
  }
  return FractionOfRoofline(r, Figure(r, "mtune"));
}

// --- output -------------------------------------------------------------------

std::string Cell(double value, const char* format = "%.2f") {
  return value > 0 ? absl::StrFormat(format, value) : std::string("-");
}

// A figure, or why there is none ("no template", "WRONG", "n/a").
std::string FigureCell(const ProblemReport& r, const std::string& impl) {
  const double figure = Figure(r, impl);
  if (figure > 0) return Cell(figure);
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.status.empty()) return "-";
  return it->second.status;
}

constexpr const char* kRowFormat = "%-26s %-40s %-7s %11s %11s %11s %7s %7s %6s %5s %8s %8s %8s\n";

void PrintRow(const ProblemReport& r) {
  const double fraction = MtuneFractionOfRoofline(r);
  std::printf(kRowFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(), Unit(r).c_str(),
              FigureCell(r, "mtune").c_str(), FigureCell(r, "onednn").c_str(),
              FigureCell(r, "eigen").c_str(), Cell(MtuneOver(r, "onednn")).c_str(),
              Cell(MtuneOver(r, "eigen")).c_str(),
              Cell(100 * fraction, "%.1f%%").c_str(), ComputeBoundRow(r) ? "FMA" : r.roof.level.c_str(),
              (Cell(r.peak_gflops) + (r.peak_loop != "fma_f32" && r.peak_gflops > 0 ? "*" : "")).c_str(),
              Cell(r.copy_gbps_at_footprint).c_str(),
              Cell(r.read_gbps_at_footprint).c_str());
}

void PrintGeomean(const std::string& family, const std::vector<const ProblemReport*>& rows) {
  std::vector<double> mt, dnn, eig, mt_dnn, mt_eig, fraction;
  for (const ProblemReport* r : rows) {
    const double m = Figure(*r, "mtune"), d = Figure(*r, "onednn"), e = Figure(*r, "eigen");
    mt.push_back(m);
    dnn.push_back(d);
    eig.push_back(e);
    if (const double ratio = MtuneOver(*r, "onednn"); ratio > 0) mt_dnn.push_back(ratio);
    if (const double ratio = MtuneOver(*r, "eigen"); ratio > 0) mt_eig.push_back(ratio);
    fraction.push_back(MtuneFractionOfRoofline(*r));
  }
  std::printf(kRowFormat, family.c_str(), absl::StrCat("geomean of ", rows.size()).c_str(), Unit(*rows.front()).c_str(),
              Cell(Geomean(mt)).c_str(), Cell(Geomean(dnn)).c_str(), Cell(Geomean(eig)).c_str(),
              Cell(Geomean(mt_dnn)).c_str(), Cell(Geomean(mt_eig)).c_str(),
              Cell(100 * Geomean(fraction), "%.1f%%").c_str(), "", "", "", "");
}

std::vector<GoalRow> GoalRows(const std::vector<ProblemReport>& reports) {
  std::vector<GoalRow> rows;
  for (const ProblemReport& r : reports) {
    // The figures are f32: a bf16 row (against oneDNN's AMX kernels, or
    // against an f32 FMA peak its instructions cannot reach) is no evidence for them.
    if (r.problem.element_type != "f32") continue;
    GoalRow row;
    row.problem = r.problem;
    row.mtune = Figure(r, "mtune");
    row.onednn = Figure(r, "onednn");
    row.fraction_of_roofline = MtuneFractionOfRoofline(r);
    row.copy_gbps_at_footprint = r.copy_gbps_at_footprint;
    row.mtune_over_onednn = MtuneOver(r, "onednn");
    row.fraction_of_peak = FractionOfPeak(r, "mtune");
    row.onednn_fraction_of_peak = FractionOfPeak(r, "onednn");
    row.mtune_over_copy = MtuneOverCopy(r);
    rows.push_back(row);
  }
  return rows;
}

// The --variant kernels, each against mtune's kernel and oneDNN in the same rounds.
void PrintVariants(const Flags& flags, const std::vector<ProblemReport>& reports) {
  if (flags.variants.empty()) return;
  std::printf("\n--variant kernels (the default candidate with these knobs), timed in the same "
              "rounds; var/mt and var/dnn paired by round:\n");
  for (size_t v = 0; v < flags.variants.size(); ++v)
    std::printf("  %s: %s\n", VariantName(v).c_str(), flags.variants[v].c_str());
  constexpr const char* kVariantFormat = "%-26s %-40s %-9s %11s %7s %7s\n";
  std::printf(kVariantFormat, "family", "shape", "variant", "figure", "var/mt", "var/dnn");
  for (const ProblemReport& r : reports) {
    for (size_t v = 0; v < r.variants.size(); ++v) {
      const std::string name = VariantName(v);
      std::printf(kVariantFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(),
                  name.c_str(), FigureCell(r, name).c_str(),
                  Cell(PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "mtune"))).c_str(),
                  Cell(PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "onednn"))).c_str());
    }
  }
}

// The hand-written loops, where a row has one, against mtune's kernel in the same rounds.
void PrintHandWritten(const std::vector<ProblemReport>& reports) {
  bool any = false;
  for (const ProblemReport& r : reports) any |= Figure(r, kHandWritten) > 0;
  if (!any) return;
  std::printf("\nhand-written AVX-512 loops of mtune's best loop nests (bench/handwritten_kernels.h), "
              "timed in the same rounds; mt/hand paired by round; their %%roof is mtune's over "
              "mt/hand:\n");
  constexpr const char* kFormat = "%-26s %-40s %11s %11s %7s %6s\n";
  std::printf(kFormat, "family", "shape", "mtune", "handwritten", "mt/hand", "%roof");
  for (const ProblemReport& r : reports) {
    if (Figure(r, kHandWritten) <= 0) continue;
    const double mt_over_hand = MtuneOver(r, kHandWritten);
    std::printf(kFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(),
                FigureCell(r, "mtune").c_str(), FigureCell(r, kHandWritten).c_str(),
                Cell(mt_over_hand).c_str(),
                Cell(mt_over_hand > 0 ? 100 * MtuneFractionOfRoofline(r) / mt_over_hand : 0,
                     "%.1f%%").c_str());
  }
}

}  // namespace

std::string VariantName(size_t index) { return absl::StrCat("variant", index + 1); }

std::vector<std::string> ImplementationNames(const ProblemReport& r) {
  std::vector<std::string> names(std::begin(kImplementations), std::end(kImplementations));
  for (size_t i = 0; i < r.variants.size(); ++i) names.push_back(VariantName(i));
  return names;
}

void PrintReport(const Flags& flags, const std::vector<ProblemReport>& reports,
                 const mtune::v1::Calibration& calibration, const std::string& cpu_name) {
  // The element types of the rows (the suite is f32; --problems may name others).
  std::set<std::string> types;
  for (const ProblemReport& r : reports) types.insert(r.problem.element_type);
  std::printf("\nmtune vs oneDNN and Eigen, %s, one thread on one pinned core (cpu %d, %s)\n",
              absl::StrJoin(types, ", ").c_str(), flags.cpu, cpu_name.c_str());
  std::printf("peak: timed beside each GFLOP/s and depthwise row (column peak): the FMA loop, or for bf16 rows "
              "the fastest bf16 loop of the CPU, AMX tile multiplies or else AVX512-BF16 dot "
              "products (marked *); start-up calibration (best of 5 short runs) FMA %.2f GFLOP/s",
              calibration.peak_gflops_f32());
  if (const std::string bf16 = worker::Bf16PeakText(calibration); !bf16.empty()) std::printf(", %s", bf16.c_str());
  std::printf("; copy bandwidth");
  for (const auto& level : calibration.bandwidth())
    std::printf(" %s %.1f GB/s", level.level().c_str(), level.gbps());
  std::printf("\nmtune kernel: %s\n",
              !flags.db.empty() ? absl::StrCat("best in ", flags.db).c_str()
              : flags.trials > 0
                  ? absl::StrFormat("tuned here, %d %s trials per problem", flags.trials, flags.search).c_str()
                  : flags.knobs.empty() ? "template default (--trials 0)"
                                       : "template default with --knob overrides (--trials 0)");
  std::printf("each figure: median over %d interleaved rounds of the median of %d timed "
              "repetitions (>= %.2f s per round), round r on operand set r mod %d; GB/s = "
              "compulsory bytes; mt/dnn, mt/eig and the goals' ratios: median over rounds of the "
              "ratio within each round\n\n",
              flags.rounds, kRepetitionsPerRound, flags.min_time_s, flags.operand_sets);
  std::printf(kRowFormat, "family", "shape", "unit", "mtune", "oneDNN", "Eigen", "mt/dnn", "mt/eig",
              "%roof", "level", "peak", "copy@fp", "read@fp");
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ProblemReport*>> by_family;
  for (const ProblemReport& r : reports) {
    if (!by_family.contains(r.problem.family)) order.push_back(r.problem.family);
    by_family[r.problem.family].push_back(&r);
  }
  for (const std::string& family : order) {
    for (const ProblemReport* r : by_family[family]) PrintRow(*r);
    PrintGeomean(family, by_family[family]);
  }
  std::printf("\n%%roof: mtune over the peak (GFLOP/s rows, peak) or, for GB/s rows, "
              "over the bandwidth of the row's own reads and writes at its footprint, in the "
              "level it fits: reads at the speed of a loop that only reads (read@fp), writes "
              "at what a copy (copy@fp) spends beyond its reads (an output accumulated into "
              "only its write-back; worker/roofline.h StreamGbps); all timed in the row's "
              "rounds and paired by round. A depthwise row's FLOPs are multiply-adds: its "
              "roof is the lower of that bandwidth and the bytes the FMA loop timed beside it "
              "(peak) allows, level FMA where that binds. A copy or transpose reads what it "
              "writes, so its yardstick is the copy; copy@fp is the transpose goal's yardstick "
              "too. copy@fp is each round's faster copy, with ordinary or with streaming stores "
              "(a kernel may use either)\n");

  if (flags.operand_sets > 1) {
    std::printf("\nmtune (and --variant kernels) by operand set (round r runs on set r mod %d; "
                "each set is a copy of the operands at addresses of its own):\n", flags.operand_sets);
    for (const ProblemReport& r : reports) {
      for (const std::string& impl : ImplementationNames(r)) {
        if (impl != "mtune" && !impl.starts_with("variant")) continue;
        const std::vector<double> figures = FigureByOperandSet(r, impl, flags.operand_sets);
        if (figures.empty()) continue;
        std::vector<std::string> cells;
        for (double figure : figures) cells.push_back(Cell(figure));
        const auto [low, high] = std::minmax_element(figures.begin(), figures.end());
        std::printf("  %-26s %-40s %-9s %-7s %s%s\n", r.problem.family.c_str(),
                    ShortShape(r.problem).c_str(), impl.c_str(), Unit(r).c_str(),
                    absl::StrJoin(cells, " ").c_str(),
                    *low > 0 ? absl::StrFormat("  (max/min %.2f)", *high / *low).c_str() : "");
      }
    }
  }

  PrintVariants(flags, reports);
  PrintHandWritten(reports);

  std::printf("\ngoals (issue 3, figures to reach; f32 rows only):\n");
  for (const GoalLine& goal : EvaluateGoals(GoalRows(reports)))
    std::printf("  %-68s %-8s %s\n", goal.goal.c_str(), goal.verdict.c_str(), goal.detail.c_str());

  std::printf("\nverification (max scaled error vs mtune's reference) and how each computes:\n");
  for (const ProblemReport& r : reports) {
    for (const std::string& impl : ImplementationNames(r)) {
      const ImplState& s = r.impls.at(impl);
      if (impl == kHandWritten && s.status == "n/a") continue;  // three families only
      std::printf("  %-60s %-8s %-13s %s\n", r.problem.Key().c_str(), impl.c_str(), s.status.c_str(),
                  s.status == "ok" ? absl::StrFormat("err %.2g; %s", s.scaled_error, s.detail).c_str()
                                   : s.detail.c_str());
    }
  }
}

absl::Status WriteJson(const Flags& flags, const std::vector<ProblemReport>& reports,
                       const mtune::v1::Calibration& calibration, const std::string& cpu_name) {
  nlohmann::json root;
  root["cpu"] = flags.cpu;
  root["cpu_name"] = cpu_name;
  // Best of 5 short runs at start-up; compute-bound rows divide by their own
  // peak_gflops, timed in their rounds.
  root["calibrated_peak_gflops_f32"] = calibration.peak_gflops_f32();
  if (calibration.peak_gflops_amx_bf16() > 0)
    root["calibrated_peak_gflops_amx_bf16"] = calibration.peak_gflops_amx_bf16();
  if (calibration.peak_gflops_bf16_dot() > 0)
    root["calibrated_peak_gflops_bf16_dot"] = calibration.peak_gflops_bf16_dot();
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : calibration.bandwidth())
    levels.push_back({{"level", level.level()}, {"gbps", level.gbps()},
                      {"capacity_bytes", level.capacity_bytes()}});
  root["bandwidth"] = levels;
  root["rounds"] = flags.rounds;
  root["operand_sets"] = flags.operand_sets;
  root["repetitions_per_round"] = kRepetitionsPerRound;
  root["min_time_s"] = flags.min_time_s;
  root["mtune_source"] = !flags.db.empty() ? flags.db : flags.trials > 0 ? "tuned" : "template_default";
  root["trials"] = flags.trials;
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemReport& r : reports) {
    nlohmann::json row;
    row["problem"] = r.problem.Key();
    row["family"] = r.problem.family;
    row["shape"] = ShortShape(r.problem);
    row["unit"] = Unit(r);
    // The table's %roof and the goals' figure: paired by round with the yardsticks
    // timed beside the row. An implementation's own fraction_of_roofline (below) is
    // its median figure over the roofline bound of start-up calibration figures.
    if (const double fraction = MtuneFractionOfRoofline(r); fraction > 0)
      row["mtune_fraction_of_roofline"] = fraction;
    row["roofline_level"] = r.roof.level;
    row["roofline_level_gbps"] = r.roof.level_gbps;
    row["roofline_gflops"] = r.roof.bound_gflops;
    if (BandwidthBound(r.problem.family)) {
      row["roofline_gbps"] = RoofGbps(r);
      row["compute_bound"] = ComputeBoundRow(r);
    }
    if (r.copy_gbps_at_footprint > 0) {
      row["copy_gbps_at_footprint"] = r.copy_gbps_at_footprint;
      row["copy_loop_wins"] = r.copy_loop_wins;
      // Kept from session 38's JSON: rounds whose fastest copy had streaming stores.
      int streaming_rounds = 0;
      for (const auto& [name, wins] : r.copy_loop_wins)
        if (name.starts_with("copy_streaming")) streaming_rounds += wins;
      row["copy_streaming_rounds"] = streaming_rounds;
    }
    if (r.read_gbps_at_footprint > 0) {
      row["read_gbps_at_footprint"] = r.read_gbps_at_footprint;
      row["read_loop_wins"] = r.read_loop_wins;
    }
    if (r.peak_gflops > 0) {
      row["peak_gflops"] = r.peak_gflops;
      row["peak_loop"] = r.peak_loop;
    }
    nlohmann::json impls = nlohmann::json::object();
    for (const auto& [name, s] : r.impls) {
      const double figure = Figure(r, name);
      nlohmann::json impl = {{"status", s.status}, {"detail", s.detail},
                             {"verified", s.status == "ok"}, {"scaled_error", s.scaled_error}};
      if (figure > 0) {
        impl["median_s"] = s.median_s;
        impl["figure"] = figure;
        impl["round_medians_s"] = InRoundOrder(s.by_round_s);
        impl["figure_by_operand_set"] = FigureByOperandSet(r, name, flags.operand_sets);
        impl["fraction_of_roofline"] = FractionOfRoofline(r, figure);
        // Paired by round with the FMA loop, as the peak goals read it.
        if (const double peak = FractionOfPeak(r, name); peak > 0) impl["fraction_of_peak"] = peak;
      }
      impls[name] = impl;
    }
    row["implementations"] = impls;
    // Ratios paired by round, as in the printed table.
    for (const char* other : {"onednn", "eigen", kHandWritten})
      if (const double ratio = MtuneOver(r, other); ratio > 0) row[std::string("mtune_over_") + other] = ratio;
    if (r.best) row["best"] = {{"knobs", r.best->knobs}, {"origin", r.best->origin},
                               {"tuned_gflops", r.best->tuned_gflops}};
    for (size_t v = 0; v < r.variants.size(); ++v) {
      if (!r.variants[v]) continue;
      const std::string name = VariantName(v);
      nlohmann::json variant = {{"knobs", r.variants[v]->knobs}, {"flag", flags.variants[v]}};
      if (const double ratio = PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "mtune")); ratio > 0)
        variant["over_mtune"] = ratio;
      if (const double ratio = PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "onednn")); ratio > 0)
        variant["over_onednn"] = ratio;
      row["variants"][name] = variant;
    }
    if (r.tuned)
      row["tuning"] = {{"tried", r.tuning.tried}, {"ok", r.tuning.ok},
                       {"failures", r.tuning.failures}, {"candidate_s", r.tuning.candidate_s}};
    problems.push_back(row);
  }
  root["problems"] = problems;
  nlohmann::json goals = nlohmann::json::array();
  for (const GoalLine& goal : EvaluateGoals(GoalRows(reports)))
    goals.push_back({{"goal", goal.goal}, {"verdict", goal.verdict}, {"detail", goal.detail}});
  root["goals"] = goals;
  std::ofstream out(flags.json);
  out << root.dump(2) << "\n";
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", flags.json));
  return absl::OkStatus();
}

}  // namespace mtune::bench::families
