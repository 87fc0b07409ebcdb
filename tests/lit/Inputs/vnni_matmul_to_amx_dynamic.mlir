// Input of tests/lit/vnni_matmul_to_amx.test: a packed bf16 matmul of dynamic shape,
// which AMX tiles (static shapes) cannot take: the pass must say so.
#a = affine_map<(m, n, p, t) -> (m, p, t)>
#b = affine_map<(m, n, p, t) -> (p, n, t)>
#c = affine_map<(m, n, p, t) -> (m, n)>
func.func @dynamic(%a: memref<?x16x2xbf16>, %b: memref<16x16x2xbf16>, %c: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<?x16x2xbf16>, memref<16x16x2xbf16>) outs(%c : memref<?x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
