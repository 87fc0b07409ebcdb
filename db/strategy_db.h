// StrategyDb: the lookup API compilers link to read a best-strategy export.
// Opens an exported database read-only and answers "which transform script,
// with which measured figures, for this problem key on this target" in
// microseconds (one prepared statement on the (problem, target_id) primary key).
//
// Nearest-shape fallback (only when asked for): when the exact key has no
// entry, the answer may be the tuned entry of the same family, element type
// and target whose shape is nearest, where
//   distance = sum over size dimensions of |log2(asked / tuned)|
// and every non-size dimension (strides sh/sw, dilations dh/dw) must be equal.
// Ties go to the higher GFLOP/s, then the smaller key. Such an answer is
// flagged (`match == MatchKind::kNearestShape`) and says so in `note`: a
// compiler can never mistake it for a measured answer.
//
// Staleness: each entry records the mtune and MLIR versions it was measured
// with. When the reader says which MLIR version it will apply the script with,
// an entry from another MLIR major version is answered with `stale = true` and
// a note (transform-dialect syntax changes across major versions), never
// silently skipped or silently trusted.
//
// Errors: NotFound (no such file; no entry for the key and target, naming what
// the database does hold for that family), InvalidArgument (malformed key),
// FailedPrecondition (not SQLite, not a best-strategy export, or a schema
// version newer or older than this build reads; the message names both).
//
// Thread-safety: one StrategyDb may be shared by threads; calls are serialized.
#ifndef MTUNE_DB_STRATEGY_DB_H_
#define MTUNE_DB_STRATEGY_DB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "db/export.h"

namespace mtune::db {

class Connection;

// How an answer relates to the key asked for.
enum class MatchKind {
  kExact,         // the entry of the key asked for
  kNearestShape,  // fallback: another shape of the same family, type and target
};

// Whether Lookup may answer with another shape.
enum class Fallback {
  kExactOnly,
  kNearestShape,
};

// One answer of StrategyDb::Lookup.
struct StrategyAnswer {
  // The key that was asked for (entry.problem is the key that was tuned).
  std::string requested_problem;
  MatchKind match = MatchKind::kExact;
  // kNearestShape only: the distance defined above (0 for kExact).
  double shape_distance = 0;
  // The entry's MLIR major version differs from the reader's.
  bool stale = false;
  // Empty for a fresh exact answer; otherwise one sentence per flag.
  std::string note;
  // The stored row: resolved script, knobs, figures, versions, target.
  ExportedStrategy entry;
};

// A problem key split into its parts, without knowing the family's grammar
// (db/ does not link strategies/): "family:name=value,...:type".
struct ParsedKey {
  std::string family;
  std::vector<std::pair<std::string, int64_t>> dims;
  std::string element_type;
};

// Splits `key`; InvalidArgument says what is malformed.
absl::StatusOr<ParsedKey> ParseKeyParts(absl::string_view key);

// Distance between two shapes of one family (see above); -1 when they are not
// comparable (other family, type, dimension names, or a differing
// stride/dilation).
double ShapeDistance(const ParsedKey& asked, const ParsedKey& tuned);

// Read-only view of one exported best-strategy database.
class StrategyDb {
 public:
  struct Options {
    // MLIR version the caller will apply scripts with ("22.1.8"); empty skips
    // the staleness check.
    std::string reader_mlir_version;
  };

  // Opens `path` read-only and checks it is a current best-strategy export.
  static absl::StatusOr<std::unique_ptr<StrategyDb>> Open(const std::string& path,
                                                          Options options);
  static absl::StatusOr<std::unique_ptr<StrategyDb>> Open(const std::string& path) {
    return Open(path, Options());
  }
  ~StrategyDb();
  StrategyDb(const StrategyDb&) = delete;
  StrategyDb& operator=(const StrategyDb&) = delete;

  // The entry for (problem, target_id); see the header comment for fallback.
  absl::StatusOr<StrategyAnswer> Lookup(absl::string_view problem, absl::string_view target_id,
                                        Fallback fallback = Fallback::kExactOnly);

  // Distinct target ids with entries, sorted.
  absl::StatusOr<std::vector<std::string>> Targets();

  // Every entry for `target_id` ("" = all targets), ordered by problem.
  absl::StatusOr<std::vector<ExportedStrategy>> Entries(absl::string_view target_id);

  // The file this view reads.
  const std::string& path() const { return path_; }

 private:
  StrategyDb(std::unique_ptr<Connection> connection, std::string path, Options options);
  absl::StatusOr<bool> ReadEntry(absl::string_view problem, absl::string_view target_id,
                                 ExportedStrategy* entry);
  // One tuned key of a (family, target), prepared for distance computations.
  struct TunedShape {
    std::string key;
    ParsedKey parsed;
    // log2 of each size dimension, in key order (strides/dilations excluded).
    std::vector<double> log_sizes;
    double gflops = 0;
  };
  absl::StatusOr<const std::vector<TunedShape>*> FamilyShapes(const std::string& family,
                                                                const std::string& target_id);
  void Annotate(StrategyAnswer& answer) const;

  std::mutex mu_;
  std::unique_ptr<Connection> connection_;
  const std::string path_;
  const Options options_;
  // (family, target) -> tuned keys and their GFLOP/s, loaded on the first
  // fallback lookup for that pair (the file is read-only, so it never changes).
  std::map<std::pair<std::string, std::string>, std::vector<TunedShape>> family_shapes_;
};

// Major version of a dotted version string ("22.1.8" -> "22").
std::string MajorVersion(absl::string_view version);

}  // namespace mtune::db

#endif  // MTUNE_DB_STRATEGY_DB_H_
