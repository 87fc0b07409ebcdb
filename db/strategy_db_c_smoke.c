/* Compiled as C (not C++) so the test proves db/mtune_strategy_db.h is a valid
 * C header; called from strategy_db_test.cc. */
#include <stdio.h>

#include "db/mtune_strategy_db.h"

int mtune_c_smoke_lookup(const char* path, const char* problem, const char* target, int flags,
                         char* out, int out_size) {
  mtune_strategy_db* db = NULL;
  char* error = NULL;
  mtune_status status = mtune_strategy_db_open(path, "22.1.8", &db, &error);
  if (status != MTUNE_OK) {
    snprintf(out, (size_t)out_size, "open %d %s", (int)status, error);
    mtune_error_free(error);
    return (int)status;
  }
  mtune_strategy* strategy = NULL;
  status = mtune_strategy_db_lookup(db, problem, target, flags, &strategy, &error);
  if (status != MTUNE_OK) {
    snprintf(out, (size_t)out_size, "lookup %d %s", (int)status, error);
    mtune_error_free(error);
    mtune_strategy_db_close(db);
    return (int)status;
  }
  snprintf(out, (size_t)out_size, "%s|%s|exact=%d|stale=%d|%.1f|%s",
           mtune_strategy_problem(strategy), mtune_strategy_script(strategy),
           mtune_strategy_is_exact(strategy), mtune_strategy_is_stale(strategy),
           mtune_strategy_gflops(strategy), mtune_strategy_note(strategy));
  mtune_strategy_free(strategy);
  mtune_strategy_db_close(db);
  return 0;
}
