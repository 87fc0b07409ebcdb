#include "search/budget.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"

namespace mtune::search {

void Budget::Record(bool ok, double score) {
  ++trials_;
  if (ok && std::isfinite(score) && (!any_ok_ || score > best_ * (1 + limits_.min_improvement))) {
    any_ok_ = true;
    best_ = score;
    since_improvement_ = 0;
    return;
  }
  // Slightly better without counting as an improvement: still the best to beat.
  if (ok && std::isfinite(score) && score > best_) best_ = score;
  ++since_improvement_;
}

std::string Budget::Exhausted(double now_s) const {
  if (limits_.trials != 0 && trials_ >= limits_.trials)
    return absl::StrCat("trial budget of ", limits_.trials, " spent");
  if (limits_.time_s > 0 && now_s - start_s_ >= limits_.time_s)
    return absl::StrCat("time budget of ", limits_.time_s, " s spent");
  if (limits_.patience != 0 && since_improvement_ >= limits_.patience)
    return absl::StrCat("no improvement in ", limits_.patience, " trials");
  return "";
}

uint64_t Budget::TrialsLeft() const {
  if (limits_.trials == 0) return std::numeric_limits<uint64_t>::max();
  return trials_ >= limits_.trials ? 0 : limits_.trials - trials_;
}

absl::StatusOr<double> ParseDuration(const std::string& text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad duration '", text, "': expected seconds or a sum like 90s, 10m, 1h30m, 1.5h"));
  };
  if (text.empty()) return bad();
  double total = 0;
  const char* p = text.c_str();
  while (*p != '\0') {
    char* end = nullptr;
    const double value = std::strtod(p, &end);
    if (end == p || !std::isfinite(value) || value < 0 || *p == '-' || *p == '+') return bad();
    p = end;
    double unit = 1;
    if (*p == 'h') unit = 3600, ++p;
    else if (*p == 'm') unit = 60, ++p;
    else if (*p == 's') ++p;
    else if (*p != '\0') return bad();
    total += value * unit;
  }
  return total;
}

}  // namespace mtune::search
