/* mtune best-strategy lookup, plain C interface over mtune::db::StrategyDb
 * (db/strategy_db.h), for compilers not written in C++.
 *
 * Every function returning mtune_status writes a message to *error on failure
 * (when error is not NULL); free it with mtune_error_free. Strings returned by
 * the accessors belong to the strategy and live until mtune_strategy_free.
 * A database handle may be shared by threads; a strategy handle may not.
 *
 *   mtune_strategy_db* db; char* error;
 *   if (mtune_strategy_db_open("best.sqlite", "22.1.8", &db, &error) != MTUNE_OK) ...
 *   mtune_strategy* s;
 *   if (mtune_strategy_db_lookup(db, "matmul:m=512,n=512,k=512:f32",
 *                                "cpu:x86_64-pc-linux-gnu:znver5",
 *                                MTUNE_LOOKUP_EXACT, &s, &error) == MTUNE_OK) {
 *     apply(mtune_strategy_script(s));
 *     mtune_strategy_free(s);
 *   }
 *   mtune_strategy_db_close(db);
 */
#ifndef MTUNE_DB_MTUNE_STRATEGY_DB_H_
#define MTUNE_DB_MTUNE_STRATEGY_DB_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mtune_strategy_db mtune_strategy_db;
typedef struct mtune_strategy mtune_strategy;

typedef enum mtune_status {
  MTUNE_OK = 0,
  /* No such file, or no entry for the key and target. */
  MTUNE_NOT_FOUND = 1,
  /* Malformed key, missing argument. */
  MTUNE_INVALID_ARGUMENT = 2,
  /* Not a best-strategy export, corrupt, or a schema version this build cannot read. */
  MTUNE_BAD_DATABASE = 3,
  /* Anything else (I/O error, out of memory). */
  MTUNE_ERROR = 4
} mtune_status;

/* Lookup flags. */
enum {
  MTUNE_LOOKUP_EXACT = 0,
  /* Allow the flagged nearest-shape fallback (see db/strategy_db.h). */
  MTUNE_LOOKUP_NEAREST_SHAPE = 1
};

/* Opens `path` read-only. `reader_mlir_version` ("22.1.8", or NULL/"" to skip)
 * marks entries measured with another MLIR major version as stale. */
mtune_status mtune_strategy_db_open(const char* path, const char* reader_mlir_version,
                                    mtune_strategy_db** db, char** error);
/* Closes a database (NULL is fine). */
void mtune_strategy_db_close(mtune_strategy_db* db);

/* The best strategy for (problem, target_id). */
mtune_status mtune_strategy_db_lookup(mtune_strategy_db* db, const char* problem,
                                      const char* target_id, int flags, mtune_strategy** strategy,
                                      char** error);

/* The key that was tuned (differs from the one asked for after a fallback). */
const char* mtune_strategy_problem(const mtune_strategy* strategy);
const char* mtune_strategy_target_id(const mtune_strategy* strategy);
const char* mtune_strategy_template_name(const mtune_strategy* strategy);
/* Knob values as canonical JSON. */
const char* mtune_strategy_knobs_json(const mtune_strategy* strategy);
/* Transform-dialect module with @__transform_main, every knob selected. */
const char* mtune_strategy_script(const mtune_strategy* strategy);
const char* mtune_strategy_mtune_version(const mtune_strategy* strategy);
const char* mtune_strategy_mlir_version(const mtune_strategy* strategy);
/* Why the answer is flagged ("" when exact and fresh). */
const char* mtune_strategy_note(const mtune_strategy* strategy);
/* 1 when the entry is for the key asked for, 0 after the nearest-shape fallback. */
int mtune_strategy_is_exact(const mtune_strategy* strategy);
/* 1 when measured with another MLIR major version than the reader's. */
int mtune_strategy_is_stale(const mtune_strategy* strategy);
double mtune_strategy_shape_distance(const mtune_strategy* strategy);
double mtune_strategy_gflops(const mtune_strategy* strategy);
double mtune_strategy_gbps(const mtune_strategy* strategy);
double mtune_strategy_fraction_of_roofline(const mtune_strategy* strategy);
double mtune_strategy_median_seconds(const mtune_strategy* strategy);
/* Frees a strategy (NULL is fine). */
void mtune_strategy_free(mtune_strategy* strategy);

/* Frees an error message (NULL is fine). */
void mtune_error_free(char* error);

#ifdef __cplusplus
}
#endif

#endif /* MTUNE_DB_MTUNE_STRATEGY_DB_H_ */
