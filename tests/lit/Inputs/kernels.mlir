// Kernels for apply_library.test: three matmul shapes that get tuned entries, a
// matmul shape without an entry and a convolution (no tuned entry), each in its
// own function; the same five ops plus an elementwise add in ONE function
// (@all_in_one: the tuned ops share it with untuned ones and feed each other);
// references written as linalg.generic (no problem family, so never tuned) and
// a main that runs everything and prints max |difference|.
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

// Every op in one function: three tuned matmul shapes, an untuned matmul, an
// untuned convolution and an elementwise add of the first matmul's result
// (E = A1 B1 + D), so a tuned op's result feeds an untuned op.
func.func @all_in_one(%A1: memref<64x32xf32>, %B1: memref<32x48xf32>, %C1: memref<64x48xf32>,
                      %A2: memref<32x32xf32>, %B2: memref<32x32xf32>, %C2: memref<32x32xf32>,
                      %A3: memref<16x8xf32>, %B3: memref<8x64xf32>, %C3: memref<16x64xf32>,
                      %A4: memref<20x20xf32>, %B4: memref<20x20xf32>, %C4: memref<20x20xf32>,
                      %I: memref<1x18x4xf32>, %F: memref<3x4x8xf32>, %O: memref<1x16x8xf32>,
                      %D: memref<64x48xf32>, %E: memref<64x48xf32>) {
  %a1 = bufferization.to_tensor %A1 restrict : memref<64x32xf32> to tensor<64x32xf32>
  %b1 = bufferization.to_tensor %B1 restrict : memref<32x48xf32> to tensor<32x48xf32>
  %c1 = bufferization.to_tensor %C1 restrict writable : memref<64x48xf32> to tensor<64x48xf32>
  %a2 = bufferization.to_tensor %A2 restrict : memref<32x32xf32> to tensor<32x32xf32>
  %b2 = bufferization.to_tensor %B2 restrict : memref<32x32xf32> to tensor<32x32xf32>
  %c2 = bufferization.to_tensor %C2 restrict writable : memref<32x32xf32> to tensor<32x32xf32>
  %a3 = bufferization.to_tensor %A3 restrict : memref<16x8xf32> to tensor<16x8xf32>
  %b3 = bufferization.to_tensor %B3 restrict : memref<8x64xf32> to tensor<8x64xf32>
  %c3 = bufferization.to_tensor %C3 restrict writable : memref<16x64xf32> to tensor<16x64xf32>
  %a4 = bufferization.to_tensor %A4 restrict : memref<20x20xf32> to tensor<20x20xf32>
  %b4 = bufferization.to_tensor %B4 restrict : memref<20x20xf32> to tensor<20x20xf32>
  %c4 = bufferization.to_tensor %C4 restrict writable : memref<20x20xf32> to tensor<20x20xf32>
  %i = bufferization.to_tensor %I restrict : memref<1x18x4xf32> to tensor<1x18x4xf32>
  %f = bufferization.to_tensor %F restrict : memref<3x4x8xf32> to tensor<3x4x8xf32>
  %o = bufferization.to_tensor %O restrict writable : memref<1x16x8xf32> to tensor<1x16x8xf32>
  %d = bufferization.to_tensor %D restrict : memref<64x48xf32> to tensor<64x48xf32>
  %e = bufferization.to_tensor %E restrict writable : memref<64x48xf32> to tensor<64x48xf32>
  %r1 = linalg.matmul ins(%a1, %b1 : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c1 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r4 = linalg.matmul ins(%a4, %b4 : tensor<20x20xf32>, tensor<20x20xf32>) outs(%c4 : tensor<20x20xf32>) -> tensor<20x20xf32>
  %r2 = linalg.matmul ins(%a2, %b2 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %re = linalg.add ins(%r1, %d : tensor<64x48xf32>, tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %ro = linalg.conv_1d_nwc_wcf ins(%i, %f : tensor<1x18x4xf32>, tensor<3x4x8xf32>) outs(%o : tensor<1x16x8xf32>) -> tensor<1x16x8xf32>
  %r3 = linalg.matmul ins(%a3, %b3 : tensor<16x8xf32>, tensor<8x64xf32>) outs(%c3 : tensor<16x64xf32>) -> tensor<16x64xf32>
  bufferization.materialize_in_destination %r1 in restrict writable %C1 : (tensor<64x48xf32>, memref<64x48xf32>) -> ()
  bufferization.materialize_in_destination %r2 in restrict writable %C2 : (tensor<32x32xf32>, memref<32x32xf32>) -> ()
  bufferization.materialize_in_destination %r3 in restrict writable %C3 : (tensor<16x64xf32>, memref<16x64xf32>) -> ()
  bufferization.materialize_in_destination %r4 in restrict writable %C4 : (tensor<20x20xf32>, memref<20x20xf32>) -> ()
  bufferization.materialize_in_destination %ro in restrict writable %O : (tensor<1x16x8xf32>, memref<1x16x8xf32>) -> ()
  bufferization.materialize_in_destination %re in restrict writable %E : (tensor<64x48xf32>, memref<64x48xf32>) -> ()
  return
}

func.func @ref_add(%X: memref<?x?xf32>, %Y: memref<?x?xf32>, %Z: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%X, %Y : memref<?x?xf32>, memref<?x?xf32>) outs(%Z : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// An m x n buffer filled with `seed`'s pattern, as a dynamic memref.
func.func @filled(%m: index, %n: index, %seed: index) -> memref<?x?xf32> {
  %M = memref.alloc(%m, %n) {alignment = 64} : memref<?x?xf32>
  func.call @fill2(%M, %seed) : (memref<?x?xf32>, index) -> ()
  return %M : memref<?x?xf32>
}

func.func @zeros(%m: index, %n: index) -> memref<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %M = memref.alloc(%m, %n) {alignment = 64} : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%M : memref<?x?xf32>)
  return %M : memref<?x?xf32>
}

func.func @compare2(%X: memref<?x?xf32>, %Y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf32>
  %n = memref.dim %X, %c1 : memref<?x?xf32>
  %mn = arith.muli %m, %n : index
  %x = memref.reinterpret_cast %X to offset: [0], sizes: [%mn], strides: [1] : memref<?x?xf32> to memref<?xf32>
  %y = memref.reinterpret_cast %Y to offset: [0], sizes: [%mn], strides: [1] : memref<?x?xf32> to memref<?xf32>
  func.call @compare(%x, %y) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

// Runs @all_in_one once and compares each of its six outputs with references.
func.func @check_all_in_one() {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %s1 = arith.constant 1 : index
  %s2 = arith.constant 2 : index
  %s3 = arith.constant 3 : index
  %A1 = func.call @filled(%c64, %c32, %s1) : (index, index, index) -> memref<?x?xf32>
  %B1 = func.call @filled(%c32, %c48, %s2) : (index, index, index) -> memref<?x?xf32>
  %C1 = func.call @zeros(%c64, %c48) : (index, index) -> memref<?x?xf32>
  %A2 = func.call @filled(%c32, %c32, %s2) : (index, index, index) -> memref<?x?xf32>
  %B2 = func.call @filled(%c32, %c32, %s3) : (index, index, index) -> memref<?x?xf32>
  %C2 = func.call @zeros(%c32, %c32) : (index, index) -> memref<?x?xf32>
  %A3 = func.call @filled(%c16, %c8, %s3) : (index, index, index) -> memref<?x?xf32>
  %B3 = func.call @filled(%c8, %c64, %s1) : (index, index, index) -> memref<?x?xf32>
  %C3 = func.call @zeros(%c16, %c64) : (index, index) -> memref<?x?xf32>
  %A4 = func.call @filled(%c20, %c20, %s1) : (index, index, index) -> memref<?x?xf32>
  %B4 = func.call @filled(%c20, %c20, %s3) : (index, index, index) -> memref<?x?xf32>
  %C4 = func.call @zeros(%c20, %c20) : (index, index) -> memref<?x?xf32>
  %D = func.call @filled(%c64, %c48, %s3) : (index, index, index) -> memref<?x?xf32>
  %E = func.call @zeros(%c64, %c48) : (index, index) -> memref<?x?xf32>
  %I = memref.alloc() {alignment = 64} : memref<1x18x4xf32>
  %F = memref.alloc() {alignment = 64} : memref<3x4x8xf32>
  %O = memref.alloc() {alignment = 64} : memref<1x16x8xf32>
  %i = memref.cast %I : memref<1x18x4xf32> to memref<?x?x?xf32>
  %f = memref.cast %F : memref<3x4x8xf32> to memref<?x?x?xf32>
  func.call @fill3(%i, %s1) : (memref<?x?x?xf32>, index) -> ()
  func.call @fill3(%f, %s2) : (memref<?x?x?xf32>, index) -> ()
  linalg.fill ins(%zero : f32) outs(%O : memref<1x16x8xf32>)
  %a1 = memref.cast %A1 : memref<?x?xf32> to memref<64x32xf32>
  %b1 = memref.cast %B1 : memref<?x?xf32> to memref<32x48xf32>
  %c1 = memref.cast %C1 : memref<?x?xf32> to memref<64x48xf32>
  %a2 = memref.cast %A2 : memref<?x?xf32> to memref<32x32xf32>
  %b2 = memref.cast %B2 : memref<?x?xf32> to memref<32x32xf32>
  %c2 = memref.cast %C2 : memref<?x?xf32> to memref<32x32xf32>
  %a3 = memref.cast %A3 : memref<?x?xf32> to memref<16x8xf32>
  %b3 = memref.cast %B3 : memref<?x?xf32> to memref<8x64xf32>
  %c3 = memref.cast %C3 : memref<?x?xf32> to memref<16x64xf32>
  %a4 = memref.cast %A4 : memref<?x?xf32> to memref<20x20xf32>
  %b4 = memref.cast %B4 : memref<?x?xf32> to memref<20x20xf32>
  %c4 = memref.cast %C4 : memref<?x?xf32> to memref<20x20xf32>
  %d = memref.cast %D : memref<?x?xf32> to memref<64x48xf32>
  %e = memref.cast %E : memref<?x?xf32> to memref<64x48xf32>
  func.call @all_in_one(%a1, %b1, %c1, %a2, %b2, %c2, %a3, %b3, %c3, %a4, %b4, %c4, %I, %F, %O, %d, %e)
      : (memref<64x32xf32>, memref<32x48xf32>, memref<64x48xf32>, memref<32x32xf32>, memref<32x32xf32>, memref<32x32xf32>,
         memref<16x8xf32>, memref<8x64xf32>, memref<16x64xf32>, memref<20x20xf32>, memref<20x20xf32>, memref<20x20xf32>,
         memref<1x18x4xf32>, memref<3x4x8xf32>, memref<1x16x8xf32>, memref<64x48xf32>, memref<64x48xf32>) -> ()
  %R1 = func.call @zeros(%c64, %c48) : (index, index) -> memref<?x?xf32>
  %R2 = func.call @zeros(%c32, %c32) : (index, index) -> memref<?x?xf32>
  %R3 = func.call @zeros(%c16, %c64) : (index, index) -> memref<?x?xf32>
  %R4 = func.call @zeros(%c20, %c20) : (index, index) -> memref<?x?xf32>
  %RE = func.call @zeros(%c64, %c48) : (index, index) -> memref<?x?xf32>
  func.call @ref_mm(%A1, %B1, %R1) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  func.call @ref_mm(%A2, %B2, %R2) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  func.call @ref_mm(%A3, %B3, %R3) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  func.call @ref_mm(%A4, %B4, %R4) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  func.call @ref_add(%R1, %D, %RE) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "all_in_one matmul 64x48x32\n"
  func.call @compare2(%C1, %R1) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "all_in_one matmul 32x32x32\n"
  func.call @compare2(%C2, %R2) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "all_in_one matmul 16x64x8\n"
  func.call @compare2(%C3, %R3) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "all_in_one matmul 20x20x20 (untuned)\n"
  func.call @compare2(%C4, %R4) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  vector.print str "all_in_one add (untuned)\n"
  func.call @compare2(%E, %RE) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  %Rc = memref.alloc() {alignment = 64} : memref<1x16x8xf32>
  %rc = memref.cast %Rc : memref<1x16x8xf32> to memref<?x?x?xf32>
  linalg.fill ins(%zero : f32) outs(%Rc : memref<1x16x8xf32>)
  func.call @ref_conv(%i, %f, %rc) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  %o1 = memref.reinterpret_cast %O to offset: [0], sizes: [128], strides: [1] : memref<1x16x8xf32> to memref<128xf32>
  %r1 = memref.reinterpret_cast %Rc to offset: [0], sizes: [128], strides: [1] : memref<1x16x8xf32> to memref<128xf32>
  %o2 = memref.cast %o1 : memref<128xf32> to memref<?xf32>
  %r2 = memref.cast %r1 : memref<128xf32> to memref<?xf32>
  vector.print str "all_in_one conv (untuned)\n"
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
  func.call @check_all_in_one() : () -> ()
  return
}
