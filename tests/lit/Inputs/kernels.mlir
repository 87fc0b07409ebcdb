// Kernels for apply_library.test: three matmul shapes that get tuned entries, a
// matmul shape without an entry and a convolution (no tuned entry), each in its
// own function, plus references written as linalg.generic (no problem family,
// so never tuned) and a main that runs everything and prints max |difference|.
// Inputs are small integers, so every result is exact in f32: the differences
// must be exactly 0.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#cin = affine_map<(b, w, f, kw, c) -> (b, w + kw, c)>
#cfl = affine_map<(b, w, f, kw, c) -> (kw, c, f)>
#cout = affine_map<(b, w, f, kw, c) -> (b, w, f)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

func.func @mm_64x48x32(%A: memref<64x32xf32>, %B: memref<32x48xf32>, %C: memref<64x48xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<64x32xf32> to tensor<64x32xf32>
  %b = bufferization.to_tensor %B restrict : memref<32x48xf32> to tensor<32x48xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<64x48xf32> to tensor<64x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<64x48xf32>, memref<64x48xf32>) -> ()
  return
}

func.func @mm_32x32x32(%A: memref<32x32xf32>, %B: memref<32x32xf32>, %C: memref<32x32xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<32x32xf32> to tensor<32x32xf32>
  %b = bufferization.to_tensor %B restrict : memref<32x32xf32> to tensor<32x32xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<32x32xf32> to tensor<32x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<32x32xf32>, memref<32x32xf32>) -> ()
  return
}

func.func @mm_16x64x8(%A: memref<16x8xf32>, %B: memref<8x64xf32>, %C: memref<16x64xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<16x8xf32> to tensor<16x8xf32>
  %b = bufferization.to_tensor %B restrict : memref<8x64xf32> to tensor<8x64xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<16x64xf32> to tensor<16x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<16x64xf32>, memref<16x64xf32>) -> ()
  return
}

// No tuned entry for this shape: must be left alone.
func.func @mm_untuned_20x20x20(%A: memref<20x20xf32>, %B: memref<20x20xf32>, %C: memref<20x20xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<20x20xf32> to tensor<20x20xf32>
  %b = bufferization.to_tensor %B restrict : memref<20x20xf32> to tensor<20x20xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<20x20xf32> to tensor<20x20xf32>
  %r = linalg.matmul ins(%a, %b : tensor<20x20xf32>, tensor<20x20xf32>) outs(%c : tensor<20x20xf32>) -> tensor<20x20xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<20x20xf32>, memref<20x20xf32>) -> ()
  return
}

// No tuned entry for convolutions: must be left alone.
func.func @conv_1x18x4_3x4x8(%I: memref<1x18x4xf32>, %F: memref<3x4x8xf32>, %O: memref<1x16x8xf32>) {
  %i = bufferization.to_tensor %I restrict : memref<1x18x4xf32> to tensor<1x18x4xf32>
  %f = bufferization.to_tensor %F restrict : memref<3x4x8xf32> to tensor<3x4x8xf32>
  %o = bufferization.to_tensor %O restrict writable : memref<1x16x8xf32> to tensor<1x16x8xf32>
  %r = linalg.conv_1d_nwc_wcf ins(%i, %f : tensor<1x18x4xf32>, tensor<3x4x8xf32>) outs(%o : tensor<1x16x8xf32>) -> tensor<1x16x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %O : (tensor<1x16x8xf32>, memref<1x16x8xf32>) -> ()
  return
}

