// Inputs of tests/lit/split_pair_transposes.test.

// The copy that packs a k-major A [k][m] = [p][2][m] into [m][p][2]: split.
func.func @pairs_across(%a: tensor<8x2x16xbf16>, %out: tensor<16x8x2xbf16>) -> tensor<16x8x2xbf16> {
  %t = linalg.transpose ins(%a : tensor<8x2x16xbf16>) outs(%out : tensor<16x8x2xbf16>) permutation = [2, 0, 1]
  return %t : tensor<16x8x2xbf16>
}

// The same permutation over something other than pairs: left alone.
func.func @triples(%a: tensor<8x3x16xbf16>, %out: tensor<16x8x3xbf16>) -> tensor<16x8x3xbf16> {
  %t = linalg.transpose ins(%a : tensor<8x3x16xbf16>) outs(%out : tensor<16x8x3xbf16>) permutation = [2, 0, 1]
  return %t : tensor<16x8x3xbf16>
}

// Another permutation (the VNNI interleave itself): left alone.
func.func @interleave(%a: tensor<8x2x16xbf16>, %out: tensor<8x16x2xbf16>) -> tensor<8x16x2xbf16> {
  %t = linalg.transpose ins(%a : tensor<8x2x16xbf16>) outs(%out : tensor<8x16x2xbf16>) permutation = [0, 2, 1]
  return %t : tensor<8x16x2xbf16>
}
