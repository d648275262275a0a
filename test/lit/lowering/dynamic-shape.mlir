// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// A run-time Reshape: the shape's elements are read, 0 copies the input dim,
// one -1 takes the remaining count, each condition is a cf.assert naming the
// node, and the result is a tensor.reshape to the computed extents.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:       %[[E0:.+]] = tensor.extract %[[S]][%{{.+}}] : tensor<2xi64>
// CHECK:       %[[V0:.+]] = arith.index_cast %[[E0]] : i64 to index
// CHECK:       %[[Z0:.+]] = arith.cmpi eq, %[[V0]], %{{.+}} : index
// CHECK:       %[[D0:.+]] = arith.constant 2 : index
// CHECK:       arith.select %[[Z0]], %[[D0]], %[[V0]] : index
// CHECK:       tensor.extract %[[S]]
// CHECK:       cf.assert %{{.+}}, "node 'r': Reshape: the shape has a negative dim other than -1"
// CHECK:       cf.assert %{{.+}}, "node 'r': Reshape: the shape has more than one -1"
// CHECK-NOT:   copies (0)
// CHECK:       arith.divui
// CHECK:       cf.assert %{{.+}}, "node 'r': Reshape: the shape's element count differs from the input's"
// CHECK:       %[[SHAPE:.+]] = tensor.from_elements %{{.+}}, %{{.+}} : tensor<2xindex>
// CHECK:       %[[R:.+]] = tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<2x3x4xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// CHECK:       return %[[R]]
func.func @dynamic_reshape(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %y = kiln.dynamic_reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc(fused<"Reshape">["r"])
  return %y : tensor<?x?xf32>
}

// -----

// More result dims than input dims: a 0 past the input's rank has nothing to
// copy, which is checked.
// CHECK-LABEL: func.func @dynamic_reshape_more_dims
// CHECK:       cf.assert %{{.+}}, "node 'u': Reshape: the shape copies (0) a dim the input does not have"
// CHECK:       tensor.reshape %{{.+}} : (tensor<6xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
func.func @dynamic_reshape_more_dims(%x: tensor<6xf32>, %s: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %y = kiln.dynamic_reshape %x, %s : (tensor<6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32> loc(fused<"Reshape">["u"])
  return %y : tensor<?x?x?xf32>
}

// -----

// allow_zero: a 0 is a 0, never a copy of an input dim, so nothing compares
// the shape's elements with 0 and there is no copy check.
// CHECK-LABEL: func.func @dynamic_reshape_allow_zero
// CHECK:       arith.index_cast
// CHECK-NOT:   arith.select
// CHECK:       arith.cmpi eq, %{{.+}}, %c-1{{.*}} : index
// CHECK-NOT:   copies (0)
// CHECK:       tensor.reshape
func.func @dynamic_reshape_allow_zero(%x: tensor<3x4xf32>, %s: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %y = kiln.dynamic_reshape %x, %s {allow_zero = true} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// -----

// Unsqueeze with run-time axes: each axis normalized against the result
// rank (4) and checked, result dims selected (1 at an axis, else the next
// input dim), then tensor.reshape.
// CHECK-LABEL: func.func @dynamic_unsqueeze
// CHECK:       %[[A0:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<2xi64>
// CHECK:       %[[I0:.+]] = arith.index_cast %[[A0]] : i64 to index
// CHECK:       arith.cmpi slt, %[[I0]], %{{.+}} : index
// CHECK:       cf.assert %{{.+}}, "node 'u': Unsqueeze: an axis is out of range for rank 4"
// CHECK:       cf.assert %{{.+}}, "node 'u': Unsqueeze: an axis is repeated"
// CHECK:       %[[SHAPE:.+]] = tensor.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<4xindex>
// CHECK:       tensor.reshape %{{.+}}(%[[SHAPE]]) : (tensor<3x4xf32>, tensor<4xindex>) -> tensor<?x?x?x?xf32>
func.func @dynamic_unsqueeze(%x: tensor<3x4xf32>, %axes: tensor<2xi64>) -> tensor<?x?x?x?xf32> {
  %y = kiln.dynamic_unsqueeze %x, %axes : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32> loc(fused<"Unsqueeze">["u"])
  return %y : tensor<?x?x?x?xf32>
}

// -----

// Squeeze with run-time axes: range and repetition against the input rank,
// and every squeezed dim must be 1.
// CHECK-LABEL: func.func @dynamic_squeeze
// CHECK:       cf.assert %{{.+}}, "node 's': Squeeze: an axis is out of range for rank 3"
// CHECK:       cf.assert %{{.+}}, "node 's': Squeeze: an axis is repeated"
// CHECK:       cf.assert %{{.+}}, "node 's': Squeeze: a squeezed dim is not 1"
// CHECK:       tensor.reshape %{{.+}} : (tensor<1x3x1xf32>, tensor<1xindex>) -> tensor<?xf32>
func.func @dynamic_squeeze(%x: tensor<1x3x1xf32>, %axes: tensor<2xi64>) -> tensor<?xf32> {
  %y = kiln.dynamic_squeeze %x, %axes : (tensor<1x3x1xf32>, tensor<2xi64>) -> tensor<?xf32> loc(fused<"Squeeze">["s"])
  return %y : tensor<?xf32>
}

// -----

// kiln.assert (the importer's check that a run-time shape input holds the
// values of the model's declared shape) reads its condition and becomes a
// cf.assert whose message names the node.
// CHECK-LABEL: func.func @assert
// CHECK-SAME:    (%[[OK:.+]]: tensor<i1>)
// CHECK:       %[[C:.+]] = tensor.extract %[[OK]][] : tensor<i1>
// CHECK:       cf.assert %[[C]], "node 't': Tile: input 1 'y' must be [2, 2], as the model declares 'z' as [4, 6]"
// CHECK-NOT:   kiln.assert
func.func @assert(%ok: tensor<i1>) {
  kiln.assert %ok, "Tile: input 1 'y' must be [2, 2], as the model declares 'z' as [4, 6]" : tensor<i1> loc(fused<"Tile">["t"])
  return
}
