#include "strategies/param_constraint.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace mtune::strategies {
namespace {

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// SMT-LIB integer division and remainder are Euclidean: the remainder is never
// negative. They agree with C++ for the positive values knobs usually take.
int64_t EuclideanMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + (b < 0 ? -b : b) : r;
}
int64_t EuclideanDiv(int64_t a, int64_t b) { return (a - EuclideanMod(a, b)) / b; }

}  // namespace

std::vector<std::string> ParamConstraint::Knobs() const {
  std::vector<std::string> knobs;
  for (const Node& n : nodes)
    if (n.op == Op::kKnob && std::find(knobs.begin(), knobs.end(), n.knob) == knobs.end())
      knobs.push_back(n.knob);
  return knobs;
}

bool ParamConstraint::Holds(const KnobValues& values) const {
  std::vector<int64_t> v(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    auto arg = [&](size_t j) { return v[n.args[j]]; };
    int64_t& out = v[i];
    switch (n.op) {
      case Op::kConst: out = n.value; break;
      case Op::kKnob: {
        auto it = values.find(n.knob);
        if (it == values.end()) return false;
        auto parsed = ParseInt(it->second);
        if (!parsed) return false;
        out = *parsed;
        break;
      }
      case Op::kAdd:
      case Op::kMul:
        out = n.op == Op::kAdd ? 0 : 1;
        for (size_t j = 0; j < n.args.size(); ++j) {
          bool overflow = n.op == Op::kAdd ? __builtin_add_overflow(out, arg(j), &out)
                                           : __builtin_mul_overflow(out, arg(j), &out);
          if (overflow) return false;
        }
        break;
      case Op::kSub:
        if (__builtin_sub_overflow(arg(0), arg(1), &out)) return false;
        break;
      case Op::kDiv:
      case Op::kMod:
        if (arg(1) == 0 || (arg(0) == INT64_MIN && arg(1) == -1)) return false;
        out = n.op == Op::kDiv ? EuclideanDiv(arg(0), arg(1)) : EuclideanMod(arg(0), arg(1));
        break;
      case Op::kAbs:
        if (arg(0) == INT64_MIN) return false;
        out = arg(0) < 0 ? -arg(0) : arg(0);
        break;
      case Op::kLt: out = arg(0) < arg(1); break;
      case Op::kLe: out = arg(0) <= arg(1); break;
      case Op::kGt: out = arg(0) > arg(1); break;
      case Op::kGe: out = arg(0) >= arg(1); break;
      case Op::kEq:
        out = 1;
        for (size_t j = 1; j < n.args.size(); ++j) out = out && arg(j) == arg(0);
        break;
      case Op::kDistinct:
        out = 1;
        for (size_t a = 0; a < n.args.size(); ++a)
          for (size_t b = a + 1; b < n.args.size(); ++b) out = out && arg(a) != arg(b);
        break;
      case Op::kAnd:
        out = 1;
        for (size_t j = 0; j < n.args.size(); ++j) out = out && arg(j);
        break;
      case Op::kOr:
        out = 0;
        for (size_t j = 0; j < n.args.size(); ++j) out = out || arg(j);
        break;
      case Op::kXor:
        out = 0;
        for (size_t j = 0; j < n.args.size(); ++j) out ^= (arg(j) != 0);
        break;
      case Op::kNot: out = !arg(0); break;
      case Op::kImplies: out = !arg(0) || arg(1); break;
      case Op::kIte: out = arg(0) ? arg(1) : arg(2); break;
    }
  }
  return std::all_of(asserts.begin(), asserts.end(), [&](int i) { return v[i] != 0; });
}

}  // namespace mtune::strategies
