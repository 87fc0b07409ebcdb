// Wall-clock time as stored in the database.
#ifndef MTUNE_DB_CLOCK_H_
#define MTUNE_DB_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace mtune::db {

// Current Unix time in whole seconds, the unit of every *_unix_s column.
inline int64_t NowUnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace mtune::db

#endif  // MTUNE_DB_CLOCK_H_
