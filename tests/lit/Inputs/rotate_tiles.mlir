// Loop nests for the mtune-rotate-tiles pass (tests/lit/rotate_tiles.test).
func.func @peeled(%in: memref<64x40xf32>, %out: memref<64x40xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  // Outer loop over 4 row tiles of 16; a main column loop and a remainder one.
  scf.for %r = %c0 to %c64 step %c16 {
    scf.for %c = %c0 to %c32 step %c8 {
      %v = memref.load %in[%r, %c] : memref<64x40xf32>
      memref.store %v, %out[%r, %c] : memref<64x40xf32>
    }
    scf.for %c = %c32 to %c40 step %c8 {
      %v = memref.load %in[%r, %c] : memref<64x40xf32>
      memref.store %v, %out[%r, %c] : memref<64x40xf32>
    }
  } {mtune.rotatable_tiles}
  return
}

func.func @one_column_tile(%in: memref<64x8xf32>, %out: memref<64x8xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c16 {
    %v = memref.load %in[%r, %c0] : memref<64x8xf32>
    memref.store %v, %out[%r, %c0] : memref<64x8xf32>
  } {mtune.rotatable_tiles}
  return
}

// Peeling left the last, partial column tile after the column loop, outside any
// loop (one iteration): it exchanges no value with the column loop.
func.func @peeled_last_tile(%in: memref<64x36xf32>, %out: memref<64x36xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c16 {
    scf.for %c = %c0 to %c32 step %c8 {
      %v = memref.load %in[%r, %c] : memref<64x36xf32>
      memref.store %v, %out[%r, %c] : memref<64x36xf32>
    }
    %last = memref.load %in[%r, %c32] : memref<64x36xf32>
    memref.store %last, %out[%r, %c32] : memref<64x36xf32>
  } {mtune.rotatable_tiles}
  return
}
