// Loop nests for the mtune-prefetch-reads pass (tests/lit/prefetch_reads.test).

// A loop over rows of tiles (2 steps ahead) around a loop over column tiles: the
// reads through a subview made in the outer loop and the one straight from %in move
// with %r and are prefetched; the read of %table does not move with %r and is not.
func.func @tiles(%in: memref<64x256xf32>, %table: memref<16xf32>, %out: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c64 step %c16 {
    %rows = memref.subview %in[%r, 0] [16, 256] [1, 1] : memref<64x256xf32> to memref<16x256xf32, strided<[256, 1], offset: ?>>
    scf.for %c = %c0 to %c256 step %c16 {
      %a = vector.load %rows[%c0, %c] : memref<16x256xf32, strided<[256, 1], offset: ?>>, vector<16xf32>
      %next = affine.apply affine_map<(d0) -> (d0 + 1)>(%r)
      %b = vector.transfer_read %in[%next, %c], %cst : memref<64x256xf32>, vector<16xf32>
      %t = vector.load %table[%c0] : memref<16xf32>, vector<16xf32>
      %s = arith.addf %a, %b : vector<16xf32>
      %u = arith.addf %s, %t : vector<16xf32>
      vector.store %u, %out[%r, %c] : memref<64x256xf32>, vector<16xf32>
    }
  } {mtune.prefetch_ahead = 2 : i64}
  return
}

// 0 ahead: the loop stays as it is, without the attribute.
func.func @none(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %v = vector.load %in[%i] : memref<64xf32>, vector<16xf32>
    vector.store %v, %out[%i] : memref<64xf32>, vector<16xf32>
  } {mtune.prefetch_ahead = 0 : i64}
  return
}

// A 2-D transfer read of 4 rows x 32 floats (128 bytes: two lines each) steps over
// rows: a prefetch per line, rows along the memref's rows, 1 step ahead.
func.func @rows(%in: memref<64x256xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c64 step %c4 {
    scf.for %c = %c0 to %c256 step %c32 {
      %t = vector.transfer_read %in[%r, %c], %cst {in_bounds = [true, true]} : memref<64x256xf32>, vector<4x32xf32>
      %acc = vector.load %out[%c] : memref<256xf32>, vector<32xf32>
      %s = vector.multi_reduction <add>, %t, %acc [0] : vector<4x32xf32> to vector<32xf32>
      vector.store %s, %out[%c] : memref<256xf32>, vector<32xf32>
    }
  } {mtune.prefetch_ahead = 1 : i64}
  return
}

// Elements of no fixed width (index): one prefetch, of the line the read starts at.
func.func @index_elements(%in: memref<64xindex>, %out: memref<64xindex>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c4 {
    %v = vector.load %in[%i] : memref<64xindex>, vector<4xindex>
    vector.store %v, %out[%i] : memref<64xindex>, vector<4xindex>
  } {mtune.prefetch_ahead = 1 : i64}
  return
}
