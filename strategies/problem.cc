#include "strategies/problem.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mtune::strategies {
namespace {

// Largest accepted dimension: keeps every operand's element count far from
// int64 overflow and every buffer allocatable on one machine.
constexpr int64_t kMaxDim = 1 << 16;
// Largest accepted operand, in elements (4 GiB of f32).
constexpr int64_t kMaxOperandElements = int64_t{1} << 30;

struct FamilyGrammar {
  FamilyInfo info;
  std::vector<std::string> dims;
  std::vector<std::string> element_types;
};

const std::vector<FamilyGrammar>& Grammars() {
  static const auto* grammars = new std::vector<FamilyGrammar>{
      {{"matmul", "matmul:m=<M>,n=<N>,k=<K>:f32   C[M,N] += A[M,K] * B[K,N]",
        "matmul:m=512,n=512,k=512:f32", "matmul_packed"},
       {"m", "n", "k"},
       {"f32"}},
  };
  return *grammars;
}

const FamilyGrammar* FindGrammar(absl::string_view family) {
  for (const auto& g : Grammars())
    if (g.info.name == family) return &g;
  return nullptr;
}

std::string FamilyNames() {
  std::vector<std::string> names;
  for (const auto& g : Grammars()) names.push_back(g.info.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

const std::vector<FamilyInfo>& Families() {
  static const auto* infos = [] {
    auto* v = new std::vector<FamilyInfo>;
    for (const auto& g : Grammars()) v->push_back(g.info);
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
  return -1;
}

int Problem::ElementBytes() const { return 4; }

double Problem::Flops() const {
  return 2.0 * static_cast<double>(Dim("m")) * Dim("n") * Dim("k");
}

double Problem::CompulsoryBytes() const {
  const double m = Dim("m"), n = Dim("n"), k = Dim("k");
  return ElementBytes() * (m * k + k * n + 2.0 * m * n);
}

uint64_t Problem::FootprintBytes() const {
  const uint64_t m = Dim("m"), n = Dim("n"), k = Dim("k");
  return ElementBytes() * (m * k + k * n + m * n);
}

absl::StatusOr<Problem> ParseProblemKey(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad problem key '", key, "': ", why));
  };
  std::vector<absl::string_view> fields = absl::StrSplit(key, ':');
  if (fields.size() != 3)
    return bad("expected FAMILY:DIM=VALUE,...:TYPE, e.g. matmul:m=512,n=512,k=512:f32");
  const FamilyGrammar* grammar = FindGrammar(fields[0]);
  if (grammar == nullptr)
    return bad(absl::StrCat("unknown op family '", fields[0], "' (known: ", FamilyNames(), ")"));

  Problem problem;
  problem.family = std::string(fields[0]);
  std::vector<std::pair<std::string, int64_t>> given;
  for (absl::string_view item : absl::StrSplit(fields[1], ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty())
      return bad(absl::StrCat("dimension '", item, "' is not NAME=VALUE"));
    if (std::find(grammar->dims.begin(), grammar->dims.end(), kv[0]) == grammar->dims.end())
      return bad(absl::StrCat("unknown dimension '", kv[0], "' for ", problem.family,
                              " (expected ", absl::StrJoin(grammar->dims, ", "), ")"));
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
  for (const std::string& name : grammar->dims) {
    auto it = std::find_if(given.begin(), given.end(), [&](auto& p) { return p.first == name; });
    if (it == given.end()) return bad(absl::StrCat("missing dimension '", name, "'"));
    problem.dims.emplace_back(name, it->second);
  }
  problem.element_type = std::string(fields[2]);
  if (std::find(grammar->element_types.begin(), grammar->element_types.end(),
                problem.element_type) == grammar->element_types.end())
    return bad(absl::StrCat("element type '", fields[2], "' is not supported for ", problem.family,
                            " (supported: ", absl::StrJoin(grammar->element_types, ", "), ")"));
  const int64_t m = problem.Dim("m"), n = problem.Dim("n"), k = problem.Dim("k");
  if (m * k > kMaxOperandElements || k * n > kMaxOperandElements || m * n > kMaxOperandElements)
    return bad(absl::StrCat("an operand exceeds ", kMaxOperandElements, " elements"));
  return problem;
}

}  // namespace mtune::strategies
