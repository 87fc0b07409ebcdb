#include "strategies/problem.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "strategies/families.h"

namespace mtune::strategies {
namespace {

// Largest accepted dimension: keeps every operand's element count far from
// int64 overflow and every buffer allocatable on one machine.
constexpr int64_t kMaxDim = 1 << 16;
// Largest accepted operand, in elements (4 GiB of f32).
constexpr int64_t kMaxOperandElements = int64_t{1} << 30;
// Largest accepted footprint of all operands together (what one worker allocates).
constexpr int64_t kMaxFootprintBytes = int64_t{16} << 30;

using internal::FamilySpec;
using internal::FindFamily;
using internal::FamilySpecs;

std::string DimNames(const FamilySpec& family) {
  std::vector<std::string> names;
  for (const internal::DimSpec& d : family.dims) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

std::string FamilyNames() {
  std::vector<std::string> names;
  for (const FamilySpec& f : FamilySpecs()) names.push_back(f.info.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

const std::vector<FamilyInfo>& Families() {
  static const auto* infos = [] {
    auto* v = new std::vector<FamilyInfo>;
    for (const FamilySpec& f : FamilySpecs()) v->push_back(f.info);
    return v;
  }();
  return *infos;
}

std::string Problem::Key() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : dims) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrCat(family, ":", absl::StrJoin(parts, ","), ":", element_type);
}

int64_t Problem::Dim(absl::string_view name) const {
  for (const auto& [n, v] : dims)
    if (n == name) return v;
  // Output extents of windowed families, derived from input, window, stride, dilation.
  if (name == "ow" && Dim("w") > 0)
    return internal::WindowOutput(Dim("w"), Dim("kw"), Dim("sw"), Dim("dw"));
  if (name == "oh" && Dim("h") > 0)
    return internal::WindowOutput(Dim("h"), Dim("kh"), Dim("sh"), Dim("dh"));
  // The extents of a 2-D output (a transpose's n x m, a copy's m x n).
  if (name == "out_rows" || name == "out_cols") {
    const std::vector<OperandShape> operands = Operands();
    if (operands.empty() || operands.back().shape.size() != 2) return -1;
    return operands.back().shape[name == "out_rows" ? 0 : 1];
  }
  return -1;
}

int64_t OperandShape::Elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int OperandShape::ElementBytes() const {
  if (element_type == "f64") return 8;
  if (element_type == "bf16") return 2;
  return 4;
}

// A Problem only exists after ParseProblemKey found its family.
static const FamilySpec& SpecOf(const Problem& p) { return *FindFamily(p.family); }

double Problem::Flops() const { return SpecOf(*this).flops(*this); }

std::vector<OperandShape> Problem::Operands() const { return SpecOf(*this).operands(*this); }

bool Problem::Accumulates() const { return SpecOf(*this).accumulates; }

int64_t Problem::TermsPerOutput() const { return SpecOf(*this).terms_per_output(*this); }

std::string Problem::AccumulatorType() const {
  return element_type == "bf16" ? "f32" : element_type;
}

double Problem::CompulsoryBytes() const {
  const std::vector<OperandShape> operands = Operands();
  double bytes = 0;
  for (const OperandShape& o : operands)
    bytes += static_cast<double>(o.Elements()) * o.ElementBytes();
  // The output is written once more than it is counted above when it is also read.
  const OperandShape& out = operands.back();
  if (Accumulates()) bytes += static_cast<double>(out.Elements()) * out.ElementBytes();
  return bytes;
}

double Problem::CompulsoryWrittenBytes() const {
  const OperandShape out = Operands().back();
  return static_cast<double>(out.Elements()) * out.ElementBytes();
}

uint64_t Problem::FootprintBytes() const {
  uint64_t bytes = 0;
  for (const OperandShape& o : Operands())
    bytes += static_cast<uint64_t>(o.Elements()) * o.ElementBytes();
  return bytes;
}

absl::StatusOr<Problem> ParseProblemKey(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad problem key '", key, "': ", why));
  };
  std::vector<absl::string_view> fields = absl::StrSplit(key, ':');
  if (fields.size() != 3)
    return bad("expected FAMILY:DIM=VALUE,...:TYPE, e.g. matmul:m=512,n=512,k=512:f32");
  const FamilySpec* grammar = FindFamily(fields[0]);
  if (grammar == nullptr)
    return bad(absl::StrCat("unknown op family '", fields[0], "' (known: ", FamilyNames(), ")"));

  Problem problem;
  problem.family = std::string(fields[0]);
  std::vector<std::pair<std::string, int64_t>> given;
  for (absl::string_view item : absl::StrSplit(fields[1], ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty())
      return bad(absl::StrCat("dimension '", item, "' is not NAME=VALUE"));
    if (std::none_of(grammar->dims.begin(), grammar->dims.end(),
                     [&](const internal::DimSpec& d) { return d.name == kv[0]; }))
      return bad(absl::StrCat("unknown dimension '", kv[0], "' for ", problem.family,
                              " (expected ", DimNames(*grammar), ")"));
    for (const auto& [n, v] : given)
      if (n == kv[0]) return bad(absl::StrCat("dimension '", n, "' given twice"));
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(kv[1].data(), kv[1].data() + kv[1].size(), value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > kMaxDim))
      return bad(absl::StrCat("dimension ", kv[0], "=", kv[1], " exceeds the limit ", kMaxDim));
    if (ec != std::errc() || ptr != kv[1].data() + kv[1].size())
      return bad(absl::StrCat("dimension ", kv[0], "='", kv[1], "' is not an integer"));
    if (value <= 0)
      return bad(absl::StrCat("dimension ", kv[0], "=", value, " must be positive"));
    given.emplace_back(std::string(kv[0]), value);
  }
  for (const internal::DimSpec& dim : grammar->dims) {
    auto it = std::find_if(given.begin(), given.end(), [&](auto& p) { return p.first == dim.name; });
    if (it != given.end()) {
      problem.dims.emplace_back(dim.name, it->second);
    } else if (dim.default_value > 0) {
      problem.dims.emplace_back(dim.name, dim.default_value);
    } else {
      return bad(absl::StrCat("missing dimension '", dim.name, "'"));
    }
  }
  problem.element_type = std::string(fields[2]);
  if (std::find(grammar->element_types.begin(), grammar->element_types.end(),
                problem.element_type) == grammar->element_types.end())
    return bad(absl::StrCat("element type '", fields[2], "' is not supported for ", problem.family,
                            " (supported: ", absl::StrJoin(grammar->element_types, ", "), ")"));
  if (absl::Status shape = grammar->validate(problem); !shape.ok()) return bad(shape.message());
  // Each dimension is at most 2^16, so a product of up to four stays below 2^64; the
  // check runs in double to stay safe for any rank.
  double total_bytes = 0;
  for (const OperandShape& operand : problem.Operands()) {
    double elements = 1;
    for (int64_t d : operand.shape) elements *= static_cast<double>(d);
    if (elements > static_cast<double>(kMaxOperandElements))
      return bad(absl::StrCat("operand ", operand.name, " exceeds ", kMaxOperandElements,
                              " elements"));
    total_bytes += elements * operand.ElementBytes();
  }
  // A worker allocates every operand (and a reference output) at once.
  if (total_bytes > static_cast<double>(kMaxFootprintBytes))
    return bad(absl::StrCat("the operands need ", total_bytes / (1 << 30),
                            " GiB together, more than the limit of ",
                            kMaxFootprintBytes >> 30, " GiB"));
  return problem;
}

}  // namespace mtune::strategies
