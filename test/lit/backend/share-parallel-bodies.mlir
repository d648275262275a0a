// RUN: kiln-opt %s --kiln-share-parallel-bodies | FileCheck %s

// Bodies 0 and 1 are the same loop on different buffers: the offset that
// differs (4096 / 8192) becomes an argument of the shared function, the one
// they have in common (64) stays a constant. Body 2 multiplies instead of
// adding: it keeps its own code. Bodies 3 and 4 are identical: shared with
// no extra argument. @helper is not an outlined body: left alone.

// CHECK-LABEL: llvm.func @__kiln_parallel_shared_0(
// CHECK-SAME: %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[ARENA:[^:]+]]: !llvm.ptr, %[[OFF:[^:]+]]: i64)
// CHECK: llvm.getelementptr %[[ARENA]][64] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[ARENA]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.fadd
// CHECK-LABEL: llvm.func @__kiln_parallel_body_0(
// CHECK-SAME: %[[B:[^:]+]]: i64, %[[E:[^:]+]]: i64, %[[P:[^:]+]]: !llvm.ptr)
// CHECK: %[[C:.+]] = llvm.mlir.constant(4096 : i64) : i64
// CHECK: llvm.call @__kiln_parallel_shared_0(%[[B]], %[[E]], %[[P]], %[[C]])
// CHECK-NEXT: llvm.return
llvm.func @__kiln_parallel_body_0(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[64] : (!llvm.ptr) -> !llvm.ptr, i8
  %y = llvm.getelementptr %arena[4096] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fadd %v, %v : f32
  llvm.store %w, %y : f32, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @__kiln_parallel_body_1(
// CHECK: llvm.mlir.constant(8192 : i64) : i64
// CHECK: llvm.call @__kiln_parallel_shared_0(
// CHECK-NOT: llvm.fadd
llvm.func @__kiln_parallel_body_1(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[64] : (!llvm.ptr) -> !llvm.ptr, i8
  %y = llvm.getelementptr %arena[8192] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fadd %v, %v : f32
  llvm.store %w, %y : f32, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @__kiln_parallel_body_2(
// CHECK-NOT: llvm.call
// CHECK: llvm.fmul
llvm.func @__kiln_parallel_body_2(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[64] : (!llvm.ptr) -> !llvm.ptr, i8
  %y = llvm.getelementptr %arena[8192] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fmul %v, %v : f32
  llvm.store %w, %y : f32, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @__kiln_parallel_shared_1(
// CHECK-SAME: %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr)
// CHECK: llvm.fsub
// CHECK-LABEL: llvm.func @__kiln_parallel_body_3(
// CHECK-NEXT: llvm.call @__kiln_parallel_shared_1(%{{[^,]+}}, %{{[^,]+}}, %{{[^,)]+}}) : (i64, i64, !llvm.ptr) -> ()
llvm.func @__kiln_parallel_body_3(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[128] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fsub %v, %v : f32
  llvm.store %w, %x : f32, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @__kiln_parallel_body_4(
// CHECK-NEXT: llvm.call @__kiln_parallel_shared_1(
llvm.func @__kiln_parallel_body_4(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[128] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fsub %v, %v : f32
  llvm.store %w, %x : f32, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @helper(
// CHECK-NOT: llvm.call
// CHECK: llvm.return
llvm.func @helper(%b: i64, %e: i64, %arena: !llvm.ptr) {
  %x = llvm.getelementptr %arena[128] : (!llvm.ptr) -> !llvm.ptr, i8
  %v = llvm.load %x : !llvm.ptr -> f32
  %w = llvm.fsub %v, %v : f32
  llvm.store %w, %x : f32, !llvm.ptr
  llvm.return
}

// Flags are properties, compared too: bodies 5 and 6 differ only in the
// GEP's inbounds and the add's nsw, and keep their own code.
// CHECK-LABEL: llvm.func @__kiln_parallel_body_5(
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr inbounds
llvm.func @__kiln_parallel_body_5(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr inbounds %arena[256] : (!llvm.ptr) -> !llvm.ptr, i8
  %s = llvm.add %b, %e overflow<nsw> : i64
  llvm.store %s, %x : i64, !llvm.ptr
  llvm.return
}
// CHECK-LABEL: llvm.func @__kiln_parallel_body_6(
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr %
llvm.func @__kiln_parallel_body_6(%b: i64, %e: i64, %arena: !llvm.ptr) attributes {sym_visibility = "private"} {
  %x = llvm.getelementptr %arena[256] : (!llvm.ptr) -> !llvm.ptr, i8
  %s = llvm.add %b, %e : i64
  llvm.store %s, %x : i64, !llvm.ptr
  llvm.return
}
// Only void bodies are shared (the wrapper returns nothing).
// CHECK-LABEL: llvm.func @__kiln_parallel_body_7(
// CHECK-NOT: llvm.call
// CHECK: llvm.return %{{.+}} : i64
llvm.func @__kiln_parallel_body_7(%b: i64, %e: i64, %arena: !llvm.ptr) -> i64 attributes {sym_visibility = "private"} {
  %s = llvm.add %b, %e : i64
  llvm.return %s : i64
}
llvm.func @__kiln_parallel_body_8(%b: i64, %e: i64, %arena: !llvm.ptr) -> i64 attributes {sym_visibility = "private"} {
  %s = llvm.add %b, %e : i64
  llvm.return %s : i64
}
