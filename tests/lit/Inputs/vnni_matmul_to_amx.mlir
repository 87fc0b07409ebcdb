// Inputs of tests/lit/vnni_matmul_to_amx.test: the op `transform.structured.pack`
// packed_sizes = [0, 0, 2] makes of a bf16 linalg.matmul, on buffers.
#a = affine_map<(m, n, p, t) -> (m, p, t)>
#b = affine_map<(m, n, p, t) -> (p, n, t)>
#c = affine_map<(m, n, p, t) -> (m, n)>
#iterators = ["parallel", "parallel", "reduction", "reduction"]

// A 2 x 2 block of whole tiles and 32 pairs: two k steps.
func.func @whole_tiles(%a: memref<32x32x2xbf16>, %b: memref<32x32x2xbf16>, %c: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = #iterators}
      ins(%a, %b : memref<32x32x2xbf16>, memref<32x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// 20 rows x 24 columns x 17 pairs: the last row and column tiles and the last k step
// take what is left; A is a strided view of a wider row-major matrix.
func.func @ragged(%a: memref<20x17x2xbf16, strided<[100, 2, 1], offset: ?>>, %b: memref<17x24x2xbf16>, %c: memref<20x24xf32, strided<[64, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = #iterators}
      ins(%a, %b : memref<20x17x2xbf16, strided<[100, 2, 1], offset: ?>>, memref<17x24x2xbf16>) outs(%c : memref<20x24xf32, strided<[64, 1], offset: ?>>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %yf, %xf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Not a widening multiply-add (a subtraction): left alone.
func.func @other_body(%a: memref<16x16x2xbf16>, %b: memref<16x16x2xbf16>, %c: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = #iterators}
      ins(%a, %b : memref<16x16x2xbf16>, memref<16x16x2xbf16>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.subf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
