#include "bench/family_suite.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace mtune::bench {
namespace {

bool IsMatmulFamily(const std::string& family) {
  return family == "matmul" || family == "matmul_transpose_a" || family == "matmul_transpose_b";
}
bool IsConvFamily(const std::string& family) {
  return family == "conv_1d_nwc_wcf" || family == "conv_2d_nhwc_hwcf";
}

double GeomeanOf(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return values.empty() ? 0 : std::exp(log_sum / values.size());
}

// Keys of `rows` (matching `pick`) that have no mtune figure, for the detail text.
std::string Missing(const std::vector<const GoalRow*>& rows) {
  std::vector<std::string> keys;
  for (const GoalRow* row : rows) keys.push_back(row->problem.family + " " + ShortShape(row->problem));
  if (keys.size() > 3) return absl::StrCat(keys.size(), " rows");
  return absl::StrJoin(keys, "; ");
}

// A goal's figure with two decimals, or three where two would print the threshold
// itself: a geomean of 0.996 against 1.0 reads "0.996 ... NOT met", not "1.00".
std::string GoalFigure(double value, double threshold) {
  const bool ambiguous = absl::StrFormat("%.2f", value) == absl::StrFormat("%.2f", threshold) &&
                         value != threshold;
  return absl::StrFormat(ambiguous ? "%.3f" : "%.2f", value);
}

// The worst `onednn` figure over the picked rows, as "; oneDNN on the same rows:
// worst F (family shape)", or "" where oneDNN has none. A peak goal's line shows it so
// that a reader sees whether the goal is within reach of a library on this host.
std::string OneDnnFigure(const std::vector<GoalRow>& rows, bool (*pick)(const GoalRow&),
                         double (*onednn)(const GoalRow&)) {
  const GoalRow* worst = nullptr;
  for (const GoalRow& row : rows)
    if (pick(row) && onednn(row) > 0 && (!worst || onednn(row) < onednn(*worst))) worst = &row;
  if (!worst) return "";
  return absl::StrFormat("; oneDNN on the same rows: worst %.2f (%s %s)", onednn(*worst),
                         worst->problem.family, ShortShape(worst->problem));
}

// A goal "every selected row's value >= threshold" (min) or "their geomean >=
// threshold"; rows without the figures count as not met. With `onednn`, the line also
// gives oneDNN's worst figure of the same kind on the same rows (OneDnnFigure).
GoalLine Evaluate(std::string goal, const std::vector<GoalRow>& rows,
                  bool (*pick)(const GoalRow&), double (*value)(const GoalRow&), double threshold,
                  bool geomean, double (*onednn)(const GoalRow&) = nullptr) {
  GoalLine line{std::move(goal), "n/a", "no problem of the suite is about it"};
  std::vector<double> values;
  std::vector<const GoalRow*> missing;
  const GoalRow* worst = nullptr;
  int selected = 0;
  for (const GoalRow& row : rows) {
    if (!pick(row)) continue;
    ++selected;
    const double v = value(row);
    if (!(v > 0)) {
      missing.push_back(&row);
      continue;
    }
    values.push_back(v);
    if (!worst || v < value(*worst)) worst = &row;
  }
  if (selected == 0) return line;
  std::string figure;
  bool met = false;
  if (!values.empty()) {
    if (geomean) {
      const double g = GeomeanOf(values);
      met = g >= threshold;
      figure = absl::StrFormat("geomean %s over %d rows", GoalFigure(g, threshold), values.size());
      // The range shows when one row carries the geomean (e.g. a baseline that ran
      // far below its usual speed on one shape).
      if (values.size() > 1) {
        const GoalRow* best = worst;
        for (const GoalRow& row : rows)
          if (pick(row) && value(row) > value(*best)) best = &row;
        figure = absl::StrCat(figure, absl::StrFormat(", from %.2f (%s %s) to %.2f (%s %s)", value(*worst),
                                                      worst->problem.family, ShortShape(worst->problem),
                                                      value(*best), best->problem.family,
                                                      ShortShape(best->problem)));
      }
    } else {
      met = value(*worst) >= threshold;
      figure = absl::StrFormat("worst %s (%s %s)", GoalFigure(value(*worst), threshold),
                               worst->problem.family,
                               ShortShape(worst->problem));
    }
    if (onednn) figure += OneDnnFigure(rows, pick, onednn);
  }
  if (!missing.empty()) {
    met = false;
    figure = absl::StrCat(figure, figure.empty() ? "" : "; ", "no mtune figure for ",
                          Missing(missing));
  }
  line.verdict = met ? "met" : "NOT met";
  line.detail = figure;
  return line;
}

}  // namespace

