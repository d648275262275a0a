// RUN: kiln-opt %s -kiln-lower-to-linalg | FileCheck %s

// NonMaxSuppression: a row buffer of batch * classes * min(boxes, max)
// rows, filled by loops over batch, class and selection steps (each step
// scans for the next best box, then checks its IoU against the rows this
// class kept), then the kept rows copied into the ?x3 result.
// CHECK-LABEL: func.func @nms
// CHECK: %[[MAX:.+]] = tensor.extract %arg2[] : tensor<i64>
// CHECK: arith.maxsi %[[MAX]]
// CHECK: arith.minui
// CHECK: %[[ROWS:.+]] = tensor.empty(%{{.+}}) : tensor<?x3xi64>
// CHECK: %[[FILLED:.+]]:2 = scf.for {{.*}} iter_args(%{{.+}} = %[[ROWS]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// CHECK: scf.if
// CHECK: arith.divf
// CHECK: tensor.insert
// CHECK: tensor.empty(%[[FILLED]]#1) : tensor<?x3xi64>
// CHECK: linalg.generic
// CHECK: tensor.extract %[[FILLED]]#0
func.func @nms(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>,
               %max: tensor<i64>, %iou: tensor<f32>, %thr: tensor<f32>) -> tensor<?x3xi64> {
  %r = kiln.non_max_suppression %boxes, %scores, %max, %iou, %thr {center_point_box = false, use_score_threshold = true} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  return %r : tensor<?x3xi64>
}
