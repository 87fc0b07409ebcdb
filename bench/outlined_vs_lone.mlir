// bench/outlined_vs_lone.sh: the same tuned 256^3 matmul applied alone in its function
// (@lone, the payload form, as measured) and beside an elementwise add (@shared: the
// library outlines it into a kernel), each called 200 times per round, side by side.
func.func @lone(%A: memref<256x256xf32>, %B: memref<256x256xf32>, %C: memref<256x256xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<256x256xf32> to tensor<256x256xf32>
  %b = bufferization.to_tensor %B restrict : memref<256x256xf32> to tensor<256x256xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<256x256xf32> to tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<256x256xf32>, memref<256x256xf32>) -> ()
  return
}
func.func @shared(%A: memref<256x256xf32>, %B: memref<256x256xf32>, %C: memref<256x256xf32>, %X: memref<8x8xf32>) {
  %a = bufferization.to_tensor %A restrict : memref<256x256xf32> to tensor<256x256xf32>
  %b = bufferization.to_tensor %B restrict : memref<256x256xf32> to tensor<256x256xf32>
  %c = bufferization.to_tensor %C restrict writable : memref<256x256xf32> to tensor<256x256xf32>
  %x = bufferization.to_tensor %X restrict writable : memref<8x8xf32> to tensor<8x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %y = linalg.add ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%x : tensor<8x8xf32>) -> tensor<8x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<256x256xf32>, memref<256x256xf32>) -> ()
  bufferization.materialize_in_destination %y in restrict writable %X : (tensor<8x8xf32>, memref<8x8xf32>) -> ()
  return
}
func.func private @rtclock() -> f64
func.func @main() {
  %A = memref.alloc() {alignment = 64} : memref<256x256xf32>
  %B = memref.alloc() {alignment = 64} : memref<256x256xf32>
  %C = memref.alloc() {alignment = 64} : memref<256x256xf32>
  %X = memref.alloc() {alignment = 64} : memref<8x8xf32>
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%one : f32) outs(%A : memref<256x256xf32>)
  linalg.fill ins(%one : f32) outs(%B : memref<256x256xf32>)
  linalg.fill ins(%zero : f32) outs(%X : memref<8x8xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 200 : index
  %rounds = arith.constant 5 : index
  scf.for %round = %c0 to %rounds step %c1 {
    linalg.fill ins(%zero : f32) outs(%C : memref<256x256xf32>)
    %t0 = func.call @rtclock() : () -> f64
    scf.for %i = %c0 to %n step %c1 {
      func.call @lone(%A, %B, %C) : (memref<256x256xf32>, memref<256x256xf32>, memref<256x256xf32>) -> ()
    }
    %t1 = func.call @rtclock() : () -> f64
    scf.for %i = %c0 to %n step %c1 {
      func.call @shared(%A, %B, %C, %X) : (memref<256x256xf32>, memref<256x256xf32>, memref<256x256xf32>, memref<8x8xf32>) -> ()
    }
    %t2 = func.call @rtclock() : () -> f64
    %d1 = arith.subf %t1, %t0 : f64
    %d2 = arith.subf %t2, %t1 : f64
    vector.print str "lone s, outlined s: "
    vector.print %d1 : f64
    vector.print %d2 : f64
  }
  %v = memref.load %C[%c0, %c0] : memref<256x256xf32>
  vector.print %v : f32
  return
}
