#include "strategies/template_library.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "strategies/problem.h"
#include "strategies/templates_embedded.h"

namespace mtune::strategies {

bool StrategyTemplate::TunesFamily(absl::string_view problem_family) const {
  for (absl::string_view f : absl::StrSplit(family, ','))
    if (absl::StripAsciiWhitespace(f) == problem_family) return true;
  return false;
}

const std::vector<StrategyTemplate>& BuiltinTemplates() {
  static const auto* templates = [] {
    auto* v = new std::vector<StrategyTemplate>;
    for (int i = 0; i < kNumEmbeddedTemplates; ++i) {
      const EmbeddedTemplate& t = kEmbeddedTemplates[i];
      std::string name(t.name), text(t.text);
      std::string family = name.substr(0, name.find('_'));
      const std::string kTag = "// mtune-family:";
      if (auto pos = text.find(kTag); pos != std::string::npos) {
        auto start = text.find_first_not_of(' ', pos + kTag.size());
        family = text.substr(start, text.find('\n', start) - start);
      }
      v->push_back({std::move(name), std::move(family), std::move(text)});
    }
    return v;
  }();
  return *templates;
}

absl::StatusOr<StrategyTemplate> FindTemplate(absl::string_view name) {
  std::vector<std::string> names;
  for (const auto& t : BuiltinTemplates()) {
    if (t.name == name) return t;
    names.push_back(t.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown strategy template '", name,
                                          "' (known: ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<StrategyTemplate> DefaultTemplateFor(absl::string_view family) {
  for (const FamilyInfo& f : Families()) {
    if (f.name != family) continue;
    if (f.default_template.empty())
      return absl::NotFoundError(absl::StrCat(
          "op family '", family, "' has no strategy template yet (problems, payloads and "
          "verification exist; pass a template file to `mtune measure --template-file`)"));
    return FindTemplate(f.default_template);
  }
  return absl::NotFoundError(absl::StrCat("no default template for op family '", family, "'"));
}

}  // namespace mtune::strategies