std::vector<std::string> DefaultSuiteKeys() {
  return {
      // Matmul: 12 shapes over the three layouts, odd sizes that divide no tile.
      "matmul:m=256,n=256,k=256:f32",
      "matmul:m=512,n=512,k=512:f32",
      "matmul:m=1024,n=1024,k=1024:f32",
      "matmul:m=127,n=255,k=513:f32",
      "matmul:m=513,n=257,k=129:f32",
      "matmul:m=64,n=512,k=1024:f32",
      "matmul_transpose_a:m=512,n=512,k=512:f32",
      "matmul_transpose_a:m=127,n=255,k=513:f32",
      "matmul_transpose_a:m=256,n=1024,k=128:f32",
      "matmul_transpose_b:m=512,n=512,k=512:f32",
      "matmul_transpose_b:m=127,n=255,k=513:f32",
      "matmul_transpose_b:m=1024,n=256,k=128:f32",
      // Convolutions with C >= 32: stride 1, strided, dilated; and many channels
      // (ResNet-like 14x14x256 and 7x7x512 layers, a 1-D one with 256).
      "conv_1d_nwc_wcf:n=1,w=1026,c=64,kw=3,f=64,sw=1,dw=1:f32",
      "conv_1d_nwc_wcf:n=1,w=1025,c=64,kw=3,f=64,sw=2,dw=1:f32",
      "conv_1d_nwc_wcf:n=1,w=130,c=256,kw=3,f=256,sw=1,dw=1:f32",
      "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32",
      "conv_2d_nhwc_hwcf:n=1,h=57,w=57,c=64,kh=3,kw=3,f=64,sh=2,sw=2,dh=1,dw=1:f32",
      "conv_2d_nhwc_hwcf:n=1,h=36,w=36,c=32,kh=3,kw=3,f=32,sh=1,sw=1,dh=2,dw=2:f32",
      "conv_2d_nhwc_hwcf:n=1,h=16,w=16,c=256,kh=3,kw=3,f=256,sh=1,sw=1,dh=1,dw=1:f32",
      "conv_2d_nhwc_hwcf:n=1,h=9,w=9,c=512,kh=3,kw=3,f=512,sh=1,sw=1,dh=1,dw=1:f32",
      // Depthwise: two footprints within L2 (~1 and ~1.6 MiB), one beyond it (~6.5 MiB).
      "depthwise_conv_1d_nwc_wc:n=1,w=2050,c=64,kw=3,sw=1,dw=1:f32",
      "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32",
      "depthwise_conv_2d_nhwc_hwc:n=1,h=114,w=114,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32",
      // Data movement: 256x512 (0.5 MiB in, fits L2 with its output) and 2048x4096
      // (32 MiB in: far beyond L2; see bench/README.md for the level this VM reports).
      // 32 MiB is also the whole L3 of the znver4 host, where a loop that only reads
      // still hits the L3 for much of a pass (44 GB/s there, 25 at 64 MiB) and a column
      // sum's 8 interleaved row streams less so; the 4096x4096 column sum (64 MiB) is
      // its DRAM row.
      "reduce_rows_2d:m=256,n=512:f32",
      "reduce_rows_2d:m=2048,n=4096:f32",
      "reduce_cols_2d:m=256,n=512:f32",
      "reduce_cols_2d:m=2048,n=4096:f32",
      "reduce_cols_2d:m=4096,n=4096:f32",
      "copy_2d:m=256,n=512:f32",
      "copy_2d:m=2048,n=4096:f32",
      "transpose_2d:m=256,n=512:f32",
      "transpose_2d:m=2048,n=4096:f32",
  };
}

absl::StatusOr<std::vector<strategies::Problem>> SelectProblems(const std::string& problems,
                                                                const std::string& families) {
  std::vector<std::string> keys;
  if (problems.empty()) {
    keys = DefaultSuiteKeys();
  } else {
    for (absl::string_view item : absl::StrSplit(problems, absl::ByAnyChar(", \n\t;"),
                                                 absl::SkipWhitespace())) {
      // An item starts a new key when the text before its first ':' is a family name
      // (no '='): "matmul:m=512" does, "n=512" and "k=512:f32" continue the last key.
      const size_t colon = item.find(':');
      const bool starts_key = colon != absl::string_view::npos &&
                              item.substr(0, colon).find('=') == absl::string_view::npos;
      if (starts_key || keys.empty()) {
        keys.emplace_back(item);
      } else {
        absl::StrAppend(&keys.back(), ",", item);
      }
    }
  }
  std::set<std::string> wanted_families;
  for (absl::string_view f : absl::StrSplit(families, ',', absl::SkipWhitespace())) {
    const std::string name(absl::StripAsciiWhitespace(f));
    bool known = false;
    for (const strategies::FamilyInfo& info : strategies::Families()) known |= info.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const strategies::FamilyInfo& info : strategies::Families()) names.push_back(info.name);
      return absl::InvalidArgumentError(absl::StrCat("--families: unknown family '", name,
                                                     "' (known: ", absl::StrJoin(names, ", "), ")"));
    }
    wanted_families.insert(name);
  }
  std::vector<strategies::Problem> selected;
  std::set<std::string> seen;
  for (const std::string& key : keys) {
    auto problem = strategies::ParseProblemKey(key);
    if (!problem.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--problems: '", key, "': ", problem.status().message()));
    const bool bf16_matmul = problem->element_type == "bf16" &&
                             (problem->family == "matmul" || problem->family == "matmul_transpose_a" ||
                              problem->family == "matmul_transpose_b");
    if (problem->element_type != "f32" && !bf16_matmul)
      return absl::InvalidArgumentError(absl::StrCat(
          "--problems: '", key, "': the baselines are f32 only, and bf16 for the matmul layouts "
          "(oneDNN's matmul; the issue's figures are f32)"));
    if (!wanted_families.empty() && !wanted_families.contains(problem->family)) continue;
    if (!seen.insert(problem->Key()).second) continue;
    selected.push_back(*problem);
  }
  if (selected.empty())
    return absl::InvalidArgumentError("no problem left to compare (check --problems / --families)");
  return selected;
}

