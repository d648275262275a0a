// RUN: kiln-opt %s -kiln-outline-weights -split-input-file -verify-diagnostics

// A resource whose data was elided cannot be embedded.
// expected-error @+1 {{kiln-outline-weights: the data of '__elided__' is not available}}
memref.global "private" constant @w : memref<2xf32> = dense_resource<__elided__>
func.func @main() {
  %0 = memref.get_global @w : memref<2xf32>
  return
}

// -----

// A resource whose size does not match its type is a bad model, not a crash.
// expected-error @+1 {{kiln-outline-weights: resource holds 4 bytes, its type needs 8}}
memref.global "private" constant @w : memref<2xf32> = dense_resource<short>
func.func @main() {
  %0 = memref.get_global @w : memref<2xf32>
  return
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F"
    }
  }
#-}

// -----

// expected-error @+1 {{kiln-outline-weights: no entry function @main}}
module {
}
