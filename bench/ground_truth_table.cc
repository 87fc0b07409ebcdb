#include "bench/ground_truth_table.h"

#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/replay_stats.h"

namespace mtune::bench {
namespace {

std::string QuoteCsv(const std::string& field) {
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Splits one CSV line with RFC 4180 quoting (no embedded newlines in our tables).
absl::StatusOr<std::vector<std::string>> SplitCsv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return absl::InvalidArgumentError("unterminated quote");
  return fields;
}

// One row per candidate: a candidate's status is that of its first row (the sweep),
// its figures the medians over its OK rows.
std::vector<GroundTruthRow> MergeRepeats(std::vector<GroundTruthRow> rows) {
  std::vector<GroundTruthRow> merged;
  std::map<uint64_t, size_t> slot;
  std::vector<std::vector<double>> times, gflops;
  for (GroundTruthRow& row : rows) {
    auto [it, first] = slot.emplace(row.index, merged.size());
    if (first) {
      merged.push_back(row);
      times.emplace_back();
      gflops.emplace_back();
    } else {
      ++merged[it->second].measurements;
    }
    if (row.status == "OK") {
      times[it->second].push_back(row.median_s);
      gflops[it->second].push_back(row.gflops);
    }
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    if (merged[i].measurements == 1 || times[i].empty()) continue;
    merged[i].median_s = Median(times[i]);
    merged[i].gflops = Median(gflops[i]);
  }
  return merged;
}

}  // namespace

std::string FormatSpace(const search::Space& space) {
  std::vector<std::string> parts;
  for (const search::Knob& knob : space.knobs)
    parts.push_back(absl::StrCat(knob.name, "=", absl::StrJoin(knob.options, "|")));
  return absl::StrJoin(parts, ";");
}

absl::StatusOr<search::Space> ParseSpace(const std::string& text) {
  search::Space space;
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty())
      return absl::InvalidArgumentError(absl::StrCat("bad knob '", std::string(part), "'"));
    search::Knob knob{kv.first, absl::StrSplit(kv.second, '|')};
    space.knobs.push_back(std::move(knob));
  }
  if (absl::Status s = search::ValidateSpace(space); !s.ok()) return s;
  return space;
}

std::string FormatRow(const GroundTruthRow& row) {
  return absl::StrCat(row.index, ",", QuoteCsv(row.candidate_json), ",", row.status, ",",
                      absl::StrFormat("%.9g,%.6g,%.4g", row.median_s, row.gflops, row.compile_s));
}

absl::StatusOr<GroundTruthTable> ReadGroundTruth(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  GroundTruthTable table;
  std::string line;
  int number = 0;
  bool columns_seen = false;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", std::string(why)));
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line[0] == '#') {
      absl::string_view rest = absl::StripAsciiWhitespace(absl::string_view(line).substr(1));
      const size_t colon = rest.find(": ");
      if (colon != absl::string_view::npos)
        table.header.emplace(std::string(rest.substr(0, colon)), std::string(rest.substr(colon + 2)));
      continue;
    }
    if (!columns_seen) {
      if (line != kGroundTruthColumns) return bad("expected the column line");
      columns_seen = true;
      continue;
    }
    auto fields = SplitCsv(line);
    if (!fields.ok()) return bad(fields.status().message());
    if (fields->size() != 6) return bad("expected 6 fields");
    GroundTruthRow row;
    row.candidate_json = (*fields)[1];
    row.status = (*fields)[2];
    if (!absl::SimpleAtoi((*fields)[0], &row.index) || !absl::SimpleAtod((*fields)[3], &row.median_s) ||
        !absl::SimpleAtod((*fields)[4], &row.gflops) || !absl::SimpleAtod((*fields)[5], &row.compile_s))
      return bad("malformed number");
    table.rows.push_back(std::move(row));
  }
  auto knobs = table.header.find("knobs");
  if (knobs == table.header.end()) return absl::InvalidArgumentError(path + ": no '# knobs:' header");
  auto space = ParseSpace(knobs->second);
  if (!space.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", space.status().message()));
  table.space = *std::move(space);
  table.rows = MergeRepeats(std::move(table.rows));
  const uint64_t size = search::SpaceSize(table.space);
  for (const GroundTruthRow& row : table.rows)
    if (row.index >= size)
      return absl::InvalidArgumentError(absl::StrCat(path, ": index ", row.index, " outside the space"));
  return table;
}

}  // namespace mtune::bench
