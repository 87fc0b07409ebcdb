#include "strategies/option_forms.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace mtune::strategies {
namespace {

// Largest magnitude of an option-form operand: far above any dimension (2^16),
// small enough that expanding divisors(X) stays instant.
constexpr int64_t kMaxOptionOperand = int64_t{1} << 31;

// Forms nested deeper than this are refused (templates nest two deep:
// divisors(roundup(n, 16))).
constexpr int kMaxNesting = 4;

absl::StatusOr<std::vector<int64_t>> ExpandOptionTerm(absl::string_view form, const Problem& problem,
                                                      absl::string_view knob);

// `text` cut at its top-level commas (those outside parentheses), and how deep its
// parentheses nest.
struct TopLevelSplit {
  std::vector<absl::string_view> parts;
  int deepest = 0;
};

// nullopt when the parentheses of `text` do not balance.
std::optional<TopLevelSplit> SplitTopLevel(absl::string_view text) {
  TopLevelSplit split;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      split.parts.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '(') {
      split.deepest = std::max(split.deepest, ++depth);
    } else if (text[i] == ')') {
      if (--depth < 0) return std::nullopt;
    }
  }
  if (depth != 0) return std::nullopt;
  return split;
}

// An operand: an integer, a dimension of the problem, or a form of one value
// ("divisors(roundup(n, 16))": the divisors of n rounded up to a multiple of 16,
// the tiles of a dimension a template pads to 16).
absl::StatusOr<int64_t> ResolveOperand(absl::string_view arg, const Problem& problem,
                                       absl::string_view knob) {
  arg = absl::StripAsciiWhitespace(arg);
  if (arg.find('(') != absl::string_view::npos) {
    auto values = ExpandOptionTerm(arg, problem, knob);
    if (!values.ok()) return values.status();
    if (values->size() != 1)
      return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': option operand ", arg,
                                                     " is not one value (it gives ", values->size(), ")"));
    return values->front();
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
  if (ec == std::errc() && ptr == arg.data() + arg.size()) {
    if (value > kMaxOptionOperand || value < -kMaxOptionOperand)
      return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': option operand ", arg,
                                                     " exceeds the limit ", kMaxOptionOperand));
    return value;
  }
  if (ec == std::errc::result_out_of_range)
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': option operand ", arg,
                                                   " exceeds the limit ", kMaxOptionOperand));
  if (int64_t dim = problem.Dim(arg); dim > 0) return dim;
  return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': option operand '", arg,
                                                 "' is neither an integer nor a dimension of ",
                                                 problem.family));
}

constexpr char kKnownForms[] =
    "N, pow2(LO, HI), divisors(X[, MAX]), roundup(X, Q), rounddown(X, Q), min(X, Y); an "
    "operand may itself be a form of one value";

