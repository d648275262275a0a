// RUN: kiln-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @round_trip
// CHECK:       kiln.normalize_strings %{{.+}} {case_action = "LOWER", case_sensitive = true, stopwords = ["a", "b"]} : tensor<1x4x!kiln.string> -> tensor<1x?x!kiln.string>
// CHECK:       kiln.cast_to_string %{{.+}} : tensor<3xbf16> -> tensor<3x!kiln.string>
// CHECK:       kiln.cast_from_string %{{.+}} : tensor<3x!kiln.string> -> tensor<3xui16>
func.func @round_trip(%s: tensor<1x4x!kiln.string>, %x: tensor<3xbf16>, %t: tensor<3x!kiln.string>) -> (tensor<1x?x!kiln.string>, tensor<3x!kiln.string>, tensor<3xui16>) {
  %0 = kiln.normalize_strings %s {case_action = "LOWER", case_sensitive = true, stopwords = ["a", "b"]} : tensor<1x4x!kiln.string> -> tensor<1x?x!kiln.string>
  %1 = kiln.cast_to_string %x : tensor<3xbf16> -> tensor<3x!kiln.string>
  %2 = kiln.cast_from_string %t : tensor<3x!kiln.string> -> tensor<3xui16>
  return %0, %1, %2 : tensor<1x?x!kiln.string>, tensor<3x!kiln.string>, tensor<3xui16>
}

// -----

func.func @rank(%s: tensor<2x2x!kiln.string>) -> tensor<2x2x!kiln.string> {
  // expected-error @+1 {{a 2-D input and result must have a first dim of 1}}
  %0 = kiln.normalize_strings %s {case_action = "NONE", case_sensitive = true, stopwords = []} : tensor<2x2x!kiln.string> -> tensor<2x2x!kiln.string>
  return %0 : tensor<2x2x!kiln.string>
}

// -----

func.func @too_many(%s: tensor<3x!kiln.string>) -> tensor<4x!kiln.string> {
  // expected-error @+1 {{result extent 4 is not between 1 and the input's 3}}
  %0 = kiln.normalize_strings %s {case_action = "NONE", case_sensitive = true, stopwords = []} : tensor<3x!kiln.string> -> tensor<4x!kiln.string>
  return %0 : tensor<4x!kiln.string>
}

// -----

func.func @action(%s: tensor<3x!kiln.string>) -> tensor<3x!kiln.string> {
  // expected-error @+1 {{case_action must be NONE, LOWER or UPPER, not 'TITLE'}}
  %0 = kiln.normalize_strings %s {case_action = "TITLE", case_sensitive = true, stopwords = []} : tensor<3x!kiln.string> -> tensor<3x!kiln.string>
  return %0 : tensor<3x!kiln.string>
}

// -----

func.func @cast_shape(%x: tensor<3xf32>) -> tensor<4x!kiln.string> {
  // expected-error @+1 {{result shape differs from the input's}}
  %0 = kiln.cast_to_string %x : tensor<3xf32> -> tensor<4x!kiln.string>
  return %0 : tensor<4x!kiln.string>
}

// -----

func.func @cast_type(%x: tensor<3x!kiln.string>) -> tensor<3xi4> {
  // expected-error @+1 {{converts between strings and a number type (f16, bf16, f32, f64, i1, [u]i8-64), not 'i4'}}
  %0 = kiln.cast_from_string %x : tensor<3x!kiln.string> -> tensor<3xi4>
  return %0 : tensor<3xi4>
}

// -----

func.func @not_strings(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of string values}}
  %0 = kiln.cast_from_string %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @dynamic_input(%x: tensor<?x!kiln.string>) -> tensor<?xf32> {
  // expected-error @+1 {{takes a tensor of static shape}}
  %0 = kiln.cast_from_string %x : tensor<?x!kiln.string> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dynamic_normalize(%x: tensor<?x!kiln.string>) -> tensor<?x!kiln.string> {
  // expected-error @+1 {{takes a string tensor of static shape}}
  %0 = kiln.normalize_strings %x {case_action = "NONE", case_sensitive = true, stopwords = []} : tensor<?x!kiln.string> -> tensor<?x!kiln.string>
  return %0 : tensor<?x!kiln.string>
}