func.func @ref_mm(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : memref<?x?xf32>, memref<?x?xf32>) outs(%C : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

func.func @ref_conv(%I: memref<?x?x?xf32>, %F: memref<?x?x?xf32>, %O: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = [#cin, #cfl, #cout],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%I, %F : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%O : memref<?x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// M[i, j] = ((7 i + 3 j + seed) mod 11) - 5.
func.func @fill2(%M: memref<?x?xf32>, %seed: index) {
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%M : memref<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c11 = arith.constant 11 : index
    %c5 = arith.constant 5 : index
    %a = arith.muli %i, %c7 : index
    %b = arith.muli %j, %c3 : index
    %s = arith.addi %a, %b : index
    %t = arith.addi %s, %seed : index
    %m = arith.remui %t, %c11 : index
    %v = arith.subi %m, %c5 : index
    %w = arith.index_cast %v : index to i64
    %f = arith.sitofp %w : i64 to f32
    linalg.yield %f : f32
  }
  return
}

func.func @fill3(%M: memref<?x?x?xf32>, %seed: index) {
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%M : memref<?x?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c5 = arith.constant 5 : index
    %c3 = arith.constant 3 : index
    %c11 = arith.constant 11 : index
    %a = arith.muli %j, %c5 : index
    %b = arith.muli %k, %c3 : index
    %s = arith.addi %a, %b : index
    %u = arith.addi %s, %i : index
    %t = arith.addi %u, %seed : index
    %m = arith.remui %t, %c11 : index
    %v = arith.subi %m, %c5 : index
    %w = arith.index_cast %v : index to i64
    %f = arith.sitofp %w : i64 to f32
    linalg.yield %f : f32
  }
  return
}

// Largest |X - Y| and the sum of X (so an all-zero result cannot pass unseen).
func.func @compare(%X: memref<?xf32>, %Y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %X, %c0 : memref<?xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%mx = %zero, %sum = %zero) -> (f32, f32) {
    %x = memref.load %X[%i] : memref<?xf32>
    %y = memref.load %Y[%i] : memref<?xf32>
    %d = arith.subf %x, %y : f32
    %a = math.absf %d : f32
    %m = arith.maximumf %mx, %a : f32
    %s = arith.addf %sum, %x : f32
    scf.yield %m, %s : f32, f32
  }
  vector.print str "max|diff| "
  vector.print %r#0 : f32
  vector.print str "sum "
  vector.print %r#1 : f32
  return
}

