// Marked loops the mtune-prefetch-reads pass must refuse (tests/lit/prefetch_reads.test).

// Nothing this loop reads moves with its index.
func.func @nothing_moves(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %v = vector.load %in[%c0] : memref<64xf32>, vector<16xf32>
    vector.store %v, %out[%i] : memref<64xf32>, vector<16xf32>
  } {mtune.prefetch_ahead = 2 : i64}
  return
}

// The address comes from memory read in the loop: recomputing it for a later
// iteration would mean reading memory again.
func.func @indirect(%in: memref<64xf32>, %offsets: memref<64xindex>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %o = memref.load %offsets[%i] : memref<64xindex>
    %v = vector.load %in[%o] : memref<64xf32>, vector<16xf32>
    vector.store %v, %out[%i] : memref<64xf32>, vector<16xf32>
  } {mtune.prefetch_ahead = 2 : i64}
  return
}
