// RUN: kiln-opt %s -kiln-plan-arena -split-input-file -verify-diagnostics

// expected-error @+1 {{kiln-plan-arena: no entry function @main}}
module {
  func.func @other() {
    return
  }
}

// -----

// expected-error @+1 {{kiln-plan-arena: the arena is already planned}}
module attributes {kiln.arena_size = 64 : i64} {
  func.func @main() {
    return
  }
}