func.func @check_mm(%m: index, %n: index, %k: index, %kernel: (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()) {
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 1 : index
  %s2 = arith.constant 2 : index
  %A = memref.alloc(%m, %k) {alignment = 64} : memref<?x?xf32>
  %B = memref.alloc(%k, %n) {alignment = 64} : memref<?x?xf32>
  %C = memref.alloc(%m, %n) {alignment = 64} : memref<?x?xf32>
  %R = memref.alloc(%m, %n) {alignment = 64} : memref<?x?xf32>
  func.call @fill2(%A, %s1) : (memref<?x?xf32>, index) -> ()
  func.call @fill2(%B, %s2) : (memref<?x?xf32>, index) -> ()
  linalg.fill ins(%zero : f32) outs(%C : memref<?x?xf32>)
  linalg.fill ins(%zero : f32) outs(%R : memref<?x?xf32>)
  func.call_indirect %kernel(%A, %B, %C) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  func.call @ref_mm(%A, %B, %R) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  %mn = arith.muli %m, %n : index
  %c = memref.reinterpret_cast %C to offset: [0], sizes: [%mn], strides: [1] : memref<?x?xf32> to memref<?xf32>
  %r = memref.reinterpret_cast %R to offset: [0], sizes: [%mn], strides: [1] : memref<?x?xf32> to memref<?xf32>
  func.call @compare(%c, %r) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

// Adapters from the dynamic shapes of @check_mm to the static kernels.
func.func @run_64x48x32(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %a = memref.cast %A : memref<?x?xf32> to memref<64x32xf32>
  %b = memref.cast %B : memref<?x?xf32> to memref<32x48xf32>
  %c = memref.cast %C : memref<?x?xf32> to memref<64x48xf32>
  func.call @mm_64x48x32(%a, %b, %c) : (memref<64x32xf32>, memref<32x48xf32>, memref<64x48xf32>) -> ()
  return
}
func.func @run_32x32x32(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %a = memref.cast %A : memref<?x?xf32> to memref<32x32xf32>
  %b = memref.cast %B : memref<?x?xf32> to memref<32x32xf32>
  %c = memref.cast %C : memref<?x?xf32> to memref<32x32xf32>
  func.call @mm_32x32x32(%a, %b, %c) : (memref<32x32xf32>, memref<32x32xf32>, memref<32x32xf32>) -> ()
  return
}
func.func @run_16x64x8(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %a = memref.cast %A : memref<?x?xf32> to memref<16x8xf32>
  %b = memref.cast %B : memref<?x?xf32> to memref<8x64xf32>
  %c = memref.cast %C : memref<?x?xf32> to memref<16x64xf32>
  func.call @mm_16x64x8(%a, %b, %c) : (memref<16x8xf32>, memref<8x64xf32>, memref<16x64xf32>) -> ()
  return
}
func.func @run_20x20x20(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %a = memref.cast %A : memref<?x?xf32> to memref<20x20xf32>
  %b = memref.cast %B : memref<?x?xf32> to memref<20x20xf32>
  %c = memref.cast %C : memref<?x?xf32> to memref<20x20xf32>
  func.call @mm_untuned_20x20x20(%a, %b, %c) : (memref<20x20xf32>, memref<20x20xf32>, memref<20x20xf32>) -> ()
  return
}

func.func @check_conv() {
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 1 : index
  %s2 = arith.constant 2 : index
  %I = memref.alloc() {alignment = 64} : memref<1x18x4xf32>
  %F = memref.alloc() {alignment = 64} : memref<3x4x8xf32>
  %O = memref.alloc() {alignment = 64} : memref<1x16x8xf32>
  %R = memref.alloc() {alignment = 64} : memref<1x16x8xf32>
  %i = memref.cast %I : memref<1x18x4xf32> to memref<?x?x?xf32>
  %f = memref.cast %F : memref<3x4x8xf32> to memref<?x?x?xf32>
  %o = memref.cast %O : memref<1x16x8xf32> to memref<?x?x?xf32>
  %r = memref.cast %R : memref<1x16x8xf32> to memref<?x?x?xf32>
  func.call @fill3(%i, %s1) : (memref<?x?x?xf32>, index) -> ()
  func.call @fill3(%f, %s2) : (memref<?x?x?xf32>, index) -> ()
  linalg.fill ins(%zero : f32) outs(%O : memref<1x16x8xf32>)
  linalg.fill ins(%zero : f32) outs(%R : memref<1x16x8xf32>)
  func.call @conv_1x18x4_3x4x8(%I, %F, %O) : (memref<1x18x4xf32>, memref<3x4x8xf32>, memref<1x16x8xf32>) -> ()
  func.call @ref_conv(%i, %f, %r) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  %o1 = memref.reinterpret_cast %O to offset: [0], sizes: [128], strides: [1] : memref<1x16x8xf32> to memref<128xf32>
  %r1 = memref.reinterpret_cast %R to offset: [0], sizes: [128], strides: [1] : memref<1x16x8xf32> to memref<128xf32>
  %o2 = memref.cast %o1 : memref<128xf32> to memref<?xf32>
  %r2 = memref.cast %r1 : memref<128xf32> to memref<?xf32>
  func.call @compare(%o2, %r2) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

func.func @main() {
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %k1 = func.constant @run_64x48x32 : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  %k2 = func.constant @run_32x32x32 : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  %k3 = func.constant @run_16x64x8 : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  %k4 = func.constant @run_20x20x20 : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "matmul 64x48x32\n"
  func.call @check_mm(%c64, %c48, %c32, %k1) : (index, index, index, (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()) -> ()
  vector.print str "matmul 32x32x32\n"
  func.call @check_mm(%c32, %c32, %c32, %k2) : (index, index, index, (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()) -> ()
  vector.print str "matmul 16x64x8\n"
  func.call @check_mm(%c16, %c64, %c8, %k3) : (index, index, index, (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()) -> ()
  vector.print str "matmul 20x20x20 (untuned)\n"
  func.call @check_mm(%c20, %c20, %c20, %k4) : (index, index, index, (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()) -> ()
  vector.print str "conv (untuned)\n"
  func.call @check_conv() : () -> ()
  return
}
