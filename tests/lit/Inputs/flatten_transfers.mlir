// A register-tile operand of a VNNI-packed bf16 matmul (k pairs innermost): the
// 1x16x2 tile is 64 contiguous bytes of each row of the packed buffer.
func.func @vnni_operand(%packed: memref<128x256x2xbf16>, %k: index, %n: index) -> vector<1x16x2xbf16> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %v = vector.transfer_read %packed[%k, %n, %c0], %pad {in_bounds = [true, true, true]}
      : memref<128x256x2xbf16>, vector<1x16x2xbf16>
  return %v : vector<1x16x2xbf16>
}

// Rows of a strided tile are not contiguous: left as they are.
func.func @strided_rows(%m: memref<64x64xf32>, %i: index) -> vector<4x16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%i, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x16xf32>
  return %v : vector<4x16xf32>
}