bool BandwidthBound(const std::string& family) {
  return family == "depthwise_conv_1d_nwc_wc" || family == "depthwise_conv_2d_nhwc_hwc" ||
         family == "reduce_rows_2d" || family == "reduce_cols_2d" || family == "copy_2d" ||
         family == "transpose_2d";
}

bool HasFmaComputeRoof(const std::string& family) {
  return family == "depthwise_conv_1d_nwc_wc" || family == "depthwise_conv_2d_nhwc_hwc";
}

double RoofGbps(const strategies::Problem& problem, double stream_gbps, double fma_seconds) {
  if (!HasFmaComputeRoof(problem.family) || fma_seconds <= 0 || problem.Flops() <= 0)
    return stream_gbps;
  return std::min(stream_gbps, problem.CompulsoryBytes() / fma_seconds / 1e9);
}

std::string ShortShape(const strategies::Problem& problem) {
  const bool plain = IsMatmulFamily(problem.family) || problem.family == "batch_matmul" ||
                     problem.family == "copy_2d" || problem.family == "transpose_2d" ||
                     problem.family == "reduce_rows_2d" || problem.family == "reduce_cols_2d";
  std::vector<std::string> parts;
  for (const auto& [name, value] : problem.dims) {
    if (plain) {
      parts.push_back(absl::StrCat(value));
      continue;
    }
    const bool unit_by_default = name == "n" || name == "sh" || name == "sw" || name == "dh" ||
                                 name == "dw";
    if (unit_by_default && value == 1) continue;
    parts.push_back(absl::StrCat(name, "=", value));
  }
  return absl::StrJoin(parts, plain ? "x" : " ");
}

std::vector<GoalLine> EvaluateGoals(const std::vector<GoalRow>& rows) {
  std::vector<GoalLine> lines;
  lines.push_back(Evaluate(
      "matmul (3 layouts): geomean mtune/oneDNN >= 1.0", rows,
      [](const GoalRow& r) { return IsMatmulFamily(r.problem.family); },
      [](const GoalRow& r) { return r.mtune_over_onednn; },
      1.0, /*geomean=*/true));
  lines.push_back(Evaluate(
      "matmul 512^3 and 1024^3: >= 0.85 of the measured FMA peak", rows,
      [](const GoalRow& r) {
        const int64_t m = r.problem.Dim("m");
        return r.problem.family == "matmul" && (m == 512 || m == 1024) &&
               r.problem.Dim("n") == m && r.problem.Dim("k") == m;
      },
      [](const GoalRow& r) { return r.fraction_of_peak; }, 0.85, false,
      [](const GoalRow& r) { return r.onednn_fraction_of_peak; }));
  lines.push_back(Evaluate(
      "conv 1-D/2-D NHWC: geomean mtune/oneDNN >= 0.9", rows,
      [](const GoalRow& r) { return IsConvFamily(r.problem.family); },
      [](const GoalRow& r) { return r.mtune_over_onednn; },
      0.9, true));
  lines.push_back(Evaluate(
      "conv stride 1: >= 0.8 of the measured FMA peak", rows,
      [](const GoalRow& r) {
        return IsConvFamily(r.problem.family) && r.problem.Dim("sw") == 1 &&
               (r.problem.family == "conv_1d_nwc_wcf" || r.problem.Dim("sh") == 1);
      },
      [](const GoalRow& r) { return r.fraction_of_peak; }, 0.8, false,
      [](const GoalRow& r) { return r.onednn_fraction_of_peak; }));
  lines.push_back(Evaluate(
      "depthwise, reductions, copy: >= 0.8 of the roofline of their level", rows,
      [](const GoalRow& r) {
        return BandwidthBound(r.problem.family) && r.problem.family != "transpose_2d";
      },
      [](const GoalRow& r) { return r.fraction_of_roofline; }, 0.8, false));
  lines.push_back(Evaluate(
      "transpose: >= 0.6x copy bandwidth at the same footprint", rows,
      [](const GoalRow& r) { return r.problem.family == "transpose_2d"; },
      [](const GoalRow& r) { return r.mtune_over_copy; },
      0.6, false));
  return lines;
}

}  // namespace mtune::bench
