#include "worker/amx.h"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mtune::worker {

// The 64-byte tile configuration ldtilecfg reads (palette 1). Not in the anonymous
// namespace: AmxBf16Loop::State, a member of a class with linkage, holds one (GCC's
// -Wsubobject-linkage, seen once a unity build includes this file).
struct alignas(64) AmxTileConfig {
  uint8_t palette = 0;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(AmxTileConfig) == 64);

namespace {

// One tdpbf16ps: 16 x 16 accumulators, each the sum of 32 products.
constexpr double kFlopsPerTileMultiply = 16.0 * 16 * 32 * 2;
constexpr int kMultipliesPerIteration = 4;

__attribute__((target("amx-tile,amx-bf16"), noinline)) void MultiplyTiles(uint64_t iterations,
                                                                          const AmxTileConfig* config,
                                                                          const uint16_t* operand) {
  // Keeps the compiler from dropping the stores to *config: GCC's ldtilecfg
  // intrinsic does not tell it that the instruction reads all 64 bytes.
  asm volatile("" : : "r"(config) : "memory");
  _tile_loadconfig(config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (uint64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_release();
}

}  // namespace

bool CpuHasAmxBf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
  return (edx & kAmxBf16) && (edx & kAmxTile);
}

absl::Status RequestAmxState() {
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0)
    return absl::FailedPreconditionError(
        absl::StrCat("Linux refused this process the AMX tile state (arch_prctl "
                     "ARCH_REQ_XCOMP_PERM): ",
                     strerror(errno)));
  return absl::OkStatus();
}

struct AmxBf16Loop::State {
  AmxTileConfig config;
  // 16 rows of 32 bf16 ones: a finite operand, products that stay finite.
  alignas(64) uint16_t operand[16 * 32];
};

AmxBf16Loop::AmxBf16Loop() : state_(std::make_unique<State>()) {
  state_->config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    state_->config.bytes_per_row[t] = 64;
    state_->config.rows[t] = 16;
  }
  std::fill(std::begin(state_->operand), std::end(state_->operand), uint16_t{0x3f80});
}

AmxBf16Loop::~AmxBf16Loop() = default;

double AmxBf16Loop::Run(double flops) {
  const double per_iteration = kFlopsPerTileMultiply * kMultipliesPerIteration;
  const uint64_t iterations =
      static_cast<uint64_t>(std::max(1.0, std::ceil(flops / per_iteration)));
  MultiplyTiles(iterations, &state_->config, state_->operand);
  return iterations * per_iteration;
}

}  // namespace mtune::worker
