// A marked loop whose induction variable is also used outside its inner tile loop, in
// a value the inner loop reads:
// mtune-rotate-tiles must refuse it (tests/lit/rotate_tiles.test).
func.func @outside(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c16 {
    %v0 = memref.load %in[%r, %c0] : memref<64x64xf32>
    scf.for %c = %c0 to %c64 step %c16 {
      memref.store %v0, %out[%r, %c] : memref<64x64xf32>
    }
  } {mtune.rotatable_tiles}
  return
}