// Expands one term of an option form ("64", "pow2(16, m)", "divisors(k)",
// "roundup(k, 16)") to integers.
absl::StatusOr<std::vector<int64_t>> ExpandOptionTerm(absl::string_view form, const Problem& problem,
                                                      absl::string_view knob) {
  form = absl::StripAsciiWhitespace(form);
  if (form.find('(') == absl::string_view::npos) {
    auto value = ResolveOperand(form, problem, knob);
    if (!value.ok()) return value.status();
    return std::vector<int64_t>{*value};
  }
  auto open = form.find('('), close = form.rfind(')');
  if (open == absl::string_view::npos || close != form.size() - 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "knob '", knob, "': options \"", form,
        "\" is not an array nor a list of ", kKnownForms));
  absl::string_view fn = absl::StripAsciiWhitespace(form.substr(0, open));
  std::optional<TopLevelSplit> split = SplitTopLevel(form.substr(open + 1, close - open - 1));
  if (!split)
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", knob, "': unbalanced parentheses in options \"", form, "\""));
  const std::vector<absl::string_view>& args = split->parts;
  std::vector<int64_t> values;
  if (fn == "pow2" && args.size() == 2) {
    auto lo = ResolveOperand(args[0], problem, knob);
    if (!lo.ok()) return lo.status();
    auto hi = ResolveOperand(args[1], problem, knob);
    if (!hi.ok()) return hi.status();
    if (*lo <= 0)
      return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': pow2 needs LO > 0"));
    // Doubling stops before it could overflow (a bound near INT64_MAX once did).
    const int64_t limit = std::max(*hi, *lo);
    for (int64_t p = 1; p <= limit; p *= 2) {
      if (p >= *lo) values.push_back(p);
      if (p > limit / 2) break;
    }
  } else if (fn == "divisors" && (args.size() == 1 || args.size() == 2)) {
    auto x = ResolveOperand(args[0], problem, knob);
    if (!x.ok()) return x.status();
    int64_t max = *x;
    if (args.size() == 2) {
      auto limit = ResolveOperand(args[1], problem, knob);
      if (!limit.ok()) return limit.status();
      max = std::min(max, *limit);
    }
    // Divisors come in pairs (d, x/d) with d <= sqrt(x): O(sqrt(x)) steps.
    std::vector<int64_t> large;
    for (int64_t d = 1; d * d <= *x; ++d) {
      if (*x % d != 0) continue;
      if (d <= max) values.push_back(d);
      if (d != *x / d && *x / d <= max) large.push_back(*x / d);
    }
    values.insert(values.end(), large.rbegin(), large.rend());
  } else if ((fn == "roundup" || fn == "rounddown") && args.size() == 2) {
    // X rounded up to a multiple of Q: a tile that covers a whole odd dimension with
    // little padding (k = 129 -> 144 with Q = 16). Rounded down: the extent of a
    // dimension's whole tiles of Q, where the partial last tile is split off (ow = 56
    // -> 54 with Q = 6).
    auto x = ResolveOperand(args[0], problem, knob);
    if (!x.ok()) return x.status();
    auto q = ResolveOperand(args[1], problem, knob);
    if (!q.ok()) return q.status();
    if (*x <= 0 || *q <= 0)
      return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': ", fn, " needs X, Q > 0"));
    values.push_back(fn == "roundup" ? (*x + *q - 1) / *q * *q : *x / *q * *q);
  } else if (fn == "min" && args.size() == 2) {
    // The smaller of two: a tile that is the whole of a dimension narrower than
    // the usual tile (min(ow, 8): 5 for ow = 5, else 8).
    auto x = ResolveOperand(args[0], problem, knob);
    if (!x.ok()) return x.status();
    auto y = ResolveOperand(args[1], problem, knob);
    if (!y.ok()) return y.status();
    values.push_back(std::min(*x, *y));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': unknown option form \"",
                                                   form, "\" (known: ", kKnownForms, ")"));
  }
  return values;
}

}  // namespace

std::optional<int64_t> IntegerValue(absl::string_view text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

absl::StatusOr<std::vector<int64_t>> ExpandTermsInOrder(absl::string_view form, const Problem& problem,
                                                        absl::string_view knob) {
  std::optional<TopLevelSplit> split = SplitTopLevel(form);
  if (!split)
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", knob, "': unbalanced parentheses in options \"", form, "\""));
  // Operands nest by recursion: a bound keeps a pathological form from exhausting the stack.
  if (split->deepest > kMaxNesting)
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob, "': options \"", form,
                                                   "\" nest deeper than ", kMaxNesting, " forms"));
  const std::vector<absl::string_view>& terms = split->parts;
  if (terms.size() == 1) return ExpandOptionTerm(form, problem, knob);
  std::vector<int64_t> values;
  for (absl::string_view term : terms) {
    auto expanded = ExpandOptionTerm(term, problem, knob);
    if (!expanded.ok()) return expanded.status();
    values.insert(values.end(), expanded->begin(), expanded->end());
    if (values.size() > kMaxOptions) break;  // refused by the caller, before sorting a huge set
  }
  return values;
}

absl::StatusOr<std::vector<int64_t>> ExpandOptionForm(absl::string_view form, const Problem& problem,
                                                      absl::string_view knob) {
  auto expanded = ExpandTermsInOrder(form, problem, knob);
  if (!expanded.ok()) return expanded.status();
  std::vector<int64_t> values = *std::move(expanded);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace mtune::strategies
