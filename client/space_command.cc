#include "client/space_command.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/space_audit.h"

namespace mtune::client {

absl::StatusOr<nlohmann::json> DescribeSpace(const MeasureRequest& request, bool audit) {
  auto loaded = LoadProblemTemplate(request);
  if (!loaded.ok()) return loaded.status();
  auto space = strategies::ExtractKnobSpace(loaded->tpl.text, loaded->problem, loaded->registers);
  if (!space.ok()) return space.status();
  nlohmann::json out = {{"template", loaded->tpl.name}, {"problem", loaded->problem.Key()}};
  // The default shown is the default candidate's: the template's selection where it
  // is valid for this problem, repaired (derived knobs solved) where it is not.
  const std::optional<strategies::KnobValues> defaults = strategies::DefaultCandidate(*space);
  out["has_default"] = defaults.has_value();
  nlohmann::json knobs = nlohmann::json::array();
  for (const strategies::KnobSpec& k : space->knobs) {
    nlohmann::json only_with = nlohmann::json::object();
    for (const auto& [other, values] : k.only_with) only_with[other] = values;
    knobs.push_back({{"name", k.name},
                     {"options", k.options},
                     // Without a default candidate: the value as written, even when it
                     // is no option for this problem (shown as such, not as blank).
                     {"default", defaults ? defaults->at(k.name) : k.selected},
                     {"alternatives", k.is_alternatives},
                     {"derived", k.derived},
                     {"only_with", only_with}});
  }
  out["knobs"] = knobs;
  // The candidates a job proposes right after the default (the template's
  // `mtune.start_points` for this problem), each as the knobs it changes.
  nlohmann::json starts = nlohmann::json::array();
  const std::vector<strategies::KnobValues> starting = strategies::StartingCandidates(*space);
  for (size_t i = 1; i < starting.size(); ++i) {
    nlohmann::json changed = nlohmann::json::object();
    for (const auto& [name, value] : starting[i])
      if (defaults && defaults->at(name) != value) changed[name] = value;
    starts.push_back(changed);
  }
  out["start_points"] = starts;
  out["constraints"] = space->constraints.size();
  nlohmann::json rules = nlohmann::json::array();
  for (const strategies::ParamConstraint& c : space->constraints)
    rules.push_back({{"where", c.where}, {"rule", c.rule}});
  out["constraint_rules"] = rules;
  out["cpu_features"] = space->cpu_features;
  out["vector_registers"] = {{"count", space->registers.count}, {"bytes", space->registers.bytes}};
  const strategies::CandidateCount count = strategies::CountCandidates(*space);
  out["combinations"] = count.combinations;
  out["valid"] = count.valid;
  out["valid_exact"] = count.exact;
  if (audit) {
    auto audits = strategies::AuditKnobs(loaded->tpl.text, loaded->problem, loaded->registers);
    if (!audits.ok()) return audits.status();
    nlohmann::json list = nlohmann::json::array();
    for (const strategies::KnobAudit& a : *audits)
      list.push_back({{"name", a.name}, {"compared", a.compared}, {"changed", a.changed}});
    out["audit"] = list;
  }
  return out;
}

std::string FormatSpace(const nlohmann::json& space) {
  std::string text = absl::StrCat("template ", space["template"].get<std::string>(), " for ",
                                  space["problem"].get<std::string>(), "\n");
  for (const nlohmann::json& k : space["knobs"]) {
    std::vector<std::string> notes;
    if (k["alternatives"].get<bool>()) notes.push_back("alternatives");
    if (k["derived"].get<bool>()) notes.push_back("derived: solved from the constraints");
    for (const auto& [other, values] : k["only_with"].items())
      notes.push_back(absl::StrCat("free only with ", other, " = ",
                                   absl::StrJoin(values.get<std::vector<std::string>>(), " or ")));
    absl::StrAppendFormat(&text, "  %-22s default %-14s options %s%s\n", k["name"].get<std::string>(),
                          k["default"].get<std::string>(),
                          absl::StrJoin(k["options"].get<std::vector<std::string>>(), ", "),
                          notes.empty() ? "" : absl::StrCat("  (", absl::StrJoin(notes, "; "), ")"));
  }
  if (!space["has_default"].get<bool>())
    text += "no valid candidate near the template's defaults for this problem (defaults shown as written)\n";
  for (const nlohmann::json& point : space["start_points"]) {
    std::vector<std::string> changes;
    for (const auto& [name, value] : point.items())
      changes.push_back(absl::StrCat(name, "=", value.get<std::string>()));
    absl::StrAppend(&text, "start point (proposed after the default): ", absl::StrJoin(changes, " "), "\n");
  }
  absl::StrAppendFormat(&text, "constraints: %d (transform.smt.constrain_params)\n",
                        space["constraints"].get<int>());
  for (const nlohmann::json& c : space["constraint_rules"])
    absl::StrAppend(&text, "  ", c["where"].get<std::string>(), ": ",
                    c["rule"].get<std::string>().empty() ? "(no mtune.rule)" : c["rule"].get<std::string>(), "\n");
  absl::StrAppendFormat(&text, "register tiles sized for %d vector registers of %d bytes\n",
                        space["vector_registers"]["count"].get<int>(), space["vector_registers"]["bytes"].get<int>());
  if (const auto features = space["cpu_features"].get<std::vector<std::string>>(); !features.empty())
    absl::StrAppend(&text, "needs CPU features: ", absl::StrJoin(features, ", "),
                    " (workers whose CPU lacks one report COMPILE_ERROR for every candidate)\n");
  absl::StrAppendFormat(&text, "candidates: %d combinations of the free knobs, %s%d valid%s\n",
                        space["combinations"].get<uint64_t>(), space["valid_exact"].get<bool>() ? "" : "about ",
                        space["valid"].get<uint64_t>(),
                        space["valid_exact"].get<bool>() ? "" : " (estimated from a sample)");
  if (space.contains("audit")) {
    text += "audit: each free knob moved to another valid option from the default and two random candidates\n";
    for (const nlohmann::json& a : space["audit"]) {
      const int compared = a["compared"].get<int>(), changed = a["changed"].get<int>();
      absl::StrAppendFormat(&text, "  %-22s %s\n", a["name"].get<std::string>(),
                            compared == 0 ? "no other valid option to move to"
                            : changed == 0
                                ? absl::StrCat("never changed the code (", compared,
                                               " tries): its options repeat one program")
                                : absl::StrCat("changed the code ", changed, " of ", compared, " times"));
    }
  }
  return text;
}

}  // namespace mtune::client
