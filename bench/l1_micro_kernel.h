// A yardstick for matmul kernels: the register-tile loop of a BLAS-like matmul
// written by hand, with every operand resident in L1.
//
// An 8 x 32 f32 accumulator tile (16 zmm registers, the tile of matmul_packed's
// default candidate) is updated from a packed A panel (8 floats per k step,
// broadcast) and a packed B panel (32 floats per k step, two vector loads), over
// kK steps, again and again on the same panels. It is what a matmul reaches on this
// core when nothing outside its innermost loop costs anything: no packing, no cache
// misses, no edges. Timed beside the kernels, in the same rounds, it shows how much
// of the gap between a kernel and the FMA loop (which loads nothing) any matmul
// would have anyway: on this VM it measured 0.85-0.90 of the FMA loop in quiet
// seconds and 0.65-0.80 while the host's neighbours were busy.
#pragma once

#include <memory>

namespace mtune::bench {

class L1MicroKernelLoop {
 public:
  L1MicroKernelLoop();
  ~L1MicroKernelLoop();

  // False where the CPU lacks AVX-512F (the loop is written for it): not timed then.
  bool available() const;
  // Runs whole calls of the tile loop until at least `flops` are done; returns the
  // FLOPs done (a multiple of one call's).
  double Run(double flops);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mtune::bench
