#include "strategies/candidate.h"

#include <charconv>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "nlohmann/json.hpp"

namespace mtune::strategies {
namespace {

bool IsInteger(const std::string& s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

}  // namespace

std::string CanonicalJson(const KnobValues& values) {
  // nlohmann's default object type is an ordered std::map: keys come out sorted.
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : values) {
    int64_t number = 0;
    if (IsInteger(value, &number))
      object[name] = number;
    else
      object[name] = value;
  }
  // Knob spaces refuse non-UTF-8 names and values; a candidate read from elsewhere
  // must not throw here, so invalid bytes become U+FFFD.
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string StableHash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

// `text` without its `//` comments (outside double-quoted strings), trailing blanks
// and blank lines: what the transform interpreter sees.
std::string WithoutComments(const std::string& text) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    size_t code_end = end;
    bool quoted = false;
    for (size_t i = begin; i < end; ++i) {
      if (quoted && text[i] == '\\') {
        ++i;  // an escaped character, a quote included
      } else if (text[i] == '"') {
        quoted = !quoted;
      } else if (!quoted && text[i] == '/' && i + 1 < end && text[i + 1] == '/') {
        code_end = i;
        break;
      }
    }
    while (code_end > begin && (text[code_end - 1] == ' ' || text[code_end - 1] == '\t' ||
                                text[code_end - 1] == '\r'))
      --code_end;
    if (code_end > begin) out.append(text, begin, code_end - begin).push_back('\n');
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::string TemplateDigest(const std::string& template_text) {
  return StableHash(WithoutComments(template_text));
}

mtune::v1::Candidate MakeCandidate(const std::string& template_name, const std::string& template_digest,
                                   const KnobValues& values) {
  mtune::v1::Candidate c;
  c.set_template_name(template_name);
  for (const auto& [name, value] : values) {
    auto* kv = c.add_knobs();
    kv->set_name(name);
    kv->set_value(value);
  }
  c.set_canonical_json(CanonicalJson(values));
  c.set_hash(StableHash(template_name + "\n" + template_digest + "\n" + c.canonical_json()));
  return c;
}

bool HasTemplateDigest(const mtune::v1::Candidate& candidate, const std::string& template_digest) {
  return MakeCandidate(candidate.template_name(), template_digest, ValuesOf(candidate)).hash() ==
         candidate.hash();
}

KnobValues ValuesOf(const mtune::v1::Candidate& candidate) {
  KnobValues values;
  for (const auto& kv : candidate.knobs()) values[kv.name()] = kv.value();
  return values;
}

std::optional<double> PositiveKnob(const KnobValues& values, std::string_view name) {
  auto it = values.find(std::string(name));
  double v = 0;
  if (it == values.end() || !absl::SimpleAtod(it->second, &v) || v <= 0) return std::nullopt;
  return v;
}

}  // namespace mtune::strategies
